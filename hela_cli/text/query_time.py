"""Time expressions in a question, resolved to a window of UTC epoch seconds (pure functions, no I/O).

``question_window("What did Maria do in December 2023?", now)`` gives the month of December 2023; retrieval
uses the window as a soft prior on Eq.3's time factor (``retrieval.date_prior``, see
:func:`hela_cli.mechanics.dynamics.window_factor`). Recognised, in English:

* a day: "on October 13, 2023", "13 October 2023", "1 February, 2023", "2023-10-13", "2023/10/13";
* a month: "in July 2023", "July 2023"; a month without a year ("in June") is the latest such month at or
  before ``now``;
* a year: "in 2023";
* relative to ``now`` (the space's newest memory or the caller's ``--now``): "yesterday", "today",
  "last week / month / year", "this week / month / year", "N days / weeks / months / years ago";
* "before X" / "after X" open the window on one side.

Anything else (or no ``now`` for a relative expression) gives None: no prior.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta, timezone

DAY = 86_400.0

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTHS["sept"] = 9
_MON = r"(january|february|march|april|may|june|july|august|september|october|november|december|" \
       r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
_YEAR = r"((?:19|20)\d\d)"
_NUM_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
              "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "few": 3, "a few": 3}

_DAY_MDY = re.compile(rf"\b{_MON}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b", re.I)
_DAY_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON}\.?,?\s+{_YEAR}\b", re.I)
_DAY_ISO = re.compile(r"\b((?:19|20)\d\d)[-/](\d{1,2})[-/](\d{1,2})\b")
_MONTH_YEAR = re.compile(rf"\b{_MON}\.?,?\s+(?:of\s+)?{_YEAR}\b", re.I)
_MONTH_ONLY = re.compile(rf"\b(?:in|during|since|by|of|early|late|mid|mid-)\s+{_MON}\b(?!\s+\d)", re.I)
_YEAR_ONLY = re.compile(rf"\b(?:in|during|of|since)\s+{_YEAR}\b", re.I)
_AGO = re.compile(r"\b(\d+|a couple of|couple of|a few|few|an|a|one|two|three|four|five|six|seven|eight|"
                  r"nine|ten)\s+(day|week|month|year)s?\s+ago\b", re.I)
_LAST = re.compile(r"\b(last|this|past)\s+(week|weekend|month|year)\b", re.I)
_YESTERDAY = re.compile(r"\b(yesterday|today|tonight)\b", re.I)
_SIDE = re.compile(r"\b(before|after|since|until|by)\s*$", re.I)


def _ts(dt: datetime) -> float:
    return dt.replace(tzinfo=timezone.utc).timestamp()


def _day(y: int, m: int, d: int) -> tuple[float, float] | None:
    try:
        start = datetime(y, m, d)
    except ValueError:
        return None
    return _ts(start), _ts(start + timedelta(days=1)) - 1


def _month(y: int, m: int) -> tuple[float, float]:
    last = calendar.monthrange(y, m)[1]
    return _ts(datetime(y, m, 1)), _ts(datetime(y, m, last) + timedelta(days=1)) - 1


def _year(y: int) -> tuple[float, float]:
    return _ts(datetime(y, 1, 1)), _ts(datetime(y + 1, 1, 1)) - 1


def _side(question: str, start: int) -> str | None:
    m = _SIDE.search(question[:start])
    return m.group(1).lower() if m else None


def _open(window: tuple[float, float], side: str | None) -> tuple[float, float]:
    if side in ("before", "until", "by"):
        return float("-inf"), window[0]
    if side in ("after", "since"):
        return window[1], float("inf")
    return window


def question_window(question: str, now: float | None = None) -> tuple[float, float] | None:
    """The time window ``(start, end)`` (epoch seconds, inclusive; an open side is +-inf) a question refers
    to, or None. The first absolute date wins over a relative expression."""
    for rx, kind in ((_DAY_MDY, "mdy"), (_DAY_DMY, "dmy"), (_DAY_ISO, "iso")):
        m = rx.search(question)
        if m:
            if kind == "mdy":
                w = _day(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)))
            elif kind == "dmy":
                w = _day(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))
            else:
                w = _day(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            if w:
                return _open(w, _side(question, m.start()))
    m = _MONTH_YEAR.search(question)
    if m:
        return _open(_month(int(m.group(2)), _MONTHS[m.group(1).lower()]), _side(question, m.start()))
    m = _YEAR_ONLY.search(question)
    if m:
        return _open(_year(int(m.group(1))), _side(question, m.start() + len(m.group(0).split()[0]) + 1))
    if now is None:
        return None
    ref = datetime.fromtimestamp(now, tz=timezone.utc).replace(tzinfo=None)
    m = _MONTH_ONLY.search(question)
    if m:
        month = _MONTHS[m.group(1).lower()]
        year = ref.year if month <= ref.month else ref.year - 1
        return _month(year, month)
    m = _AGO.search(question)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else _NUM_WORDS[m.group(1).lower()]
        unit = {"day": 1, "week": 7, "month": 30.44, "year": 365.25}[m.group(2).lower()]
        centre = now - n * unit * DAY
        half = max(unit * DAY / 2, 1.5 * DAY)
        return centre - half, min(now, centre + half)
    m = _LAST.search(question)
    if m:
        which, unit = m.group(1).lower(), m.group(2).lower()
        today = datetime(ref.year, ref.month, ref.day)
        if unit in ("week", "weekend"):
            days = 14 if which == "last" else 7
            return _ts(today - timedelta(days=days)), now
        if unit == "month":
            if which == "last":
                y, mo = (ref.year, ref.month - 1) if ref.month > 1 else (ref.year - 1, 12)
                return _month(y, mo)
            return _month(ref.year, ref.month)[0], now
        if which == "last":
            return _year(ref.year - 1)
        return _year(ref.year)[0], now
    m = _YESTERDAY.search(question)
    if m:
        today = datetime(ref.year, ref.month, ref.day)
        d = today - timedelta(days=1) if m.group(1).lower() == "yesterday" else today
        w = _day(d.year, d.month, d.day)
        return w
    return None
