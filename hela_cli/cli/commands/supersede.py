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
    space: Optional[str] = space_option(ID_SPACE_HELP),
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
        console.print(text(f"removed the mark: memory {old} is no longer superseded by #{new} in "
                           f"'{rep['space']}'"), soft_wrap=True)
    else:
        from hela_cli.text.dates import format_iso

        at = rep["mark"]["invalid_at"]
        word = "possibly superseded" if rep["mark"]["status"] == "possible" else "superseded"
        when = f" from {format_iso(at)[:10]}" if isinstance(at, (int, float)) else ""
        console.print(text(f"marked memory {old} as {word} by #{new}{when} in '{rep['space']}' (nothing "
                           f"deleted)"), soft_wrap=True)
