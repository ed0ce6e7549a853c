"""The Postgres + pgvector backend against a real server (tests/pg_support.py): URL handling and refusals,
the same behaviour as SQLite through the library and the CLI (``backend_db`` runs a test on both)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.errors import InputError
from hela_cli.maintenance.exporting import export_json
from hela_cli.memory import Memory
from hela_cli.store import Store
from hela_cli.store.postgres.connection import pg_sql
from hela_cli.store.target import describe, is_postgres, scrub

runner = CliRunner()


# ----------------------------------------------------------------------------- URL handling (no server)
def test_a_url_of_another_scheme_is_refused_and_nothing_is_created(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["--db", "mysql://u:pw-secret@h/db", "add", "--space", "s", "hello"])
    assert r.exit_code == 2
    assert "not 'mysql://'" in r.output and "pw-secret" not in r.output
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError):
        Store.open("sqlite:///x.db")
    assert is_postgres("postgresql://h/db") and is_postgres("postgres://h/db")
    assert not is_postgres("some/dir/hela.db") and not is_postgres("C:\\hela.db")


def test_messages_name_host_and_database_never_the_password():
    url = "postgresql://alice:s3cr%40t-pw@db.example:5433/mem?sslmode=require"
    assert describe(url) == "postgresql://db.example:5433/mem"
    assert scrub("bad thing for s3cr@t-pw in postgresql://alice:s3cr%40t-pw@db.example:5433/mem?sslmode=require",
                 url) == "bad thing for *** in postgresql://db.example:5433/mem"


def test_refused_connection_is_one_line_exit_2_without_the_password(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (["add", "--space", "s", "hello"], ["spaces"]):
        r = runner.invoke(app, ["--db", "postgresql://bob:hunter2-pw@127.0.0.1:1/memdb", *argv])
        assert r.exit_code == 2, r.output
        assert "127.0.0.1:1/memdb" in r.output and "hunter2-pw" not in r.output
        assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_placeholders_are_translated_outside_literals():
    assert pg_sql("SELECT ? , :s, 'a?:b', x::text, 5 % 2 FROM t WHERE a=:s") == \
        "SELECT %s , %(s)s, 'a?:b', x::text, 5 %% 2 FROM t WHERE a=%(s)s"
    assert pg_sql("SELECT 1 WHERE x LIKE 'a_%'") == "SELECT 1 WHERE x LIKE 'a_%%'"
    assert pg_sql("INSERT OR IGNORE INTO e(a) SELECT ?") == "INSERT INTO e(a) SELECT %s ON CONFLICT DO NOTHING"


# ----------------------------------------------------------------------------- against a server
def test_missing_database_and_reads_that_must_not_create(pg_server):
    from tests.pg_support import with_database

    r = runner.invoke(app, ["--db", with_database(pg_server, "no_such_db"), "spaces"])
    assert r.exit_code == 2 and "no_such_db" in r.output and "does not exist" in r.output


def test_a_read_never_creates_the_schema(pg_url):
    import psycopg

    r = runner.invoke(app, ["--db", pg_url, "ask", "--no-llm", "--space", "s", "what?"])
    assert r.exit_code == 4 and "no hela database yet" in r.output
    with psycopg.connect(pg_url) as c:
        assert c.execute("SELECT to_regclass('nodes')").fetchone()[0] is None


def test_keyword_scores_are_fts5_bm25_exactly(pg_url):
    """Same documents on both backends: same BM25 scores and ranking (ties by id), same document counts."""
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(30)] + ["don't", "café"]
    docs = {"a": [[rng.choice(vocab) for _ in range(rng.randint(0, 7))] for _ in range(200)],
            "b": [[rng.choice(vocab) for _ in range(rng.randint(0, 7))] for _ in range(60)]}
    stores = [Store(":memory:"), Store(pg_url)]
    for s in stores:
        s.bind_embedder("t", 4)
        for name, kws in docs.items():
            sp = s.ensure_space(name)
            with s.transaction():
                s.insert_nodes(sp.id, [{"text": str(i), "ts": float(i), "ord": i, "hash": f"{name}{i}",
                                        "keywords": k} for i, k in enumerate(kws)], np.ones((len(kws), 4)))
    for _ in range(60):
        terms = rng.sample(vocab, rng.randint(1, 4))
        a, b = (s.keyword_search(s.get_space("a").id, terms, 15) for s in stores)
        assert [n for n, _ in a] == [n for n, _ in b]
        assert [x for _, x in a] == [x for _, x in b]   # to the last bit
        assert stores[0].term_counts(1, terms) == stores[1].term_counts(1, terms)
        assert stores[0].term_postings(1, terms, 40) == stores[1].term_postings(1, terms, 40)
    for s in stores:
        s.close()


TURNS = ["I adopted a grey cat named Miso last spring", "Miso loves sleeping on the piano",
         "My sister Ana lives in Porto and teaches chemistry", "We hiked the Douro valley with Ana in May",
         "The piano needs tuning before the concert", "Ana's chemistry students won a prize",
         "I bake sourdough bread on Sundays", "The concert is on the 14th of June"]


def _memory(db: str, embedder) -> Memory:
    cfg = Config()
    cfg.db = db
    return Memory(cfg, embedder=embedder)


def _export(mem: Memory, space: str) -> dict:
    sp = mem.store.require_space(space)
    out = export_json(mem.store, sp, mem.config)
    for n in out.get("nodes", []):
        n.pop("id", None)
    return out


def test_library_behaves_the_same_on_both_backends(backend_db, hash_embedder):
    """add, retrieve with learning (Eq.1, step counter, lazy decay), forget dry run: same outputs (scores to
    1e-6: pgvector computes cosines in double precision, the in-process index in float32)."""
    mem = _memory(backend_db, hash_embedder)
    t0 = 1_700_000_000.0
    for i, text in enumerate(TURNS):
        mem.add("home", text, speaker="user", time=t0 + 3600 * i, session="s1")
    results = []
    for q in ("Who is Miso?", "Where does Ana live?", "When is the concert?", "Who is Miso?"):
        res = mem.retrieve(q, "home", now=t0 + 86400, learn=True)
        results.append([(m["text"], round(m["score"], 6)) for m in res.memories])
    sp = mem.store.require_space("home")
    assert sp.step == 4
    assert mem.store.integrity_problems() == []
    edges = mem.store.all_edges(sp)
    rep = mem.forget("home", apply=False, now=t0 + 400 * 86400)
    summary = (results, [round(w, 9) for _, _, w in edges], rep["nodes"],
               sorted(c["text"] for c in rep["candidates"] if c["candidate"]))
    mem.close()
    test_library_behaves_the_same_on_both_backends.seen.append(summary)  # type: ignore[attr-defined]
    if len(test_library_behaves_the_same_on_both_backends.seen) == 2:   # type: ignore[attr-defined]
        a, b = test_library_behaves_the_same_on_both_backends.seen      # type: ignore[attr-defined]
        assert a == b


test_library_behaves_the_same_on_both_backends.seen = []  # type: ignore[attr-defined]


def test_cli_end_to_end_on_both_backends(backend_db, cli_env, monkeypatch):
    """The CLI with the real default models: add, ask (learning), spaces, forget, export."""
    monkeypatch.setenv("HELA_DB", backend_db)
    for i, text in enumerate(TURNS):
        r = runner.invoke(app, ["add", "--space", "home", "--speaker", "user", "--time",
                                f"2024-05-0{1 + i % 8}T10:00:00", text])
        assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["ask", "--no-llm", "--space", "home", "--json", "Where does Ana live?"])
    assert r.exit_code == 0, r.output
    assert "Porto" in r.output
    r = runner.invoke(app, ["spaces", "--json"])
    assert r.exit_code == 0 and '"home"' in r.output
    r = runner.invoke(app, ["forget", "--space", "home", "--json"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["export", "--format", "json", "--space", "home"])
    assert r.exit_code == 0, r.output
    assert "Miso loves sleeping on the piano" in r.output


# ----------------------------------------------------------------------------- hela copy
def _populated_sqlite(path: str, embedder) -> None:
    mem = _memory(path, embedder)
    t0 = 1_700_000_000.0
    for i, text in enumerate(TURNS):
        mem.add("home", text, speaker="user", time=t0 + 3600 * i, session="s1")
    mem.add("work", "The quarterly report is due Friday", speaker="boss", time=t0)
    for q in ("Who is Miso?", "Where does Ana live?", "When is the concert?"):
        mem.retrieve(q, "home", now=t0 + 86400, learn=True)
    st = mem.store
    sp = st.require_space("home")
    with st.transaction():
        st.insert_semantic(sp.id, "fact", "Ana", "Ana lives in Porto", 0.9, "7 May 2023", 3, [3, 4],
                           embedder.embed(["Ana lives in Porto"])[0])
        st.set_hub_state(sp.id, 3, [3, 4, 6], sp.step, "ok")
        st.insert_passages(sp.id, {2: embedder.embed(["Miso loves", "sleeping on the piano"])})
        st.delete_nodes([7])   # a gap in the ids, as forgetting leaves
    st.log_ask(sp.id, "Where does Ana live?", "Porto", [3, 4], sp.step)
    mem.close()


def _exports(db: str) -> dict:
    cfg = Config()
    with Store.open(db) as s:
        out = {}
        for r in s.spaces():
            sp = s.require_space(r["name"])
            e = export_json(s, sp, cfg, vectors=True)
            e.pop("exported_at")
            for n in e["nodes"]:
                n["vector"] = [round(x, 6) for x in n["vector"]]
            for m in e["semantic"]:
                m["vector"] = [round(x, 6) for x in m["vector"]]
            out[r["name"]] = (e, s.asks(sp.id), sorted(s.passage_cosines(sp.id, np.ones(64, np.float32)).items()),
                              s.get_space(r["name"]).base_step)
        assert s.integrity_problems() == []
        return out


def test_copy_round_trip_sqlite_postgres_sqlite_gives_the_same_export(tmp_path, pg_url, hash_embedder):
    src, back = str(tmp_path / "src.db"), str(tmp_path / "back.db")
    _populated_sqlite(src, hash_embedder)
    r = runner.invoke(app, ["copy", src, pg_url, "--json"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["copy", pg_url, back])
    assert r.exit_code == 0, r.output
    want = _exports(src)
    assert _exports(pg_url) == want
    assert _exports(back) == want
    # the copy learns on as the source would: one more retrieval gives the same weights on both
    outs = []
    for db in (src, pg_url):
        mem = _memory(db, hash_embedder)
        mem.retrieve("Who is Miso?", "home", now=1_700_000_000.0 + 86400, learn=True)
        sp = mem.store.require_space("home")
        outs.append((sp.step, [(a, b, round(w, 9)) for a, b, w in mem.store.all_edges(sp)]))
        mem.close()
    assert outs[0] == outs[1]
    # a space that already holds memories is refused; nothing is written
    r = runner.invoke(app, ["copy", src, pg_url, "--space", "work"])
    assert r.exit_code == 4 and "already exists" in r.output


# ----------------------------------------------------------------------------------- hela reembed
def test_reembed_on_postgres_replaces_every_vector_and_the_binding(pg_url, hash_embedder):
    from hela_cli.testing import HashEmbedder

    class Hash32(HashEmbedder):
        model_id, dim = "test:hash-32", 32

    mem = _memory(pg_url, hash_embedder)
    mem.config.ingest.passage_chars = 30
    for i, text in enumerate(TURNS):
        mem.add("home", text, speaker="user", time=1_700_000_000.0 + 60 * i)
    st = mem.store
    sp = st.require_space("home")
    with st.transaction():
        st.insert_semantic(sp.id, "fact", "Ana", "Ana lives in Porto", 0.9, None, 3, [3],
                           hash_embedder.embed(["Ana lives in Porto"])[0])
    mem.close()
    mem = _memory(pg_url, Hash32())
    out = mem.reembed()
    st = mem.store
    assert st.embedder_info() == ("test:hash-32", 32)
    assert out["vectors"]["node"] == len(TURNS) and out["vectors"]["semantic"] == 1
    ids = [n["id"] for n in st.iter_nodes(sp.id)]
    vecs = st.node_vectors(ids)
    assert all(v.shape == (32,) for v in vecs.values())
    q = Hash32().embed(["Where does Ana live?"])[0]
    assert st.knn(sp.id, q, 1)[0][0] == ids[2]
    assert st.semantic_vector(st.get_semantic(space_id=sp.id)[0]["id"]).shape == (32,)
    assert st.integrity_problems() == []
    mem.close()


def test_large_spaces_get_their_own_hnsw_index(pg_url):
    from hela_cli.store.postgres.connection import PGVECTOR_MIN, _version_tuple

    assert _version_tuple("0.6.2") < PGVECTOR_MIN <= _version_tuple("0.7.0") < _version_tuple("0.8.2")
    rng = np.random.default_rng(2)
    v = rng.standard_normal((300, 16)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    with Store(pg_url, hnsw_min=100, progress=None) as s:
        s.bind_embedder("t", 16)
        small, big = s.ensure_space("small"), s.ensure_space("big")
        with s.transaction():
            s.insert_nodes(small.id, [{"text": str(i), "ts": 0.0, "ord": i, "hash": str(i)} for i in range(50)], v[:50])
            ids = s.insert_nodes(big.id, [{"text": str(i), "ts": 0.0, "ord": i, "hash": str(i)} for i in range(300)], v)
        assert s.vector_index_kind(small.id) == "pgvector-exact"
        assert s.vector_index_kind(big.id) == "pgvector-hnsw"
        hits = s.knn(big.id, v[7], 10)
        assert hits[0][0] == ids[7] and hits[0][1] == pytest.approx(1.0, abs=1e-6)
        want = [ids[i] for i in np.argsort(-(v @ v[7]), kind="stable")[:10]]
        assert len(set(n for n, _ in hits) & set(want)) >= 9
        names = [r[0] for r in s.db.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'node_emb_hnsw%'")]
        assert names == [f"node_emb_hnsw_{big.id}"]
