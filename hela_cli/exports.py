"""Chat history people already have: ChatGPT and Claude.ai data exports, WhatsApp "export chat" files.

Registered in :data:`hela_cli.formats.FORMATS` as ``chatgpt``, ``claude`` and ``whatsapp``;
``parse_file(path, "auto")`` detects them. The rules every parser follows hold here too: any problem
raises ``InputError("FILE: PLACE: what is wrong")`` and nothing is returned (never partial data).

Every parser returns one :class:`~hela_cli.formats.Conversation` per session (a chat, or a WhatsApp day),
``name = None`` (all go into ``--space`` or ``default``), in chronological order. One session per
Conversation keeps re-imports idempotent: ingest hashes a turn with its position *in its Conversation*,
so a later export of the same history (more chats, longer chats) adds only the new turns.

``chatgpt``
    ``conversations.json`` from ChatGPT's "Export data": a JSON array (or one object) of conversations
    ``{id | conversation_id, title, create_time, mapping, current_node}``. ``mapping`` is a tree of nodes
    ``{id, message, parent, children}``; the turns are the branch ending at ``current_node`` (the one the
    user last saw), found by walking ``parent`` links to the root, so edited and regenerated branches
    are left out. Kept: ``author.role`` user or assistant, ``content_type`` ``text`` or
    ``multimodal_text``, the string parts of ``content.parts`` (images and other non-text parts are
    dropped; a voice transcription part keeps its ``text``). Skipped: system and tool messages, an
    assistant message addressed to a tool (``recipient`` not ``all``), code/thoughts/custom-instruction
    content, ``metadata.is_visually_hidden_from_conversation``, and messages with no text left.
    ``speaker = role = author.role``; time = ``message.create_time`` (epoch seconds), else that of the
    previous message on the branch, else the conversation's ``create_time``; ``time_str`` is that time as
    ISO 8601 UTC. ``session = "TITLE (ID8)"`` (the title on one line, cut at 80 characters; the first 8
    characters of the conversation id), ``title`` kept on the Conversation, ``source_id`` = the message id.
``claude``
    ``conversations.json`` from Claude.ai's "Export data": a JSON array (or one object) of
    ``{uuid, name, created_at, chat_messages: [{uuid, sender, text, content, created_at}]}``.
    ``sender`` ``human`` -> speaker/role ``user``, ``assistant`` -> ``assistant``; other senders are
    skipped. Text = the ``text`` blocks of ``content`` (tool use, tool results, thinking dropped), or
    ``text`` when there are no content blocks; attachments are not imported. Time = ``created_at``
    (ISO 8601), else the previous message's, else the conversation's. ``session = "NAME (UUID8)"``,
    ``source_id`` = the message uuid. Messages with no text are skipped.
``whatsapp``
    The ``.txt`` of WhatsApp's "Export chat", one message per line starting with a time stamp:
    ``[dd/mm/yyyy, hh:mm:ss] Name: text`` (iPhone) or ``dd/mm/yy, hh:mm - Name: text`` (Android);
    date separators ``/ . -``, 2- or 4-digit years, 24-hour or 12-hour (``1:56 PM``, ``1:56 p.m.``)
    clocks (``:`` or ``.``), ``yyyy-mm-dd`` dates, a short word between date and time (Finnish
    ``[12.3.2022 klo 14.08.18]``). Invisible direction marks WhatsApp adds (U+200E, around @mentions
    U+2068/U+2069) are removed from names and text. Day and month order: a first number above 12 anywhere means
    day-first, a second number above 12 means month-first (both: an error); when every date is
    ambiguous, the order under which the messages run forward in time wins, ties go to day-first.
    A line without a time stamp continues the previous message (joined with a newline). Skipped:
    system lines (no ``Name:``; on iPhone, a text starting with an invisible U+200E mark that is not a
    media note), deleted-message notes. Media notes (``<Media omitted>``, ``image omitted``,
    ``<attached: FILE>``, ``FILE (file attached)``) are removed from the text and the message is skipped
    when nothing else is left (a caption stays); ``<This message was edited>`` is removed.
    ``speaker`` = the name as written, ``role = None``; one session per calendar day, ``session =
    "YYYY-MM-DD"``, ``source_id = "YYYY-MM-DD:K"`` (K-th message line of that day); times are taken as UTC
    (the export has no zone); ``time_str`` = the stamp as written.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Iterator

from hela_cli.dates import epoch, format_iso, parse_date, parse_time_value
from hela_cli.formats import (
    Conversation,
    Turn,
    _Bad,
    _check_encodable,
    _show,
    _type_name,
    _want_dict,
    _want_list,
)

__all__ = ["EXPORT_FORMATS", "parse_chatgpt", "parse_claude", "parse_whatsapp", "is_whatsapp"]

EXPORT_FORMATS = ("chatgpt", "claude", "whatsapp")

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


# --------------------------------------------------------------------------- chatgpt


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


# --------------------------------------------------------------------------- claude

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


# --------------------------------------------------------------------------- whatsapp

_MARKS = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff"
_DATE = r"(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{1,4})"
_CLOCK = (r"(?P<time>(?P<h>\d{1,2})[:.](?P<mi>\d{2})(?:[:.](?P<s>\d{2}))?"
          r"(?:[\s\u00a0\u202f]*(?P<ap>[ap])\.?\s?m\.?)?)")
_GAP = r",?\s+(?:[^\W\d_]{1,4}\s+)?"  # between date and time: ", " or a short word ("klo" in Finnish)
_WA_BRACKET = re.compile(r"\[" + _DATE + _GAP + _CLOCK + r"\]\s?(?P<rest>.*)", re.IGNORECASE)
_WA_DASH = re.compile(_DATE + _GAP + _CLOCK + r"\s[-\u2013]\s(?P<rest>.*)", re.IGNORECASE)
_INVISIBLE = {ord(c): None for c in _MARKS if c != "\ufeff"}  # direction marks and isolates (not ZWJ)
_SENDER = re.compile(r"(?P<name>[^:\"\u201c\u201d]{1,80}?):(?:\s(?P<text>.*)|$)", re.DOTALL)
_MEDIA = re.compile(
    r"<media omitted>|<attached: [^>]*>|[^\s<>]+\.\w{2,5} \(file attached\)"
    r"|^(?:image|video|audio|sticker|gif|document|contact card) omitted$",
    re.IGNORECASE | re.MULTILINE)
_DELETED = re.compile(r"(?:this message was deleted|you deleted this message)\.?", re.IGNORECASE)
_EDITED = re.compile(r"\s*<this message was edited>", re.IGNORECASE)
_SHAPES = "'[dd/mm/yyyy, hh:mm:ss] Name: text' or 'dd/mm/yy, hh:mm - Name: text'"


def _strip_marks(line: str) -> str:
    return line.lstrip(_MARKS + " \t")


def _header(line: str, shape: re.Pattern[str] | None = None) -> re.Match[str] | None:
    s = _strip_marks(line).rstrip("\r")
    if shape is not None:
        return shape.fullmatch(s)
    return _WA_BRACKET.fullmatch(s) or _WA_DASH.fullmatch(s)


_LEADING_BLANK = re.compile(r"[\s" + _MARKS + r"]*")


def is_whatsapp(text: str) -> bool:
    """True when the first non-blank line is a WhatsApp message line (a time stamp, then text).
    Looks at that line only (detection runs on every file, some of them large)."""
    start = _LEADING_BLANK.match(text).end()
    end = text.find("\n", start)
    return _header(text[start:] if end < 0 else text[start:end]) is not None


@functools.lru_cache(maxsize=4096)
def _date_fields(date: str) -> tuple[int, int, int, bool]:
    """(a, b, year, year_first) of a numeric date; year_first for yyyy-mm-dd."""
    a, b, c = (int(x) for x in re.split(r"[./-]", date))
    if len(re.split(r"[./-]", date)[0]) == 4:
        return b, c, a, True  # yyyy-mm-dd: a=month, b=day below
    return a, b, (c + 2000 if c < 100 else c), False


def parse_whatsapp(text: str, name: str) -> list[Conversation]:
    lines = text.split("\n")
    shape: re.Pattern[str] | None = None
    # (lineno, date string, time match dict, sender or None, [text lines])
    msgs: list[list[Any]] = []
    for lineno, line in enumerate(lines, start=1):
        m = _header(line, shape)
        if m is None:
            if not msgs:
                if not line.strip(_MARKS + " \t\r"):
                    continue
                raise _Bad(f"line {lineno}", f"expected a WhatsApp message line {_SHAPES}, got {_show(line.strip(), 40)}")
            msgs[-1][4].append(line.rstrip("\r"))
            continue
        if shape is None:
            shape = _WA_BRACKET if _WA_BRACKET.fullmatch(_strip_marks(line).rstrip("\r")) else _WA_DASH
        rest = m.group("rest")
        sm = _SENDER.fullmatch(rest)
        if sm and sm.group("name").strip():
            sender = sm.group("name").translate(_INVISIBLE).strip()
            msgs.append([lineno, m.group("date"), m.groupdict(), sender, [sm.group("text") or ""]])
        else:
            msgs.append([lineno, m.group("date"), m.groupdict(), None, [rest]])
    if not msgs:
        raise _Bad("top level", f"no WhatsApp message lines {_SHAPES}")
    day_first = _day_order(msgs)
    stamped: list[tuple[int, float, str, str | None, str, str]] = []
    for lineno, date, g, sender, parts in msgs:
        a, b, year, year_first = _date_fields(date)
        day, month = (b, a) if year_first else ((a, b) if day_first else (b, a))
        hour, minute, second = int(g["h"]), int(g["mi"]), int(g["s"] or 0)
        stamp = f"{date}, {g['time']}"
        if g["ap"]:
            if not 1 <= hour <= 12:
                raise _Bad(f"line {lineno}", f"hour {hour} is not a 12-hour clock hour in {_show(stamp)}")
            hour = hour % 12 + (12 if g["ap"].lower() == "p" else 0)
        if hour > 23 or minute > 59 or second > 59:
            raise _Bad(f"line {lineno}", f"invalid time {_show(g['time'])}")
        try:
            ts = epoch(year, month, day, hour, minute, second, shown=date)
        except ValueError as e:
            raise _Bad(f"line {lineno}", str(e)) from None
        stamped.append((lineno, ts, stamp, sender, "\n".join(parts), f"{year:04d}-{month:02d}-{day:02d}"))
    by_day: dict[str, list[Turn]] = {}
    counters: dict[str, int] = {}
    first_ts: dict[str, float] = {}
    for lineno, ts, stamp, sender, body, day in stamped:
        if sender is None:
            continue  # system line: "Messages and calls are end-to-end encrypted", "Ann added Bob", ...
        counters[day] = counters.get(day, 0) + 1
        k = counters[day]
        noted = "<" in body or "omitted" in body or "attached" in body  # cheap test before the regexes
        if body[:1] in _MARKS and not (noted and _MEDIA.search(_strip_marks(body))):
            continue  # iPhone system notice, attributed to the chat: "\u200eMessages and calls are ..."
        if noted:
            body = _EDITED.sub("", _MEDIA.sub("", _strip_marks(body)))
        body = "\n".join(ln.rstrip() for ln in body.translate(_INVISIBLE).split("\n")).strip()
        if not body or (len(body) < 30 and _DELETED.fullmatch(body)):
            continue
        first_ts.setdefault(day, ts)
        by_day.setdefault(day, []).append(Turn(sender, body, ts, stamp, day, f"{day}:{k}", None))
    if not by_day:
        raise _Bad("top level", "no messages with text (only system lines, media or deleted messages)")
    order = sorted(by_day, key=lambda d: (first_ts[d], d))
    return [Conversation(None, by_day[d], name, []) for d in order]


def _day_order(msgs: list[list[Any]]) -> bool:
    """True for day-first dates (dd/mm), False for month-first (mm/dd); see the module docstring."""
    first_over: int | None = None
    second_over: int | None = None
    pairs: list[tuple[int, int, int]] = []
    for lineno, date, g, *_ in msgs:
        a, b, year, year_first = _date_fields(date)
        if year_first:
            continue
        if a > 12 and first_over is None:
            first_over = lineno
        if b > 12 and second_over is None:
            second_over = lineno
        pairs.append((year, a, b))
    if first_over is not None and second_over is not None:
        raise _Bad(f"line {max(first_over, second_over)}",
                   f"dates mix day-first (line {first_over}) and month-first (line {second_over}) order")
    if first_over is not None:
        return True
    if second_over is not None:
        return False

    def backwards(key: Callable[[tuple[int, int, int]], tuple[int, int, int]]) -> int:
        keys = [key(p) for p in pairs]
        return sum(1 for x, y in zip(keys, keys[1:]) if y < x)

    return backwards(lambda p: (p[0], p[2], p[1])) <= backwards(lambda p: (p[0], p[1], p[2]))
