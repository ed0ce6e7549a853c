"""hela_cli/text/dates.py: the one home of date parsing and formatting (moved from formats, prompts and
consolidate; the old import paths still give the same functions)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hela_cli import formats

from hela_cli.mechanics import consolidate

from hela_cli.text import dates

from hela_cli.answering import prompts


def utc(*a) -> float:
    return datetime(*a, tzinfo=timezone.utc).timestamp()


def test_old_names_are_the_moved_functions():
    assert formats.parse_date is dates.parse_date
    assert prompts.format_date is dates.format_date
    assert consolidate.normalise_date is dates.normalise_date
    assert consolidate.resolve_relative is dates.resolve_relative


def test_epoch_and_format_iso():
    ts = dates.epoch(2023, 5, 8, 13, 56, 12)
    assert ts == utc(2023, 5, 8, 13, 56, 12)
    assert dates.format_iso(ts) == "2023-05-08T13:56:12Z"
    assert dates.format_date(ts) == "8 May 2023"
    with pytest.raises(ValueError, match="31/02/2023"):
        dates.epoch(2023, 2, 31, shown="31/02/2023")
    with pytest.raises(ValueError, match="out of range"):
        dates.epoch(1850, 1, 1)


@pytest.mark.parametrize("value, expected", [
    (1683554172, (1683554172.0, "1683554172")),
    (1683554172.5, (1683554172.5, "1683554172.5")),
    ("2023-05-08T13:56:12Z", (utc(2023, 5, 8, 13, 56, 12), "2023-05-08T13:56:12Z")),
])
def test_parse_time_value(value, expected):
    assert dates.parse_time_value(value) == expected


@pytest.mark.parametrize("value, needle", [
    (1683554172000, "milliseconds"), (float("nan"), "finite"), (True, "got boolean"), (None, "got null"),
])
def test_parse_time_value_rejects(value, needle):
    with pytest.raises(ValueError, match=needle):
        dates.parse_time_value(value)
