"""In-process vector index: exact path equals brute force; quantized path keeps high recall; the store's
cache follows inserts and deletes (also from other connections)."""

import numpy as np
import pytest

from hela_cli.store import Store
from hela_cli.store.vector_index import VectorIndex


def _unit(n, dim=32, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_exact_matches_brute_force():
    vecs = _unit(500)
    idx = VectorIndex(np.arange(500) + 10, vecs)
    q = vecs[7]
    got = idx.knn(q, 5)
    want = np.argsort(-(vecs @ q))[:5] + 10
    assert [i for i, _ in got] == list(want)
    assert got[0][1] == pytest.approx(1.0, abs=1e-5)


def test_quantized_path_recall():
    # clustered data, like real embeddings
    rng = np.random.default_rng(1)
    centers = _unit(50, 384, seed=2) + 0.5  # anisotropic, like sentence embeddings
    vecs = centers[rng.integers(0, 50, 5000)] + 0.05 * rng.normal(size=(5000, 384)).astype(np.float32)
    vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
    idx = VectorIndex(np.arange(5000), vecs, exact_limit=100, rescore=500)
    assert not idx.exact
    recalls = []
    for qi in range(20):
        q = vecs[qi * 100]
        truth = set(np.argsort(-(vecs @ q))[:10])
        recalls.append(len(truth & {i for i, _ in idx.knn(q, 10)}) / 10)
    assert np.mean(recalls) >= 0.9


def test_store_cache_follows_changes(tmp_path):
    path = tmp_path / "v.db"
    a = Store(path, vector_cache=True)
    a.bind_embedder("e", 32)
    sp = a.ensure_space("s")
    vecs = _unit(20)
    rows = [dict(text=f"t{i}", ts=float(i), ord=i, hash=f"h{i}", keywords=[]) for i in range(20)]
    with a.transaction():
        ids = a.insert_nodes(sp.id, rows[:10], vecs[:10])
    assert {n for n, _ in a.knn(sp.id, vecs[3], 20)} == set(ids)
    b = Store(path)  # another connection adds and deletes
    with b.transaction():
        more = b.insert_nodes(sp.id, rows[10:], vecs[10:])
        b.delete_nodes([ids[0]])
    got = {n for n, _ in a.knn(sp.id, vecs[15], 30)}
    assert got == (set(ids) | set(more)) - {ids[0]}
    assert a.knn(sp.id, vecs[15], 1)[0][0] == more[5]
    a.close()
    b.close()


def test_from_rows_blocks_match_direct_build():
    vecs = _unit(300, 16, seed=5)
    rows = [(i + 1, vecs[i].tobytes()) for i in range(300)]
    exact = VectorIndex.from_rows(iter(rows), 16)
    assert exact.exact and np.array_equal(exact.f32, vecs)
    quant = VectorIndex.from_rows(iter(rows), 16, exact_limit=100, rescore=300)
    assert not quant.exact and quant.q8.dtype == np.int8 and len(quant.scale) == 300
    # rescoring the whole set: the exact ranking up to int8 rounding of the cosines
    q = vecs[42]
    got, want = quant.knn(q, 5), dict(exact.knn(q, 300))
    assert got[0][0] == 43
    assert all(abs(c - want[i]) < 0.02 for i, c in got)
    assert len({i for i, _ in got} & {i for i, _ in exact.knn(q, 6)}) >= 4
    assert VectorIndex.from_rows(iter([]), 16).knn(q, 3) == []


def _filled_store(path, n, seed, vector_cache=False):
    s = Store(path, vector_cache=vector_cache)
    s.bind_embedder("e", 32)
    sp = s.ensure_space("s")
    vecs = _unit(n, seed=seed)
    rows = [dict(text=f"t{i}", ts=float(i), ord=i, hash=f"h{i}", keywords=[]) for i in range(n)]
    with s.transaction():
        ids = s.insert_nodes(sp.id, rows, vecs)
    return s, sp, vecs, ids


def test_store_quantized_index_returns_exact_cosines(tmp_path, monkeypatch):
    import hela_cli.store.vector_index as vi

    monkeypatch.setattr(vi, "EXACT_LIMIT", 10)
    s, sp, vecs, ids = _filled_store(tmp_path / "q.db", 60, seed=3, vector_cache=True)
    q = vecs[9]
    hits = s.knn(sp.id, q, 5)
    assert not s._vector_index(sp.id).exact
    want = np.argsort(-(vecs @ q))[:5]
    assert [n for n, _ in hits] == [ids[i] for i in want]
    for (n, c), i in zip(hits, want):
        assert c == pytest.approx(float(vecs[i] @ q), abs=1e-6)  # float32, not the int8 copy
    s.close()


def test_small_spaces_use_the_exact_index_and_large_ones_sqlite_vec(tmp_path, monkeypatch):
    import hela_cli.store.vector_index as vi

    s, sp, vecs, ids = _filled_store(tmp_path / "auto.db", 40, seed=4)  # vector_cache off
    q = vecs[11]
    want = [ids[i] for i in np.argsort(-(vecs @ q))[:6]]
    assert s.vector_index_kind(sp.id) == "exact"
    small = s.knn(sp.id, q, 6)
    assert s.held_index(sp.id) is not None and [n for n, _ in small] == want
    monkeypatch.setattr(vi, "EXACT_LIMIT", 10)  # now the space counts as large: sqlite-vec answers
    s.search_state.clear()
    assert s.vector_index_kind(sp.id) == "sqlite-vec"
    large = s.knn(sp.id, q, 6)
    assert s.held_index(sp.id) is None and [n for n, _ in large] == want
    for (_, a), (_, b) in zip(small, large):
        assert a == pytest.approx(b, abs=1e-5)
    s.close()
