"""The sign bits persisted in the database file (migration 0009): pure parts (bits, blocks, Hamming
candidates), recall against exact KNN on a small store with the threshold lowered through the setting, and
the blocks kept current by inserts, deletes and passage writes (also from another connection), or rebuilt
when stale."""

import numpy as np
import pytest

from hela_cli.config import load_config
from hela_cli.errors import HelaError
from hela_cli.store import Store
from hela_cli.store.vector_index import SIGN_BLOCK, SignIndex, block_arrays, block_bytes, sign_words


def _clustered(n, dim=384, seed=1, noise=0.05):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(max(2, n // 100), dim)).astype(np.float32) + 0.5  # anisotropic, like embeddings
    v = centers[rng.integers(0, len(centers), n)] + noise * rng.normal(size=(n, dim)).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _rows(lo, hi):
    return [dict(text=f"t{i}", ts=float(i), ord=i, hash=f"h{i}", keywords=[]) for i in range(lo, hi)]


def _store(path, dim=384, **kw):
    s = Store(path, **kw)
    s.bind_embedder("e", dim)
    return s, s.ensure_space("s")


def _check_blocks(store, space_id):
    """The persisted blocks hold exactly the space's nodes, in id order, with the bits of their stored
    vectors against the stored centre, and the state matches the space's version and count."""
    version, dim, n, center = store.db.execute(
        "SELECT version, dim, n, center FROM sign_state WHERE space_id=?", (space_id,)).fetchone()
    assert version == store._nodes_version(space_id)
    assert n == store.count_nodes(space_id)
    ids, words = [], []
    for lo, hi, bn, ib, bb in store.db.execute(
            "SELECT lo, hi, n, ids, bits FROM sign_blocks WHERE space_id=? ORDER BY lo", (space_id,)):
        i, w = block_arrays(ib, bb, dim)
        assert (bn, lo, hi) == (len(i), i[0], i[-1]) and 0 < bn <= SIGN_BLOCK
        ids.append(i)
        words.append(w)
    ids = np.concatenate(ids)
    want = [r[0] for r in store.db.execute("SELECT id FROM nodes WHERE space_id=? ORDER BY id", (space_id,))]
    assert ids.tolist() == want
    vecs = store.node_vectors(want)
    expect = sign_words(np.stack([vecs[i] for i in want]), np.frombuffer(center, dtype=np.float32))
    assert np.array_equal(np.concatenate(words, axis=1), expect)


# ------------------------------------------------------------------ pure parts
def test_sign_words_are_the_centred_signs_word_major():
    v = _clustered(70, dim=100)
    center = v.mean(axis=0)
    w = sign_words(v, center)
    assert w.shape == (2, 70) and w.dtype == np.uint64
    bits = np.unpackbits(np.ascontiguousarray(w.T).view(np.uint8), axis=1)[:, :100]
    assert np.array_equal(bits.astype(bool), v > center)
    assert not np.unpackbits(np.ascontiguousarray(w.T).view(np.uint8), axis=1)[:, 100:].any()  # padding
    ids = np.arange(70, dtype=np.int64) * 3
    back_ids, back_w = block_arrays(*block_bytes(ids, w), 100)
    assert np.array_equal(back_ids, ids) and np.array_equal(back_w, w)


def test_candidates_are_the_hamming_nearest():
    v = _clustered(3000, dim=128, seed=3, noise=0.3)
    center = v.mean(axis=0)
    words = sign_words(v, center)
    ids = np.arange(3000) + 5
    cuts = [(0, 1000), (1000, 2500), (2500, 3000)]   # blocks of different sizes, as stored
    idx = SignIndex.from_blocks([block_bytes(ids[a:b], words[:, a:b]) for a, b in cuts], 128, center)
    assert idx.n == 3000
    q = v[11]
    got = idx.candidates(q, 200)
    assert len(got) == 200 and len(set(got.tolist())) == 200
    qb = (q > center)
    ham = ((v > center) != qb).sum(axis=1)
    border = np.sort(ham)[199]
    assert (ham[got - 5] <= border).all()                      # none farther than the 200th nearest
    assert set(np.flatnonzero(ham < border) + 5) <= set(got.tolist())  # all strictly nearer ones in
    assert sorted(idx.candidates(q, 5000).tolist()) == list(range(5, 3005))


# ------------------------------------------------------------------ through the store
def test_recall_against_exact_with_the_threshold_lowered(tmp_path):
    cfg = load_config(None, env={"HELA_RETRIEVAL_SIGN_INDEX_MIN": "500", "HELA_RETRIEVAL_SIGN_RESCORE": "300"})
    r = cfg.retrieval
    v = _clustered(4000)
    s, sp = _store(tmp_path / "a.db", sign_index_min=r.sign_index_min, sign_rescore=r.sign_rescore)
    with s.transaction():
        s.insert_nodes(sp.id, _rows(0, 4000), v)
    exact = Store(tmp_path / "a.db", sign_index_min=10**9)  # sqlite-vec brute force
    recalls = []
    for qi in range(0, 4000, 200):
        q = v[qi]
        got = s.knn(sp.id, q, 50)
        truth = exact.knn(sp.id, q, 50)
        recalls.append(len({n for n, _ in got} & {n for n, _ in truth}) / 50)
        # scores are the exact cosines, best first
        assert got[0][1] == pytest.approx(truth[0][1], abs=1e-5)
        assert [x[1] for x in got] == sorted((x[1] for x in got), reverse=True)
    assert np.mean(recalls) >= 0.97  # 300 of 4000 candidates picked at random would give ~0.08
    assert s.db.execute("SELECT count(*) FROM sign_blocks").fetchone()[0] == 1  # 4000 nodes: one block
    _check_blocks(s, sp.id)
    s.close()
    exact.close()


def test_blocks_follow_adds_deletes_and_other_connections(tmp_path):
    path = tmp_path / "b.db"
    v = _clustered(SIGN_BLOCK + 900, seed=4)
    a, sp = _store(path, sign_index_min=100, sign_rescore=200)
    with a.transaction():
        ids = a.insert_nodes(sp.id, _rows(0, 3000), v[:3000])
    assert a.knn(sp.id, v[5], 1)[0][0] == ids[5]   # builds the bits
    assert a.db.execute("SELECT built_n FROM sign_state").fetchone()[0] == 3000
    _check_blocks(a, sp.id)
    # an append that overflows the last block, through a second connection
    b = Store(path, sign_index_min=100, sign_rescore=200)
    with b.transaction():
        more = b.insert_nodes(sp.id, _rows(3000, len(v)), v[3000:])
    _check_blocks(b, sp.id)
    assert b.db.execute("SELECT count(*) FROM sign_blocks").fetchone()[0] == 2
    assert a.knn(sp.id, v[-1], 1)[0][0] == more[-1]  # a's cached bits reloaded
    # deletes (forgetting) in both blocks; an emptied block disappears
    gone = ids[:7] + more[-3:]
    with a.transaction():
        a.delete_nodes(gone)
    _check_blocks(a, sp.id)
    for g in gone:
        assert g not in {n for n, _ in b.knn(sp.id, v[(ids + more).index(g)], 50)}
    with b.transaction():
        b.delete_nodes(more[:-3])
    _check_blocks(b, sp.id)
    assert b.db.execute("SELECT count(*) FROM sign_blocks").fetchone()[0] == 1
    # passage vectors bump the version without changing the node set: the bits stay current
    with a.transaction():
        a.insert_passages(sp.id, {ids[10]: v[10:12]})
    _check_blocks(a, sp.id)
    # no write left them stale: a search reads the blocks, it does not rebuild
    assert a.db.execute("SELECT built_n FROM sign_state").fetchone()[0] == 3000
    a.close()
    b.close()


def test_stale_bits_are_rebuilt(tmp_path):
    path = tmp_path / "c.db"
    v = _clustered(3000, seed=5)
    s, sp = _store(path, sign_index_min=100, sign_rescore=200)
    with s.transaction():
        ids = s.insert_nodes(sp.id, _rows(0, 1000), v[:1000])
    s.knn(sp.id, v[0], 10)
    # a writer that did not maintain the bits (simulated): one block rewritten with garbage, version moved
    with s.transaction():
        s.db.execute("UPDATE sign_blocks SET bits = zeroblob(length(bits))")
        s.db.execute("UPDATE spaces SET nodes_version = nodes_version + 1 WHERE id=?", (sp.id,))
    assert s.knn(sp.id, v[3], 1)[0][0] == ids[3]
    _check_blocks(s, sp.id)
    # a space grown past twice the size its centre was taken at is rebuilt (new centre)
    with s.transaction():
        more = s.insert_nodes(sp.id, _rows(1000, 3000), v[1000:])
    assert s.db.execute("SELECT n, built_n FROM sign_state").fetchone() == (3000, 1000)
    assert s.knn(sp.id, v[2500], 1)[0][0] == more[1500]
    assert s.db.execute("SELECT n, built_n FROM sign_state").fetchone() == (3000, 3000)
    _check_blocks(s, sp.id)
    s.close()


def test_small_spaces_keep_the_exact_index(tmp_path):
    v = _clustered(300, seed=6)
    s, sp = _store(tmp_path / "d.db")   # default threshold: 20k
    with s.transaction():
        s.insert_nodes(sp.id, _rows(0, 300), v)
    s.knn(sp.id, v[0], 10)
    assert s.db.execute("SELECT count(*) FROM sign_state").fetchone()[0] == 0
    s.close()


@pytest.mark.parametrize("key,value", [("HELA_RETRIEVAL_SIGN_INDEX_MIN", "-1"),
                                       ("HELA_RETRIEVAL_SIGN_RESCORE", "0")])
def test_sign_settings_are_validated(key, value):
    with pytest.raises(HelaError, match=key):
        load_config(None, env={key: value})
    assert load_config(None, env={}).retrieval.sign_index_min == 20_000


def test_hamming_nearest_picks_the_smallest():
    from hela_cli.store.vector_index import hamming_nearest

    ham = np.random.default_rng(8).integers(0, 40, 10_000).astype(np.uint16)
    for n in (1, 37, 500, 9_999, 10_000, 20_000):
        got = hamming_nearest(ham, n)
        assert len(got) == min(n, len(ham)) and len(set(got.tolist())) == len(got)
        assert np.array_equal(np.sort(ham[got]), np.sort(ham)[:len(got)])
