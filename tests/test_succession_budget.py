"""Issue 45 item 5: facts that change, at read time, in a space of hundreds of memories.

* ``current_only`` returns the successor of a superseded memory the recall would have returned, even when
  the successor does not rank on its own (before: the old memory left first and nothing followed its mark:
  neither was returned);
* a ``possible`` mark never displaces a memory from the budget (it brings nothing in);
* the budget holds: successors brought in take places within Eq.5's k + m, never past it (before: 10 of
  987 LoCoMo recalls returned 14 memories for a budget of 13).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.store import Store

QUESTION = "Which CI server runs the nightly builds of the billing service?"
BUDGET = Config().retrieval.k + Config().retrieval.m


def _filler(n: int, seed: int = 7) -> list[str]:
    """``n`` everyday memories that share no keyword with the question."""
    rnd = random.Random(seed)
    who = ["Maya", "Jonas", "Priya", "Tomas", "Mei", "Oskar", "Lena", "Ravi"]
    did = ["painted", "cooked", "repaired", "planted", "visited", "photographed", "sketched", "cleaned"]
    what = ["the garden fence", "a lemon tart", "the old bicycle", "tomato seedlings", "the harbour museum",
            "a red kite", "the living room", "the attic window", "a mushroom risotto", "the village chapel"]
    when = ["on Sunday", "after lunch", "in the rain", "with friends", "before breakfast", "late at night"]
    return [f"{rnd.choice(who)} {rnd.choice(did)} {rnd.choice(what)} {rnd.choice(when)} (note {i})."
            for i in range(n)]


def _space(tmp_path: Any, hash_embedder: Any, facts: list[tuple[str, str]], n: int = 400) -> tuple[Memory, dict]:
    """A space of ``n`` filler memories, then ``facts`` ``(key, text)`` told later, one minute apart.
    Returns the memory and ``{key: id}``."""
    mem = Memory(Config(db=str(tmp_path / "m.db")), store=Store(str(tmp_path / "m.db")), embedder=hash_embedder)
    turns = [{"speaker": "user", "text": t, "time": f"2026-01-01T{i // 60 % 24:02d}:{i % 60:02d}:00Z",
              "session": f"s{i // 40}"} for i, t in enumerate(_filler(n))]
    turns += [{"speaker": "user", "text": t, "time": f"2026-03-{1 + i:02d}T10:00:00Z", "session": f"f{i}", "id": k}
              for i, (k, t) in enumerate(facts)]
    mem.add_many("s", turns)
    st = mem.store
    sid = st.require_space("s").id
    ids = {k: st.ids_by_source(sid, [k])[k] for k, _ in facts}
    return mem, ids


def _recall(mem: Memory, **kw: Any) -> list[dict[str, Any]]:
    return mem.retrieve(QUESTION, "s", learn=False, **kw).memories


def test_current_only_returns_the_successor_of_a_recalled_memory_that_does_not_rank_itself(tmp_path, hash_embedder):
    mem, ids = _space(tmp_path, hash_embedder, [
        ("old", "The billing service nightly builds run on our Jenkins CI server."),
        ("new", "Everything moved to hosted GitHub runners last week, the old box is switched off.")])
    with mem:
        sid = mem.store.require_space("s").id
        assert ids["old"] in {m["id"] for m in _recall(mem)}
        assert ids["new"] not in {m["id"] for m in _recall(mem)}   # it does not rank on its own
        mem.store.mark_superseded(sid, ids["old"], ids["new"])
        got = _recall(mem, current_only=True)
        assert ids["new"] in {m["id"] for m in got} and ids["old"] not in {m["id"] for m in got}
        assert len(got) == BUDGET
        new = next(m for m in got if m["id"] == ids["new"])
        assert new["path"] == "successor" and new["supersedes"] == [ids["old"]]
        # without current_only: both, the new one right above the old one, still within the budget
        both = [m["id"] for m in _recall(mem)]
        assert len(both) == BUDGET and both.index(ids["new"]) + 1 == both.index(ids["old"])


def test_a_possible_mark_takes_no_slot(tmp_path, hash_embedder):
    mem, ids = _space(tmp_path, hash_embedder, [
        ("old", "The billing service nightly builds run on our Jenkins CI server."),
        ("new", "Maybe we try hosted GitHub runners some day, the old box is getting slow.")])
    with mem:
        sid = mem.store.require_space("s").id
        plain = [(m["id"], m["path"]) for m in _recall(mem)]
        assert ids["new"] not in dict(plain)
        mem.store.mark_superseded(sid, ids["old"], ids["new"], detector="cue", confidence=0.5, status="possible")
        for kw in ({}, {"current_only": True}):
            got = _recall(mem, **kw)
            assert [(m["id"], m["path"]) for m in got] == plain, kw   # nothing displaced, nothing hidden
            old = next(m for m in got if m["id"] == ids["old"])
            assert old["supersession_status"] == "possible" and old["superseded_by"] == ids["new"]


@pytest.mark.parametrize("current_only", [False, True])
def test_successors_take_places_within_the_budget(tmp_path, hash_embedder, current_only):
    """Six recalled memories superseded by six that do not rank on their own: the recall still returns
    k + m memories, all six successors among them; the places they take are the last ones."""
    olds = [(f"old{i}", f"The billing service nightly builds run on Jenkins CI server number {i}.")
            for i in range(6)]
    news = [(f"new{i}", f"Replacement {i}: hosted GitHub runners took over, that box is switched off.")
            for i in range(6)]
    mem, ids = _space(tmp_path, hash_embedder, olds + news, n=300)
    with mem:
        sid = mem.store.require_space("s").id
        before = [m["id"] for m in _recall(mem)]
        assert len(before) == BUDGET and {ids[k] for k, _ in olds} <= set(before)
        assert not {ids[k] for k, _ in news} & set(before)
        for i in range(6):
            mem.store.mark_superseded(sid, ids[f"old{i}"], ids[f"new{i}"])
        got = [m["id"] for m in _recall(mem, current_only=current_only)]
        assert len(got) == BUDGET, got                                  # before: 13 + 6
        assert {ids[k] for k, _ in news} <= set(got)
        kept = [i for i in before if i not in {ids[k] for k, _ in olds}] if current_only else before
        others = [i for i in got if i in set(kept)]
        assert others == kept[:len(others)]                               # the last ones left


# A ``possible`` mark between two memories that are both recalled (LongMemEval-S's knowledge-update items:
# "I've completed 20 videos" then "I've completed 30 videos", a slot change the detector is not sure of).
VIDEOS = "How many videos of the Python tutorial series have I completed so far?"
TUTORIAL = [
    ("old", "I'm brushing up on Python with a tutorial series on YouTube and I've completed 20 videos of the "
            "Python tutorial series so far."),
    ("new", "A long week: the garden fence fell over in the storm, the car needs new tyres, my sister visited "
            "on Sunday, and somewhere in between I've completed 30 videos of the series."),
    ("later", "Thirty done, and I'll start the data course next week."),
    ("again", "My neighbour lent me a ladder, we fixed the shed roof, and yes, still 30 videos of the series done."),
]


def test_a_possible_mark_places_the_newer_recalled_memory_above_the_older(tmp_path, hash_embedder):
    """Both memories of a possible mark recalled: the newer one moves right above the older one, nothing
    else changes (the same memories, the others in their order, the budget). The old memory's latest
    possible successor ("later") is not recalled: the recalled one is placed all the same (before: only
    the latest successor was looked at, and nothing moved)."""
    mem, ids = _space(tmp_path, hash_embedder, TUTORIAL)
    with mem:
        sid = mem.store.require_space("s").id
        plain = [m["id"] for m in mem.retrieve(VIDEOS, "s", learn=False).memories]
        assert len(plain) == BUDGET and ids["later"] not in plain
        assert plain.index(ids["old"]) < plain.index(ids["new"])      # the old value ranks first on its own
        for k in ("new", "later"):
            mem.store.mark_superseded(sid, ids["old"], ids[k], detector="slot", confidence=0.5, status="possible")
        for kw in ({}, {"current_only": True}):
            got = [m["id"] for m in mem.retrieve(VIDEOS, "s", learn=False, **kw).memories]
            assert sorted(got) == sorted(plain), kw                    # nothing brought in, nothing hidden
            assert got.index(ids["new"]) + 1 == got.index(ids["old"]), kw
            rest = [i for i in got if i != ids["new"]]
            assert rest == [i for i in plain if i != ids["new"]], kw   # the others keep their order
        # a second recalled successor: both sit right above the old memory, in their own order
        assert plain.index(ids["old"]) < plain.index(ids["again"])
        mem.store.mark_superseded(sid, ids["old"], ids["again"], detector="slot", confidence=0.5, status="possible")
        got = [m["id"] for m in mem.retrieve(VIDEOS, "s", learn=False).memories]
        news = sorted((ids["new"], ids["again"]), key=plain.index)
        assert sorted(got) == sorted(plain)
        assert got[got.index(ids["old"]) - 2:got.index(ids["old"]) + 1] == [*news, ids["old"]]
        assert [i for i in got if i not in news] == [i for i in plain if i not in news]


def test_a_possible_mark_moves_nothing_the_question_does_not_ask_about(tmp_path, hash_embedder):
    """The gate: two recalled memories with a possible mark, and a question that shares a word with each but
    none with both: the mark moves nothing. Asked about what they share, the newer one moves up."""
    facts = [("old", "The billing service deploys from the release branch every evening."),
             ("new", "Our CI server got a bigger disk; the release branch deploys are quicker now.")]
    apart = "Which CI server runs the billing service?"
    shared = "Which CI server deploys the release branch of the billing service?"
    mem, ids = _space(tmp_path, hash_embedder, facts)
    with mem:
        sid = mem.store.require_space("s").id
        plain = {q: [m["id"] for m in mem.retrieve(q, "s", learn=False).memories] for q in (apart, shared)}
        for q, got in plain.items():
            assert {ids["old"], ids["new"]} <= set(got) and got.index(ids["old"]) < got.index(ids["new"]), q
        mem.store.mark_superseded(sid, ids["old"], ids["new"], detector="slot", confidence=0.5, status="possible")
        assert [m["id"] for m in mem.retrieve(apart, "s", learn=False).memories] == plain[apart]
        got = [m["id"] for m in mem.retrieve(shared, "s", learn=False).memories]
        assert sorted(got) == sorted(plain[shared]) and got.index(ids["new"]) + 1 == got.index(ids["old"])
