"""The use-trace slot cap of feedback learning (dynamics.trace_slot_cap): hand-computed values, and through
retrieval."""

import pytest

from hela_cli.config import Config
from hela_cli.mechanics.dynamics import dual_path, trace_bonus, trace_slot_cap
from tests.conftest import SAMPLE

S_BASE = {1: 2.0, 2: 1.5, 3: 1.0, 4: 0.5, 5: 0.25}   # k = 2: base hits 1 and 2
RAW = {1: 0.9, 3: 0.6, 4: 0.8, 5: 0.4, 9: 1.0}         # 1 holds a base slot, 9 is no candidate


def test_no_cap_drops_only_base_hits_and_non_candidates():
    assert trace_slot_cap(RAW, S_BASE, 2, 0) == {3: 0.6, 4: 0.8, 5: 0.4}


def test_cap_keeps_the_largest_bonuses():
    assert trace_slot_cap(RAW, S_BASE, 2, 1) == {4: 0.8}
    assert trace_slot_cap(RAW, S_BASE, 2, 2) == {4: 0.8, 3: 0.6}
    assert trace_slot_cap({3: 0.5, 4: 0.5}, S_BASE, 2, 1) == {3: 0.5}      # tie: the smaller id
    assert trace_slot_cap({1: 0.9}, S_BASE, 2, 1) == {}                   # only a base hit: nothing to cap


def test_capped_trace_still_competes_on_s():
    # two earlier recalls point at 4 (sim 0.9 -> 0.75) and 5 (sim 0.8 -> 0.5); with a cap of 1 only 4 keeps
    # its bonus: S(4) = 0.5 + 0.75 = 1.25 takes a flipped slot, 5 stays at its spreading score 0.6
    raw = trace_bonus([0.9, 0.8], [[4], [5]], 1.0, 0.6)
    assert raw == pytest.approx({4: 0.75, 5: 0.5})
    capped = trace_slot_cap(raw, S_BASE, 2, 1)
    assert capped == pytest.approx({4: 0.75})
    s = {1: 2.0, 2: 1.5, 3: 1.0, 4: 0.5, 5: 0.6, 6: 0.3}   # spreading lifted 5 to 0.6
    s_base = {**S_BASE, 6: 0.3}
    s_final = {v: s[v] + capped.get(v, 0.0) for v in s}
    assert dual_path(s_base, s_final, 2, 2) == [(1, "base"), (2, "base"), (4, "base"), (3, "base")]
    # without the cap 5 (0.6 + 0.5 = 1.1) would take 3's slot
    s_uncapped = {v: s[v] + raw.get(v, 0.0) for v in s}
    assert [v for v, _ in dual_path(s_base, s_uncapped, 2, 2)] == [1, 2, 4, 5]


# ----------------------------------------------------------------------------------- through retrieval
def test_retrieval_gives_traces_one_flipped_slot(make_memory, hash_embedder):
    m = make_memory(Config(), embedder=hash_embedder, ingest=[SAMPLE / "conversation.json"],
                    hebbian__coretrieval=False)
    q = "What is the name of Jonas's dog?"
    res = m.retrieve(q, "demo")
    k = m.config.retrieval.k
    used = [x["id"] for x in res.memories[k:k + 2]]   # two memories of the flipped path
    assert len(used) == 2
    m.reinforce("demo", used, recall_id=res.recall_id)
    assert m.config.retrieval.trace_max_slots == 1
    capped = m.retrieve(q, "demo", learn=False)
    traced = {x["id"]: x["trace_bonus"] for x in capped.memories if x["trace_bonus"] > 0}
    # the same question (cosine 1): both used memories earn the full bonus, the cap keeps the smaller id
    assert traced == {min(used): pytest.approx(m.config.retrieval.trace_weight)}
    m.config.retrieval.trace_max_slots = 0
    uncapped = m.retrieve(q, "demo", learn=False)
    assert {x["id"] for x in uncapped.memories if x["trace_bonus"] > 0} >= set(used)


# --------------------------------------------------------------------------- echo as a use signal (issue 32)

def test_echoed_memories_distinctive_terms():
    from hela_cli.mechanics.feedback import echoed_memories

    memories = [
        {"id": 11, "text": "We moved the session cache from Redis to the sqlite file in auth/cache.py"},
        {"id": 12, "text": "The deploy target is the staging server named kestrel behind nginx"},
        {"id": 13, "text": "We talked about the session timeout for the mobile app"},
        {"id": 14, "text": "Lunch was pizza again"},
    ]
    message = ("Done: the session cache now lives in the sqlite file (auth/cache.py), so Redis is no longer "
               "needed. I also set the timeout to 30 minutes.")
    # 11 echoed (sqlite, redis, cache.py ...); 13 shares only "session" (in two memories: not distinctive)
    # and "timeout" (one term of its several); 12 and 14 not at all
    assert echoed_memories(memories, message, prompt="Move the session cache off Redis") == [11]
    assert echoed_memories(memories, message, min_terms=1) == [11, 13]
    assert echoed_memories(memories, "") == [] and echoed_memories([], message) == []


def test_echoed_memories_ignore_the_prompts_words():
    from hela_cli.mechanics.feedback import echoed_memories

    memories = [{"id": 1, "text": "kestrel is the staging server"}, {"id": 2, "text": "tofu is the dog"},
                {"id": 3, "text": "the printer is broken"}, {"id": 4, "text": "rain all week"}]
    # the answer repeats the question's words: no evidence that memory 1 was used
    assert echoed_memories(memories, "The kestrel staging server", prompt="What is the kestrel staging server?") == []
    assert echoed_memories(memories, "It is kestrel, the staging one", prompt="Which server is staging?") == [1]
