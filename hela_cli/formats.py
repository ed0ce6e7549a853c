"""Conversation file parsers: LoCoMo, LongMemEval, chat messages, plain text, chat exports.

``parse_file(path, fmt="auto")`` returns a list of :class:`Conversation`; every
problem with the input raises :class:`hela_cli.errors.InputError` with a single
line ``"FILE: PLACE: what is wrong"`` and nothing is returned (no partial data).
``detect_format(path)`` names the format ``auto`` would pick.

Formats
-------
``locomo``
    JSON: a list of samples (or one sample object). Each sample has
    ``sample_id``, ``conversation`` (``speaker_a``, ``speaker_b``, ``session_N``
    turn lists, ``session_N_date_time`` such as ``"1:56 pm on 8 May, 2023"``)
    and optionally ``qa`` (kept as given). Turns are ``{speaker, dia_id, text}``
    plus optional ``img_url``, ``blip_caption``, ``query``; a caption is
    appended to the text as ``" [shares an image: CAPTION]"`` (a turn may then
    have empty text). One Conversation per sample, ``name = sample_id``,
    sessions in numeric order, ``source_id = dia_id`` (unique per sample).
``longmemeval``
    JSON: a list of items (or one item) with ``question_id``,
    ``haystack_sessions`` (lists of ``{role, content}``), ``haystack_dates``
    such as ``"2023/05/20 (Sat) 02:21"`` and optionally
    ``haystack_session_ids``, ``question``, ``answer``, ``question_date``.
    One Conversation per item, ``name = question_id``, ``speaker = role``,
    ``session`` = the session id (``session_K``, 1-based, when ids are
    absent; a repeated id, as LongMemEval-S has for a few filler sessions,
    becomes ``"<id>#2"``, ``"<id>#3"``...),
    ``source_id = "<session id>:<0-based turn index>"`` (a turn whose
    content is empty or blank is skipped; the index still counts it); ``qa`` holds
    one ``{question, answer, question_date}`` entry when a question is given.
``messages``
    A JSON array of message objects, or JSONL (one object per line, blank lines
    allowed). A message is ``{role, content}`` plus optional ``name``,
    ``timestamp`` or ``created_at`` (ISO 8601 string or epoch seconds),
    ``session`` (string, or integer N meaning ``session_N``) and ``id``.
    ``speaker = name or role``; ``source_id = id`` when given, else
    ``"<session>:<0-based index of the message in the file>"``.
    Without ``session`` every turn is in ``session_1``. One Conversation,
    ``name = None``.
``text``
    A plain transcript of ``Speaker: text`` lines. A speaker is 1-4 words
    (letters, digits, ``.`` ``_`` ``'`` ``-``; at most 40 characters) starting
    with a letter, followed by ``:``. Any other non-blank line continues the
    previous turn (joined with a newline); an *indented* line is always a
    continuation, so indent a continuation that itself looks like
    ``Word: ...``. Blank lines are ignored. Session headers, the date being
    optional in both forms::

        ## Session 2 — 12 May 2023 3:00 pm      (1-6 '#'; separator —, –, -, : or |,
                                                 or the date in parentheses)
        --- session 2 (2023-05-12 15:00) ---     (3+ '-' or '=' on both sides; the
                                                 date in parentheses or after —, –, :)

    "session" is case-insensitive.

    Other lines starting with ``#`` are comments, unless their first word is
    "session" (or a misspelling of it): those are malformed headers, an error.
    Lines made only of ``-``, ``=``, ``*``, ``_`` (3 or more) are ignored.
    Session numbers must be unique; turns keep file order. Turns before the
    first header are in ``session_1`` (a later "session 1" header is then an
    error). ``source_id = "D<N>:<k>"`` (session
    number, 1-based turn within the session), like LoCoMo dia_ids; session
    ids are ``session_N``. One Conversation, ``name = None``.

``chatgpt``, ``claude``, ``whatsapp``
    Chat exports people already have (ChatGPT and Claude.ai ``conversations.json``, WhatsApp
    "export chat" ``.txt``): parsed by :mod:`hela_cli.exports`, whose docstring describes them.

Dates
-----
All timestamps are UTC epoch seconds; dates without a zone are taken as UTC.
Date strings are parsed by :func:`hela_cli.dates.parse_date` (its docstring lists the accepted forms:
ISO 8601, LongMemEval ``2023/05/20 (Sat) 02:21``, LoCoMo ``1:56 pm on 8 May, 2023``, ``12 May 2023 3:00
pm``, ``May 12, 2023``...; matched whole, never fuzzily). Epoch numbers are seconds. A year outside
1900..2200 is an error.

No-timestamp rule (messages, text): a turn without a date inherits the previous
dated turn's timestamp and date string; turns before the first date take the
first date in the file; if the file has no date at all every turn gets
``timestamp = 0.0`` and ``time_str = ""``. Never the file's mtime or the clock:
parsing is deterministic.

Detection (``auto``)
--------------------
``.jsonl`` / ``.ndjson`` files are messages. A file whose first non-blank
line is a WhatsApp message line (``[08/05/2023, 13:56:12] Ann: hi``,
``08/05/23, 13:56 - Ann: hi``) is whatsapp. Otherwise, when the first
non-blank character is ``[`` or ``{`` the file is JSON: objects with
``conversation`` are locomo, with ``haystack_sessions`` longmemeval, with
``mapping`` chatgpt, with ``chat_messages`` claude, with
``role``/``content`` messages; if the whole file is not valid JSON but the first
non-blank line is a JSON object it is JSONL messages, else the JSON error is
reported. Anything else is text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hela_cli.dates import MAX_YEAR, MIN_YEAR, parse_date  # noqa: F401  (MIN_YEAR, MAX_YEAR: still imported from here)
from hela_cli.dates import parse_time_value as _parse_time_value
from hela_cli.dates import _show, _type_name  # noqa: F401  (message helpers shared with the parsers)
from hela_cli.errors import InputError

__all__ = [
    "FORMATS",
    "Turn",
    "Conversation",
    "parse_file",
    "detect_format",
    "parse_date",
]

FORMATS = ("auto", "locomo", "longmemeval", "messages", "text", "chatgpt", "claude", "whatsapp")

CAPTION_TEMPLATE = " [shares an image: {}]"


@dataclass
class Turn:
    speaker: str  # "Caroline", "user", "assistant"
    text: str  # turn text; an image caption is appended as ' [shares an image: CAPTION]'
    timestamp: float  # UTC epoch seconds of the turn (its session's date/time)
    time_str: str  # the original date string
    session: str  # session id, e.g. "session_3"
    source_id: str | None  # e.g. LoCoMo dia_id "D3:12"
    role: str | None = None  # chat role when known


@dataclass
class Conversation:
    name: str | None  # suggested space name (LoCoMo sample_id)
    turns: list[Turn]  # in conversation order
    source: str  # file path it came from
    qa: list[dict] = field(default_factory=list)  # LoCoMo qa list if present, else []
    title: str | None = None  # a chat export's conversation title (chatgpt, claude), else None


# --------------------------------------------------------------------------- errors


class _Bad(Exception):
    """Internal: a problem at a place; turned into InputError with the path."""

    def __init__(self, place: str, what: str):
        super().__init__(what)
        self.place = place
        self.what = what


_CTRL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def _one_line(s: str) -> str:
    def esc(m: re.Match[str]) -> str:
        c = m.group(0)
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c, f"\\x{ord(c):02x}")

    s = _CTRL.sub(esc, s)
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        s = s.encode("utf-8", "backslashreplace").decode("utf-8")
    return s


def _error(path: str, place: str | None, what: str) -> InputError:
    msg = f"{path}: {place}: {what}" if place else f"{path}: {what}"
    return InputError(_one_line(msg))


# --------------------------------------------------------------------------- dates
# parsing lives in hela_cli/dates.py (parse_date, parse_time_value); the names stay importable here


# --------------------------------------------------------------------------- reading

_JSONL_SUFFIXES = (".jsonl", ".ndjson")


def _read_text(path: str | Path) -> str:
    p = Path(path)
    name = str(path)
    try:
        if not p.exists():
            raise _error(name, None, "no such file")
        if p.is_dir():
            raise _error(name, None, "is a directory, expected a file")
        if not p.is_file():
            raise _error(name, None, "not a regular file")
        data = p.read_bytes()
    except InputError:
        raise
    except PermissionError:
        raise _error(name, None, "cannot read file (permission denied)") from None
    except OSError as e:
        raise _error(name, None, f"cannot read file ({e.strerror or e.__class__.__name__})") from None
    except ValueError as e:  # e.g. an embedded NUL in the path
        raise _error(name, None, f"invalid path ({e})") from None
    if not data.strip():
        raise _error(name, None, "file is empty")
    if data.startswith(b"PK\x03\x04"):
        raise _error(name, None, "a zip archive; unzip it and ingest the file inside (conversations.json of a "
                                 "ChatGPT or Claude.ai export, _chat.txt of a WhatsApp export)")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise _error(name, "byte 0", "file is UTF-16 encoded; expected UTF-8")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise _error(name, f"byte {nul}", "binary file (NUL byte); expected UTF-8 text")
    head = data[:8192]
    ctrl = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13))
    if ctrl > max(8, len(head) // 10):
        raise _error(name, None, "binary file (many control bytes); expected UTF-8 text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise _error(
            name,
            f"line {line} (byte {e.start})",
            f"not valid UTF-8 (byte 0x{data[e.start]:02x}); re-save the file as UTF-8",
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise _error(name, None, "file is empty")
    return text


def _json_error_place(e: json.JSONDecodeError, line_offset: int = 0) -> tuple[str, str]:
    return f"line {e.lineno + line_offset}", f"invalid JSON ({e.msg}, col {e.colno})"


def _loads(text: str, name: str, line_offset: int = 0) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        place, what = _json_error_place(e, line_offset)
        if e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string"):
            what = f"invalid JSON, truncated? ({e.msg}, col {e.colno})"
        raise _error(name, place, what) from None
    except RecursionError:
        raise _error(name, f"line {line_offset + 1}", "invalid JSON (nested too deeply)") from None
    except ValueError as e:  # e.g. integer with too many digits
        raise _error(name, f"line {line_offset + 1}", f"invalid JSON ({e})") from None


def _first_nonblank_line(text: str) -> tuple[int, str]:
    for i, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            return i, line
    return 0, ""


def _shape_of(obj: Any) -> str | None:
    """Format name implied by a parsed JSON document, or None."""
    items = obj if isinstance(obj, list) else [obj]
    for it in items:
        if isinstance(it, dict):
            if "conversation" in it:
                return "locomo"
            if "haystack_sessions" in it:
                return "longmemeval"
            if "mapping" in it:
                return "chatgpt"
            if "chat_messages" in it:
                return "claude"
            if "role" in it or "content" in it:
                return "messages"
            return None
    return None


def _sniff(text: str, name: str) -> tuple[str, Any, bool]:
    """(format, parsed JSON or None, parsed-ok flag)."""
    if name.lower().endswith(_JSONL_SUFFIXES):
        return "messages", None, False
    from hela_cli.exports import is_whatsapp

    if is_whatsapp(text):
        return "whatsapp", None, False
    stripped = text.lstrip()
    if stripped[:1] not in ("[", "{"):
        return "text", None, False
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        lineno, line = _first_nonblank_line(text)
        try:
            first = json.loads(line)
        except (ValueError, RecursionError):
            first = None
        if isinstance(first, dict):
            return "messages", None, False
        _loads(text, name)  # raises the JSON error with its position
        raise AssertionError("unreachable")  # pragma: no cover
    if isinstance(obj, list) and not obj:
        raise _error(name, "top level", "empty JSON array; nothing to import")
    fmt = _shape_of(obj)
    if fmt is None:
        if isinstance(obj, (list, dict)):
            first = obj[0] if isinstance(obj, list) else obj
            if isinstance(first, dict):
                keys = ", ".join(sorted(map(str, first))[:6]) or "no keys"
                what = (
                    f"cannot tell the format: object has {keys}; expected 'conversation' (locomo), "
                    "'haystack_sessions' (longmemeval), 'mapping' (chatgpt), 'chat_messages' (claude) "
                    "or 'role'/'content' (messages)"
                )
            else:
                what = f"expected an array of objects, got an array of {_type_name(first)}s"
            raise _error(name, "top level", what)
        raise _error(name, "top level", f"expected a JSON array or object, got {_type_name(obj)}")
    return fmt, obj, True


def detect_format(path: str | Path) -> str:
    """The format ``parse_file(path, "auto")`` would use (one of :data:`FORMATS` but ``auto``)."""
    text = _read_text(path)
    return _sniff(text, str(path))[0]


# --------------------------------------------------------------------------- helpers


def _get_str(obj: dict, key: str, place: str, *, required: bool = True, allow_empty: bool = False):
    if key not in obj or obj[key] is None:
        if required:
            raise _Bad(place, f"missing {key!r}")
        return None
    v = obj[key]
    if not isinstance(v, str):
        raise _Bad(place, f"{key!r} must be a string, got {_type_name(v)} {_show(v, 30)}")
    _check_encodable(v, place, key)
    if not allow_empty and not v.strip():
        raise _Bad(place, f"{key!r} is empty")
    return v


def _check_encodable(v: str, place: str, key: str) -> None:
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _Bad(place, f"{key!r} contains an unpaired surrogate at character {e.start}") from None


def _want_dict(v: Any, place: str, what: str = "an object") -> dict:
    if not isinstance(v, dict):
        raise _Bad(place, f"expected {what}, got {_type_name(v)}")
    return v


def _want_list(v: Any, place: str, key: str) -> list:
    if not isinstance(v, list):
        raise _Bad(place, f"{key!r} must be an array, got {_type_name(v)}")
    return v


# --------------------------------------------------------------------------- locomo

_SESSION_KEY = re.compile(r"session_(\d+)")


def _parse_locomo(obj: Any, name: str) -> list[Conversation]:
    samples = obj if isinstance(obj, list) else [obj]
    if isinstance(obj, list) and not obj:
        raise _Bad("top level", "empty JSON array; no samples")
    if not isinstance(obj, (list, dict)):
        raise _Bad("top level", f"expected an array of samples or one sample object, got {_type_name(obj)}")
    out: list[Conversation] = []
    seen_ids: dict[str, int] = {}
    for si, sample in enumerate(samples, start=1):
        place = f"sample {si}"
        _want_dict(sample, place, "a sample object")
        sid = _get_str(sample, "sample_id", place)
        place = f"sample {si} ({_show(sid, 30).strip(chr(34))})"
        if sid in seen_ids:
            raise _Bad(place, f"duplicate sample_id {_show(sid)} (also sample {seen_ids[sid]})")
        seen_ids[sid] = si
        if "conversation" not in sample:
            raise _Bad(place, "missing 'conversation'")
        conv = _want_dict(sample["conversation"], place + " conversation")
        _get_str(conv, "speaker_a", place + " conversation")
        _get_str(conv, "speaker_b", place + " conversation")
        sessions: dict[int, str] = {}
        for key in conv:
            m = _SESSION_KEY.fullmatch(key)
            if m:
                n = int(m.group(1))
                if n in sessions:
                    raise _Bad(place, f"duplicate session number {n} ({sessions[n]!r} and {key!r})")
                sessions[n] = key
        if not sessions:
            raise _Bad(place + " conversation", "no 'session_N' turn lists")
        turns: list[Turn] = []
        seen_dia: dict[str, str] = {}
        for n in sorted(sessions):
            key = sessions[n]
            splace = f"{place} {key}"
            lst = _want_list(conv[key], place, key)
            dkey = f"{key}_date_time"
            if dkey not in conv or conv[dkey] is None:
                raise _Bad(splace, f"missing {dkey!r}")
            date = conv[dkey]
            if not isinstance(date, str):
                raise _Bad(splace, f"{dkey!r} must be a string, got {_type_name(date)}")
            try:
                ts = parse_date(date)
            except ValueError as e:
                raise _Bad(splace, f"{dkey!r}: {e}") from None
            session_id = f"session_{n}"
            for ti, t in enumerate(lst, start=1):
                tplace = f"{splace} turn {ti}"
                _want_dict(t, tplace, "a turn object")
                dia = t.get("dia_id")
                if isinstance(dia, str) and dia.strip():
                    tplace = f"{tplace} ({_show(dia, 20).strip(chr(34))})"
                speaker = _get_str(t, "speaker", tplace)
                dia = _get_str(t, "dia_id", tplace)
                text = _get_str(t, "text", tplace, allow_empty=True)
                caption = _get_str(t, "blip_caption", tplace, required=False, allow_empty=True)
                for opt in ("query",):
                    _get_str(t, opt, tplace, required=False, allow_empty=True)
                if "img_url" in t and t["img_url"] is not None:
                    iu = t["img_url"]
                    if not (isinstance(iu, str) or (isinstance(iu, list) and all(isinstance(x, str) for x in iu))):
                        raise _Bad(tplace, f"'img_url' must be a string or an array of strings, got {_type_name(iu)}")
                body = text.strip()
                if caption is not None and caption.strip():
                    body = (body + CAPTION_TEMPLATE.format(caption.strip())).strip()
                if not body:
                    raise _Bad(tplace, "empty 'text' and no 'blip_caption'")
                if dia in seen_dia:
                    raise _Bad(tplace, f"duplicate dia_id {_show(dia)} (first in {seen_dia[dia]})")
                seen_dia[dia] = f"{key} turn {ti}"
                turns.append(Turn(speaker.strip(), body, ts, date, session_id, dia, None))
        if not turns:
            raise _Bad(place, "conversation has no turns")
        qa = sample.get("qa", [])
        if qa is None:
            qa = []
        qa = _want_list(qa, place, "qa")
        for qi, q in enumerate(qa, start=1):
            _want_dict(q, f"{place} qa {qi}", "a qa object")
        out.append(Conversation(sid, turns, name, qa))
    return out


# --------------------------------------------------------------------------- longmemeval


def _parse_longmemeval(obj: Any, name: str) -> list[Conversation]:
    if isinstance(obj, list) and not obj:
        raise _Bad("top level", "empty JSON array; no items")
    if not isinstance(obj, (list, dict)):
        raise _Bad("top level", f"expected an array of items or one item object, got {_type_name(obj)}")
    items = obj if isinstance(obj, list) else [obj]
    out: list[Conversation] = []
    seen_q: dict[str, int] = {}
    for ii, item in enumerate(items, start=1):
        place = f"item {ii}"
        _want_dict(item, place, "an item object")
        qid = _get_str(item, "question_id", place)
        place = f"item {ii} ({_show(qid, 30).strip(chr(34))})"
        if qid in seen_q:
            raise _Bad(place, f"duplicate question_id {_show(qid)} (also item {seen_q[qid]})")
        seen_q[qid] = ii
        if "haystack_sessions" not in item:
            raise _Bad(place, "missing 'haystack_sessions'")
        sessions = _want_list(item["haystack_sessions"], place, "haystack_sessions")
        if "haystack_dates" not in item:
            raise _Bad(place, "missing 'haystack_dates'")
        dates = _want_list(item["haystack_dates"], place, "haystack_dates")
        if len(dates) != len(sessions):
            raise _Bad(place, f"{len(sessions)} haystack_sessions but {len(dates)} haystack_dates")
        ids = item.get("haystack_session_ids")
        if ids is not None:
            ids = _want_list(ids, place, "haystack_session_ids")
            if len(ids) != len(sessions):
                raise _Bad(place, f"{len(sessions)} haystack_sessions but {len(ids)} haystack_session_ids")
        turns: list[Turn] = []
        seen_sid: set[str] = set()
        for k, sess in enumerate(sessions):
            splace = f"{place} session {k + 1}"
            if ids is not None:
                sid = ids[k]
                if not isinstance(sid, str) or not sid.strip():
                    raise _Bad(splace, f"haystack_session_ids entry must be a non-empty string, got {_show(sid)}")
                _check_encodable(sid, splace, "haystack_session_ids")
                splace = f"{splace} ({_show(sid, 30).strip(chr(34))})"
            else:
                sid = f"session_{k + 1}"
            if sid in seen_sid:
                # LongMemEval-S repeats a few filler sessions under the same id (same
                # content, another date); keep both, the later one as "<id>#<n>".
                n = 2
                while f"{sid}#{n}" in seen_sid:
                    n += 1
                sid = f"{sid}#{n}"
            seen_sid.add(sid)
            date = dates[k]
            if not isinstance(date, str):
                raise _Bad(splace, f"haystack_dates entry must be a string, got {_type_name(date)}")
            try:
                ts = parse_date(date)
            except ValueError as e:
                raise _Bad(splace, f"haystack_dates: {e}") from None
            if not isinstance(sess, list):
                raise _Bad(splace, f"session must be an array of turns, got {_type_name(sess)}")
            for ti, t in enumerate(sess):
                tplace = f"{splace} turn {ti + 1}"
                _want_dict(t, tplace, "a turn object")
                role = _get_str(t, "role", tplace).strip()
                content = _get_str(t, "content", tplace, allow_empty=True).strip()
                if not content:  # LongMemEval-S has a few empty turns: skipped, later turns keep their index
                    continue
                turns.append(Turn(role, content, ts, date, sid, f"{sid}:{ti}", role))
        if not turns:
            raise _Bad(place, "no turns in haystack_sessions")
        qa: list[dict] = []
        if item.get("question") is not None:
            q = _get_str(item, "question", place, allow_empty=True)
            qd = item.get("question_date")
            if qd is not None:
                if not isinstance(qd, str):
                    raise _Bad(place, f"'question_date' must be a string, got {_type_name(qd)}")
                try:
                    parse_date(qd)
                except ValueError as e:
                    raise _Bad(place, f"question_date: {e}") from None
            entry = {"question": q, "answer": item.get("answer"), "question_date": qd}
            if "question_type" in item:
                entry["question_type"] = item["question_type"]
            qa.append(entry)
        out.append(Conversation(qid, turns, name, qa))
    return out


# --------------------------------------------------------------------------- messages


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


def _fill_times(rows, make):
    """Apply the no-timestamp rule: inherit previous; leading take first; none -> (0.0, "")."""
    first = next((w for w, _ in rows if w is not None), (0.0, ""))
    cur = first
    out = []
    for w, payload in rows:
        if w is not None:
            cur = w
        out.append(make(cur, payload))
    return out


def _parse_messages_text(text: str, name: str, parsed: Any = None, parsed_ok: bool = False):
    if not parsed_ok and text.lstrip()[:1] == "[":
        parsed = _loads(text, name)
        parsed_ok = True
    if not parsed_ok and not name.lower().endswith(_JSONL_SUFFIXES):
        # a single (possibly pretty-printed) JSON document?
        try:
            parsed = json.loads(text)
            parsed_ok = True
        except (ValueError, RecursionError):
            pass
    if parsed_ok:
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


# --------------------------------------------------------------------------- text

_HEADER_MD = re.compile(
    r"#{1,6}\s*session\s+(?P<n>\d+)\s*(?:(?:[\u2014\u2013:-]+|\|)\s*(?P<date>.*?)|\((?P<pdate>[^()]*)\))?\s*",
    re.IGNORECASE,
)
_HEADER_RULE = re.compile(
    r"(?:-{3,}|={3,})\s*session\s+(?P<n>\d+)\s*"
    r"(?:\((?P<pdate>[^()]*)\)|[\u2014\u2013:]\s*(?P<date>.*?))?\s*(?:-{3,}|={3,})\s*",
    re.IGNORECASE,
)
_HEADER_LIKE = re.compile(r"(?:#{1,6}|-{3,}|={3,})\s*s+e+s+i*o+n", re.IGNORECASE)
_RULE_LINE = re.compile(r"[-=*_ ]{3,}")
_SPEAKER_LINE = re.compile(
    r"(?P<speaker>[^\W\d_][\w.'\-]*(?: [\w.'\-]+){0,3}):(?:\s+(?P<text>.*))?\s*"
)


def _parse_text(text: str, name: str) -> list[Conversation]:
    lines = text.split("\n")
    # (lineno, session_no, when, speaker, [text lines])
    sess_no = 1
    sess_when: tuple[float, str] | None = None
    seen_sessions: dict[int, int] = {}
    had_header = False
    turns_raw: list[list] = []
    cur: list | None = None
    for lineno, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        stripped = line.strip()
        indented = line[:1].isspace()
        if not indented and _RULE_LINE.fullmatch(stripped):
            continue  # a bare horizontal rule such as '---'
        if not indented and (stripped.startswith("#") or stripped.startswith(("---", "==="))):
            m = _HEADER_MD.fullmatch(stripped) or _HEADER_RULE.fullmatch(stripped)
            if m:
                n = int(m.group("n"))
                if n in seen_sessions:
                    raise _Bad(f"line {lineno}", f"duplicate session {n} (first at line {seen_sessions[n]})")
                if not had_header and any(t[1] == sess_no for t in turns_raw):
                    if n == 1:
                        raise _Bad(
                            f"line {lineno}",
                            "header 'session 1' after turns already placed in session 1; "
                            "put a header before the first turn",
                        )
                    seen_sessions[1] = 0
                had_header = True
                seen_sessions[n] = lineno
                date = (m.group("date") or m.group("pdate") or "").strip()
                if date:
                    try:
                        sess_when = (parse_date(date), date)
                    except ValueError as e:
                        raise _Bad(f"line {lineno}", f"session header: {e}") from None
                else:
                    sess_when = None
                sess_no = n
                cur = None
                continue
            if _HEADER_LIKE.match(stripped):
                raise _Bad(
                    f"line {lineno}",
                    f"malformed session header {_show(stripped, 50)}; use '## Session N — DATE' "
                    "or '--- session N (DATE) ---'",
                )
            if stripped.startswith("#"):
                continue  # comment
        m = None if indented else _SPEAKER_LINE.fullmatch(stripped)
        if m and len(m.group("speaker")) <= 40:
            cur = [lineno, sess_no, sess_when, m.group("speaker"), [m.group("text") or ""]]
            turns_raw.append(cur)
            continue
        if cur is None:
            raise _Bad(f"line {lineno}", f"text before the first 'Speaker: text' line: {_show(stripped, 40)}")
        cur[4].append(stripped)
    if not turns_raw:
        raise _Bad("top level", "no 'Speaker: text' lines found")
    rows = []
    counters: dict[int, int] = {}
    for lineno, sno, when, speaker, parts in turns_raw:
        body = "\n".join(p for p in parts if p).strip()
        if not body:
            raise _Bad(f"line {lineno}", f"turn by {_show(speaker)} has empty text")
        try:
            body.encode("utf-8")
        except UnicodeEncodeError:  # pragma: no cover - decoded from UTF-8, cannot happen
            raise _Bad(f"line {lineno}", "text is not valid UTF-8") from None
        counters[sno] = counters.get(sno, 0) + 1
        rows.append((when, (speaker, body, f"session_{sno}", f"D{sno}:{counters[sno]}")))
    turns = _fill_times(rows, lambda w, p: Turn(p[0], p[1], w[0], w[1], p[2], p[3], None))
    return [Conversation(None, turns, name, [])]


# --------------------------------------------------------------------------- entry point


def parse_file(path: str | Path, fmt: str = "auto") -> list[Conversation]:
    """Parse a conversation file. Raises InputError("FILE: PLACE: what") on any bad input."""
    from hela_cli import exports  # imports this module's helpers; loaded on first use

    name = str(path)
    if fmt not in FORMATS:
        raise _error(name, None, f"unknown format {_show(fmt)}; expected one of {', '.join(FORMATS)}")
    text = _read_text(path)
    try:
        if fmt == "auto":
            fmt, parsed, ok = _sniff(text, name)
        else:
            parsed, ok = None, False
        if fmt == "text":
            return _parse_text(text, name)
        if fmt == "messages":
            return _parse_messages_text(text, name, parsed, ok)
        if fmt == "whatsapp":
            return exports.parse_whatsapp(text, name)
        if not ok:
            parsed = _loads(text, name)
        if fmt == "locomo":
            return _parse_locomo(parsed, name)
        if fmt == "chatgpt":
            return exports.parse_chatgpt(parsed, name)
        if fmt == "claude":
            return exports.parse_claude(parsed, name)
        return _parse_longmemeval(parsed, name)
    except _Bad as b:
        raise _error(name, b.place, b.what) from None
    except RecursionError:
        raise _error(name, "top level", "input nested too deeply") from None
