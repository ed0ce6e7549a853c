"""``hela backup``: a consistent copy of the whole database (:meth:`hela_cli.memory.Memory.backup`, ``store/backup.py``)."""

from __future__ import annotations

from pathlib import Path

import typer

from hela_cli.cli.helpers import state
from hela_cli.cli.render import console, print_json, text

app = typer.Typer()


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)  # pragma: no cover


@app.command("backup")
def backup(
    ctx: typer.Context,
    dest: Path = typer.Argument(..., metavar="DEST", help="The backup file to write (must not exist)."),
    force: bool = typer.Option(False, "--force", help="Replace DEST if it exists."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON report."),
) -> None:
    """Copy the whole database (every space) to DEST, consistently, while other hela processes keep
    writing. The copy is user-only (0600), checked, and holds only live data."""
    with state(ctx).memory() as mem:
        rep = mem.backup(dest, force=force)
    if json_out:
        print_json(rep)
        return
    c = rep["counts"]
    console.print(text(f"backed up {c['nodes']} memories, {c['edges']} edges, {c['semantic']} semantic records "
                       f"in {c['spaces']} space(s) to {rep['path']} ({_size(rep['bytes'])}, "
                       f"{rep['seconds']:.1f} s)"), soft_wrap=True)
