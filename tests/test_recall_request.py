"""One recall request (issue 54): the filters and options of a recall are one frozen value, built where a recall
enters, checked once, and passed whole to retrieval."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from hela_cli.errors import InputError
from hela_cli.mechanics.request import EVERYTHING, RecallRequest
from hela_cli.memory import Memory


def test_a_request_reads_its_dates_and_is_frozen():
    r = RecallRequest.of(speaker="ana", since="2024-01-02", until=1_800_000_000, as_of="2024-06-01", k=4)
    assert r.since == 1704153600.0 and r.until == 1_800_000_000.0 and r.k == 4
    assert r.filters() == {"speaker": "ana", "since": 1704153600.0, "until": 1717200000.0}   # until bounded by as_of
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.k = 5  # type: ignore[misc]
    assert EVERYTHING.filters() is None


@pytest.mark.parametrize("bad,line", [({"speaker": ""}, "--speaker"), ({"since": "2024-05-01", "until": "2024-01-01"},
                                      "--since is after --until"), ({"as_of": "not a date"}, "--as-of"),
                                      ({"k": 0}, "k:")])
def test_a_bad_request_is_one_line(bad, line):
    with pytest.raises(InputError, match=line):
        RecallRequest.of(**bad)


def test_the_filters_are_spelled_once():
    """Memory's recall methods take the request (or its options, made into one by RecallRequest.of): no
    filter is a parameter of theirs, so a new filter changes RecallRequest alone."""
    fields = {f.name for f in dataclasses.fields(RecallRequest)}
    for method in (Memory.retrieve, Memory.ask, Memory._retrieve):
        assert not fields & set(inspect.signature(method).parameters), method.__name__
    from hela_cli.mechanics.retrieval import retrieve

    assert not fields & set(inspect.signature(retrieve).parameters)


def test_options_and_a_request_give_the_same_recall(make_memory, hash_embedder, tmp_path):
    notes = tmp_path / "n.txt"
    notes.write_text("ana: I moved to Lisbon.\nbob: I like tea.\nana: Lisbon is sunny.\nbob: Tea again.\n")
    mem: Memory = make_memory(embedder=hash_embedder, ingest=[str(notes)])
    space = mem.default_space()
    by_options = mem.retrieve("Lisbon", space, speaker="ana", k=2, learn=False)
    by_request = mem.retrieve("Lisbon", space, RecallRequest.of(speaker="ana", k=2), learn=False)
    assert [m["id"] for m in by_options.memories] == [m["id"] for m in by_request.memories]
    assert {m["speaker"] for m in by_request.memories} == {"ana"}
    with pytest.raises(InputError, match="not both"):
        mem.retrieve("Lisbon", space, RecallRequest(k=2), speaker="ana")
