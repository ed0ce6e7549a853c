"""``hela reinforce``: feedback on a recall (the memories of it that were used)."""

from __future__ import annotations

from typing import Optional

import typer

from hela_cli.cli.helpers import pick_space, space_option, state
from hela_cli.cli.render import console, print_json, text

app = typer.Typer()


@app.command("reinforce")
def reinforce(
    ctx: typer.Context,
    used: list[int] = typer.Argument(..., metavar="ID...", help="Ids of the recall's memories that were used."),
    space: Optional[str] = space_option(),
    recall: Optional[int] = typer.Option(None, "--recall", metavar="ID", help="The recall id (`recall_id` of "
                                         "`hela ask --json` or MCP recall; default: the space's latest)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Feedback: tell hela which memories of a recall were used; it strengthens their associations."""
    with state(ctx).memory() as mem:
        rep = mem.reinforce(pick_space(mem, space), used, recall_id=recall)
    if json_out:
        print_json(rep)
    else:
        console.print(text(f"recall {rep['recall_id']}: {len(rep['used'])} used, {rep['strengthened']} "
                           f"associations strengthened, {rep['weakened']} weakened"), soft_wrap=True)
