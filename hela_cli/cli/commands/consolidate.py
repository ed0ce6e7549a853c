"""``hela consolidate``: flags and rendering; the logic is in :mod:`hela_cli.mechanics.consolidate`."""

from __future__ import annotations

from typing import Any, Optional

import typer

from hela_cli.cli.helpers import pick_space, space_option, state
from hela_cli.cli.render import HUB_STYLE, console, err_console, print_json, table, text

app = typer.Typer()

CONSOLIDATE_HELP = ("Distil hubs (Eq.2) and their clusters into semantic records with the chat model (prompt A.1)."
                    "\n\nA local GGUF model gets one prompt per hub; an agent: route or an openai: server gets "
                    "the hubs in batches of consolidation.max_hubs_per_run, one call each (on a server, the hubs a "
                    "batch fails get one prompt each).")


@app.command("consolidate", help=CONSOLIDATE_HELP)
def consolidate(
    ctx: typer.Context,
    space: Optional[str] = space_option(),
    dry_run: bool = typer.Option(False, "--dry-run", help="List hubs and clusters; no model call, no write."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Distil hubs (Eq.2) and their clusters into semantic records (help: CONSOLIDATE_HELP)."""
    mem = state(ctx).memory()
    quiet = json_out

    def progress(i: int, n: int, plan: Any) -> None:
        if not quiet and i < n:
            err_console.print(text(f"distilling hub {plan.node_id} ({i + 1}/{n}, cluster of {len(plan.cluster)})"),
                              style="dim")

    with mem:
        rep = mem.consolidate(pick_space(mem, space), dry_run=dry_run, progress=progress)
    if json_out:
        print_json(rep)
        return

    t = table(f"{'planned ' if dry_run else ''}consolidation of space '{rep['space']}'",
              [("hub", "key"), ("D(v)", "num"), ("degree", "num"), ("cluster", "text"),
               ("action" if dry_run else "status", "key"), ("records", "num")])
    for h in rep["hubs"]:
        status = h["action"] if dry_run else (h.get("status") or h["action"])
        style = "red" if status.startswith("failed") else ("green" if status == "ok" else "")
        recs = "-"
        if "inserted" in h:
            recs = f"+{len(h['inserted'])}" + (f" ~{len(h['merged_into'])}" if h["merged_into"] else "")
        t.add_row(text(str(h["hub"]), HUB_STYLE), f"{h['strength']:.3f}", str(h["degree"]),
                  text(" ".join(map(str, h["cluster"]))), text(status, style), recs)
    if rep["hubs"]:
        console.print(t)
    if dry_run:
        console.print(text(f"{rep['hubs_found']} hub(s): {rep['to_distill']} to distil, {rep['covered']} covered, "
                           f"{rep['unchanged']} unchanged (dry run: no model call, nothing written)"))
        return
    console.print(text(f"{rep['hubs_found']} hub(s): {rep['distilled']} distilled, {rep['failed']} failed, "
                       f"{rep['covered']} covered, {rep['unchanged']} unchanged; {rep['records_inserted']} new "
                       f"semantic record(s), {rep['records_merged']} merged, {rep['records_rejected']} rejected; "
                       f"{rep['model_calls']} model call(s) in {rep['seconds']:.1f}s"))
    for h in rep["hubs"]:
        if (h.get("status") or "").startswith("failed"):
            console.print(text(f"hub {h['hub']}: {h['status']}"), style="red")
