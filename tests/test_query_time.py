"""Time expressions in questions (hela_cli/text/query_time.py) and the soft window prior (dynamics.window_factor)."""

from datetime import datetime, timezone

import pytest

from hela_cli.mechanics.dynamics import DAY, window_factor
from hela_cli.text.query_time import question_window

NOW = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc).timestamp()


def _d(s: str) -> float:
    return datetime.fromisoformat(s).replace(tzinfo=timezone.utc).timestamp()


def _days(w):
    return None if w is None else tuple(
        x if abs(x) == float("inf") else datetime.fromtimestamp(x, timezone.utc).strftime("%Y-%m-%d") for x in w)


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
    ("What did I do 3 days ago?", ("2023-05-04", "2023-05-07")),
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
