"""``hela backup`` and ``hela import`` (registered on the main app in ``commands.py`` through :func:`register`).

Flag parsing and rendering only: the logic is in :meth:`hela_cli.memory.Memory.backup` (``store/backup.py``)
and :mod:`hela_cli.maintenance.importing`. Errors are :class:`~hela_cli.errors.HelaError`, mapped to one line and an exit
code by ``commands.HelaGroup``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hela_cli.cli.helpers import state
from hela_cli.cli.render import console, err_console, print_json, text



def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)  # pragma: no cover


def backup_cmd(
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


def import_cmd(
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


def register(app: typer.Typer) -> None:
    """Add these commands to the main ``hela`` app."""
    app.command("backup")(backup_cmd)
    app.command("import")(import_cmd)
