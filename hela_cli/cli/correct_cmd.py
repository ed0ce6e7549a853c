"""``hela memories`` / ``delete`` / ``edit`` / ``history`` and ``hela spaces drop|rename``: correcting memory.
The core is :mod:`hela_cli.maintenance.correct` (through :class:`~hela_cli.memory.Memory`)."""

from __future__ import annotations

import sys
from typing import Any, Optional

import typer

from hela_cli.cli.helpers import space_option, state
from hela_cli.cli.render import console, err_console, fmt_ts, one_line, print_json, text
from hela_cli.errors import InputError



ID_SPACE_HELP = "Memory space (default: the space of the ids given, else 'default')."


def _space(mem: Any, space: Optional[str], ids: Any) -> str:
    """``--space`` / ``HELA_SPACE`` if given, else the one space holding the memory ids, else 'default'."""
    return space or (mem.space_of(ids) if ids else None) or "default"


def memory_line(m: dict[str, Any], width: int) -> str:
    """``ID  YYYY-MM-DD HH:MM  speaker: text`` cut to ``width`` columns."""
    head = f"{m['id']:>6}  {fmt_ts(m['timestamp'])}  "
    body = f"{m['speaker']}: {m['text']}" if m.get("speaker") else m["text"]
    return head + one_line(body, max(width - len(head), 10))


def _print_memories(rows: list[dict[str, Any]]) -> None:
    width = min(console.width, 200)
    for m in rows:
        console.print(text(memory_line(m, width)), soft_wrap=True, highlight=False)


def memories_cmd(
    ctx: typer.Context,
    space: str = space_option(),
    speaker: Optional[str] = typer.Option(None, "--speaker", help="Only what this speaker said."),
    session: Optional[str] = typer.Option(None, "--session", help="Only this session."),
    since: Optional[str] = typer.Option(None, "--since", help="Only memories at or after this time."),
    until: Optional[str] = typer.Option(None, "--until", help="Only memories at or before this time."),
    contains: Optional[str] = typer.Option(None, "--contains", help="Only memories whose text holds this."),
    limit: Optional[int] = typer.Option(None, "--limit", "-n", min=1, help="At most this many."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List memories, newest first, one line each (id, time, speaker: text)."""
    mem = state(ctx).memory()
    with mem:
        rows = mem.memories(space, speaker=speaker, session=session, since=since, until=until, contains=contains,
                            limit=limit)
    if json_out:
        print_json(rows)
        return
    _print_memories(rows)
    if not rows:
        err_console.print(text(f"no memory in '{space}' matches"), style="dim")


def delete_cmd(
    ctx: typer.Context,
    ids: Optional[list[int]] = typer.Argument(None, metavar="[ID]...", help="Memory ids to delete."),
    space: Optional[str] = space_option(ID_SPACE_HELP, None),
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
        space = _space(mem, space, ids)
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
                _print_memories(chosen[:20])
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
    _scrub_warning(rep.get("scrub"))


def _say(json_out: bool, obj: dict[str, Any], line: str) -> None:
    if json_out:
        print_json(obj)
    else:
        console.print(text(line), soft_wrap=True)


def _scrub_warning(scrub: Optional[dict[str, Any]]) -> None:
    if scrub is not None and scrub.get("verified") is None and scrub.get("note"):   # Postgres: what stays
        err_console.print(text(f"note: {scrub['note']}"), style="dim", soft_wrap=True)
    elif scrub is not None and not scrub["verified"]:
        err_console.print(text("warning: another process kept the database's WAL open; the deleted text may "
                               "stay in the file's bytes until it closes (run the command again then)"),
                          style="yellow", soft_wrap=True)


def edit_cmd(
    ctx: typer.Context,
    args: list[str] = typer.Argument(..., metavar="[ID] TEXT", help="The memory id and its new text (with "
                                     "--source-id: the text alone)."),
    space: Optional[str] = space_option(ID_SPACE_HELP, None),
    source_id: Optional[str] = typer.Option(None, "--source-id", help="Edit the memory with this source id."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Replace a memory's text; it keeps its id, time, session, speaker and links. The previous text is kept
    in its history (`hela history`)."""
    node_id, new = _target(args, source_id, "edit")
    mem = state(ctx).memory()
    with mem:
        rep = mem.edit(_space(mem, space, [node_id] if node_id is not None else []), node_id, new,
                       source_id=source_id)
    if json_out:
        print_json(rep)
        return
    console.print(text(f"memory {rep['id']} edited" + (f"; {len(rep['semantic'])} semantic record(s) that cited "
                                                       f"it deleted" if rep["semantic"] else "")), soft_wrap=True)
    _scrub_warning(rep.get("scrub"))


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


def history_cmd(
    ctx: typer.Context,
    node_id: Optional[int] = typer.Argument(None, metavar="[ID]", help="The memory id."),
    space: Optional[str] = space_option(ID_SPACE_HELP, None),
    source_id: Optional[str] = typer.Option(None, "--source-id", help="The memory with this source id."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """A memory's versions, oldest first, with when each was replaced."""
    if (node_id is None) == (source_id is None):
        raise InputError("hela history: give a memory id or --source-id")
    mem = state(ctx).memory()
    with mem:
        rep = mem.history(_space(mem, space, [node_id] if node_id is not None else []), node_id,
                          source_id=source_id)
    if json_out:
        print_json(rep)
        return
    width = min(console.width, 200)
    for v in rep["versions"]:
        when = "current" if v["current"] else f"until {v['replaced'].replace('T', ' ')[:16]}"
        head = f"v{v['version']}  {when}  "
        console.print(text(head + one_line(v["text"], max(width - len(head), 10))), soft_wrap=True, highlight=False)


def spaces_drop(
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
    console.print(text(f"dropped space '{name}' ({len(rep['deleted'])} memories)"))
    _scrub_warning(rep.get("scrub"))


def spaces_rename(
    ctx: typer.Context,
    old: str = typer.Argument(..., help="The space's name."),
    new: str = typer.Argument(..., help="Its new name."),
) -> None:
    """Rename a space."""
    mem = state(ctx).memory()
    with mem:
        mem.rename_space(old, new)
    console.print(text(f"renamed space '{old}' to '{new}'"))


def register(app: typer.Typer, spaces_app: typer.Typer) -> None:
    """Add these commands to the main ``hela`` app and to ``hela spaces``."""
    app.command("memories")(memories_cmd)
    app.command("delete")(delete_cmd)
    app.command("edit")(edit_cmd)
    app.command("history")(history_cmd)
    spaces_app.command("drop")(spaces_drop)
    spaces_app.command("rename")(spaces_rename)
