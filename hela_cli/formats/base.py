"""What every parser shares: the :class:`Turn` / :class:`Conversation` data types, reading a file as UTF-8
text (:func:`_read_text`), one JSON document read at most once (:class:`Source`), the one-line
``InputError("FILE: PLACE: what is wrong")`` and the field validators the parsers use."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hela_cli.text.dates import _show, _type_name  # noqa: F401  (message helpers shared with the parsers)
from hela_cli.errors import InputError


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
    keyed: bool = False  # turns carry stable unique ids (agent transcripts): a turn is stored once per id,
                         # whichever path (ingest, hela add, a hook's capture) stores it first
    format: str | None = None  # the parser that read it ("claude_code", "chatgpt", ...): set by parse_file


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


_UNPARSED = object()


class Source:
    """One input file: its name, its text and its JSON document, parsed at most once (auto-detection
    may already have parsed it; a parser that needs it calls :meth:`document`). ``tool_output_chars``: the
    agent transcript parsers keep a tool's output as a turn of at most this many characters (0: dropped;
    ``ingest.tool_output_chars``)."""

    def __init__(self, name: str, text: str, document: Any = _UNPARSED, tool_output_chars: int = 0):
        self.name = name
        self.text = text
        self._document = document
        self.tool_output_chars = tool_output_chars

    @property
    def parsed(self) -> bool:
        return self._document is not _UNPARSED

    def document(self) -> Any:
        """The text as one JSON document; an invalid one raises the InputError naming its line."""
        if self._document is _UNPARSED:
            self._document = _loads(self.text, self.name)
        return self._document

    def try_document(self) -> bool:
        """Parse the text as one JSON document if it is one; False (and nothing raised) otherwise."""
        if not self.parsed:
            try:
                self._document = json.loads(self.text)
            except (ValueError, RecursionError):
                return False
        return True

def _jsonl_objects(src: Source):
    """``(line number, object)`` of a JSON Lines file an agent writes as it goes: blank lines skipped; a last
    line that is not yet whole (no newline after it and not valid JSON: the agent is still writing it) is
    left for the next read; any other line that is not a JSON object raises the error naming it."""
    lines = src.text.split("\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if i == last and not src.text.endswith("\n"):
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                return  # a partial last line
        else:
            obj = _loads(line, src.name, line_offset=i)
        if not isinstance(obj, dict):
            raise _Bad(f"line {i + 1}", f"expected a JSON object, got {_type_name(obj)}")
        yield i + 1, obj


def _being_written(src: Source) -> bool:
    """The text is one JSON object still being written (no newline yet): an agent's transcript that has just
    been created; its parser gives a Conversation without turns rather than an error."""
    return src.text.lstrip().startswith("{") and "\n" not in src.text.strip() and not src.text.endswith("\n")


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


def _keyed_objects(obj: Any, noun: str, what: str, key: str) -> Any:
    """The objects of a top-level array of ``noun`` objects (or the one object): ``(object, id, place)``,
    each an object (``what`` in the error) with a string ``key`` seen once; ``place`` names it in errors."""
    if isinstance(obj, list) and not obj:
        raise _Bad("top level", f"empty JSON array; no {noun}s")
    if not isinstance(obj, (list, dict)):
        raise _Bad("top level", f"expected an array of {noun}s or one {noun} object, got {_type_name(obj)}")
    seen: dict[str, int] = {}
    for i, item in enumerate(obj if isinstance(obj, list) else [obj], start=1):
        place = f"{noun} {i}"
        _want_dict(item, place, what)
        ident = _get_str(item, key, place)
        place = f"{noun} {i} ({_show(ident, 30).strip(chr(34))})"
        if ident in seen:
            raise _Bad(place, f"duplicate {key} {_show(ident)} (also {noun} {seen[ident]})")
        seen[ident] = i
        yield item, ident, place


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
