"""Storage layer: migrations, permissions, idempotent inserts, O(1) decay, deletes leave nothing behind."""

import os
import stat

import numpy as np
import pytest

from hela_cli.errors import StoreError
from hela_cli.store import MIGRATIONS, SCHEMA_VERSION, Store


def _rows(n, start=0):
    return [dict(text=f"turn {i}", speaker="A", ts=1000.0 + i, keywords=[f"kw{i}", "common"], ord=i,
                 hash=f"h{i}", session="s1") for i in range(start, start + n)]


def _vecs(n, dim=8, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture()
def store():
    s = Store.memory()
    s.bind_embedder("test-embedder", 8)
    yield s
    s.close()


def test_migrations_applied_once_and_named(tmp_path):
    path = tmp_path / "m.db"
    with Store(path) as s:
        assert s.applied_migrations() == [name for name, _ in MIGRATIONS]
        assert s.get_meta("schema_version") == str(SCHEMA_VERSION)
    with Store(path) as s:  # reopen: nothing re-applied
        assert len(s.applied_migrations()) == SCHEMA_VERSION


def test_file_is_user_only(tmp_path):
    path = tmp_path / "sub" / "p.db"
    Store(path).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "new.db"
    with Store(path) as s:
        s.db.execute("INSERT INTO _sqlite_migrations(migration_set, name, applied_at) "
                     "VALUES ('hela', '0099_future', '2030-01-01')")
    with pytest.raises(StoreError, match="newer"):
        Store(path)


def test_not_a_database(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="junk.db"):
        Store(path)


def test_other_embedder_is_refused(store):
    store.bind_embedder("test-embedder", 8)  # same: fine
    with pytest.raises(StoreError, match="test-embedder"):
        store.bind_embedder("other", 8)
    with pytest.raises(StoreError):
        store.bind_embedder("test-embedder", 16)


def test_insert_is_idempotent_and_searchable(store):
    sp = store.ensure_space("a")
    vecs = _vecs(5)
    with store.transaction():
        ids = store.insert_nodes(sp.id, _rows(5), vecs)
    with store.transaction():
        again = store.insert_nodes(sp.id, _rows(5), vecs)
    assert -1 not in ids and again == [-1] * 5
    assert store.count_nodes(sp.id) == 5
    hits = store.knn(sp.id, vecs[2], 2)
    assert hits[0][0] == ids[2] and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    kw = store.keyword_search(sp.id, ["kw3"], 10)
    assert [n for n, _ in kw] == [ids[3]]


def test_spaces_are_isolated(store):
    a, b = store.ensure_space("a"), store.ensure_space("b")
    vecs = _vecs(4)
    with store.transaction():
        ia = store.insert_nodes(a.id, _rows(2), vecs[:2])
        ib = store.insert_nodes(b.id, _rows(2), vecs[2:])
    assert {n for n, _ in store.knn(a.id, vecs[3], 10)} == set(ia)
    assert {n for n, _ in store.keyword_search(b.id, ["common"], 10)} == set(ib)


def test_keyword_query_syntax_is_literal(store):
    """A search term is one keyword, matched as written: no operator, prefix, column or phrase syntax of any
    engine (the test used to check only that these did not raise)."""
    sp = store.ensure_space("a")
    special = ['"', "NEAR(", "a OR b", "*", "kw0)", "col:kw0"]
    rows = [dict(text=f"turn {i}", speaker="A", ts=1000.0 + i, keywords=kws, ord=i, hash=f"h{i}", session="s1")
            for i, kws in enumerate([["kw0", "a", "b", "col", "near"], ["a or b"], ["kw0)"], ["col:kw0"]])]
    with store.transaction():
        ids = store.insert_nodes(sp.id, rows, _vecs(len(rows)))
    holds = {"a OR b": {ids[1]}, "kw0)": {ids[2]}, "col:kw0": {ids[3]}}
    for term in special:
        got = {n for n, _ in store.keyword_search(sp.id, [term], 10)}
        assert got == holds.get(term, set()), (term, got)   # never kw0's node by kw0*, a OR b, col:, NEAR(
    assert {n for n, _ in store.keyword_search(sp.id, ["kw0"], 10)} == {ids[0]}


def test_global_decay_is_o1_and_reinforcement_rewrites(store):
    sp = store.ensure_space("a")
    with store.transaction():
        ids = store.insert_nodes(sp.id, _rows(3), _vecs(3))
        store.set_edges(sp, {(ids[0], ids[1]): 0.5, (ids[1], ids[2]): 0.2}, 0.995)
    for _ in range(10):
        with store.transaction():
            sp = store.advance_step(sp.id, 0.995)
    assert store.edge_weight(sp, ids[0], ids[1]) == pytest.approx(0.5 * 0.995 ** 10)
    assert store.edge_weight(sp, ids[2], ids[1]) == pytest.approx(0.2 * 0.995 ** 10)
    nb = store.neighbours(sp, [ids[1]])[ids[1]]
    assert sorted(n for n, _ in nb) == [ids[0], ids[2]]


def test_rebase_keeps_weights(store, monkeypatch):
    import hela_cli.store.edges as st

    monkeypatch.setattr(st, "REBASE_BELOW", 0.9 ** 5)  # rebase every 6 steps
    sp = store.ensure_space("a")
    with store.transaction():
        ids = store.insert_nodes(sp.id, _rows(2), _vecs(2))
        store.set_edges(sp, {(ids[0], ids[1]): 0.8}, 0.9)
    for _ in range(12):
        with store.transaction():
            sp = store.advance_step(sp.id, 0.9)
    assert sp.base_step > 0
    assert store.edge_weight(sp, ids[0], ids[1]) == pytest.approx(0.8 * 0.9 ** 12)


def test_delete_leaves_no_orphans(store):
    sp = store.ensure_space("a")
    with store.transaction():
        ids = store.insert_nodes(sp.id, _rows(3), _vecs(3))
        store.set_edges(sp, {(ids[0], ids[1]): 0.5, (ids[1], ids[2]): 0.2}, 0.995)
        sid = store.insert_semantic(sp.id, "fact", "A", "fact text", None, "7 May 2023", ids[1],
                                    [ids[0], ids[1]], _vecs(1)[0])
    with store.transaction():
        store.delete_nodes([ids[1]])
    assert store.integrity_problems() == []
    rec = store.get_semantic([sid])[0]
    assert rec["evidence"] == [ids[0]] and rec["forgotten_evidence"] == 1
    assert store.count_edges(sp.id) == 0


def test_transaction_rolls_back(store):
    sp = store.ensure_space("a")
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.insert_nodes(sp.id, _rows(2), _vecs(2))
            raise RuntimeError("boom")
    assert store.count_nodes(sp.id) == 0
    assert store.integrity_problems() == []


def test_unknown_space_message(store):
    store.ensure_space("alpha")
    with pytest.raises(StoreError, match="unknown space 'beta'.*alpha"):
        store.require_space("beta")


def test_upgrade_from_0003(tmp_path, monkeypatch):
    """A database written by the 0003 schema (vectors only in vec0, FTS with a space column) is upgraded
    on open: vectors copied into node_emb, FTS rebuilt with space-scoped terms, nothing lost."""
    import hela_cli.store.sqlite.connection as store_mod

    path = tmp_path / "old.db"
    vecs = _vecs(5)
    monkeypatch.setattr(store_mod, "MIGRATIONS", store_mod.MIGRATIONS[:3])
    with Store(path) as s:
        s.bind_embedder("test-embedder", 8)
        sp_a, sp_b = s.ensure_space("a"), s.ensure_space("b")
        with s.transaction():  # what 0003's insert_nodes wrote
            for i, row in enumerate(_rows(5)):
                sp = sp_a if i < 4 else sp_b
                cur = s.db.execute("INSERT INTO nodes(space_id, text, ts, keywords, ord, hash, created_at) "
                                   "VALUES (?,?,?,?,?,?,0)", (sp.id, row["text"], row["ts"],
                                                            " ".join(row["keywords"]), i, row["hash"]))
                s.db.execute("INSERT INTO node_vec(node_id, space_id, embedding) VALUES (?,?,?)",
                             (cur.lastrowid, sp.id, vecs[i].tobytes()))
                s.db.execute("INSERT INTO node_fts(rowid, space, keywords) VALUES (?,?,?)",
                             (cur.lastrowid, f"s{sp.id}", " ".join(row["keywords"])))
        ids = [r[0] for r in s.db.execute("SELECT id FROM nodes ORDER BY id")]
    monkeypatch.undo()
    with Store(path) as s:
        assert s.applied_migrations()[3:5] == ["0004_node_emb", "0005_fts_space_terms"]
        got = s.node_vectors(ids)
        assert all(np.array_equal(got[nid], vecs[i]) for i, nid in enumerate(ids))
        a = s.require_space("a")
        assert [n for n, _ in s.keyword_search(a.id, ["kw2"], 10)] == [ids[2]]
        assert {n for n, _ in s.keyword_search(a.id, ["common"], 10)} == set(ids[:4])
        assert s.knn(a.id, vecs[1], 1)[0][0] == ids[1]
        assert s.integrity_problems() == []


def test_node_vectors_and_space_now(store):
    sp = store.ensure_space("a")
    vecs = _vecs(4)
    with store.transaction():
        ids = store.insert_nodes(sp.id, _rows(4), vecs)
    got = store.node_vectors([ids[2], ids[0], 999])
    assert set(got) == {ids[0], ids[2]} and np.array_equal(got[ids[2]], vecs[2])
    assert store.space_now(sp.id) == 1003.0
    plan = " ".join(str(r) for r in store.db.execute(
        "EXPLAIN QUERY PLAN SELECT max(ts) FROM nodes WHERE space_id=?", (sp.id,)))
    assert "nodes_space_ts" in plan
    with store.transaction():
        store.delete_nodes([ids[3]])
    assert store.space_now(sp.id) == 1002.0 and not store.node_vectors([ids[3]])


def test_edges_among_and_node_features(store):
    sp = store.ensure_space("a")
    with store.transaction():
        ids = store.insert_nodes(sp.id, _rows(4), _vecs(4))
    a, b, c, d = ids
    with store.transaction():
        store.set_edges(sp, {(a, b): 0.5, (c, b): 0.25, (a, d): 0.75}, 0.995)
    assert store.edges_among(sp, [a, b, c]) == pytest.approx({(a, b): 0.5, (b, c): 0.25})
    assert store.edges_among(sp, [d]) == {}
    with store.transaction():
        sp = store.advance_step(sp.id, 0.995)
    assert store.edges_among(sp, [a, d])[(a, d)] == pytest.approx(0.75 * 0.995)
    feats = store.node_features([b, 12345])
    assert feats == {b: {"ts": 1001.0, "speaker": "A", "keywords": ["kw1", "common"]}}
