"""``hela edit``: replace a memory's text, keeping the old one in its history (:mod:`hela_cli.maintenance.correct`)."""

from __future__ import annotations

from typing import Optional

import typer

from hela_cli.cli.helpers import ID_SPACE_HELP, scrub_warning, space_of_ids, space_option, state
from hela_cli.cli.render import console, print_json, text
from hela_cli.errors import InputError

app = typer.Typer()


@app.command("edit")
def edit(
    ctx: typer.Context,
    args: list[str] = typer.Argument(..., metavar="[ID] TEXT", help="The memory id and its new text (with "
                                     "--source-id: the text alone)."),
    space: Optional[str] = space_option(ID_SPACE_HELP),
    source_id: Optional[str] = typer.Option(None, "--source-id", help="Edit the memory with this source id."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Replace a memory's text; it keeps its id, time, session, speaker and links. The previous text is kept
    in its history (`hela history`)."""
    node_id, new = _target(args, source_id, "edit")
    mem = state(ctx).memory()
    with mem:
        rep = mem.edit(space_of_ids(mem, space, [node_id] if node_id is not None else []), node_id, new,
                       source_id=source_id)
    if json_out:
        print_json(rep)
        return
    console.print(text(f"memory {rep['id']} edited" + (f"; {len(rep['semantic'])} semantic record(s) that cited "
                                                       f"it deleted" if rep["semantic"] else "")), soft_wrap=True)
    scrub_warning(rep.get("scrub"))


def _target(args: list[str], source_id: Optional[str], what: str) -> tuple[Optional[int], str]:
    if source_id is not None:
        return None, " ".join(args)
    if len(args) < 2:
        raise InputError(f"hela {what}: give the memory id and the new text (or --source-id ID TEXT)")
    try:
        node_id = int(args[0])
    except ValueError:
        raise InputError(f"hela {what}: '{args[0]}' is not a memory id (a number; or use --source-id)") from None
    return node_id, " ".join(args[1:])
