"""``claude``: ``conversations.json`` of Claude.ai's "Export data" (docs/formats.md)."""

from __future__ import annotations

from typing import Any

from hela_cli.formats.base import Conversation, Source, Turn, _Bad, _check_encodable, _type_name, _want_dict, _want_list
from hela_cli.formats.chat_export import _conversations, _finish, _opt_str, _session, _time, _Time


def parse(src: Source) -> list[Conversation]:
    return parse_claude(src.document(), src.name)


_CLAUDE_SENDERS = {"human": "user", "user": "user", "assistant": "assistant"}


def _claude_text(msg: dict, place: str) -> str:
    """The ``text`` blocks of ``content`` (tool use, tool results, thinking dropped); the plain ``text``
    field when there are no content blocks."""
    blocks = msg.get("content")
    if not blocks:
        return (_opt_str(msg, "text", place) or "").strip()
    parts: list[str] = []
    for bi, b in enumerate(_want_list(blocks, place, "content"), start=1):
        bplace = f"{place} content {bi}"
        _want_dict(b, bplace, "a content block object")
        if b.get("type") == "text":
            t = _opt_str(b, "text", bplace)
            if t and t.strip():
                parts.append(t.strip())
    return "\n\n".join(parts)


def parse_claude(obj: Any, name: str) -> list[Conversation]:
    convs: list[tuple[float, Conversation]] = []
    for c, cid, title, place in _conversations(obj, ("uuid",), "name", "uuid"):
        if "chat_messages" not in c:
            raise _Bad(place, "missing 'chat_messages'")
        messages = _want_list(c["chat_messages"], place, "chat_messages")
        conv_time = _time(c.get("created_at"), place, "created_at", iso_only=True)
        session = _session(title, cid)
        turns: list[Turn] = []
        prev: _Time | None = None
        for mi, msg in enumerate(messages, start=1):
            mplace = f"{place} message {mi}"
            _want_dict(msg, mplace, "a message object")
            sender = msg.get("sender")
            if not isinstance(sender, str):
                raise _Bad(mplace, f"'sender' must be a string, got {_type_name(sender)}")
            text = _claude_text(msg, mplace)
            when = _time(msg.get("created_at"), mplace, "created_at", iso_only=True)
            if when is not None:
                prev = when
            role = _CLAUDE_SENDERS.get(sender)
            if role is None or not text:
                continue
            mid = msg.get("uuid")
            source_id = mid if isinstance(mid, str) and mid.strip() else f"{cid}:{mi - 1}"
            _check_encodable(source_id, mplace, "uuid")
            ts, time_str = when or prev or conv_time or (0.0, "")
            turns.append(Turn(role, text, ts, time_str, session, source_id, role))
        if turns:
            convs.append((turns[0].timestamp, Conversation(None, turns, name, [], title=title)))
    return _finish(convs, "conversation")
