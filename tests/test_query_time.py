"""Time expressions in questions (hela_cli/text/query_time.py) and the soft window prior (dynamics.window_factor)."""

from datetime import datetime, timedelta, timezone

import pytest

from hela_cli.mechanics.dynamics import DAY, window_factor
from hela_cli.text.query_time import only_time, question_window

NOW = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc).timestamp()


def _d(s: str) -> float:
    return datetime.fromisoformat(s).replace(tzinfo=timezone.utc).timestamp()


def _days(w):
    return None if w is None else tuple(
        x if abs(x) == float("inf") else datetime.fromtimestamp(x, timezone.utc).strftime("%Y-%m-%d") for x in w[:2])


@pytest.mark.parametrize("question, want", [
    ("What painting did Melanie show on October 13, 2023?", ("2023-10-13", "2023-10-13")),
    ("What did Gina find for her store on 1 February, 2023?", ("2023-02-01", "2023-02-01")),
    ("What happened on 2023-02-28?", ("2023-02-28", "2023-02-28")),
    ("What did Maria donate in December 2023?", ("2023-12-01", "2023-12-31")),
    ("How many times did she go to the beach in 2023?", ("2023-01-01", "2023-12-31")),
    ("When did Melanie go camping in June?", ("2022-06-01", "2022-06-30")),      # latest June before now
    ("What did we plan in May?", ("2023-05-01", "2023-05-31")),
    ("What did Melanie see last year?", ("2022-01-01", "2022-12-31")),
    ("What did I buy last month?", ("2023-04-01", "2023-04-30")),
    ("What did I eat yesterday?", ("2023-05-07", "2023-05-07")),
    ("What did I do 3 days ago?", ("2023-05-04", "2023-05-06")),   # May 5, half a day either side
    ("What did she do before April 10, 2023?", (float("-inf"), "2023-04-10")),
    ("What did he start after March 2023?", ("2023-03-31", float("inf"))),
])
def test_question_windows(question, want):
    assert _days(question_window(question, NOW)) == want


@pytest.mark.parametrize("question", [
    "What may I bring to the party?",            # "may" the verb
    "Where does Alice work?",
    "What is 2023 minus 12?",                    # a number, not "in 2023"
    "February 30, 2023 was when?",               # no such day
])
def test_no_window_without_a_time_expression(question):
    assert question_window(question, NOW) is None


def test_relative_expressions_need_a_present():
    assert question_window("What did I do last week?", None) is None
    assert question_window("What did I do in July 2023?", None) is not None


def test_window_factor_is_soft_and_one_without_a_window():
    w = (_d("2023-06-01"), _d("2023-06-30"))
    assert window_factor(_d("2023-06-15"), None, 0.5) == 1.0
    assert window_factor(_d("2023-06-15"), w, 0.0) == 1.0
    assert window_factor(_d("2023-06-15"), w, 0.5) == pytest.approx(1.0)
    assert window_factor(_d("2023-07-05"), w, 0.5, slack_days=7) == pytest.approx(1.0)   # talked about after
    far = window_factor(_d("2023-12-01"), w, 0.5, slack_days=7)
    near = window_factor(_d("2023-07-20"), w, 0.5, slack_days=7)
    before = window_factor(_d("2023-05-25"), w, 0.5, slack_days=7)
    assert 0.5 < far < near < 1.0 and 0.5 < before < 1.0
    assert before == pytest.approx(0.5 + 0.5 * 2.718281828 ** (-7 / 7))
    assert window_factor(_d("2023-06-01") - 7 * DAY, w, 1.0, slack_days=7) == pytest.approx(2.718281828 ** -1)
    open_w = (float("-inf"), _d("2023-04-10"))
    assert window_factor(_d("2020-01-01"), open_w, 0.5) == 1.0


# --------------------------------------------------------------------------- relative to the moment of asking

FRIDAY = datetime(2026, 12, 4, 17, 0, tzinfo=timezone.utc).timestamp()   # a Friday, 17:00 UTC


def _span(w):
    return tuple(datetime.fromtimestamp(x, timezone.utc).strftime("%Y-%m-%d %H:%M") for x in w[:2])


@pytest.mark.parametrize("question, want", [
    ("What did I do today?", ("2026-12-04 00:00", "2026-12-04 17:00")),
    ("What did we change earlier today?", ("2026-12-04 00:00", "2026-12-04 17:00")),
    ("What did I work on this morning?", ("2026-12-04 05:00", "2026-12-04 11:59")),
    ("What did we try this afternoon?", ("2026-12-04 12:00", "2026-12-04 17:00")),
    ("What did we change yesterday?", ("2026-12-03 00:00", "2026-12-03 23:59")),
    ("What broke last night?", ("2026-12-03 18:00", "2026-12-04 06:00")),
    ("What did we do the day before yesterday?", ("2026-12-02 00:00", "2026-12-02 23:59")),
    ("What did I run 2 hours ago?", ("2026-12-04 14:00", "2026-12-04 16:00")),
    ("What did I do 3 days ago?", ("2026-11-30 12:00", "2026-12-02 11:59")),
    ("What did we fix two days ago?", ("2026-12-01 12:00", "2026-12-03 11:59")),
    ("What did we fix a couple of days ago?", ("2026-12-01 12:00", "2026-12-03 11:59")),
    ("What did I start 2 weeks ago?", ("2026-11-17 05:00", "2026-11-24 05:00")),   # a week around 14 days ago
    ("What did we ship a month ago?", ("2026-10-20 01:09", "2026-11-19 11:43")),   # a month around 30.44 days
    ("What did I do last week?", ("2026-11-23 00:00", "2026-11-29 23:59")),     # the calendar week before
    ("What did I do this week?", ("2026-11-30 00:00", "2026-12-04 17:00")),
    ("What did I do in the past week?", ("2026-11-27 17:00", "2026-12-04 17:00")),
    ("What did we do last weekend?", ("2026-11-28 00:00", "2026-11-29 23:59")),
    ("What did we do last month?", ("2026-11-01 00:00", "2026-11-30 23:59")),
    ("What did we do this month?", ("2026-12-01 00:00", "2026-12-04 17:00")),
    ("What did we do last year?", ("2025-01-01 00:00", "2025-12-31 23:59")),
    ("What did I do on Monday?", ("2026-11-30 00:00", "2026-11-30 23:59")),
    ("What did we decide last Friday?", ("2026-11-27 00:00", "2026-11-27 23:59")),   # asked on a Friday
    ("What did we decide on Friday?", ("2026-12-04 00:00", "2026-12-04 17:00")),     # today
    ("Did the build pass Tuesday?", ("2026-12-01 00:00", "2026-12-01 23:59")),
])
def test_relative_windows_from_the_moment_of_asking(question, want):
    w = question_window(question, FRIDAY)
    assert _span(w) == want
    assert w.slack_days == 0.0 and w.scale_days is not None   # sharp: no two weeks of slack after "yesterday"


def test_relative_windows_resolve_against_the_clock_months_against_now():
    data_now = datetime(2023, 5, 8, tzinfo=timezone.utc).timestamp()   # an old transcript's newest memory
    assert _days(question_window("What did I do yesterday?", data_now, clock=FRIDAY)) == ("2026-12-03", "2026-12-03")
    assert _days(question_window("When did we go camping in June?", data_now, clock=FRIDAY)) == \
        ("2022-06-01", "2022-06-30")                                    # a month without its year: the data's
    assert question_window("What did I do yesterday?", None, clock=None) is None


def test_relative_windows_in_the_askers_time_zone():
    pacific = timezone(timedelta(hours=-8))   # Friday 09:00 there
    w = question_window("What did we change yesterday?", FRIDAY, tz=pacific)
    assert _span(w) == ("2026-12-03 08:00", "2026-12-04 07:59")
    w = question_window("What did I do this morning?", FRIDAY, tz=pacific)
    assert _span(w) == ("2026-12-04 13:00", "2026-12-04 17:00")


def test_plural_weekday_and_no_time_are_no_window():
    assert question_window("What do we deploy on Mondays?", FRIDAY) is None
    assert question_window("How do I run the tests?", FRIDAY) is None


@pytest.mark.parametrize("question", [
    "I've got some free time tonight, any documentary recommendations?",   # LongMemEval: a time ahead
    "What should I serve for dinner this weekend?",
    "Can we ship on Monday?",
    "What do I need today?",
    "I noticed my bike performs better during my Sunday group rides. Why?",   # LongMemEval: a kind of ride
])
def test_a_time_ahead_is_no_time_to_recall(question):
    """"tonight", "today", "this weekend", "on Monday" name a time ahead as often as one past: a window only
    when the question speaks of the past ("What did I do today?")."""
    assert question_window(question, FRIDAY) is None


def test_relative_weight_and_absolute_windows_unchanged():
    rel = question_window("What did I do 3 days ago?", FRIDAY, relative_weight=0.9)
    assert rel.weight == 0.9
    absolute = question_window("What did I do on October 13, 2023?", FRIDAY, relative_weight=0.9)
    assert absolute.weight is None and absolute.slack_days is None   # the configured prior, as before


def test_window_factor_of_a_relative_window():
    w = question_window("What did I do yesterday?", FRIDAY, relative_weight=0.9)
    inside = window_factor(FRIDAY - DAY, w, 0.5, slack_days=7)
    assert inside == 1.0
    day_after = window_factor(FRIDAY - 0.25 * DAY, w, 0.5, slack_days=7)   # this morning: no 7-day slack
    assert day_after == pytest.approx(0.1 + 0.9 * 2.718281828 ** (-(FRIDAY - 0.25 * DAY - w.end) / DAY / 0.5))
    far = window_factor(FRIDAY - 40 * DAY, w, 0.5, slack_days=7)
    assert far == pytest.approx(0.1, abs=1e-6)                          # its own weight 0.9, not 0.5


@pytest.mark.parametrize("question, want", [
    ("What did I do 3 days ago?", True),
    ("What did we change yesterday?", True),
    ("recap last week", True),
    ("What happened on Monday?", True),
    ("What did we change in the parser yesterday?", False),
    ("Why did the deploy fail last night?", False),
    ("What did I do?", False),
    ("What did I do in July 2023?", False),
])
def test_only_time(question, want):
    assert only_time(question) is want


def test_a_new_users_four_memories(make_memory, hash_embedder):
    """The issue's trial: memories of 1, 3, 9 and 40 days ago; each question names one of them."""
    mem = make_memory(embedder=hash_embedder)
    texts = {1: "I fixed the flaky login test in the auth service",
             3: "I refactored the payment module and split the invoice class",
             9: "I wrote the onboarding docs for the public API",
             40: "I upgraded the Postgres database to version 16"}
    for age, text in texts.items():
        mem.add("me", text, time=FRIDAY - age * DAY + 3600)
    for question, age in [("What did I do 3 days ago?", 3), ("What did I do yesterday?", 1),
                          ("What did I do 9 days ago?", 9), ("What did I do 40 days ago?", 40),
                          ("What did we change yesterday?", 1), ("What did I do on Tuesday?", 3),
                          ("What did I do last week?", 9), ("What did I do last month?", 9),
                          ("What did I work on three days ago?", 3),
                          ("What did we change in the login test yesterday?", 1)]:
        res = mem.retrieve(question, "me", learn=False, now=FRIDAY)
        assert res.memories[0]["text"] == texts[age], question
        assert len(res.memories) == 4   # narrowed first, the others after: nothing dropped
