"""``hela export``: a whole space as JSON or GraphML (:mod:`hela_cli.maintenance.exporting`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from hela_cli.errors import InputError
from hela_cli.cli.helpers import open_store, space_option, store_space, write_out
from hela_cli.cli.render import err_console, text

app = typer.Typer()


@app.command("export")
def export(
    ctx: typer.Context,
    fmt: str = typer.Option(..., "--format", "-f", help="json|graphml"),
    space: Optional[str] = space_option(),
    out: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE", help="Write here (default: stdout)."),
    vectors: bool = typer.Option(False, "--vectors", help="JSON: include the embedding vectors."),
) -> None:
    """Export a whole space (nodes, edges with current weights, semantic records) as JSON or GraphML."""
    import json

    from hela_cli.maintenance import exporting

    if fmt not in ("json", "graphml"):
        raise InputError(f"unknown export format '{fmt}' (choose json or graphml)")
    if vectors and fmt != "json":
        raise InputError("--vectors is only available with --format json")
    store, cfg = open_store(ctx)
    with store:
        space = store_space(store, space)
        sp = store.require_space(space)
        if fmt == "json":
            data = json.dumps(exporting.export_json(store, sp, cfg, vectors=vectors), ensure_ascii=False,
                              indent=1) + "\n"
        else:
            data = exporting.export_graphml(store, sp, cfg)
        counts = (store.count_nodes(sp.id), store.count_edges(sp.id), store.count_semantic(sp.id))
    if out is None:
        sys.stdout.write(data)
        sys.stdout.flush()
        return
    write_out(out, data)
    err_console.print(text(f"wrote {counts[0]} memories, {counts[1]} edges, {counts[2]} semantic records "
                           f"of '{space}' to {out}"), style="dim")
