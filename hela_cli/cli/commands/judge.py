"""``hela judge``: run the deferred, batched judge now (:meth:`hela_cli.memory.Memory.judge`) and print what
it decided: each change pair with its verdict and reason, each hub with its records, and what the call cost."""

from __future__ import annotations

from typing import Any, Optional

import typer

from hela_cli.cli.helpers import pick_space, space_option, state
from hela_cli.cli.render import console, one_line, print_json, text

app = typer.Typer()

JUDGE_HELP = ("Judge the undecided changed facts and the hubs to distil now, in ONE model call; print each "
              "verdict.\n\n"
              "The `possible` change marks no judge has decided and the hubs that need distilling go to the chat "
              "model in one batched call; each pair's verdict with its reason, each hub's records and the tokens "
              "the call cost are printed. Needs an agent: route or an openai: server as models.chat (not a local "
              "GGUF) and, for an agent, today's budget (models.agent_budget).")


@app.command("judge", help=JUDGE_HELP)
def judge(
    ctx: typer.Context,
    space: Optional[str] = space_option(),
    limit: Optional[int] = typer.Option(None, "--limit", min=0, max=32, help="At most N undecided change pairs "
                                        "(default 16; 0: hubs only)."),
    hubs: Optional[int] = typer.Option(None, "--hubs", min=0, max=16, help="At most N hubs to distil (default "
                                       "consolidation.max_hubs_per_run; 0: change pairs only)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be asked; no model call, no write."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Judge the undecided changed facts and the hubs to distil now, in ONE model call (help: JUDGE_HELP)."""
    mem = state(ctx).memory()
    with mem:
        rep = mem.judge(pick_space(mem, space), max_changes=limit, max_hubs=hubs, dry_run=dry_run)
    if json_out:
        print_json(rep)
        return
    width = max(min(console.width, 200), 40)
    if dry_run:
        _planned(rep, width)
        return
    if rep["calls"] == 0:
        console.print(text(f"nothing to judge in '{rep['space']}': no undecided change mark, no hub to distil "
                           f"(no model call)"), soft_wrap=True)
        return
    for item in rep["items"]:
        if "pair" in item:
            old, new = item["pair"]
            verdict = item["verdict"] or "-"
            line = f"#{old} > #{new}: {verdict} -> {item['status']}"
            console.print(text(line, "green" if item["status"] == "superseded" else ""), soft_wrap=True)
            if item.get("reason"):
                console.print(text("  " + one_line(item["reason"], width - 2)), soft_wrap=True, highlight=False)
        elif "hub" in item:
            recs = len(item.get("inserted") or []) + len(item.get("merged_into") or [])
            console.print(text(f"hub {item['hub']}: {item['status']}" + (f" ({recs} record(s))" if recs else ""),
                               "red" if item["status"].startswith("failed") else ""), soft_wrap=True)
            for r in item.get("records") or []:
                console.print(text("  " + one_line(f"{r.get('kind', '')}: {r.get('text', '')}", width - 2)),
                              soft_wrap=True, highlight=False)
    console.print(text(_summary(rep)), soft_wrap=True)


def _planned(rep: dict[str, Any], width: int) -> None:
    for item in rep["items"]:
        if "pair" in item:
            old, new = item["pair"]
            console.print(text(f"#{old} > #{new} (possible, {item.get('detector') or 'rules'})"), soft_wrap=True)
            for word, key in (("earlier", "earlier"), ("later  ", "later")):
                console.print(text(f"  {word} " + one_line(item.get(key) or "", width - 10)), soft_wrap=True,
                              highlight=False)
        else:
            console.print(text(f"hub {item['hub']} ({item['action']}): cluster "
                               + " ".join(map(str, item["cluster"]))), soft_wrap=True)
    console.print(text(f"{rep['changes']} undecided pair(s), {rep['hubs']} hub(s) in '{rep['space']}' would go to "
                       f"{rep['model']} in {1 if rep['changes'] or rep['hubs'] else 0} call (dry run: no model "
                       f"call, nothing written)"), soft_wrap=True)


def _summary(rep: dict[str, Any]) -> str:
    if rep["dropped"]:
        head = "the answer was not valid JSON: dropped, nothing stored"
    else:
        head = (f"{rep.get('superseded', 0)} superseded, {rep.get('possible', 0)} still possible, "
                f"{rep.get('not_changes', 0)} mark(s) removed, {rep.get('hubs_ok', 0)} hub(s) distilled into "
                f"{rep.get('records', 0)} record(s), {rep.get('skipped', 0)} answer item(s) skipped")
    usage = rep.get("usage") or {}
    if "input_tokens" in usage:
        cost = (f"{usage['input_tokens']} input + {usage['output_tokens']} output tokens"
                + (" (estimated)" if usage.get("estimated") else ""))
    else:
        cost = "tokens not reported by the model"
    budget = rep.get("budget")
    if budget:
        cost += (f"; today {budget['calls']} of {budget['cap_calls']} calls, {budget['tokens']} of "
                 f"{budget['cap_tokens']} tokens (models.agent_budget)")
    return (f"{rep['changes']} pair(s), {rep['hubs']} hub(s) in '{rep['space']}': {head}; {rep['calls']} call to "
            f"{rep['model']}, {cost}")
