"""``hela reembed``: every memory embedded again with another embedder (:mod:`hela_cli.maintenance.reembed`)."""

from __future__ import annotations

from typing import Optional

import typer

from hela_cli.cli.helpers import progress_bar, state
from hela_cli.cli.render import console, print_json, text

app = typer.Typer()


@app.command("reembed")
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
