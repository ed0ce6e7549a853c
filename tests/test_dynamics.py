"""The paper's equations as pure functions, checked against hand-computed values."""

import math

import pytest

from hela_cli.dynamics import (DAY, base_activation, coactivated_pairs, dual_path, forget_reasons,
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
    from hela_cli.dynamics import idf

    assert idf(1, 1000) == pytest.approx(math.log(1 + 999.5 / 1.5))
    assert idf(500, 1000) == pytest.approx(math.log(2.0))
    assert idf(1, 1000) > idf(10, 1000) > idf(500, 1000) > idf(1000, 1000) > 0
    assert idf(0, 0) == pytest.approx(math.log(2.0))   # empty space: defined, positive
    assert idf(5, 3) == idf(3, 3)                       # df clamped to n


def test_weighted_keyword_match_is_the_plain_share_with_equal_weights():
    from hela_cli.dynamics import weighted_keyword_match
    from hela_cli.keywords import keyword_match

    q, node = ["caroline", "paint", "sunset"], ["paint", "caroline", "lake"]
    assert weighted_keyword_match(q, node, {}) == pytest.approx(keyword_match(q, node)) == pytest.approx(2 / 3)
    # a common name (low weight) matters less than a rare content word
    w = {"caroline": 0.5, "paint": 4.0, "sunset": 4.0}
    assert weighted_keyword_match(q, ["caroline"], w) == pytest.approx(0.5 / 8.5)
    assert weighted_keyword_match(q, ["paint"], w) == pytest.approx(4.0 / 8.5)
    assert weighted_keyword_match([], node, w) == 0.0
    assert weighted_keyword_match(q, node, {"caroline": 0.0, "paint": 0.0, "sunset": 0.0}) == 0.0


def test_learned_share_of_an_edge():
    from hela_cli.dynamics import learned_share

    assert learned_share(0.5, 0.5) == 0.0              # an untouched conversation link
    assert learned_share(0.6, 0.5) == pytest.approx(0.1 / 0.6)
    assert learned_share(0.04, 0.0) == 1.0             # created by learning
    assert learned_share(0.3, 0.5) == 0.0              # never negative
    assert learned_share(0.0, 0.0) == 0.0
