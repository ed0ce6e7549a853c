"""Capture: the turns of an agent's transcript that are not stored yet become memories.

* The transcript is read with the format's own parser (``hela_cli.formats``, the one ``hela ingest`` uses),
  which tolerates a partial last line (a transcript still being written): that line is read next time.
* Each turn keeps the transcript's own message id as its source id, so a second capture adds nothing
  (``Memory.add_batch`` skips ids already in the space, also when two captures race).
* Session = the agent's session id; time = the transcript's timestamps.
* Secrets are redacted (``hooks.redact``, on by default) before a turn is embedded or written.
* Tool outputs are left out unless ``hooks.tool_outputs``; tool calls stay as their one short line unless
  ``hooks.tool_calls`` is off. What the session did is kept whatever these say (formats/agent.py; the lines:
  :mod:`hela_cli.text.session_lines`): a command's outcome with its first error line, a commit with its
  files, the user's answers to the agent's questions, the files a decision is about.
* :func:`capture_file` is the whole capture of one transcript file as a library call (what the hooks do,
  and what a benchmark replaying public transcripts calls).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from hela_cli.text.private import strip_private
from hela_cli.errors import InputError
from hela_cli.formats import Turn, parse_file
from hela_cli.memory import Memory
from hela_cli.hooks.space import has_database
from hela_cli.text.session_lines import capture_kind

#: agent -> the ``hela ingest --format`` name of its transcripts
TRANSCRIPT_FORMAT = {"claude-code": "claude_code", "codex": "codex", "gemini": "gemini"}


def transcript_turns(agent: str, path: str | Path, session: str | None, cfg: Any) -> list[Turn]:
    """Every turn of the transcript, in order, as capture stores them (session set, secrets redacted, tool
    turns filtered by the config)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: transcript not found")
    keep = cfg.hooks.line_chars if cfg.hooks.tool_outputs else 0
    convs = parse_file(p, TRANSCRIPT_FORMAT[agent], tool_output_chars=keep, private_tag=cfg.ingest.private_tag)
    redact = _redactor() if cfg.hooks.redact else None
    out = []
    for conv in convs:
        for t in conv.turns:
            kind = capture_kind(t.text, t.role)
            if (kind == "tool_output" and not cfg.hooks.tool_outputs) or (kind == "tool_call" and not cfg.hooks.tool_calls):
                continue
            text = strip_private(t.text, cfg.ingest.private_tag)   # before the redaction and every cut
            if redact is not None:
                text = redact(text)
            out.append(replace(t, text=text, session=session or t.session))
    return out


def _redactor() -> Any:
    from hela_cli.text.redact import redact

    return redact


def new_turns(mem: Memory, space: str, turns: list[Turn]) -> list[Turn]:
    """The turns whose source id the space does not hold yet (all of them for a new space or database)."""
    if not has_database(mem):
        return list(turns)
    sp = mem.store.get_space(space)
    if sp is None:
        return list(turns)
    known = mem.store.ids_by_source(sp.id, [t.source_id for t in turns if t.source_id])
    return [t for t in turns if not t.source_id or t.source_id not in known]


def store_turns(mem: Memory, space: str, turns: list[Turn]) -> dict[str, Any]:
    """Write the turns (one transaction: all or nothing); returns ``{"added", "skipped"}`` counts."""
    if not turns:
        return {"added": 0, "skipped": 0}
    rep = mem.add_batch(space, turns)
    return {"added": len(rep["added"]), "skipped": len(rep["skipped"])}


def capture_file(mem: Memory, agent: str, path: str | Path, space: str, session: str | None = None) -> dict[str, Any]:
    """Capture one transcript file of ``agent`` (claude-code, codex, gemini) into ``space``, as the hooks do
    (``mem.config.hooks`` decides what is kept): ``{"turns", "added", "skipped"}``. A second call adds
    nothing."""
    if agent not in TRANSCRIPT_FORMAT:
        raise InputError(f"unknown agent '{agent}' (known: {', '.join(TRANSCRIPT_FORMAT)})")
    turns = transcript_turns(agent, path, session, mem.config)
    rep = store_turns(mem, space, new_turns(mem, space, turns))
    return {"turns": len(turns), **rep}
