"""``hela spaces`` (list) and ``hela spaces drop`` / ``rename`` / ``decay``."""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

import typer

from hela_cli.cli.helpers import scrub_warning, state, store_progress
from hela_cli.cli.render import console, err_console, fmt_ts, print_json, row_width, table, text
from hela_cli.errors import InputError

app = typer.Typer(name="spaces", context_settings={"help_option_names": ["-h", "--help"]},
                  help="List memory spaces (drop, rename them or change their decay with the subcommands).")


@app.callback(invoke_without_command=True)
def spaces(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List memory spaces with node, edge and semantic-record counts."""
    from hela_cli.store import Store

    if ctx.invoked_subcommand is not None:
        return

    cfg = state(ctx).config()
    with Store.open(cfg.db, progress=store_progress) as s:
        rows = s.spaces()
        path = s.path
    if json_out:
        print_json(rows)
        return
    console.print(_table(str(path), rows, console.width))


def _table(title: str, rows: list[dict], width: int) -> Any:
    """Every space on one line at 80 columns: the first and last memory to the minute when they fit, else
    their days, else the last day alone; a name longer than the room left continues on the next line
    (never cut)."""
    def cells(stamp: Callable[[Optional[float]], str], first: bool) -> list[list[str]]:
        return [["space", "nodes", "edges", "semantic", "recalls", *(["first"] if first else []), "last"]] + [
            [r["name"], str(r["nodes"]), str(r["edges"]), str(r["semantic"]), str(r["steps"]),
             *([stamp(r["first_ts"])] if first else []), stamp(r["last_ts"])] for r in rows]

    for stamp, first in ((fmt_ts, True), (lambda ts: fmt_ts(ts)[:10], True), (lambda ts: fmt_ts(ts)[:10], False)):
        grid = cells(stamp, first)
        if row_width(grid) <= width:
            break
    kinds = {"space": "name", "first": "key", "last": "key"}
    t = table(title, [(h, kinds.get(h, "num")) for h in grid[0]])
    for r in grid[1:]:
        t.add_row(text(r[0]), *r[1:])
    return t


@app.command("drop")
def drop(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The space to delete."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Really delete it."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Delete a space and everything in it, completely (as `hela delete`)."""
    mem = state(ctx).memory()
    with mem:
        n = mem.store.count_nodes(mem.space(name).id)
        if not yes:
            if json_out or not sys.stdin.isatty():
                raise InputError(f"hela spaces drop: space '{name}' holds {n} memories; add --yes to delete it")
            if not typer.confirm(f"delete space '{name}' and its {n} memories for good?", default=False):
                err_console.print("nothing deleted")
                raise typer.Exit(1)
        rep = mem.drop_space(name)
    if json_out:
        print_json(rep)
        return
    n = len(rep['deleted'])
    console.print(text(f"dropped space '{name}' ({n} memor{'y' if n == 1 else 'ies'})"), soft_wrap=True)
    scrub_warning(rep.get("scrub"))


@app.command("rename")
def rename(
    ctx: typer.Context,
    old: str = typer.Argument(..., help="The space's name."),
    new: str = typer.Argument(..., help="Its new name."),
) -> None:
    """Rename a space."""
    mem = state(ctx).memory()
    with mem:
        mem.rename_space(old, new)
    console.print(text(f"renamed space '{old}' to '{new}'"))


@app.command("decay")
def decay(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The space."),
    value: Optional[float] = typer.Argument(None, help="Its new Eq.1 decay, in (0, 1]; without it, print the "
                                                      "current one."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Show or change a space's Eq.1 decay (how fast learned weights fade per retrieval). A space keeps its
    own: processes configured with another hebbian.decay learn under the space's and say so once. Changing
    it rebases the space's learned weights (current weights unchanged); each later step decays by VALUE."""
    mem = state(ctx).memory()
    with mem:
        rep = mem.space_decay(name, value)
    if json_out:
        print_json(rep)
        return
    if value is None:
        console.print(text(f"space '{name}': hebbian.decay {rep['decay']:g}"))
    else:
        console.print(text(f"space '{name}': hebbian.decay {rep['previous']:g} -> {rep['decay']:g} "
                           f"({rep['rebased_edges']} learned edges rebased, current weights unchanged)"))
