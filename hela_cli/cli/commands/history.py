"""``hela history``: a memory's versions (:mod:`hela_cli.maintenance.correct`)."""

from __future__ import annotations

from typing import Optional

import typer

from hela_cli.cli.helpers import ID_SPACE_HELP, print_changes, space_of_ids, space_option, state
from hela_cli.cli.render import console, one_line, print_json, text
from hela_cli.errors import InputError

app = typer.Typer()


@app.command("history")
def history(
    ctx: typer.Context,
    node_id: Optional[int] = typer.Argument(None, metavar="[ID]", help="The memory id."),
    space: Optional[str] = space_option(ID_SPACE_HELP),
    source_id: Optional[str] = typer.Option(None, "--source-id", help="The memory with this source id."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """A memory's versions, oldest first, with when each was replaced, and the memories that replaced it or
    that it replaced (facts that changed: `hela supersede`)."""
    if (node_id is None) == (source_id is None):
        raise InputError("hela history: give a memory id or --source-id")
    mem = state(ctx).memory()
    with mem:
        rep = mem.history(space_of_ids(mem, space, [node_id] if node_id is not None else []), node_id,
                          source_id=source_id)
    if json_out:
        print_json(rep)
        return
    width = min(console.width, 200)
    for v in rep["versions"]:
        when = "current" if v["current"] else f"until {v['replaced'].replace('T', ' ')[:16]}"
        head = f"v{v['version']}  {when}  "
        console.print(text(head + one_line(v["text"], max(width - len(head), 10))), soft_wrap=True, highlight=False)
    print_changes(rep["changes"])
