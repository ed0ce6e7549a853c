"""``chatgpt``: ``conversations.json`` of ChatGPT's "Export data" (docs/formats.md)."""

from __future__ import annotations

from typing import Any

from hela_cli.formats.base import Conversation, Source, Turn, _Bad, _check_encodable, _show, _type_name, _want_dict, \
    _want_list
from hela_cli.formats.chat_export import _conversations, _finish, _label, _session, _time, _Time


def parse(src: Source) -> list[Conversation]:
    return parse_chatgpt(src.document(), src.name)


def _branch(mapping: dict, current: str, place: str) -> list[tuple[str, Any]]:
    """The nodes from the root down to ``current`` (walking ``parent`` links), as (node id, node)."""
    chain: list[tuple[str, Any]] = []
    seen: set[str] = set()
    nid: Any = current
    while nid is not None:
        if not isinstance(nid, str):
            raise _Bad(place, f"'parent' must be a string or null, got {_type_name(nid)}")
        if nid in seen:
            raise _Bad(place, f"node {_show(nid, 30)}: 'parent' links form a cycle")
        seen.add(nid)
        if nid not in mapping:
            child = chain[-1][0] if chain else None
            where = f"parent of node {_show(child, 30)}" if child else "'current_node'"
            raise _Bad(place, f"{where} {_show(nid, 30)} is not in 'mapping'")
        node = _want_dict(mapping[nid], f"{place} node {_label(nid)}", "a node object")
        chain.append((nid, node))
        nid = node.get("parent")
    chain.reverse()
    return chain


def _chatgpt_text(content: dict, place: str) -> str | None:
    """The text of a kept content type, or None for content that is not conversation text."""
    ctype = content.get("content_type")
    if ctype not in ("text", "multimodal_text"):
        return None  # code, execution_output, thoughts, reasoning_recap, user_editable_context, ...
    if "parts" not in content:
        raise _Bad(place, "missing 'content.parts'")
    parts = _want_list(content["parts"], place, "parts")
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, dict) and p.get("content_type") == "audio_transcription" and isinstance(p.get("text"), str):
            out.append(p["text"])
        # image pointers and other non-text parts are dropped
    for i, s in enumerate(out):
        _check_encodable(s, place, f"parts[{i}]")
    return "\n".join(s.strip() for s in out if s.strip())


def parse_chatgpt(obj: Any, name: str) -> list[Conversation]:
    convs: list[tuple[float, Conversation]] = []
    for c, cid, title, place in _conversations(obj, ("id", "conversation_id"), "title", "conversation id"):
        if "mapping" not in c:
            raise _Bad(place, "missing 'mapping'")
        mapping = c["mapping"]
        if not isinstance(mapping, dict):
            raise _Bad(place, f"'mapping' must be an object, got {_type_name(mapping)}")
        conv_time = _time(c.get("create_time"), place, "create_time")
        if not mapping:
            continue  # a conversation with no messages at all
        current = c.get("current_node")
        if current is None:
            raise _Bad(place, "missing 'current_node'")
        if not isinstance(current, str):
            raise _Bad(place, f"'current_node' must be a string, got {_type_name(current)}")
        session = _session(title, cid)
        turns: list[Turn] = []
        prev: _Time | None = None
        for nid, node in _branch(mapping, current, place):
            msg = node.get("message")
            if msg is None:
                continue  # the root node
            mplace = f"{place} node {_label(nid)}"
            _want_dict(msg, mplace, "a message object")
            author = _want_dict(msg.get("author"), mplace, "'author' to be an object")
            role = author.get("role")
            if not isinstance(role, str):
                raise _Bad(mplace, f"'author.role' must be a string, got {_type_name(role)}")
            meta = msg.get("metadata")
            if meta is not None and not isinstance(meta, dict):
                raise _Bad(mplace, f"'metadata' must be an object, got {_type_name(meta)}")
            content = _want_dict(msg.get("content"), mplace, "'content' to be an object")
            text = _chatgpt_text(content, mplace)
            when = _time(msg.get("create_time"), mplace, "create_time")
            if when is not None:
                prev = when
            recipient = msg.get("recipient")
            if (role not in ("user", "assistant") or text is None or not text.strip()
                    or (meta or {}).get("is_visually_hidden_from_conversation")
                    or (isinstance(recipient, str) and recipient != "all")):
                continue
            mid = msg.get("id")
            source_id = mid if isinstance(mid, str) and mid.strip() else nid
            _check_encodable(source_id, mplace, "id")
            ts, time_str = when or prev or conv_time or (0.0, "")
            turns.append(Turn(role, text.strip(), ts, time_str, session, source_id, role))
        if turns:
            convs.append((turns[0].timestamp, Conversation(None, turns, name, [], title=title)))
    return _finish(convs, "conversation")
