"""``hela supersede OLD NEW``: mark a memory as replaced by a later one, or ``--undo`` the mark
(:meth:`hela_cli.memory.Memory.supersede`)."""

from __future__ import annotations

from typing import Optional

import typer

from hela_cli.cli.helpers import ID_SPACE_HELP, space_option, state
from hela_cli.cli.render import console, print_json, text

app = typer.Typer()


@app.command("supersede")
def supersede(
    ctx: typer.Context,
    old: int = typer.Argument(..., metavar="OLD", help="The memory that no longer holds."),
    new: int = typer.Argument(..., metavar="NEW", help="The later memory that replaces it."),
    space: Optional[str] = space_option(ID_SPACE_HELP, None),
    undo: bool = typer.Option(False, "--undo", help="Remove the mark instead."),
    possible: bool = typer.Option(False, "--possible", help="Mark it as possibly superseded (shown, not hidden "
                                  "by --current-only)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Mark memory OLD as superseded by the later memory NEW (a fact that changed). Nothing is deleted:
    recall brings NEW with OLD, above it, and marks OLD `(superseded by #NEW, DATE)`."""
    mem = state(ctx).memory()
    with mem:
        rep = mem.supersede(old, new, space=space, undo=undo, status="possible" if possible else "superseded")
    if json_out:
        print_json(rep)
    elif undo:
        console.print(text(f"memory {old} is no longer marked as superseded by {new}"), soft_wrap=True)
    else:
        from hela_cli.text.marks import supersession_mark

        mark = {"superseded_by": new, "invalid_at": rep["mark"]["invalid_at"],
                "supersession_status": rep["mark"]["status"]}
        console.print(text(f"memory {old} {supersession_mark(mark)}"), soft_wrap=True)
