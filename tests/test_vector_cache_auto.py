"""The in-process index of long-lived processes: built from a space's second search through one connection
(``retrieval.vector_cache_auto``), and brought up to date after writes (also another connection's,
including a deleted node whose id SQLite gives to the next insert) without reading every vector again."""

import numpy as np
import pytest

from hela_cli.config import load_config
from hela_cli.errors import HelaError
from hela_cli.store import Store
from hela_cli.store import vector_index
from hela_cli.store.sqlite import SqliteStore
from hela_cli.store.vector_index import VectorIndex


def _unit(n, dim=64, seed=1):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, dim)).astype(np.float32) + 0.3
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _rows(lo, hi, tag="h"):
    return [dict(text=f"t{i}", ts=float(i), ord=i, hash=f"{tag}{i}", keywords=[]) for i in range(lo, hi)]


def _brute(ids, vecs, q, k):
    sims = vecs @ q
    order = np.argsort(-sims, kind="stable")[:k]
    return [int(ids[i]) for i in order]


# ------------------------------------------------------------------ the pure update
def test_updated_exact_index_equals_a_fresh_one():
    v = _unit(60)
    idx = VectorIndex(np.arange(50), v[:50], exact_limit=100)
    keep = np.ones(50, dtype=bool)
    keep[[3, 17, 40]] = False
    new = idx.updated(keep, np.array([100, 101]), v[50:52])
    ids = np.concatenate([np.arange(50)[keep], [100, 101]])
    vecs = np.concatenate([v[:50][keep], v[50:52]])
    assert new.exact and sorted(new.ids.tolist()) == sorted(ids.tolist())
    for q in v[[0, 17, 51]]:
        assert [n for n, _ in new.knn(q, 5)] == _brute(ids, vecs, q, 5)


def test_updated_quantized_index_finds_what_a_scan_finds():
    v = _unit(700, seed=2)
    idx = VectorIndex.from_rows(((i, v[i].tobytes()) for i in range(600)), 64, exact_limit=100, rescore=200)
    assert not idx.exact
    keep = np.ones(600, dtype=bool)
    keep[::7] = False
    new = idx.updated(keep, np.arange(1000, 1100), v[600:])
    assert not new.exact and new.n == int(keep.sum()) + 100
    ids = np.concatenate([np.arange(600)[keep], np.arange(1000, 1100)])
    vecs = np.concatenate([v[:600][keep], v[600:]])
    hits = [len(set(n for n, _ in new.knn(q, 10)) & set(_brute(ids, vecs, q, 10))) for q in v[::13]]
    assert sum(hits) / (10 * len(hits)) >= 0.9
    assert all(new.knn(v[650], 1)[0][0] == 1050 for _ in range(2))  # a new row is found by its own vector
    gone = {int(i) for i in np.arange(600)[~keep]}
    assert not gone & {n for q in v[:50] for n, _ in new.knn(q, 20)}


def test_updated_refuses_to_cross_the_exact_limit():
    v = _unit(120)
    small = VectorIndex(np.arange(90), v[:90], exact_limit=100)
    assert small.updated(np.ones(90, dtype=bool), np.arange(200, 220), v[90:110]) is None
    big = VectorIndex.from_rows(((i, v[i].tobytes()) for i in range(110)), 64, exact_limit=100)
    keep = np.zeros(110, dtype=bool)
    keep[:50] = True
    assert big.updated(keep, np.arange(0), np.zeros((0, 64), dtype=np.float32)) is None


# ------------------------------------------------------------------ the store
@pytest.fixture
def small_limit(monkeypatch):
    """Spaces above 100 nodes count as large (the sign bits, the quantized index, the refresh)."""
    monkeypatch.setattr(vector_index, "EXACT_LIMIT", 100)


def _store(path, **kw):
    s = Store(path, sign_index_min=100, sign_rescore=200, **kw)
    s.bind_embedder("e", 64)
    return s, s.ensure_space("s")


def _indexed(path, v, n):
    """A store whose space holds the first ``n`` of ``v`` and has been searched twice (index kept)."""
    s, sp = _store(path, vector_cache_auto=10_000)
    with s.transaction():
        ids = s.insert_nodes(sp.id, _rows(0, n), v[:n])
    s.knn(sp.id, v[0], 3)
    s.knn(sp.id, v[1], 3)
    assert s.held_index(sp.id) is not None
    return s, sp, ids


def test_second_search_keeps_the_index_and_writes_refresh_it(tmp_path, small_limit, monkeypatch):
    path = tmp_path / "a.db"
    v = _unit(900, seed=3)
    s, sp = _store(path, vector_cache_auto=10_000)
    with s.transaction():
        ids = s.insert_nodes(sp.id, _rows(0, 600), v[:600])
    assert s.vector_index_kind(sp.id) == "sign-bits"
    assert s.knn(sp.id, v[5], 1)[0][0] == ids[5]
    assert s.held_index(sp.id) is None                      # first search: the sign bits
    assert s.vector_index_kind(sp.id) == "int8"             # the next one: the in-process (quantized) index
    assert s.knn(sp.id, v[6], 1)[0][0] == ids[6]
    assert s.held_index(sp.id).n == 600                # second: the in-process index
    built = s.held_index(sp.id)

    def no_rebuild(*a, **k):
        raise AssertionError("rebuilt instead of refreshed")

    monkeypatch.setattr(VectorIndex, "from_rows", no_rebuild)
    # another connection deletes the newest nodes and inserts new ones: SQLite gives the deleted ids again
    other = Store(path, sign_index_min=100, sign_rescore=200)
    with other.transaction():
        other.delete_nodes(ids[-20:])
    with other.transaction():
        more = other.insert_nodes(sp.id, _rows(600, 700, tag="n"), v[600:700])
    assert set(more) & set(ids[-20:])                   # the reuse this must survive
    got = s.knn(sp.id, v[650], 1)
    assert got[0][0] == more[50] and got[0][1] == pytest.approx(1.0, abs=1e-5)
    refreshed = s.held_index(sp.id)
    assert refreshed is not built and refreshed.n == 680
    assert sorted(refreshed.ids.tolist()) == sorted(ids[:-20] + more)
    # every stored vector is found by itself (a stale row for a reused id would not be)
    for i, nid in enumerate(more):
        assert s.knn(sp.id, v[600 + i], 1)[0][0] == nid
    other.close()
    s.close()


def test_many_changes_rebuild_and_results_match_a_fresh_store(tmp_path, small_limit):
    path = tmp_path / "b.db"
    v = _unit(1000, seed=4)
    s, sp, ids = _indexed(path, v, 400)
    with s.transaction():
        s.insert_nodes(sp.id, _rows(400, 1000), v[400:])  # more than a quarter: rebuilt
    fresh, _ = _store(path, vector_cache=True)
    for q in v[::50]:
        assert s.knn(sp.id, q, 10) == fresh.knn(sp.id, q, 10)
    assert s.held_index(sp.id).n == 1000
    fresh.close()
    s.close()


def test_off_and_above_the_limit_stay_on_the_sign_bits(tmp_path, small_limit):
    path = tmp_path / "c.db"
    v = _unit(300, seed=5)
    for auto in (0, 200):
        s, sp = _store(path, vector_cache_auto=auto)
        if auto == 0:
            with s.transaction():
                s.insert_nodes(sp.id, _rows(0, 300), v)
        for q in v[:5]:
            s.knn(sp.id, q, 3)
        assert s.held_index(sp.id) is None
        s.close()


def test_the_setting_is_validated_and_defaults_on():
    assert load_config(None, env={}).retrieval.vector_cache_auto == 200_000
    assert load_config(None, env={"HELA_RETRIEVAL_VECTOR_CACHE_AUTO": "0"}).retrieval.vector_cache_auto == 0
    with pytest.raises(HelaError, match="vector_cache_auto"):
        load_config(None, env={"HELA_RETRIEVAL_VECTOR_CACHE_AUTO": "-5"})


def test_appends_refresh_without_the_node_list_and_deletes_read_it(tmp_path, small_limit, monkeypatch):
    path = tmp_path / "d.db"
    v = _unit(800, seed=6)
    s, sp, ids = _indexed(path, v, 500)
    other = Store(path, sign_index_min=100, sign_rescore=200)
    reads = []
    real = SqliteStore._node_stamps
    monkeypatch.setattr(SqliteStore, "_node_stamps", lambda self, sid: reads.append(sid) or real(self, sid))
    with other.transaction():                          # appends only: the aggregate and the new rows
        more = other.insert_nodes(sp.id, _rows(500, 540, tag="a"), v[500:540])
    assert s.knn(sp.id, v[520], 1)[0][0] == more[20] and not reads
    assert s.held_index(sp.id).n == 540
    with other.transaction():                          # a delete in the middle: the whole list
        other.delete_nodes([ids[100]])
    assert ids[100] not in {n for n, _ in s.knn(sp.id, v[100], 5)} and reads
    assert s.held_index(sp.id).n == 539
    reads.clear()
    with other.transaction():                          # appends again, after the delete
        last = other.insert_nodes(sp.id, _rows(540, 560, tag="b"), v[540:560])
    assert s.knn(sp.id, v[555], 1)[0][0] == last[15] and not reads
    other.close()
    s.close()
