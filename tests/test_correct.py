"""Correcting memory: list with filters, complete deletion, edits with a history, spaces drop / rename,
recall filters applied before ranking (pure logic: the ``hash_embedder`` stand-in and a file database).

Tests taking ``backend_db`` run twice: on a SQLite file and on a fresh Postgres database (tests/pg_support.py);
what differs between the engines (FTS5 vs term statistics, the file bytes vs VACUUM) is checked per backend."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hela_cli.config import Config
from hela_cli.errors import HelaError, InputError, StoreError
from hela_cli.ingest import embedding_texts
from hela_cli.formats import Turn
from hela_cli.text.keywords import keywords
from hela_cli.memory import Memory
from hela_cli.store import Store

T0 = 1_700_000_000.0


def _mem(where: Path | str, hash_embedder, **changes) -> Memory:
    """A Memory on ``where``: a directory (a SQLite file in it) or a ``backend_db`` value."""
    cfg = Config(db=str(where / "c.db") if isinstance(where, Path) else where)
    for key, value in changes.items():
        section, _, field = key.partition("__")
        setattr(getattr(cfg, section), field, value)
    return Memory(cfg, embedder=hash_embedder)


def _fill(mem: Memory) -> dict[str, int]:
    turns = [
        {"id": "a1", "speaker": "Ana", "text": "I planted tomatoes in the garden", "time": T0, "session": "s1"},
        {"id": "b1", "speaker": "Bo", "text": "My garden has roses and a pond", "time": T0 + 60, "session": "s1"},
        {"id": "a2", "speaker": "Ana", "text": "The bakery sells rye bread on Sunday", "time": T0 + 86400, "session": "s2"},
        {"id": "b2", "speaker": "Bo", "text": "My secret locker combination is 31-07-99 zanzibar", "time": T0 + 86460,
         "session": "s2"},
        {"id": "a3", "speaker": "Ana", "text": "We hiked the mountain trail in May", "time": T0 + 3 * 86400,
         "session": "s3"},
    ]
    mem.add_many("x", turns)
    return mem.store.ids_by_source(mem.store.require_space("x").id, [t["id"] for t in turns])


def _counts(store: Store, nid: int) -> dict[str, int]:
    q = {"nodes": "SELECT count(*) FROM nodes WHERE id=?", "node_emb": "SELECT count(*) FROM node_emb WHERE node_id=?",
         "passages": "SELECT count(*) FROM node_passage WHERE node_id=?",
         "edges": "SELECT count(*) FROM edges WHERE a=? OR b=?",
         "evidence": "SELECT count(*) FROM semantic_evidence WHERE node_id=?",
         "history": "SELECT count(*) FROM history WHERE node_id=?",
         "asks": "SELECT count(*) FROM asks a WHERE " + store.dialect.json_holds("a.memories", "?"),
         "hubs": "SELECT count(*) FROM hubs WHERE node_id=?",
         "node_terms": "SELECT count(*) FROM node_terms WHERE node_id=?"}   # the keyword postings
    if store.backend == "sqlite":
        q |= {"node_vec": "SELECT count(*) FROM node_vec WHERE node_id=?"}
    return {k: store.db.execute(sql, (nid,) * sql.count("?")).fetchone()[0] for k, sql in q.items()}


def test_memories_filters_newest_first_and_limit(backend_db, tmp_path, hash_embedder):
    mem = _mem(backend_db, hash_embedder)
    ids = _fill(mem)
    rows = mem.memories("x")
    assert [r["id"] for r in rows] == [ids["a3"], ids["b2"], ids["a2"], ids["b1"], ids["a1"]]  # newest first
    assert [r["id"] for r in mem.memories("x", speaker="Bo")] == [ids["b2"], ids["b1"]]
    assert [r["id"] for r in mem.memories("x", session="s2")] == [ids["b2"], ids["a2"]]
    assert [r["id"] for r in mem.memories("x", contains="GARDEN")] == [ids["b1"], ids["a1"]]
    day2 = "2023-11-15T22:13:20Z"  # T0 + 1 day
    assert {r["id"] for r in mem.memories("x", since=day2)} == {ids["a2"], ids["b2"], ids["a3"]}
    assert {r["id"] for r in mem.memories("x", until=day2)} == {ids["a1"], ids["b1"], ids["a2"]}
    assert len(mem.memories("x", limit=2)) == 2
    assert mem.memories("x", speaker="Nobody") == []
    with pytest.raises(InputError, match="--since"):
        mem.memories("x", since="not a date at all")
    with pytest.raises(StoreError, match="unknown space"):
        mem.memories("nope")


def test_delete_is_complete_across_every_table(backend_db, tmp_path, hash_embedder):
    mem = _mem(backend_db, hash_embedder, ingest__passage_chars=20)
    ids = _fill(mem)
    store = mem.store
    sp = store.require_space("x")
    victim, keep = ids["b2"], ids["a2"]
    mem.edit("x", victim, "My secret locker combination is 31-07-99 zanzibar, changed")  # a history row
    res = mem.retrieve("secret locker combination zanzibar", "x", learn=True)  # edges, access counts
    assert victim in [m["id"] for m in res.memories]
    store.log_ask(sp.id, "what is the locker combination?", "31-07-99 zanzibar", [m["id"] for m in res.memories], 1)
    store.log_ask(sp.id, "unrelated", "bread", [keep], 2)
    with store.transaction():  # a record distilled from a hub citing the victim, and one that does not
        vec = hash_embedder.embed(["x"])[0]
        cited = store.insert_semantic(sp.id, "fact", "Bo", "Bo's locker combination is 31-07-99 zanzibar", 0.9, None,
                                      keep, [victim, keep], vec)
        other = store.insert_semantic(sp.id, "fact", "Ana", "Ana likes rye bread", 0.9, None, ids["a3"], [keep], vec)
        store.set_hub_state(sp.id, keep, [keep, victim], 1, "ok")
        store.set_hub_state(sp.id, ids["a3"], [ids["a3"], keep], 1, "ok")
    before = _counts(store, victim)
    assert before["nodes"] == before["node_emb"] == 1
    assert before.get("node_vec", 1) == 1 and before["node_terms"]
    assert before["edges"] and before["history"] == 1 and before["passages"]
    n_before = store.count_nodes(sp.id)

    rep = mem.delete("x", [victim])
    # asks: the logged ask above and the learning recall's own row (its recall id, feedback's log)
    assert rep["deleted"] == [victim] and rep["semantic"] == [cited] and rep["asks"] == 2 and rep["history"] == 1
    assert all(v == 0 for v in _counts(store, victim).values()), _counts(store, victim)
    assert store.count_nodes(sp.id) == n_before - 1
    recs = {r["id"] for r in store.get_semantic(space_id=sp.id)}
    assert cited not in recs and other in recs            # only the record citing it goes
    assert store.semantic_vector(cited) is None
    assert keep not in store.hub_state(sp.id)             # its hub may be distilled again
    assert ids["a3"] in store.hub_state(sp.id)
    asks = store.asks(sp.id)
    assert [a["question"] for a in asks] == ["unrelated"]
    assert store.integrity_problems() == []
    # read-only: a learning recall logs its own question (the recall id's row), which names the secret again
    assert victim not in [m["id"] for m in mem.retrieve("secret locker combination zanzibar", "x",
                                                        learn=False).memories]
    assert store.keyword_search(sp.id, ["zanzibar"], 10) == []
    export = json.dumps(list(store.iter_nodes(sp.id)))
    assert "zanzibar" not in export
    assert rep["scrub"]["probes"] >= 1
    if store.backend == "sqlite":
        assert rep["scrub"]["verified"]
        data = Path(store.path).read_bytes() + (Path(store.path + "-wal").read_bytes()
                                                 if Path(store.path + "-wal").exists() else b"")
        assert b"31-07-99" not in data and b"zanzibar" not in data
    else:   # VACUUMed; the server's bytes are not hela's to read (benchmarks/quality/pg_delete_bytes.py measures them)
        assert rep["scrub"]["vacuumed"] and rep["scrub"]["verified"] is None and "VACUUM" in rep["scrub"]["note"]
        assert store.db.execute("SELECT count(*) FROM node_terms WHERE term = 'zanzibar'").fetchone()[0] == 0


def test_delete_unknown_ids_change_nothing_and_filters_need_confirm(backend_db, tmp_path, hash_embedder):
    mem = _mem(backend_db, hash_embedder)
    ids = _fill(mem)
    n = mem.store.count_nodes(mem.store.require_space("x").id)
    with pytest.raises(InputError, match="no memory 99999 in space 'x'"):
        mem.delete("x", [ids["a1"], 99999])
    with pytest.raises(InputError, match="source id 'zz'"):
        mem.delete("x", source_ids=["a1", "zz"])
    with pytest.raises(InputError, match="selects 2 memories"):
        mem.delete("x", speaker="Bo")
    with pytest.raises(InputError, match="not both"):
        mem.delete("x", [ids["a1"]], speaker="Bo")
    with pytest.raises(InputError, match="name the memories"):
        mem.delete("x")
    assert mem.store.count_nodes(mem.store.require_space("x").id) == n
    assert mem.delete("x", contains="no such words", confirm=True)["deleted"] == []
    rep = mem.delete("x", speaker="Bo", confirm=True)
    assert sorted(rep["deleted"]) == sorted([ids["b1"], ids["b2"]])
    rep = mem.delete("x", before="2023-11-16", confirm=True)  # T0 + 1 day is 2023-11-15 22:13
    assert sorted(rep["deleted"]) == sorted([ids["a1"], ids["a2"]])
    assert [r["id"] for r in mem.memories("x")] == [ids["a3"]]
    assert mem.delete("x", source_ids=["a3"])["deleted"] == [ids["a3"]]
    assert mem.store.integrity_problems() == []


def test_edit_keeps_identity_and_rebuilds_as_ingest(backend_db, tmp_path, hash_embedder):
    mem = _mem(backend_db, hash_embedder, ingest__passage_chars=30)
    ids = _fill(mem)
    store = mem.store
    sp = store.require_space("x")
    nid, follower = ids["a2"], ids["b2"]
    mem.retrieve("bakery rye bread secret locker", "x", learn=True)
    before = store.get_node(nid)
    edges = {(a, b): w for a, b, w in store.all_edges(sp) if nid in (a, b)}
    assert edges
    new = "The bakery now sells spelt bread on Saturday mornings"
    rep = mem.edit("x", nid, new)
    assert rep["id"] == nid and rep["previous"] == "The bakery sells rye bread on Sunday"
    after = store.get_node(nid)
    for k in ("id", "ts", "session", "speaker", "source_id", "ord", "time_str", "access_count"):
        assert after[k] == before[k], k
    assert after["text"] == new and after["keywords"] == keywords(new)
    assert {(a, b): w for a, b, w in store.all_edges(sp) if nid in (a, b)} == edges
    # the vector is what ingest's embedding text gives (the preceding turn of its session as context)
    turn = Turn("Ana", new, after["ts"], after["time_str"] or "", "s2", "a2")
    want = hash_embedder.embed(embedding_texts([turn], [0], hash_embedder, mem.config))[0]
    assert np.allclose(store.node_vectors([nid])[nid], want)
    # the next turn had the old text as its context: re-embedded with the new one
    nxt = store.get_node(follower)
    ctx = [turn, Turn("Bo", nxt["text"], nxt["ts"], nxt["time_str"] or "", "s2", "b2")]
    assert np.allclose(store.node_vectors([follower])[follower],
                       hash_embedder.embed(embedding_texts(ctx, [1], hash_embedder, mem.config))[0])
    assert store.db.execute("SELECT count(*) FROM node_passage WHERE node_id=?", (nid,)).fetchone()[0] == 2
    assert [n for n, _ in store.keyword_search(sp.id, ["spelt"], 10)] == [nid]
    assert store.keyword_search(sp.id, ["rye"], 10) == []
    assert nid in [m["id"] for m in mem.retrieve("spelt bread saturday", "x").memories]
    hist = mem.history("x", nid)
    assert [v["text"] for v in hist["versions"]] == ["The bakery sells rye bread on Sunday", new]
    assert hist["versions"][0]["replaced"] and hist["versions"][1]["current"]
    assert mem.history("x", source_id="a2") == hist
    if store.backend == "sqlite":
        assert b"rye bread on Sunday" in Path(store.path).read_bytes()  # kept in history only
    assert store.db.execute("SELECT count(*) FROM nodes WHERE instr(text, 'rye') > 0").fetchone()[0] == 0
    with pytest.raises(HelaError, match="empty"):
        mem.edit("x", nid, "   ")
    with pytest.raises(InputError, match="no memory 4242"):
        mem.edit("x", 4242, "text")
    assert mem.edit("x", source_id="a2", text="third version")["id"] == nid
    assert len(mem.history("x", nid)["versions"]) == 3
    assert store.integrity_problems() == []


def test_edit_keeps_persisted_sign_bits_current(tmp_path, hash_embedder):
    mem = _mem(tmp_path, hash_embedder, retrieval__sign_index_min=2)
    ids = _fill(mem)
    store = mem.store
    sp = store.require_space("x")
    mem.retrieve("garden", "x", learn=False)  # builds the persisted bits (space above sign_index_min)
    assert store.db.execute("SELECT count(*) FROM sign_blocks WHERE space_id=?", (sp.id,)).fetchone()[0]
    mem.edit("x", ids["a1"], "quantum chromodynamics lecture notes")
    version = store.db.execute("SELECT nodes_version FROM spaces WHERE id=?", (sp.id,)).fetchone()[0]
    assert store.db.execute("SELECT version FROM sign_state WHERE space_id=?", (sp.id,)).fetchone()[0] == version
    hits = store.knn(sp.id, hash_embedder.embed(["Ana: quantum chromodynamics lecture notes"])[0], 1)
    assert hits[0][0] == ids["a1"]
    mem.delete("x", [ids["a1"]])
    assert store.integrity_problems() == []


def test_recall_filters_apply_before_ranking(backend_db, tmp_path, hash_embedder):
    mem = _mem(backend_db, hash_embedder, retrieval__k=2, retrieval__m=0)
    turns = [{"speaker": "Ana", "text": f"garden roses tulips flowers bloom {i}", "time": T0 + i, "session": "a"}
             for i in range(30)]
    turns.append({"speaker": "Bo", "text": "a garden shed for tools", "time": T0 + 100, "session": "b"})
    mem.add_many("g", turns)
    bo = mem.memories("g", speaker="Bo")[0]["id"]
    plain = [m["id"] for m in mem.retrieve("garden roses tulips flowers", "g", learn=False).memories]
    assert bo not in plain and len(plain) == 2          # outranked without a filter
    only_bo = mem.retrieve("garden roses tulips flowers", "g", learn=False, speaker="Bo").memories
    assert [m["id"] for m in only_bo] == [bo]           # found: the filter chose the candidates
    assert [m["id"] for m in mem.retrieve("garden", "g", learn=False, session="b").memories] == [bo]
    window = mem.retrieve("garden flowers", "g", learn=False, since=T0 + 10, until=T0 + 12).memories
    assert window and all(T0 + 10 <= m["timestamp"] <= T0 + 12 for m in window)
    assert mem.retrieve("garden", "g", learn=False, speaker="Nobody").memories == []
    # spreading stays inside the filter: a learnt edge from Bo's memory to Ana's does not bring Ana's in
    mem.config.retrieval.theta = 0.0
    mem.config.retrieval.m = 3
    ana = mem.memories("g", speaker="Ana", limit=1)[0]["id"]
    with mem.store.transaction():
        mem.store.set_edges(mem.store.require_space("g"), {(bo, ana): 0.9}, mem.config.hebbian.decay)
    assert {m["speaker"] for m in mem.retrieve("shed tools", "g", learn=False, speaker="Bo").memories} == {"Bo"}


def test_spaces_drop_and_rename(backend_db, tmp_path, hash_embedder):
    mem = _mem(backend_db, hash_embedder)
    _fill(mem)
    mem.add("other", "a memory in another space about zanzibar lockers", speaker="Cy")
    mem.rename_space("x", "y")
    assert mem.memories("y") and mem.store.get_space("x") is None
    with pytest.raises(StoreError, match="already exists"):
        mem.rename_space("y", "other")
    with pytest.raises(StoreError, match="invalid space name"):
        mem.rename_space("y", "")
    rep = mem.drop_space("y")
    assert len(rep["deleted"]) == 5 and rep["scrub"]["verified"] is (True if mem.store.backend == "sqlite" else None)
    assert [s["name"] for s in mem.store.spaces()] == ["other"]
    tables = ("nodes", "node_emb", "edges", "asks", "semantic", "hubs", "history", "tombstones",
              *(("sign_blocks",) if mem.store.backend == "sqlite" else ("node_terms",)))
    for table in tables:
        assert mem.store.db.execute(f"SELECT count(*) FROM {table} WHERE space_id NOT IN (SELECT id FROM spaces)"
                                    ).fetchone()[0] == 0, table
    assert mem.store.integrity_problems() == []
    if mem.store.backend == "sqlite":
        assert b"tomatoes" not in Path(mem.store.path).read_bytes()


def test_mcp_tools_memories_update_delete(backend_db, hash_embedder):
    from hela_cli.mcp_server.tools import HelaServer

    server = HelaServer(Config(db=backend_db))
    server.memory._embedder = hash_embedder
    ids = _fill(server.memory)
    out = server.memories("x", speaker="Ana", limit=2)
    assert [m["id"] for m in out["memories"]] == [ids["a3"], ids["a2"]]
    assert "date" in out["memories"][0] and "timestamp" not in out["memories"][0]
    up = server.update("x", "Tomatoes and basil in the garden", source_id="a1")
    assert up["id"] == ids["a1"] and up["previous"] == "I planted tomatoes in the garden"
    with pytest.raises(InputError):
        server.update("x", "text")
    with pytest.raises(InputError, match="confirm"):
        server.delete("x", speaker="Bo")
    rep = server.delete("x", speaker="Bo", confirm=True)
    assert sorted(rep["deleted"]) == sorted([ids["b1"], ids["b2"]])
    # SQLite reads its file back; Postgres' files are the server's: not verified by hela (None), said so
    assert rep["bytes_verified"] is (True if server.memory.store.backend == "sqlite" else None)
    assert server.delete("x", ids=[ids["a1"]])["deleted"] == [ids["a1"]]
    rec = server.recall("x", "mountain", speaker="Ana", learn=False)
    assert {m["speaker"] for m in rec["memories"]} == {"Ana"}
    server.memory.close()


def test_history_table_migration_and_secure_delete(tmp_path):
    with Store(tmp_path / "n.db") as s:
        assert "0012_history" in s.applied_migrations()
        assert s.db.execute("PRAGMA secure_delete").fetchone() == (1,)


def test_consolidation_that_read_a_memory_before_its_delete_writes_nothing_from_it(backend_db, tmp_path, hash_embedder):
    """The interleaving replayed: consolidation reads a hub's cluster, the chat model runs, another process
    deletes a memory of that cluster, consolidation writes. No record restating it, no hub state."""
    from tests.support import ScriptedChat, good_reply

    mem = _mem(backend_db, hash_embedder, consolidation__delta_hub=0.01, consolidation__auto=False)
    ids = _fill(mem)
    for _ in range(5):
        mem.retrieve("secret locker combination zanzibar garden", "x", learn=True)
    victim = ids["b2"]
    other = Store(mem.config.db)

    def reply(messages, schema):
        if victim in schema["properties"]["facts"]["items"]["properties"]["evidence"]["items"]["enum"]:
            other.erase_nodes(other.require_space("x").id, [victim])   # `hela delete` meanwhile
        return good_reply(messages, schema)

    mem._chat = ScriptedChat(reply)
    rep = mem.consolidate("x")
    other.close()
    skipped = [h for h in rep["hubs"] if h["status"].startswith("skipped: a memory of its cluster was deleted")]
    assert skipped and all(victim in h["cluster"] for h in skipped)
    sp = mem.store.require_space("x")
    assert all(victim not in h["cluster"] for h in mem.store.hub_state(sp.id).values())
    assert not any(r["hub_id"] in {h["hub"] for h in skipped} for r in mem.store.get_semantic(space_id=sp.id))
    assert mem.store.integrity_problems() == []


def test_an_ask_that_retrieved_a_memory_deleted_meanwhile_is_not_logged(backend_db, tmp_path, hash_embedder):
    mem = _mem(backend_db, hash_embedder)
    ids = _fill(mem)
    res = mem.retrieve("secret locker combination zanzibar", "x", learn=False)
    got = [m["id"] for m in res.memories]
    assert ids["b2"] in got
    with Store(mem.config.db) as other:
        other.erase_nodes(other.require_space("x").id, [ids["b2"]])
    sp = mem.store.require_space("x")
    assert mem.store.log_ask(sp.id, "the combination?", "31-07-99 zanzibar", got, 1) is None
    assert mem.store.asks(sp.id) == []
    assert mem.store.log_ask(sp.id, "bread?", "rye", [ids["a2"]], 1) is not None


def test_delete_reembeds_the_turn_that_had_it_as_context(backend_db, tmp_path, hash_embedder):
    mem = _mem(backend_db, hash_embedder)
    ids = _fill(mem)
    store = mem.store
    a2, b2 = store.get_node(ids["a2"]), store.get_node(ids["b2"])
    with_ctx = hash_embedder.embed(embedding_texts(
        [Turn("Ana", a2["text"], a2["ts"], "", "s2", None), Turn("Bo", b2["text"], b2["ts"], "", "s2", None)], [1],
        hash_embedder, mem.config))[0]
    assert np.allclose(store.node_vectors([ids["b2"]])[ids["b2"]], with_ctx)   # as ingest stored it
    rep = mem.delete("x", [ids["a2"]])
    assert rep["reembedded"] == [ids["b2"]] and "note" not in rep
    alone = hash_embedder.embed(embedding_texts([Turn("Bo", b2["text"], b2["ts"], "", "s2", None)], [0], hash_embedder,
                                                mem.config))[0]
    assert np.allclose(store.node_vectors([ids["b2"]])[ids["b2"]], alone)       # no trace of the deleted turn
    assert store.integrity_problems() == []


def test_delete_without_a_loadable_embedder_still_deletes_and_says_so(backend_db, tmp_path, hash_embedder):
    mem = _mem(backend_db, hash_embedder)
    ids = _fill(mem)
    mem.close()
    cfg = Config(db=mem.config.db)
    cfg.models.embedder = str(tmp_path / "missing.gguf")
    with Memory(cfg) as other:
        rep = other.delete("x", [ids["a1"]])      # its next turn b1 would be re-embedded
        assert rep["deleted"] == [ids["a1"]] and rep["reembedded"] == [] and "keep their vectors" in rep["note"]
        rep = other.delete("x", [ids["a3"]])      # last of its session: no model needed, no note
        assert rep["deleted"] == [ids["a3"]] and "note" not in rep
        assert other.store.integrity_problems() == []


def test_cli_commands_by_id_find_the_memory_space(cli_env):
    """edit / history / delete by id need no --space: the memory's own space is used (a flag still wins)."""
    from typer.testing import CliRunner

    from hela_cli.cli import app

    run = CliRunner().invoke
    assert run(app, ["add", "-s", "alice", "Alice", "likes", "tea"]).exit_code == 0
    nid = int(run(app, ["add", "-s", "bob", "Bob", "likes", "coffee"]).stdout)
    edited = run(app, ["edit", str(nid), "Bob likes green tea"])
    assert edited.exit_code == 0, edited.output
    hist = json.loads(run(app, ["history", str(nid), "--json"]).stdout)
    assert [v["text"] for v in hist["versions"]] == ["Bob likes coffee", "Bob likes green tea"]
    wrong = run(app, ["delete", str(nid), "-s", "alice", "--yes"])
    assert wrong.exit_code != 0 or "nothing deleted" in wrong.output
    assert run(app, ["delete", str(nid), "--yes"]).exit_code == 0
    assert json.loads(run(app, ["memories", "-s", "bob", "--json"]).stdout) == []
    assert len(json.loads(run(app, ["memories", "-s", "alice", "--json"]).stdout)) == 1
