"""What the ChatGPT and Claude.ai export parsers share: one :class:`Conversation` per chat, in
chronological order, ``name = None`` (all go into ``--space`` or ``default``); one chat per Conversation
keeps re-imports idempotent (ingest hashes a turn with its position *in its Conversation*, so a later
export of the same history adds only the new turns)."""

from __future__ import annotations

from typing import Any, Iterator

from hela_cli.text.dates import format_iso, parse_date, parse_time_value
from hela_cli.formats.base import Conversation, _Bad, _check_encodable, _show, _type_name, _want_dict

_Time = tuple[float, str]


def _label(value: Any, limit: int = 30) -> str:
    if isinstance(value, str) and len(value) + 2 <= limit and value.isascii() and value.isprintable() and '"' not in value \
            and "\\" not in value:
        return value  # what _show would give, without the JSON round trip (hot: one per message)
    return _show(value, limit).strip('"')


def _opt_str(obj: dict, key: str, place: str) -> str | None:
    v = obj.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        raise _Bad(place, f"{key!r} must be a string, got {_type_name(v)} {_show(v, 30)}")
    _check_encodable(v, place, key)
    return v


def _req_id(obj: dict, keys: tuple[str, ...], place: str) -> str:
    for key in keys:
        v = obj.get(key)
        if v is None:
            continue
        if not isinstance(v, str) or not v.strip():
            raise _Bad(place, f"{key!r} must be a non-empty string, got {_show(v, 30)}")
        _check_encodable(v, place, key)
        return v
    raise _Bad(place, f"missing {keys[0]!r}")


def _time(value: Any, place: str, key: str, iso_only: bool = False) -> _Time | None:
    if value is None:
        return None
    try:
        if iso_only:
            if not isinstance(value, str):
                raise ValueError(f"expected an ISO 8601 string, got {_type_name(value)}")
            return parse_date(value), value
        ts, _ = parse_time_value(value)
    except ValueError as e:
        raise _Bad(place, f"{key!r}: {e}") from None
    return ts, (value if isinstance(value, str) else format_iso(ts))


def _session(title: str, cid: str) -> str:
    """``"TITLE (ID8)"``: readable, and distinct for chats that share a title ("New chat")."""
    title = " ".join(title.split())
    return f"{title[:80].rstrip()}{'...' if len(title) > 80 else ''} ({cid.strip()[:8]})"


def _top_list(obj: Any, what: str) -> list:
    if isinstance(obj, dict):
        return [obj]
    if not isinstance(obj, list):
        raise _Bad("top level", f"expected an array of {what} or one {what[:-1]} object, got {_type_name(obj)}")
    if not obj:
        raise _Bad("top level", f"empty JSON array; no {what}")
    return obj


def _finish(convs: list[tuple[float, Conversation]], what: str) -> list[Conversation]:
    if not convs:
        raise _Bad("top level", f"no user or assistant messages with text in any {what}")
    convs.sort(key=lambda c: c[0])  # chronological (exports list the newest first); stable for ties
    return [c for _, c in convs]


def _conversations(obj: Any, id_keys: tuple[str, ...], title_key: str,
                   id_label: str) -> Iterator[tuple[dict, str, str, str]]:
    """The conversation objects of a ChatGPT / Claude export: ``(object, id, title, place)``, each
    checked to be an object with an id seen once (``place`` names it in errors)."""
    seen: dict[str, int] = {}
    for ci, c in enumerate(_top_list(obj, "conversations"), start=1):
        place = f"conversation {ci}"
        _want_dict(c, place, "a conversation object")
        cid = _req_id(c, id_keys, place)
        title = (_opt_str(c, title_key, place) or "").strip() or "untitled"
        place = f"conversation {ci} ({_label(title)})"
        if cid in seen:
            raise _Bad(place, f"duplicate {id_label} {_show(cid)} (also conversation {seen[cid]})")
        seen[cid] = ci
        yield c, cid, title, place
