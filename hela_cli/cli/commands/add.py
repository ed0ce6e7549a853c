"""``hela add``: remember one turn now, or JSON Lines from stdin (:mod:`hela_cli.ingest.live`)."""

from __future__ import annotations

import sys
from typing import Any, Optional

import typer

from hela_cli.cli.helpers import pick_space, space_option, state
from hela_cli.cli.render import console, err_console, print_json, text
from hela_cli.errors import HelaError

app = typer.Typer()


def _read_stdin_turns() -> tuple[list[Any], list[Any]]:
    """JSON Lines on stdin, every line validated before anything is written (blank lines skipped); with each
    line's ``supersedes`` (None, an id or a list of ids)."""
    import json

    from hela_cli.errors import InputError
    from hela_cli.ingest import turn_from_mapping

    turns, supersedes = [], []
    for n, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"<stdin>:{n}: not valid JSON ({e.msg} at column {e.colno})") from None
        marks = obj.pop("supersedes", None) if isinstance(obj, dict) else None
        if marks is not None and not (_ids(marks) or _ids([marks])):
            raise InputError(f"<stdin>:{n}: 'supersedes' must be a memory id or a list of memory ids")
        supersedes.append(marks)
        turns.append(turn_from_mapping(obj, f"<stdin>:{n}"))
    if not turns:
        raise InputError("<stdin>: no turns to add")
    return turns, supersedes


def _ids(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, int) and not isinstance(v, bool)
                                                           for v in value)


@app.command("add")
def add(
    ctx: typer.Context,
    words: list[str] = typer.Argument(..., metavar="TEXT", help="The turn's text, or '-' to read JSON Lines "
                                      "from stdin ({\"speaker\"|\"role\", \"text\"|\"content\", \"time\"?, "
                                      "\"id\"?, \"session\"?} per line)."),
    space: Optional[str] = space_option("Memory space (default: HELA_SPACE, else the database's only space, "
                                        "else 'default'; created if needed)."),
    speaker: Optional[str] = typer.Option(None, "--speaker", help="Who said it (default: user)."),
    when: Optional[str] = typer.Option(None, "--time", help="When it was said (default: now)."),
    session: Optional[str] = typer.Option(None, "--session", help="Session id (default: the newest turn's "
                                          "session if within 6 hours, else a new one)."),
    source_id: Optional[str] = typer.Option(None, "--id", help="Source id: a retry with the same id adds nothing."),
    supersedes: Optional[list[int]] = typer.Option(None, "--supersedes", metavar="ID", help="An earlier memory "
                                                   "of the space this turn replaces (a fact that changed; "
                                                   "repeatable). With '-': a \"supersedes\" key per line."),
    json_out: bool = typer.Option(False, "--json", help='Print {"added": [...], "skipped": [...]}.'),
    redact: Optional[bool] = typer.Option(None, "--redact/--no-redact", help="Replace secrets (API keys, "
                                          "tokens, private keys, passwords) with [REDACTED:kind] before storing "
                                          "(default: ingest.redact)."),
) -> None:
    """Remember a turn now (one node, linked to the previous turn of its session). Prints the new id(s)."""
    from hela_cli.text.dates import parse_time
    from hela_cli.ingest import turn_from_mapping

    if words == ["-"]:
        if any(v is not None for v in (speaker, when, session, source_id)) or supersedes:
            raise HelaError("--speaker, --time, --session, --id and --supersedes apply to TEXT; with '-' give "
                            "them per line", 2)
        turns, marks = _read_stdin_turns()
    else:
        if when is not None:
            parse_time(when, "--time")  # the error names the option
        turn = {"text": " ".join(words), "speaker": speaker, "time": when, "session": session, "id": source_id}
        turns = [turn_from_mapping(turn, "hela add")]
        marks = [supersedes or None]
    mem = state(ctx).memory()
    with mem:
        rep = mem.add_batch(pick_space(mem, space), turns, redact=redact, supersedes=marks)   # all None: a plain add
    if json_out:
        print_json({"space": rep["space"], "added": rep["added"], "skipped": rep["skipped"]})
        return
    for nid in rep["added"]:
        console.print(str(nid))
    for s in rep["skipped"]:
        err_console.print(text(f"skipped: id {s['source_id']} is already memory {s['id']}"), soft_wrap=True)
