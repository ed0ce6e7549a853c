"""The use-trace rules of feedback learning (dynamics.py), with hand-computed values."""

import pytest

from hela_cli.dynamics import (dual_path, dual_path_traced, gated_trace_bonus, overlap, trace_bonus, trace_misleads,
                               trace_similarity)


def test_overlap_is_jaccard():
    assert overlap([1, 2, 3], [2, 3, 4]) == pytest.approx(2 / 4)
    assert overlap([1, 1, 2], [2]) == pytest.approx(1 / 2)
    assert overlap([], []) == 0.0
    assert overlap([1], [2]) == 0.0


def test_trace_similarity_adds_weighted_overlap_capped_at_one():
    assert trace_similarity(0.55, 0.3, 1.0) == pytest.approx(0.85)
    assert trace_similarity(0.55, 0.3, 0.5) == pytest.approx(0.70)
    assert trace_similarity(0.55, 0.3, 0.0) == pytest.approx(0.55)
    assert trace_similarity(0.9, 0.5, 1.0) == 1.0


def test_overlap_similarity_feeds_trace_bonus():
    # two earlier recalls: cosine 0.5 but half their base hits shared (0.5 + 1.0 * 0.5 = 1.0 -> full bonus),
    # cosine 0.7 and nothing shared (0.7 < min 0.8 -> nothing)
    sims = [trace_similarity(0.5, overlap([1, 2, 3], [2, 3, 4, 1, 5, 6]), 1.0), trace_similarity(0.7, 0.0, 1.0)]
    assert sims == pytest.approx([1.0, 0.7])
    assert trace_bonus(sims, [[7], [8]], 1.0, 0.8) == {7: pytest.approx(1.0)}


S_BASE = {1: 2.0, 2: 1.5, 3: 1.0, 4: 0.5, 5: 0.25}   # k = 2: base hits 1 and 2, S_k = 1.5
RAW = {1: 0.9, 3: 0.6, 4: 0.8, 5: 0.4, 9: 1.0}         # 1 holds a base slot, 9 is no candidate


def test_gates_off_drop_only_base_hits_and_non_candidates():
    assert gated_trace_bonus(RAW, S_BASE, 2) == {3: 0.6, 4: 0.8, 5: 0.4}


def test_relevance_scales_by_share_of_kth_base_score():
    got = gated_trace_bonus(RAW, S_BASE, 2, relevance=1.0)
    assert got == pytest.approx({3: 0.6 * 1.0 / 1.5, 4: 0.8 * 0.5 / 1.5, 5: 0.4 * 0.25 / 1.5})
    got2 = gated_trace_bonus(RAW, S_BASE, 2, relevance=2.0)
    assert got2[3] == pytest.approx(0.6 * (1.0 / 1.5) ** 2)
    # as relevant as the k-th hit (a tie it lost on id): the whole bonus
    assert gated_trace_bonus({3: 0.5}, {1: 2.0, 2: 1.0, 3: 1.0}, 2, relevance=1.0) == {3: pytest.approx(0.5)}


def test_max_rank_and_max_slots():
    assert gated_trace_bonus(RAW, S_BASE, 2, max_rank=4) == {3: 0.6, 4: 0.8}        # ranks 2 and 3 of 0..4
    assert gated_trace_bonus(RAW, S_BASE, 2, max_slots=1) == {4: 0.8}
    assert gated_trace_bonus(RAW, S_BASE, 2, relevance=1.0, max_slots=1) == {3: pytest.approx(0.4)}


def test_dual_path_traced_takes_the_weakest_slot_by_s():
    s_base = {1: 2.0, 2: 1.8, 3: 1.6, 4: 0.9, 5: 0.5, 6: 0.4}
    s = {1: 2.0, 2: 1.8, 3: 1.6, 4: 0.9, 5: 1.2, 6: 0.4}        # spreading lifted 5 above 4
    # no trace: plain Eq.5, k=2 m=2 -> 1, 2 | 3, 5
    assert dual_path_traced(s_base, s, {}, 2, 2, 1) == dual_path(s_base, s, 2, 2) == [
        (1, "base"), (2, "base"), (3, "base"), (5, "hebbian")]
    # a trace to 6 (S_base 0.4 + 0.5) takes a slot; the rest is Eq.5 with k-1 base slots: 2 moves to the
    # flipped path (S 1.8) and the weakest by S (5, at 1.2) drops out
    assert dual_path_traced(s_base, s, {6: 0.5}, 2, 2, 1) == [(1, "base"), (6, "hebbian"), (2, "base"), (3, "base")]
    # traces to memories already among the top k take nothing; slots caps the picks (best S_base + bonus first)
    assert dual_path_traced(s_base, s, {1: 0.9}, 2, 2, 1) == dual_path(s_base, s, 2, 2)
    assert dual_path_traced(s_base, s, {6: 0.5, 4: 0.1}, 2, 2, 1)[1] == (4, "hebbian")   # 0.9 + 0.1 > 0.4 + 0.5
    assert [v for v, _ in dual_path_traced(s_base, s, {6: 0.5, 4: 0.1}, 2, 2, 2)] == [4, 6, 1, 2]


def test_need_gate_drops_all_traces_when_the_best_match_is_strong():
    assert gated_trace_bonus(RAW, S_BASE, 2, need_below=2.5) == {3: 0.6, 4: 0.8, 5: 0.4}   # best 2.0 < 2.5
    assert gated_trace_bonus(RAW, S_BASE, 2, need_below=2.0) == {}                          # 2.0 is not below
    assert gated_trace_bonus(RAW, S_BASE, 2, need_below=2.5, max_slots=1) == {4: 0.8}


def test_trace_share_divides_a_recall_bonus_among_its_reports():
    # recall A (sim 0.8 -> 0.5 at min 0.6) used 1 and 2; recall B (sim 0.7 -> 0.25) used 2 only
    assert trace_bonus([0.8, 0.7], [[1, 2], [2]], 1.0, 0.6) == pytest.approx({1: 0.5, 2: 0.5})
    assert trace_bonus([0.8, 0.7], [[1, 2], [2]], 1.0, 0.6, share=True) == pytest.approx({1: 0.25, 2: 0.25})
    assert trace_bonus([0.9], [[3]], 1.0, 0.6, share=True) == pytest.approx({3: 0.75})


def test_trace_misleads_counts_unused_trace_arrivals():
    records = [
        ([{"id": 1, "trace": 1}, {"id": 2, "trace": 1}, {"id": 3}], [2]),   # 1 brought in, unused; 2 used
        ([{"id": 1, "trace": 1}, {"id": 3}], []),                           # 1 again unused; 3 no trace
        ([{"id": 2, "trace": 1}], [5]),                                     # 2 unused this time
    ]
    assert trace_misleads(records) == {1: 2, 2: 1}
    assert trace_misleads([]) == {}


def test_misled_traces_lose_bonus_geometrically():
    got = gated_trace_bonus(RAW, S_BASE, 2, misled={3: 1, 4: 2}, misled_keep=0.5)
    assert got == pytest.approx({3: 0.3, 4: 0.2, 5: 0.4})
    assert gated_trace_bonus(RAW, S_BASE, 2, misled={3: 1, 4: 2}, misled_keep=0.0) == {5: 0.4}
    assert gated_trace_bonus(RAW, S_BASE, 2, misled={3: 1}, misled_keep=1.0) == {3: 0.6, 4: 0.8, 5: 0.4}
