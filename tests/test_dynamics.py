"""The paper's equations as pure functions, checked against hand-computed values."""

import math

import pytest

from hela_cli.mechanics.dynamics import (DAY, base_activation, coactivated_pairs, dual_path, forget_reasons,
                               hebbian_update, hub_strength, is_hub, should_forget, spread_activation,
                               time_factor)


def test_eq1_hebbian_update_and_cap():
    assert hebbian_update(0.0) == pytest.approx(0.02)
    assert hebbian_update(0.5) == pytest.approx(0.995 * 0.5 + 0.02)
    assert hebbian_update(0.999) == 1.0  # capped
    w = 0.0
    for _ in range(1000):
        w = hebbian_update(w)
    assert w == pytest.approx(1.0)  # fixed point 0.02 / 0.005 = 4 > cap


def test_coactivated_pairs_unordered_and_unique():
    assert coactivated_pairs([3, 1, 2, 1]) == [(1, 2), (1, 3), (2, 3)]
    assert coactivated_pairs([7]) == []


def test_eq2_hub_strength():
    assert hub_strength([0.2, 0.3, 0.1]) == pytest.approx(0.6)
    assert is_hub(0.6, 0.5) and not is_hub(0.5, 0.5)


def test_eq3_base_activation():
    assert base_activation(0.5, 0.5, 0.0, alpha=1.0) == pytest.approx(1.0)
    assert base_activation(0.5, 0.5, 60 * DAY, alpha=1.0, tau_days=60) == pytest.approx(math.exp(-1))
    assert base_activation(0.5, 0.5, 60 * DAY, time_decay=False) == pytest.approx(1.0)
    assert time_factor(-5 * DAY) == 1.0  # future memories are not boosted
    assert base_activation(0.4, 1.0, 0.0, alpha=0.5) == pytest.approx(0.9)


def test_eq4_spreading_only_from_sources_above_theta():
    s_base = {1: 0.9, 2: 0.1, 3: 0.5}
    nbrs = {1: [(2, 0.5), (3, 1.0)], 3: [(2, 1.0)]}
    out = spread_activation(s_base, nbrs, beta=0.1, theta=0.6)
    assert out[2].score == pytest.approx(0.1 + 0.1 * 0.9 * 0.5)  # node 3 is below theta: no spread
    assert out[3].score == pytest.approx(0.5 + 0.1 * 0.9 * 1.0)
    assert out[1].score == pytest.approx(0.9)
    assert out[2].sources == [(1, pytest.approx(0.045))]


def test_eq5_dual_path_flips_by_spread_score():
    s_base = {1: 0.9, 2: 0.8, 3: 0.7, 4: 0.2, 5: 0.3}
    s = {1: 0.9, 2: 0.8, 3: 0.7, 4: 0.95, 5: 0.3}
    assert dual_path(s_base, s, k=2, m=1) == [(1, "base"), (2, "base"), (4, "hebbian")]
    # 4 and 5 are the top 5 by S_base anyway: spreading reordered them but did not bring them in
    assert dual_path(s_base, s, k=3, m=2) == [(1, "base"), (2, "base"), (3, "base"), (4, "base"),
                                              (5, "base")]
    s_more = {**s_base, 6: 0.25, 7: 0.1}
    s2 = {**s, 6: 0.25, 7: 0.99}
    assert dual_path(s_more, s2, k=3, m=2) == [(1, "base"), (2, "base"), (3, "base"), (7, "hebbian"),
                                               (4, "hebbian")]
    # spreading off (S = S_base): the extra slots are ranks k+1..k+m, never "hebbian"
    assert dual_path(s_more, s_more, k=3, m=2) == [(1, "base"), (2, "base"), (3, "base"), (5, "base"),
                                                   (6, "base")]
    assert dual_path(s_base, s, k=10, m=3) == [(1, "base"), (2, "base"), (3, "base"), (5, "base"),
                                               (4, "base")]


def test_forgetting_needs_all_three():
    assert should_forget(0.01, 40 * DAY, 0, 0.05, 30)
    assert forget_reasons(0.01, 40 * DAY, 1, 0.05, 30) == {"weak": True, "old": True, "unused": False}
    assert not should_forget(0.06, 40 * DAY, 0, 0.05, 30)
    assert not should_forget(0.01, 10 * DAY, 0, 0.05, 30)


# ----------------------------------------------------------------------------------- Eq.3 inputs (round 2)
def test_idf_rarer_terms_weigh_more_and_stay_positive():
    from hela_cli.mechanics.dynamics import idf

    assert idf(1, 1000) == pytest.approx(math.log(1 + 999.5 / 1.5))
    assert idf(500, 1000) == pytest.approx(math.log(2.0))
    assert idf(1, 1000) > idf(10, 1000) > idf(500, 1000) > idf(1000, 1000) > 0
    assert idf(0, 0) == pytest.approx(math.log(2.0))   # empty space: defined, positive
    assert idf(5, 3) == idf(3, 3)                       # df clamped to n


def test_weighted_keyword_match_is_the_plain_share_with_equal_weights():
    from hela_cli.mechanics.dynamics import weighted_keyword_match
    from hela_cli.text.keywords import keyword_match

    q, node = ["caroline", "paint", "sunset"], ["paint", "caroline", "lake"]
    assert weighted_keyword_match(q, node, {}) == pytest.approx(keyword_match(q, node)) == pytest.approx(2 / 3)
    # a common name (low weight) matters less than a rare content word
    w = {"caroline": 0.5, "paint": 4.0, "sunset": 4.0}
    assert weighted_keyword_match(q, ["caroline"], w) == pytest.approx(0.5 / 8.5)
    assert weighted_keyword_match(q, ["paint"], w) == pytest.approx(4.0 / 8.5)
    assert weighted_keyword_match([], node, w) == 0.0
    assert weighted_keyword_match(q, node, {"caroline": 0.0, "paint": 0.0, "sunset": 0.0}) == 0.0


def test_learned_share_of_an_edge():
    from hela_cli.mechanics.dynamics import learned_share

    assert learned_share(0.5, 0.5) == 0.0              # an untouched conversation link
    assert learned_share(0.6, 0.5) == pytest.approx(0.1 / 0.6)
    assert learned_share(0.04, 0.0) == 1.0             # created by learning
    assert learned_share(0.3, 0.5) == 0.0              # never negative
    assert learned_share(0.0, 0.0) == 0.0


# ----------------------------------------------------------------------------------- issue 17 rules
def test_reinforcement_all_pairs_is_the_paper():
    from hela_cli.mechanics.dynamics import reinforcement

    got = reinforcement({3: 1.0, 1: 0.2, 2: 0.5}, eta=0.02)
    assert got == {(1, 2): 0.02, (1, 3): 0.02, (2, 3): 0.02}
    assert reinforcement({}, 0.02) == {} and reinforcement({5: 1.0}, 0.02) == {}


def test_reinforcement_margin_keeps_only_memories_near_the_top():
    from hela_cli.mechanics.dynamics import reinforcement

    s = {1: 2.0, 2: 1.7, 3: 1.5, 4: 0.9}
    assert set(reinforcement(s, 0.02, margin=0.75)) == {(1, 2), (1, 3), (2, 3)}   # 4 is below 0.75 * 2.0
    assert set(reinforcement(s, 0.02, margin=0.8)) == {(1, 2)}                    # 1.5 < 1.6
    assert reinforcement(s, 0.02, margin=1.0) == {}                               # only the top: no pair


def test_reinforcement_by_score_scales_eta_by_relative_scores():
    from hela_cli.mechanics.dynamics import reinforcement

    got = reinforcement({1: 2.0, 2: 1.0, 3: 0.5}, 0.1, by_score=True)
    assert got[(1, 2)] == pytest.approx(0.1 * 1.0 * 0.5)
    assert got[(2, 3)] == pytest.approx(0.1 * 0.5 * 0.25)
    assert reinforcement({1: 0.0, 2: 0.0}, 0.1, by_score=True) == {}   # no positive score: nothing learned


def test_keyword_partners_links_rare_shared_keywords_across_sessions_only():
    from hela_cli.mechanics.dynamics import idf, keyword_partners

    docs = {1: ("s1", ["chess", "club", "weekend"]), 2: ("s1", ["chess", "weekend"]),
            3: ("s2", ["chess", "tournament"]), 4: ("s2", ["weekend"]), 5: ("s3", ["tournament", "club"]),
            6: ("s3", ["garden"]), 7: ("s4", ["garden"]), 8: ("s4", ["lunch"]), 9: ("s5", ["lunch"])}
    n = len(docs)
    got = keyword_partners(docs, [1], top_k=5, min_score=0.0, max_df=3)
    # 1 shares "chess" with 3 and "club" with 5 (other sessions); 2 is in its own session; "weekend" (df 3)
    # links 1 to 4 as well
    assert set(got) == {(1, 3), (1, 5), (1, 4)}
    assert got[(1, 3)] == pytest.approx(idf(3, n))
    # a keyword above max_df does not count
    assert keyword_partners(docs, [1], top_k=5, min_score=0.0, max_df=2) == {(1, 5): pytest.approx(idf(2, n))}
    # top_k and min_score bound the partners
    assert len(keyword_partners(docs, [1], top_k=1, min_score=0.0, max_df=3)) == 1
    assert keyword_partners(docs, [1], top_k=5, min_score=100.0, max_df=3) == {}
    # a pair proposed from both ends appears once, ordered a < b
    both = keyword_partners(docs, docs, top_k=5, min_score=0.0, max_df=2)
    assert all(a < b for a, b in both) and (6, 7) in both and (8, 9) in both
    assert keyword_partners(docs, [1], top_k=0, min_score=0.0) == {}


def test_keyword_partners_default_rarity_cap_is_sqrt_n():
    from hela_cli.mechanics.dynamics import keyword_partners

    # 16 memories in 16 sessions; "common" is in 5 of them (> sqrt(16) = 4): it links nothing
    docs = {i: (f"s{i}", ["common"] if i < 5 else []) for i in range(16)}
    assert keyword_partners(docs, docs, 3, 0.0) == {}
    docs[0] = ("s0", ["common", "rare"])
    docs[9] = ("s9", ["rare"])
    assert set(keyword_partners(docs, docs, 3, 0.0)) == {(0, 9)}
