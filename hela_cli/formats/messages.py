"""``messages``: chat messages as a JSON array or JSONL (docs/formats.md)."""

from __future__ import annotations

from typing import Any

from hela_cli.text.dates import parse_time_value as _parse_time_value
from hela_cli.formats.base import (_JSONL_SUFFIXES, Conversation, Source, Turn, _Bad, _check_encodable, _fill_times,
                                   _get_str, _loads, _show, _type_name, _want_dict)


def parse(src: Source) -> list[Conversation]:
    text, name = src.text, src.name
    if not src.parsed and text.lstrip()[:1] == "[":
        src.document()  # raises the JSON error with its position
    if not src.parsed and not name.lower().endswith(_JSONL_SUFFIXES):
        src.try_document()  # a single (possibly pretty-printed) JSON document?
    if src.parsed:
        parsed = src.document()
        if isinstance(parsed, list):
            records = [(f"message {i}", m) for i, m in enumerate(parsed, start=1)]
            return _parse_messages_list(records, name)
        if isinstance(parsed, dict):
            return _parse_messages_list([("message 1", parsed)], name)
        raise _Bad("top level", f"expected a JSON array of messages or JSONL, got {_type_name(parsed)}")
    records = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        obj = _loads(line, name, line_offset=lineno - 1)
        if not isinstance(obj, dict):
            raise _Bad(f"line {lineno}", f"expected a JSON object, got {_type_name(obj)}")
        records.append((f"line {lineno}", obj))
    return _parse_messages_list(records, name)



def _parse_messages_list(records: list[tuple[str, Any]], name: str) -> list[Conversation]:
    """records: (place, object) in file order."""
    if not records:
        raise _Bad("top level", "no messages")
    raw: list[tuple[str, str, str, str | None, str | None, tuple[float, str] | None, str]] = []
    seen_ids: dict[str, str] = {}
    for idx, (place, m) in enumerate(records):
        _want_dict(m, place, "a message object")
        role = _get_str(m, "role", place).strip()
        content = _get_str(m, "content", place).strip()
        speaker = _get_str(m, "name", place, required=False, allow_empty=True)
        speaker = speaker.strip() if speaker is not None and speaker.strip() else role
        when: tuple[float, str] | None = None
        for key in ("timestamp", "created_at"):
            if key in m and m[key] is not None:
                try:
                    when = _parse_time_value(m[key])
                except ValueError as e:
                    raise _Bad(place, f"{key!r}: {e}") from None
                break
        sess = m.get("session")
        if sess is None:
            session = "session_1"
        elif isinstance(sess, bool) or not isinstance(sess, (str, int)):
            raise _Bad(place, f"'session' must be a string or integer, got {_type_name(sess)}")
        elif isinstance(sess, int):
            session = f"session_{sess}"
        else:
            if not sess.strip():
                raise _Bad(place, "'session' is empty")
            _check_encodable(sess, place, "session")
            session = sess.strip()
        mid = m.get("id")
        if mid is None:
            source_id = f"{session}:{idx}"
        elif isinstance(mid, bool) or not isinstance(mid, (str, int)):
            raise _Bad(place, f"'id' must be a string or integer, got {_type_name(mid)}")
        else:
            source_id = str(mid)
            if not source_id.strip():
                raise _Bad(place, "'id' is empty")
            _check_encodable(source_id, place, "id")
        if source_id in seen_ids:
            raise _Bad(place, f"duplicate id {_show(source_id)} (first at {seen_ids[source_id]})")
        seen_ids[source_id] = place
        raw.append((speaker, content, role, session, source_id, when, place))
    turns = _fill_times(
        [(w, (sp, c, s, sid, r)) for sp, c, r, s, sid, w, _ in raw],
        lambda w, p: Turn(p[0], p[1], w[0], w[1], p[2], p[3], p[4]),
    )
    return [Conversation(None, turns, name, [])]
