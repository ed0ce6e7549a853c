"""Hebbian edges over many steps (issue 14): decay without underflow, rebasing read in one snapshot,
writes only between existing nodes, pruning of negligible edges in bounded work."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from hela_cli.config import Config
from hela_cli.mechanics.retrieval import learn_from
from hela_cli.store import Store

ETA, CAP = 0.02, 1.0


def _rows(n, start=0):
    return [dict(text=f"turn {i}", speaker="A", ts=1000.0 + i, keywords=[f"kw{i}"], ord=i, hash=f"h{i}",
                 session="s1") for i in range(start, start + n)]


def _vecs(n, dim=8, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _store_with_nodes(n, path=":memory:", space="a"):
    s = Store(path)
    s.bind_embedder("test-embedder", 8)
    sp = s.ensure_space(space)
    with s.transaction():
        ids = s.insert_nodes(sp.id, _rows(n), _vecs(n))
    return s, sp, ids


def _drive(decay: float, steps: int) -> None:
    """``steps`` learning steps through ``retrieval.learn_from`` (the code path of every learning ask),
    checked against Eq.1 computed directly in floats: every weight decays once per step, a co-activated
    pair gets ``min(cap, w + eta)`` on top. Pairs: (0,1) every 3rd step, (2,3) every 50th step, (4,5)
    only at the first step; other steps retrieve node 6 alone (a step with no pair)."""
    cfg = Config()
    cfg.hebbian.decay, cfg.hebbian.eta, cfg.hebbian.cap = decay, ETA, CAP
    s, sp, ids = _store_with_nodes(7)
    direct: dict[tuple[int, int], float] = {}
    try:
        for i in range(1, steps + 1):
            chosen = ([ids[4], ids[5]] if i == 1 else [ids[0], ids[1]] if i % 3 == 0
                      else [ids[2], ids[3]] if i % 50 == 0 else [ids[6]])
            step = learn_from(s, sp, chosen, cfg, when=2000.0 + i)
            assert step == i
            for p in direct:
                direct[p] *= decay
            if len(chosen) == 2:
                p = (min(chosen), max(chosen))
                direct[p] = min(CAP, direct.get(p, 0.0) + ETA)
            if i % 2000 == 0 or i == steps:
                sp = s.require_space("a")
                for (a, b), w in direct.items():
                    got = s.edge_weight(sp, a, b)
                    # a weight under PRUNE_WEIGHT (1e-6) may already be pruned (read as 0)
                    assert got == pytest.approx(w, rel=1e-9, abs=2e-6), (decay, i, (a, b), got, w)
                amp_max = s.db.execute("SELECT max(amp) FROM edges").fetchone()[0] or 0.0
                assert math.isfinite(amp_max) and amp_max < 1e300
        assert s.integrity_problems() == []
        factor = s.edge_factor(s.require_space("a"))
        assert 0 < factor <= 1
    finally:
        s.close()


@pytest.mark.parametrize("decay", [0.5, 0.9, 0.995, 0.9999])
def test_decay_many_steps_match_direct_computation(decay):
    # 8,000 steps: 0.9 ** 7100 and 0.5 ** 1075 underflow to 0.0; a fixed 20,000-step rebase wedged both
    _drive(decay, 8_000)


@pytest.mark.slow
@pytest.mark.parametrize("decay", [0.5, 0.9, 0.995, 0.9999])
def test_decay_100k_steps_match_direct_computation(decay):
    _drive(decay, 100_000)


def test_a_wedged_space_recovers():
    # a space whose exponent grew past underflow (written by an older hela, or decay lowered in the config)
    s, sp, ids = _store_with_nodes(3)
    cfg = Config()
    cfg.hebbian.decay = 0.9
    with s.transaction():
        s.set_edges(sp, {(ids[0], ids[1]): 0.5}, 0.9)
    s.db.execute("UPDATE spaces SET step = step + 8000")
    assert s.edge_weight(s.require_space("a"), ids[0], ids[1]) == 0.0
    learn_from(s, sp, [ids[1], ids[2]], cfg, when=0.0)
    sp = s.require_space("a")
    assert s.edge_weight(sp, ids[1], ids[2]) == pytest.approx(ETA)
    assert s.count_edges(sp.id) == 1  # the underflowed edge was dropped, not divided by 0
    assert s.integrity_problems() == []
    s.close()


def test_non_finite_weight_is_refused():
    from hela_cli.errors import StoreError

    s, sp, ids = _store_with_nodes(2)
    with pytest.raises(StoreError, match="not a finite"):
        with s.transaction():
            s.set_edges(sp, {(ids[0], ids[1]): float("inf")}, 0.995)
    assert s.count_edges(sp.id) == 0


def test_readers_use_the_stored_step_pair_not_a_stale_space():
    s, sp, ids = _store_with_nodes(2)
    stale = s.require_space("a")  # step 0, base 0
    for _ in range(500):  # decay 0.9: rebased at least once on the way (0.9 ** 421 < 2 ** -64)
        with s.transaction():
            fresh = s.advance_step(sp.id, 0.9)
            s.set_edges(fresh, {(ids[0], ids[1]): 0.5}, 0.9)
    assert s.edge_weight(stale, ids[0], ids[1]) == pytest.approx(0.5)
    assert s.neighbours(stale, [ids[0]])[ids[0]] == [(ids[1], pytest.approx(0.5))]
    assert s.edges_among(stale, ids) == {(ids[0], ids[1]): pytest.approx(0.5)}
    assert s.edge_strengths(stale)[ids[0]] == (pytest.approx(0.5), 1)
    assert s.all_edges(stale) == [(ids[0], ids[1], pytest.approx(0.5))]
    assert s.require_space("a").base_step > 0
    s.close()


def test_rebase_by_another_connection_never_mixes_factor_and_amplitudes(tmp_path):
    """A writer rebases every 64 steps (decay 0.5) and re-sets the weight to 0.5 each step; a reader on
    another connection must read exactly 0.5 every time, whatever it interleaves with."""
    path = tmp_path / "race.db"
    w, sp, ids = _store_with_nodes(2, path)
    r = Store(path)
    stop = threading.Event()
    seen: list[float] = []

    def reader():
        stale = r.require_space("a")
        while not stop.is_set():
            seen.extend(wt for _, wt in r.neighbours(stale, [ids[0]])[ids[0]])

    t = threading.Thread(target=reader)
    t.start()
    try:
        for _ in range(600):
            with w.transaction():
                fresh = w.advance_step(sp.id, 0.5)
                w.set_edges(fresh, {(ids[0], ids[1]): 0.5}, 0.5)
    finally:
        stop.set()
        t.join()
    assert seen and all(x == pytest.approx(0.5) for x in seen), sorted(set(seen))[:5]
    assert w.require_space("a").base_step > 500
    r.close()
    w.close()


def test_edges_only_between_existing_nodes_of_the_space():
    s, sp, ids = _store_with_nodes(3)
    other = s.ensure_space("b")
    with s.transaction():
        [foreign] = s.insert_nodes(other.id, _rows(1, start=10), _vecs(1, seed=1))
    with s.transaction():
        s.delete_nodes([ids[2]])
    with s.transaction():
        s.set_edges(sp, {(ids[0], ids[1]): 0.5, (ids[0], ids[2]): 0.5, (ids[1], foreign): 0.5,
                         (ids[0], 10_000): 0.5}, 0.995)
    assert s.all_edges(sp) == [(ids[0], ids[1], pytest.approx(0.5))]
    assert s.count_edges(other.id) == 0
    assert s.integrity_problems() == []
    s.close()


def test_negligible_edges_are_pruned_in_bounded_batches():
    from hela_cli.store.base import PRUNE_PER_STEP, PRUNE_WEIGHT

    n = 40
    s, sp, ids = _store_with_nodes(n)
    weak = {(ids[i], ids[j]): PRUNE_WEIGHT * 0.5 for i in range(n) for j in range(i + 1, n) if j != i + 1}
    strong = {(ids[i], ids[i + 1]): 0.3 for i in range(n - 1)}
    assert len(weak) > PRUNE_PER_STEP
    with s.transaction():
        s.set_edges(sp, {**weak, **strong}, 0.995)
    total = len(weak) + len(strong)
    with s.transaction():
        s.advance_step(sp.id, 0.995)
    assert s.count_edges(sp.id) == total - PRUNE_PER_STEP  # bounded work per step
    for _ in range(len(weak) // PRUNE_PER_STEP + 1):
        with s.transaction():
            s.advance_step(sp.id, 0.995)
    sp = s.require_space("a")
    left = s.all_edges(sp)
    assert {(a, b) for a, b, _ in left} == set(strong)
    assert all(wt >= PRUNE_WEIGHT for _, _, wt in left)
    plan = " ".join(r[-1] for r in s.db.execute(
        "EXPLAIN QUERY PLAN SELECT a, b FROM edges WHERE space_id=? AND prior = 0 AND amp < ? LIMIT 5",
        (sp.id, 1.0)))
    assert "edges_space_prior_amp (space_id=? AND prior=? AND amp<?)" in plan  # weak edges without reading others
    s.close()


def test_neighbours_lists_each_edge_once():
    """An edge between two of the asked nodes is one neighbour of each, once (Eq.4 sums over neighbours);
    also when its ends fall in different 400-id chunks."""
    import numpy as np

    from hela_cli.store import Store

    with Store(":memory:") as s:
        s.bind_embedder("e", 4)
        sp = s.ensure_space("a")
        rows = [{"text": f"t{i}", "ts": float(i), "ord": i, "hash": f"h{i}"} for i in range(500)]
        with s.transaction():
            ids = s.insert_nodes(sp.id, rows, np.ones((500, 4), dtype="float32"))
            s.set_edges(sp, {(ids[0], ids[1]): 0.5, (ids[0], ids[450]): 0.25, (ids[1], ids[2]): 0.125}, 0.995)
        nb = s.neighbours(sp, ids)
        assert sorted(nb[ids[0]]) == sorted([(ids[1], 0.5), (ids[450], 0.25)])
        assert sorted(nb[ids[1]]) == sorted([(ids[0], 0.5), (ids[2], 0.125)])
        assert nb[ids[450]] == [(ids[0], 0.25)] and nb[ids[2]] == [(ids[1], 0.125)]


def test_fixed_priors_do_not_decay_and_learning_adds_on_top():
    s, sp, ids = _store_with_nodes(4)
    a, b, c = ids[0], ids[1], ids[2]
    with s.transaction():
        s.set_priors(sp, {(a, b): 0.5})
        s.set_edges(sp, {(b, c): 0.5}, 0.9)          # a plain (learned) edge: decays
    for _ in range(10):
        with s.transaction():
            s.advance_step(sp.id, 0.9)
    sp = s.require_space("a")
    assert s.edge_weight(sp, a, b) == pytest.approx(0.5)
    assert s.edge_weight(sp, b, c) == pytest.approx(0.5 * 0.9 ** 10)
    with s.transaction():                            # Eq.1 writes a total weight: the prior stays, the rest decays
        s.set_edges(sp, {(a, b): 0.7}, 0.9)
    assert s.edge_prior(sp, a, b) == 0.5 and s.edge_weight(sp, a, b) == pytest.approx(0.7)
    for _ in range(5):
        with s.transaction():
            s.advance_step(sp.id, 0.9)
    sp = s.require_space("a")
    assert s.edge_weight(sp, a, b) == pytest.approx(0.5 + 0.2 * 0.9 ** 5)
    with s.transaction():                            # a smaller prior does not lower a larger one
        s.set_priors(sp, {(a, b): 0.1})
    assert s.edge_prior(sp, a, b) == 0.5
    # Eq.2 strength counts what was learned, not the prior; forgetting's strength counts both
    assert s.edge_strengths(sp)[a][0] == pytest.approx(0.2 * 0.9 ** 5)
    assert s.edge_strengths(sp, with_priors=True)[a][0] == pytest.approx(0.5 + 0.2 * 0.9 ** 5)
    for _ in range(400):                             # learned part pruned away; the prior edge is never pruned
        with s.transaction():
            s.advance_step(sp.id, 0.9)
    sp = s.require_space("a")
    assert s.edge_weight(sp, a, b) == pytest.approx(0.5)
    assert (b, c) not in {(x, y) for x, y, _ in s.all_edges(sp)}
    assert s.integrity_problems() == []
    s.close()
