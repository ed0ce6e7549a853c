"""Dates: the one place that parses, converts and formats them.

* Parsing input files (the ``formats`` package): :func:`parse_date` turns a date string into UTC
  epoch seconds; :func:`parse_time_value` accepts an ISO string or epoch seconds; :func:`epoch` checks a
  broken-down date. Accepted strings (matched whole, case-insensitively, never fuzzily): ISO 8601
  (``2024-03-03``, ``2024-03-03 14:15``, ``2024-03-03T14:15:00Z``, ``...+02:00``), LongMemEval
  ``2023/05/20 (Sat) 02:21`` (weekday not checked), LoCoMo ``1:56 pm on 8 May, 2023``, and
  ``12 May 2023 3:00 pm``, ``12 May 2023 15:00``, ``12 May 2023``, ``May 12, 2023 3:00 pm``,
  ``May 12, 2023`` (full or abbreviated month names). Dates without a zone are UTC. A year outside
  ``MIN_YEAR..MAX_YEAR`` is an error. Errors are ``ValueError`` with a short reason; callers add the file
  and place.
* Prompts and answers: :func:`format_date` writes ``15 July 2023`` (the style the answer prompt asks for).
* Consolidation: :func:`resolve_relative` makes relative phrases absolute (``yesterday`` in a turn of
  8 May 2023 -> ``on 7 May 2023``); :func:`normalise_date` turns a model's date into ``7 May 2023`` /
  ``May 2023`` / ``2023`` or ``None``.

Everything here is pure and deterministic (no clock, no locale): all conversions are in UTC.
"""

from __future__ import annotations

import json
import math
import re
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

__all__ = [
    "MIN_YEAR",
    "MAX_YEAR",
    "EPOCH_MIN",
    "EPOCH_MAX",
    "MONTH_NAMES",
    "WEEKDAY_NAMES",
    "YEAR_RE",
    "parse_date",
    "parse_time_value",
    "epoch",
    "format_date",
    "format_iso",
    "has_relative",
    "resolve_relative",
    "normalise_date",
]

MIN_YEAR = 1900
MAX_YEAR = 2200
EPOCH_MIN = datetime(MIN_YEAR, 1, 1, tzinfo=timezone.utc).timestamp()
EPOCH_MAX = datetime(MAX_YEAR + 1, 1, 1, tzinfo=timezone.utc).timestamp()

MONTH_NAMES = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
               "october", "november", "december"]
WEEKDAY_NAMES = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def _show(value: Any, limit: int = 40) -> str:
    """Short, one-line rendering of a value for messages."""
    try:
        s = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        s = repr(value)
    if len(s) > limit:
        s = s[: limit - 3] + "..."
    return s


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# --------------------------------------------------------------------------- parsing input dates

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_WEEKDAYS = r"(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*"
_MON = r"(?P<mon>[a-z]+)\.?"
_TIME12 = r"(?P<h>\d{1,2}):(?P<mi>\d{2})\s*(?P<ap>am|pm|a\.m\.|p\.m\.)"
_TIME24 = r"(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?"

_DATE_PATTERNS = [
    # LongMemEval: 2023/05/20 (Sat) 02:21
    re.compile(
        r"(?P<y>\d{4})/(?P<m>\d{1,2})/(?P<d>\d{1,2})(?:\s*\(" + _WEEKDAYS + r"\))?"
        r"(?:\s+" + _TIME24 + r")?"
    ),
    # LoCoMo: 1:56 pm on 8 May, 2023
    re.compile(_TIME12 + r"\s+on\s+(?P<d>\d{1,2})\s+" + _MON + r",?\s+(?P<y>\d{4})"),
    # 12 May 2023 [3:00 pm | 15:00]
    re.compile(
        r"(?:" + _WEEKDAYS + r",?\s+)?(?P<d>\d{1,2})\s+" + _MON + r",?\s+(?P<y>\d{4})"
        r"(?:,?\s+(?:at\s+)?(?:" + _TIME12 + r"|" + _TIME24.replace("P<", "P<x") + r"))?"
    ),
    # May 12, 2023 [3:00 pm | 15:00]
    re.compile(
        r"(?:" + _WEEKDAYS + r",?\s+)?" + _MON + r"\s+(?P<d>\d{1,2}),?\s+(?P<y>\d{4})"
        r"(?:,?\s+(?:at\s+)?(?:" + _TIME12 + r"|" + _TIME24.replace("P<", "P<x") + r"))?"
    ),
]
_ISO_START = re.compile(r"[+-]?\d{4}-?\d{2}")


def _check_year(year: int, s: str) -> None:
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise ValueError(f"year {year} out of range {MIN_YEAR}..{MAX_YEAR} in date {_show(s)}")


def parse_date(s: str) -> float:
    """Parse a date string (forms listed in the module docstring) to UTC epoch seconds.

    Raises ``ValueError`` with a short reason when the string is not a valid date.
    """
    if not isinstance(s, str):
        raise ValueError(f"date must be a string, got {_type_name(s)}")
    text = " ".join(s.split())
    if not text:
        raise ValueError("empty date")
    low = text.lower()
    if _ISO_START.match(low) and "/" not in low:
        m = re.match(r"[+-]?(\d+)", low)
        if m and len(m.group(1)) == 4:
            _check_year(int(m.group(1)), s)
        try:
            dt = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1] in "zZ" else text)
        except ValueError:
            raise ValueError(f"unparseable date {_show(s)}") from None
        return _to_epoch(dt, s)
    for pat in _DATE_PATTERNS:
        m = pat.fullmatch(low)
        if not m:
            continue
        g = m.groupdict()
        year = int(g["y"])
        _check_year(year, s)
        if g.get("mon") is not None:
            month = _MONTHS.get(g["mon"])
            if month is None:
                raise ValueError(f"unknown month {g['mon']!r} in date {_show(s)}")
        else:
            month = int(g["m"])
        day = int(g["d"])
        hour = minute = second = 0
        if g.get("h") is not None:
            hour, minute = int(g["h"]), int(g["mi"])
            if g.get("ap"):
                if not 1 <= hour <= 12:
                    raise ValueError(f"hour {hour} is not a 12-hour clock hour in {_show(s)}")
                hour = hour % 12 + (12 if g["ap"].startswith("p") else 0)
            if g.get("s"):
                second = int(g["s"])
        elif g.get("xh") is not None:
            hour, minute = int(g["xh"]), int(g["xmi"])
            if g.get("xs"):
                second = int(g["xs"])
        try:
            dt = datetime(year, month, day, hour, minute, second)
        except ValueError as e:
            raise ValueError(f"invalid date {_show(s)} ({e})") from None
        return _to_epoch(dt, s)
    raise ValueError(f"unparseable date {_show(s)}")


def _to_epoch(dt: datetime, s: str) -> float:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    _check_year(dt.year, s)
    ts = dt.timestamp()
    _check_year(datetime.fromtimestamp(ts, timezone.utc).year, s)
    return float(ts)


def epoch(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0,
          shown: str = "") -> float:
    """UTC epoch seconds of a broken-down date (no zone: UTC); ``ValueError`` naming ``shown`` (the
    original text) when the date does not exist or its year is out of range."""
    s = shown or f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"
    _check_year(year, s)
    try:
        dt = datetime(year, month, day, hour, minute, second)
    except ValueError as e:
        raise ValueError(f"invalid date {_show(s)} ({e})") from None
    return _to_epoch(dt, s)


def parse_time_value(value: Any) -> tuple[float, str]:
    """A timestamp given as an ISO string or epoch seconds -> (epoch, original string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"expected an ISO 8601 string or epoch seconds, got {_type_name(value)}")
    if isinstance(value, str):
        return parse_date(value), value
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"timestamp {_show(value)} is not a finite number")
    if not EPOCH_MIN <= value < EPOCH_MAX:
        hint = " (milliseconds? use seconds)" if EPOCH_MIN * 1000 <= value < EPOCH_MAX * 1000 else ""
        raise ValueError(
            f"epoch timestamp {_show(value)} is outside years {MIN_YEAR}..{MAX_YEAR}{hint}"
        )
    return float(value), str(value)


# --------------------------------------------------------------------------- formatting


def _bad_time(ts: Any) -> str | None:
    """What a listing shows for a stored time no calendar holds (a database an older hela filled from a
    hostile import: ``1e308``, NaN): ``(bad time 1e+308)``; None for a time that can be shown."""
    try:
        if isinstance(ts, (int, float)) and math.isfinite(ts) and -62135596800 <= ts < 253402300800:
            return None
    except TypeError:
        pass
    return f"(bad time {ts!r:.24})"


def format_date(ts: float | None) -> str:
    """``15 July 2023`` (the answer style the prompts ask for)."""
    if ts is None:
        return "unknown date"
    bad = _bad_time(ts)
    if bad:
        return bad
    d = datetime.fromtimestamp(ts, tz=timezone.utc)
    return f"{d.day} {d.strftime('%B %Y')}"


def fmt_ts(ts: float | None) -> str:
    """``YYYY-MM-DD HH:MM`` in UTC for listings (``-`` for none): the CLI's and the web page's."""
    if ts is None:
        return "-"
    bad = _bad_time(ts)
    if bad:
        return bad
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")


def format_iso(ts: float) -> str:
    """``2023-05-08T13:56:12Z`` (UTC, whole seconds): the date string kept for epoch-stamped exports."""
    bad = _bad_time(ts)
    if bad:
        return bad
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def parse_time(value: Any, where: str) -> tuple[float, str]:
    """``(UTC epoch seconds, date string)`` of a time a person or an agent typed (``hela add --time``,
    ``--now``, JSON Lines ``time``): ``None`` (now, wall clock),
    epoch seconds (also as a string of 9-11 digits), a ``datetime`` or a date string (python-dateutil; no
    zone means UTC)."""
    from datetime import datetime, timezone

    from hela_cli.errors import InputError

    if value is None:
        ts = time.time()
        return ts, format_iso(ts)
    if isinstance(value, bool) or not isinstance(value, (int, float, str, datetime)):
        raise InputError(f"{where}: time must be a date string or epoch seconds, not {type(value).__name__}")
    if isinstance(value, str) and re.fullmatch(r"\s*\d{9,11}(\.\d+)?\s*", value):
        value = float(value)  # epoch seconds written as a string (`--time 1714557600`)
    if isinstance(value, str):
        from dateutil import parser as dparser

        try:
            d = dparser.parse(value.strip())
        except (ValueError, OverflowError):
            raise InputError(f"{where}: cannot parse date/time {value.strip()[:60]!r}") from None
        text = value.strip()
    elif isinstance(value, datetime):
        d, text = value, ""
    else:
        try:
            d = datetime.fromtimestamp(float(value), tz=timezone.utc)
        except (ValueError, OverflowError, OSError):
            raise InputError(f"{where}: time {value!r} is not valid epoch seconds") from None
        text = ""
    if d.tzinfo is None:
        d = d.replace(tzinfo=timezone.utc)
    if not MIN_YEAR <= d.year <= MAX_YEAR:
        raise InputError(f"{where}: year {d.year} is outside {MIN_YEAR}..{MAX_YEAR}")
    ts = d.timestamp()
    return ts, text or format_iso(ts)


# --------------------------------------------------------------------------- relative dates (consolidation)
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
        "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3}
_NUM_RE = r"(\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few)"
_MONTH_RE = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\b", re.I)
YEAR_RE = re.compile(r"\b(1[89]\d\d|2[01]\d\d)\b")
_ISO_RE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_DAY_RE = re.compile(r"\b([0-3]?\d)(st|nd|rd|th)?\b")


def _day(d: datetime) -> str:
    return format_date(d.timestamp())


def _month(d: datetime) -> str:
    return f"{d.strftime('%B')} {d.year}"


def _shift_month(d: datetime, months: int) -> datetime:
    m = d.month - 1 + months
    return d.replace(year=d.year + m // 12, month=m % 12 + 1, day=1)


def _n(word: str) -> int:
    """``"3"`` / ``"three"`` / ``"a couple of"`` -> 3 / 3 / 2."""
    w = word.lower().strip()
    if w.isdigit():
        return int(w)
    return _NUM.get(w.removeprefix("a ").strip() if w not in _NUM else w, 1)


# (pattern, resolver(match, ref) -> (date value, replacement text)); most specific first
def _rules() -> list[tuple[re.Pattern[str], Callable[[re.Match[str], datetime], tuple[str, str]]]]:
    wd = "|".join(WEEKDAY_NAMES)

    def day(offset: int) -> Callable[[re.Match[str], datetime], tuple[str, str]]:
        return lambda m, r: (_day(r + timedelta(days=offset)), f"on {_day(r + timedelta(days=offset))}")

    def weekday(direction: int) -> Callable[[re.Match[str], datetime], tuple[str, str]]:
        """``last Saturday``: the latest Saturday strictly before the turn; ``next``: strictly after."""
        def f(m: re.Match[str], r: datetime) -> tuple[str, str]:
            target = WEEKDAY_NAMES.index(m.group(1).lower())
            if direction < 0:
                d = r - timedelta(days=(r.weekday() - target) % 7 or 7)
            else:
                d = r + timedelta(days=(target - r.weekday()) % 7 or 7)
            return _day(d), f"on {_day(d)}"
        return f

    def days_ago(m: re.Match[str], r: datetime) -> tuple[str, str]:
        d = r - timedelta(days=_n(m.group(1)))
        return _day(d), f"on {_day(d)}"

    def weeks_ago(m: re.Match[str], r: datetime) -> tuple[str, str]:
        n = _n(m.group(1))
        v = f"the week before {_day(r)}" if n == 1 else f"{n} weeks before {_day(r)}"
        return v, v

    def months_ago(m: re.Match[str], r: datetime) -> tuple[str, str]:
        v = _month(_shift_month(r, -_n(m.group(1))))
        return v, f"in {v}"

    def years_ago(m: re.Match[str], r: datetime) -> tuple[str, str]:
        v = str(r.year - _n(m.group(1)))
        return v, f"in {v}"

    def fixed(fmt: Callable[[datetime], str], prefix: str = "") -> Callable[[re.Match[str], datetime], tuple[str, str]]:
        return lambda m, r: (fmt(r), f"{prefix}{fmt(r)}")

    return [
        (re.compile(r"\bthe day before yesterday\b", re.I), day(-2)),
        (re.compile(r"\bthe day after tomorrow\b", re.I), day(2)),
        (re.compile(r"\byesterday\b", re.I), day(-1)),
        (re.compile(r"\b(today|tonight|this (?:morning|afternoon|evening))\b", re.I), day(0)),
        (re.compile(r"\btomorrow\b", re.I), day(1)),
        (re.compile(rf"\b{_NUM_RE} days? ago\b", re.I), days_ago),
        (re.compile(rf"\b{_NUM_RE} weeks? ago\b", re.I), weeks_ago),
        (re.compile(rf"\b{_NUM_RE} months? ago\b", re.I), months_ago),
        (re.compile(rf"\b{_NUM_RE} years? ago\b", re.I), years_ago),
        (re.compile(r"\blast weekend\b", re.I), fixed(lambda r: f"the weekend before {_day(r)}")),
        (re.compile(r"\bnext weekend\b", re.I), fixed(lambda r: f"the weekend after {_day(r)}")),
        (re.compile(r"\blast week\b", re.I), fixed(lambda r: f"the week before {_day(r)}")),
        (re.compile(r"\bnext week\b", re.I), fixed(lambda r: f"the week after {_day(r)}")),
        (re.compile(rf"\blast ({wd})\b", re.I), weekday(-1)),
        (re.compile(rf"\bnext ({wd})\b", re.I), weekday(1)),
        (re.compile(r"\blast month\b", re.I), fixed(lambda r: _month(_shift_month(r, -1)), "in ")),
        (re.compile(r"\bnext month\b", re.I), fixed(lambda r: _month(_shift_month(r, 1)), "in ")),
        (re.compile(r"\blast year\b", re.I), fixed(lambda r: str(r.year - 1), "in ")),
        (re.compile(r"\bnext year\b", re.I), fixed(lambda r: str(r.year + 1), "in ")),
    ]


_RULES = _rules()


def has_relative(text: str) -> bool:
    return any(p.search(text or "") for p, _ in _RULES)


def resolve_relative(text: str, ref_ts: float) -> tuple[str, str | None]:
    """Replace relative time phrases in ``text`` with absolute ones, measured from ``ref_ts`` (the turn's
    timestamp): ``"went hiking yesterday"`` in a turn of 8 May 2023 -> ``"went hiking on 7 May 2023"``.

    Returns ``(new text, date of the first phrase or None)``."""
    ref = datetime.fromtimestamp(ref_ts, tz=timezone.utc)
    first: tuple[int, str] | None = None
    for pattern, resolve in _RULES:
        def sub(m: re.Match[str]) -> str:
            nonlocal first
            value, replacement = resolve(m, ref)
            if first is None or m.start() < first[0]:
                first = (m.start(), value)
            if m.group(0)[:1].isupper() and m.start() == 0:
                replacement = replacement[:1].upper() + replacement[1:]
            return replacement
        text = pattern.sub(sub, text)
    return text, (first[1] if first else None)


def normalise_date(value: str, ref_ts: float, allowed_years: set[int]) -> str | None:
    """An absolute date from the model, as ``7 May 2023`` / ``May 2023`` / ``2023``; relative phrases are
    resolved against ``ref_ts``. ``None`` for an empty, unparseable or ungrounded date (its year is in
    neither the evidence turns' dates nor their text)."""
    s = (value or "").strip().strip(".,")
    if not s:
        return None
    if has_relative(s):
        return resolve_relative(s, ref_ts)[1]
    ref = datetime.fromtimestamp(ref_ts, tz=timezone.utc)
    iso = _ISO_RE.search(s)
    if iso:
        try:
            d = datetime(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)), tzinfo=timezone.utc)
        except ValueError:
            return None
        return _day(d) if d.year in allowed_years else None
    month = _MONTH_RE.search(s)
    year_m = YEAR_RE.search(s)
    year = int(year_m.group(1)) if year_m else None
    if year is not None and year not in allowed_years:
        return None
    if month is None:
        return str(year) if year is not None and s == year_m.group(0) else None
    from dateutil import parser as dparser

    try:
        d = dparser.parse(s, default=ref.replace(hour=12, minute=0, second=0, microsecond=0), fuzzy=True)
    except (ValueError, OverflowError):
        return None
    if year is None and d.year not in allowed_years:
        return None
    rest = YEAR_RE.sub(" ", s)
    has_day = any(1 <= int(m.group(1)) <= 31 for m in _DAY_RE.finditer(rest))
    return _day(d) if has_day else _month(d)
