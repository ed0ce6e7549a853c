"""``hela import``: restore what ``hela export --format json --vectors`` wrote (:mod:`hela_cli.maintenance.importing`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hela_cli.cli.helpers import state
from hela_cli.cli.render import console, err_console, print_json, text

app = typer.Typer()


@app.command("import")
def import_(
    ctx: typer.Context,
    file: Path = typer.Argument(..., metavar="EXPORT.json", help="What `hela export --format json --vectors` wrote."),
    space: Optional[str] = typer.Option(None, "--space", "-s",
                                        help="Space to restore into (new or empty; default: the exported name)."),
    reembed: bool = typer.Option(False, "--reembed", help="Embed the texts again with the configured embedder "
                                 "(an export from another embedder, or without vectors)."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON report, with the id mapping."),
) -> None:
    """Restore an exported space (memories, learned edge weights, step counter, semantic records) into a new
    or empty space, all or nothing. Memory ids are new: each memory keeps its source id, or gets its
    exported id as its source id; --json prints the mapping."""
    with state(ctx).memory() as mem:
        rep = mem.import_export(file, space=space, reembed=reembed)
    if json_out:
        print_json(rep)
        return
    how = ", re-embedded" if rep["reembedded"] else ""
    console.print(text(f"imported {rep['memories']} memories, {rep['edges']} edges, {rep['semantic']} semantic "
                       f"records into '{rep['space']}' (step {rep['step']}{how}, {rep['seconds']:.1f} s)"),
                  soft_wrap=True)
    err_console.print(text("memory ids are new; `--json` prints exported id -> new id"), style="dim")
