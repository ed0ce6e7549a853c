"""``hela copy SRC DEST``: spaces between databases of either backend (see :mod:`hela_cli.maintenance.copying`)."""

from __future__ import annotations

from typing import List, Optional

import typer

from hela_cli.cli.render import err_console, print_json, text

app = typer.Typer()


@app.command("copy")
def copy(
    src: str = typer.Argument(..., metavar="SRC", help="Source database: a SQLite file or a postgresql:// URL."),
    dest: str = typer.Argument(..., metavar="DEST", help="Destination database (created if missing)."),
    space: Optional[List[str]] = typer.Option(None, "--space", "-s", help="Copy only this space (repeatable; "
                                              "default: every space)."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Copy spaces between databases (SQLite <-> Postgres) with vectors, learned weights, step counters,
    semantic records and the asks log. A space that already holds memories in DEST is refused."""
    from hela_cli.maintenance.copying import copy_spaces

    log = (lambda s: None) if json_out else (lambda s: err_console.print(text(s), soft_wrap=True))
    out = copy_spaces(src, dest, space or (), progress=log)
    if json_out:
        print_json(out)
    else:
        err_console.print(text(f"copied {len(out['spaces'])} space(s) from {out['source']} to {out['destination']}"),
                          soft_wrap=True)

