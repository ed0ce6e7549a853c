"""``hela forget``: flags and rendering; the logic is in :mod:`hela_cli.mechanics.forget`."""

from __future__ import annotations

from typing import Optional

import typer

from hela_cli.cli.helpers import pick_space, space_option, state
from hela_cli.cli.render import candidates_table, console, print_json, text

app = typer.Typer()


@app.command("forget")
def forget(
    ctx: typer.Context,
    space: Optional[str] = space_option(),
    apply: bool = typer.Option(False, "--apply", help="Remove the candidates (default: dry run)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Adaptive forgetting: memories that are weak, idle past delta_age and never accessed (dry run unless --apply)."""
    mem = state(ctx).memory()
    with mem:
        rep = mem.forget(pick_space(mem, space), apply=apply)
    if json_out:
        print_json(rep)
        return
    n = len(rep["candidates"])
    if n:
        console.print(candidates_table(f"forgetting candidates in '{rep['space']}'", rep["candidates"]))
    if apply:
        console.print(text(f"forgot {rep['removed']} memories; {rep['nodes']} remain"
                           + (f"; {len(rep['semantic_affected'])} semantic record(s) lost evidence (kept, counted)"
                              if rep["semantic_affected"] else "")))
    else:
        console.print(text(f"{n} of {rep['nodes']} memories would be forgotten (dry run; --apply removes them)"))
