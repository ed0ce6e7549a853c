"""``hela forget``: flags and rendering; the logic is in :mod:`hela_cli.mechanics.forget`."""

from __future__ import annotations

from typing import Any

import typer

from hela_cli.cli.helpers import space_option, state
from hela_cli.cli.render import ISOLATED_STYLE, console, print_json, table, text


def candidates_table(title: str, cands: list[dict[str, Any]]) -> Any:

    t = table(title, [("id", "num"), ("speaker", "key"), ("text", "text"), ("weight", "num"), ("idle days", "num"),
                      ("accesses", "num"), ("why", "text")])
    for c in cands:
        why = "; ".join(r["reason"] for r in c["reasons"].values())
        t.add_row(text(str(c["id"]), ISOLATED_STYLE if not c["degree"] else ""), text(c["speaker"] or "-"),
                  text(c["text"][:70]), f"{c['total_weight']:.4f}", f"{c['idle_days']:.1f}",
                  str(c["access_count"]), text(why, "dim"))
    return t


def forget_cmd(
    ctx: typer.Context,
    space: str = space_option(),
    apply: bool = typer.Option(False, "--apply", help="Remove the candidates (default: dry run)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Adaptive forgetting: memories that are weak, idle past delta_age and never accessed (dry run unless --apply)."""
    mem = state(ctx).memory()
    with mem:
        rep = mem.forget(space, apply=apply)
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
