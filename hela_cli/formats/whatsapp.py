"""``whatsapp``: the ``.txt`` of WhatsApp's "Export chat" (docs/formats.md)."""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

from hela_cli.text.dates import epoch
from hela_cli.formats.base import Conversation, Source, Turn, _Bad, _show


def parse(src: Source) -> list[Conversation]:
    return parse_whatsapp(src.text, src.name)


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
    """True for day-first dates (dd/mm), False for month-first (mm/dd); see docs/formats.md."""
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
