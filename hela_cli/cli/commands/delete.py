"""``hela delete``: delete memories completely (:mod:`hela_cli.maintenance.correct`)."""

from __future__ import annotations

import sys
from typing import Any, Optional

import typer

from hela_cli.cli.helpers import (ID_SPACE_HELP, print_memories, scrub_warning, space_of_ids, space_option,
                                  state)
from hela_cli.cli.render import console, err_console, print_json, text
from hela_cli.errors import InputError

app = typer.Typer()


@app.command("delete")
def delete(
    ctx: typer.Context,
    ids: Optional[list[int]] = typer.Argument(None, metavar="[ID]...", help="Memory ids to delete."),
    space: Optional[str] = space_option(ID_SPACE_HELP),
    source_ids: Optional[list[str]] = typer.Option(None, "--source-id", help="Delete the memory with this "
                                                   "source id (repeatable)."),
    session: Optional[str] = typer.Option(None, "--session", help="Filter: every memory of this session."),
    speaker: Optional[str] = typer.Option(None, "--speaker", help="Filter: every memory of this speaker."),
    before: Optional[str] = typer.Option(None, "--before", help="Filter: every memory before this time."),
    contains: Optional[str] = typer.Option(None, "--contains", help="Filter: every memory whose text holds this."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Delete what a filter selects without asking."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Delete memories completely: the memory, its vectors, keywords, edges, history, the asks that
    retrieved it and the semantic records that cite it, also from the file's bytes."""
    from hela_cli.maintenance.correct import parse_filters, select

    ids = list(ids or [])
    source_ids = list(source_ids or [])
    filters = parse_filters(speaker=speaker, session=session, before=before, contains=contains)
    mem = state(ctx).memory()
    with mem:
        space = space_of_ids(mem, space, ids)
        if filters and not (ids or source_ids):
            sp = mem.space(space)
            chosen = select(mem.store, sp, filters=filters)
            if not chosen:
                _say(json_out, {"space": space, "selected": [], "deleted": []}, f"no memory in '{space}' matches; "
                     f"nothing deleted")
                return
            if not yes:
                if json_out or not sys.stdin.isatty():
                    raise InputError(f"this filter selects {len(chosen)} memories of space '{space}'; add --yes "
                                     f"to delete them (no terminal to ask)")
                print_memories(chosen[:20])
                if len(chosen) > 20:
                    console.print(text(f"... and {len(chosen) - 20} more"))
                if not typer.confirm(f"delete these {len(chosen)} memories for good?", default=False):
                    err_console.print("nothing deleted")
                    raise typer.Exit(1)
        rep = mem.delete(space, ids, source_ids=source_ids, confirm=True, **filters)
    if json_out:
        print_json(rep)
        return
    if not rep["deleted"]:
        console.print(text(f"no memory in '{space}' matches; nothing deleted"))
        return
    extra = [f"{len(rep['semantic'])} semantic record(s)" if rep["semantic"] else "",
             f"{rep['asks']} logged ask(s)" if rep["asks"] else "",
             f"{rep['history']} earlier version(s)" if rep["history"] else ""]
    extra = [e for e in extra if e]
    console.print(text(f"deleted {len(rep['deleted'])} memor{'y' if len(rep['deleted']) == 1 else 'ies'} from "
                       f"'{space}'" + (f" with {', '.join(extra)}" if extra else "")), soft_wrap=True)
    if rep.get("note"):
        err_console.print(text(f"note: {rep['note']}"), style="yellow", soft_wrap=True)
    scrub_warning(rep.get("scrub"))


def _say(json_out: bool, obj: dict[str, Any], line: str) -> None:
    if json_out:
        print_json(obj)
    else:
        console.print(text(line), soft_wrap=True)
