"""``codex``: a Codex CLI session, ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl``
(docs/formats.md).

Each line is ``{"timestamp", "type", "payload"}``. ``session_meta`` names the session (``payload.id``);
``response_item`` lines are what the model saw and said: ``message`` (role ``user`` / ``assistant`` /
``developer``; ``content`` blocks ``input_text`` / ``output_text``), ``function_call`` (``name``,
``arguments`` as a JSON string, ``call_id``), ``custom_tool_call`` (``apply_patch`` with its patch as
``input``), their ``*_output`` lines, ``reasoning``. The rest (``event_msg``, ``turn_context``,
``world_state``, ``token_usage_record``, ...) repeats or describes these and is skipped.
"""

from __future__ import annotations

import re

from hela_cli.formats.agent import SessionWork, record_time, tool_output, without_reminders
from hela_cli.formats.base import (Conversation, Source, Turn, _Bad,
                                   _fill_times, _being_written, _jsonl_objects, _type_name)

# a "user" message that Codex writes itself: the environment, AGENTS.md, skills, an aborted turn's note
_CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "<skills_instructions>", "<turn_aborted>",
                     "<permissions instructions>", "<collaboration_mode>", "<user_shell_command>",
                     "# AGENTS.md instructions for ")
_SESSION_IN_NAME = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")


def is_codex(obj: object) -> bool:
    """A record of a Codex rollout file (detection: the first line)."""
    return isinstance(obj, dict) and obj.get("type") in ("session_meta", "response_item", "event_msg", "turn_context") \
        and isinstance(obj.get("payload"), dict) and "timestamp" in obj


def _message_text(payload: dict) -> str:
    content = payload.get("content")
    if isinstance(content, str):
        return content.strip()
    parts = [b["text"] for b in content or [] if isinstance(b, dict) and isinstance(b.get("text"), str)
             and b.get("type") in ("input_text", "output_text", "text")]
    return without_reminders("\n".join(parts))


def parse(src: Source) -> list[Conversation]:
    m = _SESSION_IN_NAME.search(src.name)
    session = m.group(1) if m else src.name.rsplit("/", 1)[-1].removesuffix(".jsonl")
    keep = src.tool_output_chars
    rows = []
    records = 0
    work = SessionWork()
    for lineno, obj in _jsonl_objects(src):
        records += 1
        place = f"line {lineno}"
        kind, payload = obj.get("type"), obj.get("payload")
        if kind in ("session_meta", "turn_context") and isinstance(payload, dict):
            work.set_root(payload.get("cwd"))
        if kind == "session_meta":
            if isinstance(payload, dict) and isinstance(payload.get("id"), str) and payload["id"].strip():
                session = payload["id"]
            continue
        if kind != "response_item":
            continue
        if not isinstance(payload, dict):
            raise _Bad(place, f"'payload' must be an object, got {_type_name(payload)}")
        ptype = payload.get("type")
        role = "assistant"
        if ptype == "message":
            role = payload.get("role")
            if role not in ("user", "assistant"):
                continue   # developer / system: instructions, and the context hooks add (hela's own among them)
            text = _message_text(payload)
            if role == "user" and text.startswith(_CONTEXT_PREFIXES):
                continue
        elif ptype in ("function_call", "custom_tool_call", "local_shell_call"):
            name = payload.get("name") or ("shell" if ptype == "local_shell_call" else "tool")
            if name == "apply_patch" and isinstance(payload.get("input"), str):
                args = {"input": payload["input"]}
            else:
                args = payload.get("arguments", payload.get("input", payload.get("action")))
            text = work.call(payload.get("call_id"), str(name), args)
        elif ptype in ("function_call_output", "custom_tool_call_output"):
            out = payload.get("output")
            if isinstance(out, dict):
                out = out.get("content") or out.get("output")
            outcome = work.result(payload.get("call_id"), out) if isinstance(out, str) else ""
            if isinstance(out, str) and "\nOutput:\n" in out:   # exec_command: a header (chunk id, wall time) first
                out = out.split("\nOutput:\n", 1)[1]
            kept = tool_output(out, keep) if isinstance(out, str) else ""
            text = "\n".join(x for x in (outcome, kept) if x)
            role = "tool"
        else:
            continue   # reasoning, web search calls, tool outputs (not kept)
        if not text:
            continue
        ident = payload.get("id") or payload.get("call_id")
        ident = f"{ident}:out" if ptype.endswith("_output") and ident else ident
        source_id = f"{session}:{ident}" if isinstance(ident, str) and ident else f"{session}:line{lineno}"
        work.bind(source_id)
        rows.append((record_time(obj, "timestamp", place), (role, text, session, source_id)))
    if not records and not _being_written(src):
        raise _Bad("top level", "no complete JSON line (a Codex rollout has one record per line)")
    seen: set[str] = set()
    unique = []
    for w, p in rows:   # an id seen twice (a response replayed into the file): the first one
        if p[3] not in seen:
            seen.add(p[3])
            unique.append((w, p))
    turns = _fill_times(unique, lambda w, p: Turn(p[0], p[1], w[0], w[1], p[2], p[3], p[0]))
    return [Conversation(None, work.annotate(turns), src.name, [], keyed=True)]
