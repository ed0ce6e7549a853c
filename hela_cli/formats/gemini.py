"""``gemini``: a Gemini CLI chat, ``~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`` (0.61: a log of
records) or ``session-*.json`` (earlier versions: one document) (docs/formats.md).

The JSON Lines form starts with ``{sessionId, projectHash, startTime, ...}``; then each line is a message
``{id, timestamp, type: user|gemini|info|error|warning, content, toolCalls?, thoughts?}`` (the same id written
again when the message grows, e.g. by its tool calls) or an update ``{"$set": {...}}`` (``messages`` replaces
the whole list: on ``--resume`` Gemini rewrites the history, with new times and sometimes fewer messages).
The file is read as a log: every message ever written counts once, at its first appearance, so what was
said stays said and a rewrite adds nothing twice. The ``.json`` form is ``{sessionId, ..., messages}``.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from hela_cli.formats.agent import SessionWork, record_time, tool_output
from hela_cli.formats.base import (Conversation, Source, Turn, _Bad,
                                   _fill_times, _being_written, _jsonl_objects, _type_name)
from hela_cli.text.session_lines import line_kind

_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.S)   # what hooks (hela's own) added
_CONTEXT_PREFIXES = ("<session_context>", "<hook_context>")
_ROLES = {"user": "user", "gemini": "assistant", "model": "assistant"}


def is_gemini(obj: object) -> bool:
    """The first record of a Gemini CLI chat (detection)."""
    return isinstance(obj, dict) and isinstance(obj.get("sessionId"), str) and "projectHash" in obj


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []


def _calls(msg: dict) -> list[tuple[str, str, Any]]:
    """(call id, tool name, arguments) of a message: its ``toolCalls`` and any ``functionCall`` parts."""
    out = []
    for c in msg.get("toolCalls") or []:
        if isinstance(c, dict) and isinstance(c.get("name"), str):
            out.append((str(c.get("id") or c["name"]), c["name"], c.get("args")))
    content = msg.get("content")
    for p in content if isinstance(content, list) else []:
        fc = p.get("functionCall") if isinstance(p, dict) else None
        if isinstance(fc, dict) and isinstance(fc.get("name"), str):
            out.append((str(fc.get("id") or fc["name"]), fc["name"], fc.get("args")))
    return out


def _outputs(msg: dict) -> list[tuple[str, str, bool | None]]:
    """(call id, output text, failed?) of the tool results a message carries."""
    out = []
    parts = [(p, None) for p in (msg.get("content") if isinstance(msg.get("content"), list) else [])]
    for c in msg.get("toolCalls") or []:
        if isinstance(c, dict):
            status = c.get("status")
            failed = None if not isinstance(status, str) else status in ("error", "cancelled")
            parts.extend((p, failed) for p in c.get("result") or [])
    for p, failed in parts:
        fr = p.get("functionResponse") if isinstance(p, dict) else None
        if isinstance(fr, dict):
            resp = fr.get("response")
            text = resp.get("output", resp.get("error")) if isinstance(resp, dict) else resp
            if failed is None and isinstance(resp, dict) and "error" in resp and "output" not in resp:
                failed = True
            if isinstance(text, str):
                out.append((str(fr.get("id") or fr.get("name") or "tool"), text, failed))
    return out


def _turns_of(msg: dict, place: str, keep: int, work: SessionWork, seen: set[str]
              ) -> Iterator[tuple[str, str, str, str]]:
    """(key, role, text, message id) of each turn a message holds: its text, each tool call, each output kept."""
    mid = msg.get("id")
    if not isinstance(mid, str) or not mid.strip():
        raise _Bad(place, "a message without an 'id'")
    role = _ROLES.get(msg.get("type"))   # info, error, warning: the CLI's own notices
    if role is None:
        return
    text = "\n".join(_texts(msg.get("content"))).strip()
    if role == "user":
        if text.startswith("<session_context>"):
            return
        text = _HOOK_CONTEXT.sub("", text).strip()
    if text:
        yield mid, role, text, mid
    if role == "assistant":
        for cid, name, args in _calls(msg):
            if f"{cid}:call" not in seen:   # a call written again is not a second call
                yield f"{cid}:call", "assistant", work.call(cid, name, args), mid
    for cid, out, failed in _outputs(msg):
        if f"{cid}:out" in seen:
            continue
        out = out.replace("<untrusted_context>", "").replace("</untrusted_context>", "")
        outcome = work.result(cid, out, failed)
        line = "\n".join(x for x in (outcome, tool_output(out, keep)) if x)
        if line:
            yield f"{cid}:out", "user" if line_kind(outcome) == "answer" else "tool", line, mid


def _messages(src: Source) -> tuple[str | None, Iterator[tuple[str, dict]]]:
    """The session id and every message record in file order (both forms) as (place, message)."""
    text = src.text.lstrip()
    if text.startswith("{") and src.try_document() and isinstance(src.document(), dict) \
            and "messages" in src.document():
        doc = src.document()
        msgs = doc.get("messages")
        if not isinstance(msgs, list):
            raise _Bad("top level", f"'messages' must be an array, got {_type_name(msgs)}")
        session = doc.get("sessionId") if isinstance(doc.get("sessionId"), str) else None
        return session, ((f"message {i}", m) for i, m in enumerate(msgs, start=1))
    session: str | None = None
    records: list[tuple[str, dict]] = []
    for lineno, obj in _jsonl_objects(src):
        place = f"line {lineno}"
        if "$set" in obj:
            upd = obj["$set"]
            if isinstance(upd, dict) and isinstance(upd.get("messages"), list):
                records.extend((f"{place} message {i}", m) for i, m in enumerate(upd["messages"], start=1))
            if isinstance(upd, dict) and isinstance(upd.get("sessionId"), str) and session is None:
                session = upd["sessionId"]
        elif "type" in obj and "id" in obj:
            records.append((place, obj))
        elif is_gemini(obj) and session is None:
            session = obj["sessionId"]
    if not records and session is None and not _being_written(src):
        raise _Bad("top level", "no Gemini CLI chat record (sessionId, messages)")
    return session, iter(records)


def parse(src: Source) -> list[Conversation]:
    session, records = _messages(src)
    session = session or src.name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    rows = []
    seen: set[str] = set()
    work = SessionWork()
    for place, msg in records:
        if not isinstance(msg, dict):
            raise _Bad(place, f"expected a message object, got {_type_name(msg)}")
        when = record_time(msg, "timestamp", place)
        for key, role, text, _ in _turns_of(msg, place, src.tool_output_chars, work, seen):
            if key in seen:
                continue   # written again (grown, or rewritten on --resume): its first appearance counts
            seen.add(key)
            work.bind(f"{session}:{key}")
            rows.append((when, (role, text, session, f"{session}:{key}")))
    turns = _fill_times(rows, lambda w, p: Turn(p[0], p[1], w[0], w[1], p[2], p[3], p[0]))
    return [Conversation(None, work.annotate(turns), src.name, [], keyed=True)]
