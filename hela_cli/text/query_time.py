"""Time expressions in a question, resolved to a window of UTC epoch seconds (pure functions, no I/O).

``question_window("What did Maria do in December 2023?", now)`` gives the month of December 2023; retrieval
uses the window as a soft prior on Eq.3's time factor (``retrieval.date_prior``, see
:func:`hela_cli.mechanics.dynamics.window_factor`). Recognised, in English:

* a day: "on October 13, 2023", "13 October 2023", "1 February, 2023", "2023-10-13", "2023/10/13";
* a month: "in July 2023", "July 2023"; a month without a year ("in June") is the latest such month at or
  before ``now`` (the space's newest memory or the caller's ``--now``: the data's own time);
* a year: "in 2023";
* "before X" / "after X" open the window on one side;
* relative to the moment of asking, ``clock`` (the caller's ``--now``, a hook's prompt time, else the wall
  clock; default ``now``; calendar days of the asker's time zone): "today", "this morning / afternoon /
  evening", "tonight", "earlier today",
  "yesterday", "last night", "the day before yesterday", "N hours / days / weeks / months / years ago"
  (N a number or a word: "a", "two", "a couple of", "a few"), "last / this / past week / weekend / month /
  year" (calendar weeks from Monday), "on Monday", "last Friday", "this Tuesday".

A relative window is a :class:`TimeWindow` that says how sharp it is (``slack_days`` 0 and a fall-off
``scale_days`` of its own): "3 days ago" means that day, not the two weeks after it that an absolute date
allows for (people talk about an event in the days after it; a coding agent's memory is written when it
happens). Absolute dates are UTC days, as stored. Anything else (or no present for a relative expression)
gives None: no prior.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta, timezone, tzinfo
from typing import NamedTuple

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
                  r"nine|ten)\s+(hour|day|week|month|year)s?\s+ago\b", re.I)
_LAST = re.compile(r"\b(last|this|past|previous)\s+(week|weekend|month|year)\b", re.I)
_DAY_WORDS = re.compile(r"\b(the\s+day\s+before\s+yesterday|yesterday|last\s+night|earlier\s+today|today|"
                        r"tonight|this\s+(?:morning|afternoon|evening))\b", re.I)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = re.compile(r"\b(?:(on|last|this|past)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(?!s)|"
                      r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?=\s*(?:[?.!,;]|$)))", re.I)
# "on Monday", "last Friday", or a weekday ending the clause ("Did the build pass Tuesday?"); not "on Mondays"
# (a habit) nor "my Sunday group rides" (a kind of ride)
_SIDE = re.compile(r"\b(before|after|since|until|by)\s*$", re.I)
#: the fall-off (days) outside a relative window, by its unit: "3 days ago" fades within half a day past its
#: edges (which already allow half a day either side, for "ago" said loosely and for time zones)
_SCALE = {"hour": 0.25, "day": 0.5, "week": 2.0, "month": 7.0, "year": 45.0}


class TimeWindow(NamedTuple):
    """A question's time window, ``(start, end)`` in epoch seconds (an open side is +-inf). ``slack_days`` /
    ``scale_days`` / ``weight``: how :func:`hela_cli.mechanics.dynamics.window_factor` treats memories after
    and outside it (None: the configured ``retrieval.date_slack_days``, falling off over as many days, with
    weight ``retrieval.date_prior``); a relative window sets all three (no slack: "yesterday" is that day;
    the weight ``retrieval.date_prior_relative``: a question that says when asks for that time)."""

    start: float
    end: float
    slack_days: float | None = None
    scale_days: float | None = None
    weight: float | None = None


#: words of a question that ask "what happened" without saying about what (stems, as keywords() gives them)
_GENERIC = frozenset({"do", "did", "done", "work", "chang", "happen", "talk", "discuss", "say", "said", "decid",
                      "make", "made", "build", "built", "write", "wrote", "plan", "go", "went", "get", "got",
                      "up", "on", "us", "we", "i", "me", "my", "our", "anyth", "someth", "thing", "stuff",
                      "tell", "remind", "recap", "summar", "summari", "summaris", "summariz"})


def only_time(question: str) -> bool:
    """True when a question names a time relative to now and asks nothing else ("What did I do 3 days
    ago?", "What did we change yesterday?", "recap last week"): its memories are the answer, so retrieval
    narrows to that window first (``hela_cli.mechanics.retrieval.retrieve``). A question about something
    ("What did we change in the parser yesterday?") keeps the soft prior."""
    from hela_cli.text.keywords import keywords

    rest = question
    for rx in (_AGO, _LAST, _DAY_WORDS, _WEEKDAY):
        rest = rx.sub(" ", rest)
    if rest == question:
        return False
    return all(k in _GENERIC for k in keywords(rest))


#: day words that name a time ahead as often as one past ("tonight", "today"): a window only in a question
#: about the past (:func:`_past`); "yesterday", "last night", "3 days ago", "last week" are always past
_AHEAD_OR_PAST = frozenset({"today", "tonight", "this morning", "this afternoon", "this evening"})
_PAST_CUE = re.compile(r"\b(did|didn't|was|wasn't|were|weren't|had|happened|went|got\s+done|came|made|said|told|"
                       r"wrote|broke|ran|saw|took|gave|found|left|began|spent|built|\w{3,}ed)\b", re.I)
_NOT_PAST = frozenset({"need", "needed", "speed", "indeed", "embed", "proceed", "succeed", "exceed", "feed",
                       "breed", "seed", "red", "bed", "shed", "wed", "based", "interested", "excited", "tired"})


def _past(question: str) -> bool:
    """The question speaks of the past: a past auxiliary or verb ("did", "was", "broke", "changed")."""
    return any(m.group(1).lower() not in _NOT_PAST for m in _PAST_CUE.finditer(question))


def _relative(start: float, end: float, unit: str) -> TimeWindow:
    return TimeWindow(start, end, 0.0, _SCALE[unit])


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


def question_window(question: str, now: float | None = None, *, clock: float | None = None,
                    relative_weight: float | None = None, tz: tzinfo | None = timezone.utc) -> TimeWindow | None:
    """The time window ``(start, end)`` (epoch seconds, inclusive; an open side is +-inf) a question refers
    to, or None. The first absolute date wins over a relative expression. ``now``: the data's present (a
    month named without its year); ``clock``: the moment of asking, for "yesterday", "3 days ago", "on
    Monday"... (default ``now``), whose calendar days are those of ``tz`` (None: this machine's zone: "this
    morning" is the asker's morning); ``relative_weight``: the weight a relative window carries."""
    w = _window(question, now, clock, tz)
    if type(w) is tuple:
        return TimeWindow(*w)
    return w._replace(weight=relative_weight) if w is not None and relative_weight is not None else w


def _window(question: str, now: float | None, clock: float | None,
            tz: tzinfo | None) -> tuple[float, float] | TimeWindow | None:
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
    if now is not None:
        ref = datetime.fromtimestamp(now, tz=timezone.utc).replace(tzinfo=None)
        m = _MONTH_ONLY.search(question)
        if m:
            month = _MONTHS[m.group(1).lower()]
            year = ref.year if month <= ref.month else ref.year - 1
            return _month(year, month)
    clock = now if clock is None else clock
    return None if clock is None else _deictic(question, clock, tz)


def _deictic(question: str, clock: float, tz: tzinfo | None) -> TimeWindow | None:
    """The window of an expression relative to the moment of asking (``clock``; calendar days of ``tz``,
    None: the machine's zone), or None."""
    zone = tz or datetime.now().astimezone().tzinfo

    def _ts(dt: datetime) -> float:   # a wall time of the asker's zone
        return dt.replace(tzinfo=zone).timestamp()

    def _month(y: int, m: int) -> tuple[float, float]:
        return _ts(datetime(y, m, 1)), _ts(datetime(y, m, calendar.monthrange(y, m)[1]) + timedelta(days=1)) - 1

    def _year(y: int) -> tuple[float, float]:
        return _ts(datetime(y, 1, 1)), _ts(datetime(y + 1, 1, 1)) - 1

    ref = datetime.fromtimestamp(clock, tz=zone).replace(tzinfo=None)
    today = datetime(ref.year, ref.month, ref.day)
    m = _AGO.search(question)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else _NUM_WORDS[m.group(1).lower()]
        unit = m.group(2).lower()
        if unit == "hour":
            centre = clock - n * 3600.0
            half = max(3600.0, n * 3600.0 / 4)
            return _relative(centre - half, min(clock, centre + half), unit)
        if unit == "day":   # that calendar day, half a day either side ("3 days ago" is loose)
            day = _ts(today - timedelta(days=n))
            return _relative(day - DAY / 2, min(clock, day + 1.5 * DAY - 1), unit)
        length = {"week": 7, "month": 30.44, "year": 365.25}[unit] * DAY
        centre = clock - n * length
        return _relative(centre - length / 2, min(clock, centre + length / 2), unit)
    m = _LAST.search(question)
    if m and m.group(1).lower() == "this" and not _past(question):
        m = None   # "this weekend" in "What should I cook this weekend?" is ahead, not a time to recall
    if m:
        which, unit = m.group(1).lower(), m.group(2).lower()
        monday = today - timedelta(days=today.weekday())   # calendar units: their edges are sharp (half a day)
        if which == "past":   # the last 7 / 30 / 365 days up to now
            days = {"week": 7, "weekend": 7, "month": 30, "year": 365}[unit]
            return _relative(clock - days * DAY, clock, "day")
        if unit == "weekend":   # the latest Saturday-Sunday that has begun ("last weekend": the one before it
            saturday = monday + timedelta(days=5)   # when asked during a weekend)
            if saturday > today or (which in ("last", "previous") and saturday <= today):
                saturday -= timedelta(days=7)
            return _relative(_ts(saturday), min(clock, _ts(saturday + timedelta(days=2)) - 1), "day")
        if unit == "week":
            start = monday - timedelta(days=7) if which in ("last", "previous") else monday
            return _relative(_ts(start), min(clock, _ts(start + timedelta(days=7)) - 1), "day")
        if unit == "month":
            if which in ("last", "previous"):
                y, mo = (ref.year, ref.month - 1) if ref.month > 1 else (ref.year - 1, 12)
                return _relative(*_month(y, mo), "day")
            return _relative(_month(ref.year, ref.month)[0], clock, "day")
        if which in ("last", "previous"):
            return _relative(*_year(ref.year - 1), "day")
        return _relative(_year(ref.year)[0], clock, "day")
    m = _DAY_WORDS.search(question)
    if m and " ".join(m.group(1).lower().split()) in _AHEAD_OR_PAST and not _past(question):
        m = None
    if m:
        word = " ".join(m.group(1).lower().split())
        if word == "the day before yesterday":
            d = today - timedelta(days=2)
            return _relative(_ts(d), _ts(d + timedelta(days=1)) - 1, "day")
        if word == "yesterday":
            d = today - timedelta(days=1)
            return _relative(_ts(d), _ts(today) - 1, "day")
        if word == "last night":   # 18:00 yesterday to 06:00 today
            return _relative(_ts(today) - 6 * 3600.0, min(clock, _ts(today) + 6 * 3600.0), "hour")
        hours = {"this morning": (5, 12), "this afternoon": (12, 18), "this evening": (17, 24), "tonight": (17, 24)}
        lo, hi = hours.get(word, (0, 24))
        return _relative(_ts(today) + lo * 3600.0, min(clock, _ts(today) + hi * 3600.0 - 1), "hour")
    m = _WEEKDAY.search(question)
    if m and (m.group(1) or "").lower() not in ("last", "past") and not _past(question):
        m = None   # "on Monday" ahead ("Can we ship on Monday?") is no time to recall
    if m:
        back = (today.weekday() - _WEEKDAYS.index((m.group(2) or m.group(3)).lower())) % 7
        if back == 0 and (m.group(1) or "").lower() in ("last", "past"):
            back = 7   # "last Monday" asked on a Monday: a week ago
        d = today - timedelta(days=back)
        return _relative(_ts(d), min(clock, _ts(d + timedelta(days=1)) - 1), "day")
    return None
