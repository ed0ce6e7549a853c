"""Correcting memory, backup, import and ``hela ui`` on Postgres, where the engine differs from SQLite: BM25
after a delete and an edit equals a fresh ingest of what remains (both backends), the deleted rows' tables
VACUUMed, a backup of a Postgres database is a SQLite file that `hela copy` restores to the same export,
the ui's read-only session and its refusal of a database that is not hela's. (The shared behaviour runs on
both backends in test_correct.py, test_backup.py, test_ui.py and test_ui_correct.py.)"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from hela_cli.maintenance import exporting
from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.maintenance.copying import copy_spaces
from hela_cli.errors import StoreError
from hela_cli.text.keywords import keywords
from hela_cli.memory import Memory
from hela_cli.store import Store
from hela_cli.store.target import is_postgres
from tests.pg_support import new_database

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
SECRET = "my locker code is zebra-pancake-7731 zebrapancake7731"
runner = CliRunner()


def _second(backend_db: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Another fresh database of the same backend."""
    if is_postgres(backend_db):
        return new_database(request.getfixturevalue("pg_server"))
    return str(tmp_path / "fresh.db")


def _scores(mem: Memory, space: str, terms: list[str]) -> list[tuple[str, float]]:
    s = mem.store
    sp = s.require_space(space)
    hits = s.keyword_search(sp.id, terms, 200)
    src = {n["id"]: n["source_id"] for n in s.iter_nodes(sp.id)}
    return [(src[i], score) for i, score in hits]


def test_bm25_after_delete_and_edit_equals_a_fresh_ingest(backend_db, request, tmp_path, hash_embedder):
    """The keyword statistics (FTS5's on SQLite, the term statistics tables on Postgres) leave the deleted
    and the replaced text out: every score equals the one a database holding only what remains gives."""
    conv = json.loads((SAMPLE / "conversation.json").read_text())[0]["conversation"]
    turns = [t for k in sorted(conv) if k.startswith("session_") and isinstance(conv[k], list) for t in conv[k]]
    rows = [{"id": f"t{i}", "speaker": t["speaker"], "text": t["text"], "time": 1_700_000_000 + 60 * i,
             "session": "s"} for i, t in enumerate(turns)]
    assert len(rows) > 20
    gone, edited = {"t3", "t7", "t12"}, "t5"
    new_text = "Tofu the greyhound learned to fetch the newspaper and the slippers"
    with Memory(Config(db=backend_db), embedder=hash_embedder) as a:
        a.add_many("x", rows)
        a.delete("x", source_ids=sorted(gone))
        a.edit("x", source_id=edited, text=new_text)
        remaining = [{**r, "text": new_text} if r["id"] == edited else r for r in rows if r["id"] not in gone]
        with Memory(Config(db=_second(backend_db, request, tmp_path)), embedder=hash_embedder) as b:
            b.add_many("x", remaining)
            for text in ("tofu", "greyhound newspaper", "dog cake trip", "slippers", "bread", "piano"):
                terms = keywords(text)
                got, want = _scores(a, "x", terms), _scores(b, "x", terms)
                assert [s for s, _ in got] == [s for s, _ in want], terms
                assert [v for _, v in got] == pytest.approx([v for _, v in want], rel=1e-9), terms
            assert _scores(a, "x", keywords("slippers"))   # the edit's new keyword is found


def test_delete_vacuums_the_tables_that_held_the_text(pg_url, hash_embedder):
    with Memory(Config(db=pg_url), embedder=hash_embedder) as m:
        m.ingest([str(SAMPLE / "conversation.json")], space="s")
        nid = m.add("s", SECRET)
        for _ in range(5):   # one question asked often: a most common value of asks.question
            m.retrieve("zebrapancake7731 locker code", "s", learn=True)
        stats = ("SELECT count(*) FROM pg_stats WHERE schemaname = 'public' AND (most_common_vals::text LIKE "
                 "'%zebrapancake%' OR histogram_bounds::text LIKE '%zebrapancake%')")
        m.store.db.execute("ANALYZE")           # as autovacuum does on its own schedule
        assert m.store.db.execute(stats).fetchone()[0] >= 1   # the planner statistics quote the secret
        before = dict(m.store.db.execute("SELECT relname, vacuum_count FROM pg_stat_user_tables").fetchall())
        rep = m.delete("s", [nid])
        assert rep["scrub"]["vacuumed"] and rep["scrub"]["verified"] is None and "WAL" in rep["scrub"]["note"]
        assert rep["asks"] >= 1
        db = m.store.db
        for table, col in (("nodes", "text"), ("asks", "question"), ("node_terms", "term"), ("history", "text")):
            assert db.execute(f"SELECT count(*) FROM {table} WHERE {col} LIKE '%zebrapancake%'").fetchone()[0] == 0
        # the statistics collector counts a manual VACUUM per table (it may lag a moment: read until seen)
        for _ in range(50):
            after = dict(db.execute("SELECT relname, vacuum_count FROM pg_stat_user_tables").fetchall())
            if after["nodes"] > before.get("nodes", 0):
                break
            db.execute("SELECT pg_stat_clear_snapshot()")
        assert after["nodes"] > before.get("nodes", 0) and after["asks"] > before.get("asks", 0)
        # sampled again (ANALYZE) without the deleted rows; `asks` is empty now, and ANALYZE keeps an empty
        # table's old statistics: Postgres >= 18 lets hela clear them (older servers keep them)
        if db.conn.info.server_version >= 180000:
            assert db.execute(stats).fetchone()[0] == 0
        assert m.store.integrity_problems() == []


def test_backup_of_a_postgres_database_is_a_sqlite_file_copy_restores(pg_server, pg_url, tmp_path, hash_embedder):
    with Memory(Config(db=pg_url), embedder=hash_embedder) as m:
        m.ingest([str(SAMPLE / "conversation.json")], space="s")
        m.add("t", "a second space about bicycles", speaker="Cy")
        for q in ["Who adopted a dog?", "What did they cook?"]:
            m.retrieve(q, "s", learn=True)
        first, original = (lambda r: (r["id"], r["text"]))(m.memories("s", limit=1)[0])
        m.edit("s", first, "an edited memory about the apple cake")
        nid = m.add("s", SECRET)
        m.retrieve("zebra pancake locker", "s", learn=True)
        m.delete("s", [nid])
        sp = m.store.require_space("s")
        want = exporting.export_json(m.store, sp, m.config, vectors=True)

        dest = tmp_path / "b.db"
        rep = m.backup(dest)
        assert rep["integrity"] == "ok" and rep["counts"]["nodes"] == m.store.count_nodes(sp.id) + 1
        assert stat.S_IMODE(dest.stat().st_mode) == 0o600
        assert [p.name for p in tmp_path.iterdir()] == ["b.db"]      # no temporary, -wal or -shm file left
        data = dest.read_bytes()
        assert b"zebra-pancake" not in data and b"zebrapancake" not in data
        with pytest.raises(StoreError, match=r"b\.db: already exists \(use --force to replace it\)$"):
            m.backup(dest)
        with pytest.raises(StoreError, match="is a directory"):
            m.backup(tmp_path)
        m.backup(dest, force=True)

    with Store(dest) as s:                  # usable directly: a hela SQLite database
        assert s.integrity_problems() == []
        assert {r["name"] for r in s.spaces()} == {"s", "t"}
        assert [v["text"] for v in s.node_history(first)] == [original]   # the edit history is in the copy
    back = new_database(pg_server)          # restored with `hela copy` into a fresh Postgres database
    copy_spaces(str(dest), back)
    with Memory(Config(db=back), embedder=hash_embedder) as r:
        got = exporting.export_json(r.store, r.store.require_space("s"), r.config, vectors=True)
        got.pop("exported_at"), want.pop("exported_at")
        assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
        assert len(r.history("s", first)["versions"]) == 2   # the edit history came along


def test_backup_and_import_refusals_on_postgres(pg_server, pg_url, tmp_path, hash_embedder):
    with pytest.raises(StoreError, match="no hela database yet"):
        Memory(Config(db=pg_url), embedder=hash_embedder).backup(tmp_path / "c.db")
    assert not (tmp_path / "c.db").exists()
    with Memory(Config(db=pg_url), embedder=hash_embedder) as m:
        m.ingest([str(SAMPLE / "conversation.json")], space="s")
        exp = exporting.export_json(m.store, m.store.require_space("s"), m.config, vectors=True)
        (tmp_path / "e.json").write_text(json.dumps(exp))
        before = m.store.space_contents(m.store.require_space("s").id)
        with pytest.raises(StoreError, match="not empty"):
            m.import_export(tmp_path / "e.json")           # into the space that holds it: refused
        assert m.store.space_contents(m.store.require_space("s").id) == before
        rep = m.import_export(tmp_path / "e.json", space="again")   # a new space: one transaction
        assert rep["memories"] == before["nodes"] and m.store.integrity_problems() == []


def test_ui_session_is_read_only_and_a_foreign_database_is_refused(pg_server, pg_url, tmp_path, monkeypatch,
                                                                  hash_embedder):
    from hela_cli.store import BrowseStore
    from hela_cli.store.postgres.browse import pg_database_kind

    foreign = new_database(pg_server)
    with psycopg.connect(foreign, autocommit=True) as c:
        c.execute("CREATE TABLE t(x int)")
    assert pg_database_kind(foreign) == "not a hela database (no hela tables in it)"
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    r = runner.invoke(app, ["--db", foreign, "ui", "--no-browser"])
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 2 and len(lines) == 1 and "not a hela database" in lines[0], r.output
    with psycopg.connect(foreign, autocommit=True) as c:  # nothing created: no schema, no extension
        assert c.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()[0] == 1
        assert c.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'").fetchone()[0] == 0

    with Memory(Config(db=pg_url), embedder=hash_embedder) as m:
        m.add("s", "a memory to browse")
    assert pg_database_kind(pg_url) is None
    store = BrowseStore.open(pg_url)
    try:
        store.set_query_only(True)
        with pytest.raises(StoreError, match="read-only transaction"):
            with store.transaction():
                store.db.execute("UPDATE spaces SET step = step + 1")
        assert store.spaces()[0]["steps"] == 0
        store.set_query_only(False)
        with store.transaction():
            store.db.execute("UPDATE spaces SET step = step + 1")
        assert store.spaces()[0]["steps"] == 1
    finally:
        store.close()


def test_cli_delete_edit_history_backup_import_on_postgres(pg_url, tmp_path, monkeypatch, cli_env):
    """The commands end to end on a Postgres database (real default models, CliRunner)."""
    monkeypatch.setenv("HELA_DB", pg_url)

    def run(*args: str, code: int = 0):
        res = runner.invoke(app, list(args))
        assert res.exit_code == code, (args, res.output)
        return res

    run("add", "-s", "p", "--id", "a", "The bakery sells rye bread on Sunday")
    run("add", "-s", "p", "--id", "b", SECRET)
    out = json.loads(run("memories", "-s", "p", "--json").stdout)
    assert {m["source_id"] for m in out} == {"a", "b"}
    run("edit", "-s", "p", "--source-id", "a", "The bakery sells spelt bread on Saturday")
    hist = json.loads(run("history", "-s", "p", "--source-id", "a", "--json").stdout)
    assert [v["text"] for v in hist["versions"]] == ["The bakery sells rye bread on Sunday",
                                                     "The bakery sells spelt bread on Saturday"]
    res = run("delete", "-s", "p", "--contains", "zebra", code=2)       # a filter needs --yes without a tty
    assert "add --yes" in res.output
    res = run("delete", "-s", "p", "--contains", "zebra", "--yes")
    assert "deleted 1 memory" in res.stdout and "VACUUM" in res.stderr
    run("backup", str(tmp_path / "b.db"))
    with Store(tmp_path / "b.db") as s:
        assert [n["text"] for n in s.iter_nodes(s.require_space("p").id)] == [
            "The bakery sells spelt bread on Saturday"]
    run("export", "-s", "p", "--format", "json", "--vectors", "-o", str(tmp_path / "p.json"))
    out = json.loads(run("import", str(tmp_path / "p.json"), "-s", "p2", "--json").stdout)
    assert out["memories"] == 1
    run("import", str(tmp_path / "p.json"), "-s", "p2", code=4)           # not empty: refused
    assert [m["text"] for m in json.loads(run("memories", "-s", "p2", "--json").stdout)] == [
        "The bakery sells spelt bread on Saturday"]
    run("spaces", "drop", "p2", "--yes")
    run("spaces", "rename", "p", "q")
    run("spaces", "drop", "q", "--yes")
    with Store(pg_url) as s:
        assert s.spaces() == [] and s.integrity_problems() == []


def test_spaces_drop_drops_the_spaces_hnsw_index(pg_url, hash_embedder):
    store = Store(pg_url, hnsw_min=2)   # HNSW from 3 memories on: the index a large space gets
    with Memory(Config(db=pg_url), store=store, embedder=hash_embedder) as m:
        m.add_many("big", [{"text": f"note {i} about the garden and roses", "speaker": "A"} for i in range(6)])
        m.retrieve("garden roses", "big", learn=False)
        sid = m.store.require_space("big").id
        assert m.store.vector_index_kind(sid) == "pgvector-hnsw"
        name = f"node_emb_hnsw_{sid}"
        held = "SELECT count(*) FROM pg_indexes WHERE indexname = ?"
        assert m.store.db.execute(held, (name,)).fetchone()[0] == 1
        m.drop_space("big")
        assert m.store.db.execute(held, (name,)).fetchone()[0] == 0
        assert m.store.integrity_problems() == []
