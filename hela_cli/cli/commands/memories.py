"""``hela memories``: list and filter memories (:meth:`hela_cli.memory.Memory.memories`)."""

from __future__ import annotations

from typing import Optional

import typer

from hela_cli.cli.helpers import pick_space, print_memories, space_option, state
from hela_cli.cli.render import err_console, print_json, text

app = typer.Typer()


@app.command("memories")
def memories(
    ctx: typer.Context,
    space: Optional[str] = space_option(),
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
        space = pick_space(mem, space)
        rows = mem.memories(space, speaker=speaker, session=session, since=since, until=until, contains=contains,
                            limit=limit)
    if json_out:
        print_json(rows)
        return
    print_memories(rows)
    if not rows:
        err_console.print(text(f"no memory in '{space}' matches"), style="dim")
