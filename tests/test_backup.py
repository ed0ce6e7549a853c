"""``hela backup`` and ``hela import``: a consistent private copy while other processes write; an export
restored into a fresh file gives the same content (through the id mapping) and the same recall."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from hela_cli.maintenance import exporting
from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.errors import InputError, StoreError
from hela_cli.memory import Memory
from hela_cli.store import Store
from tests.reliability import hela, hela_env, messages_file

runner = CliRunner()
QUESTIONS = ["Who adopted a dog?", "What is the dog called?", "Where did they travel?", "piano lessons"]


def run(*args: str, code: int = 0) -> Any:
    res = runner.invoke(app, list(args))
    assert res.exit_code == code, (args, res.exit_code, res.stdout, res.stderr)
    return res


# ----------------------------------------------------------------------------------- comparing exports
def canonical(exp: dict[str, Any], to_old: dict[int, int]) -> dict[str, Any]:
    """An export with every memory id put through ``to_old`` (new id -> exported id; identity for the
    original) and record ids replaced by their rank: what must survive a round trip unchanged."""
    m = lambda i: to_old.get(i, i)  # noqa: E731
    known = {n["id"] for n in exp["nodes"]}
    nodes = {}
    for n in exp["nodes"]:
        d = {k: v for k, v in n.items() if k not in ("id", "source_id")}
        d["source_id"] = n["source_id"] if n["source_id"] is not None else str(n["id"])
        nodes[m(n["id"])] = d
    edges = {tuple(sorted((m(e["source"]), m(e["target"])))): (e["weight"], e.get("prior"), e.get("amp"))
             for e in exp["edges"]}
    sem = [{**{k: v for k, v in r.items() if k != "id"}, "evidence": sorted(m(x) for x in r["evidence"]),
            "hub_id": None if r["hub_id"] is None else m(r["hub_id"])} for r in exp["semantic"]]
    hubs = {m(h["node_id"]): {**h, "node_id": None, "cluster": [m(x) if x in known else "gone" for x in h["cluster"]]} for h in exp["hubs"]}
    space = {k: v for k, v in exp["space"].items()}
    return {"space": space, "embedder": exp["embedder"], "hebbian": exp["hebbian"], "nodes": nodes,
            "edges": edges, "semantic": sem, "hubs": hubs}


def inverse(ids: dict[str, int]) -> dict[int, int]:
    return {new: int(old) for old, new in ids.items()}


# ----------------------------------------------------------------------------------- round trip, real models
def test_backup_export_import_round_trip_real_models(cli_env, monkeypatch, tmp_path):
    """Ingest, ask with learning, consolidate with the real models; then a backup opens with the same recall,
    and export --vectors -> import into a fresh file -> export gives the same content and the same recall."""
    from tests.cases import write_conversation

    monkeypatch.setenv("HELA_CONSOLIDATION_MAX_TOKENS", "200")
    monkeypatch.setenv("HELA_CONSOLIDATION_MAX_NEIGHBOURS", "2")
    monkeypatch.setenv("HELA_CONSOLIDATION_DELTA_HUB", "0.5")
    monkeypatch.setenv("HELA_CONSOLIDATION_AUTO", "false")
    monkeypatch.setenv("HELA_INGEST_PASSAGE_CHARS", "40")  # some turns get passage vectors
    db = os.environ["HELA_DB"]   # the test's database (HELA_TEST_BACKEND=postgres: a Postgres URL)
    run("ingest", str(write_conversation(tmp_path / "c.jsonl")), "--space", "t")
    for q in QUESTIONS[:3]:
        run("ask", q, "-s", "t", "--no-llm", "--json")  # learning on: edges get learned weights
    with Store(db) as s:  # a hub for consolidation (node 1 with the dog turns)
        sp = s.require_space("t")
        with s.transaction():
            s.set_edges(sp, {(1, 5): 0.4, (1, 7): 0.3, (5, 7): 0.2}, 0.995)
        assert s.passage_vectors(range(1, 50)), "the test needs passage vectors"
    rep = json.loads(run("consolidate", "--space", "t", "--json").stdout)
    assert rep["distilled"] >= 1
    run("ask", QUESTIONS[3], "-s", "t", "--no-llm", "--json")  # learning after consolidation too
    with Store(db) as s:
        sp = s.require_space("t")
        assert s.count_semantic(sp.id) >= 1 and sp.step == 4 and sp.consolidated_step > 0
        assert any(amp > 0 for _, _, _, amp in s.raw_edges(sp.id)[3])

    def recall(dbfile: Path | str) -> list[dict[str, Any]]:
        return [json.loads(run("--db", str(dbfile), "ask", q, "-s", "t", "--no-llm", "--no-learn", "--json").stdout)
                for q in QUESTIONS]

    before = recall(db)

    # backup: private, refuses to overwrite, opens with the same spaces and recall
    bk = tmp_path / "backup.db"
    out = json.loads(run("backup", str(bk), "--json").stdout)
    assert out["integrity"] == "ok" and out["counts"]["nodes"] == len(write_conversation_turns())
    assert bk.stat().st_mode & 0o777 == 0o600
    again = run("backup", str(bk), code=4)
    assert again.stderr.strip() == f"error: {bk}: already exists (use --force to replace it)"
    run("backup", str(bk), "--force")
    assert bk.stat().st_mode & 0o777 == 0o600
    assert [[(m["id"], m["score"]) for m in r["memories"]] for r in recall(bk)] == \
        [[(m["id"], m["score"]) for m in r["memories"]] for r in before]

    # export -> import into a fresh file -> export again
    e1, e2, new = tmp_path / "e1.json", tmp_path / "e2.json", tmp_path / "new.db"
    run("export", "-s", "t", "-f", "json", "--vectors", "-o", str(e1))
    imp = json.loads(run("--db", str(new), "import", str(e1), "--json").stdout)
    assert imp["space"] == "t" and imp["memories"] == len(imp["ids"]) and not imp["reembedded"]
    run("--db", str(new), "export", "-s", "t", "-f", "json", "--vectors", "-o", str(e2))
    a, b = json.loads(e1.read_text()), json.loads(e2.read_text())
    assert a["semantic"] and a["hubs"] and any(n["passages"] for n in a["nodes"])
    ca, cb = canonical(a, {}), canonical(b, inverse(imp["ids"]))
    for key in ca:
        assert ca[key] == cb[key], key

    after = recall(new)
    to_old = inverse(imp["ids"])
    for r0, r1 in zip(before, after):
        assert [m["id"] for m in r0["memories"]] == [to_old[m["id"]] for m in r1["memories"]]
        assert np.allclose([m["score"] for m in r0["memories"]], [m["score"] for m in r1["memories"]],
                           rtol=0, atol=1e-6)
        assert [s["text"] for s in r0["semantic"]] == [s["text"] for s in r1["semantic"]]
        assert np.allclose([s["similarity"] for s in r0["semantic"]], [s["similarity"] for s in r1["semantic"]],
                           rtol=0, atol=1e-6)

    # a second import into the same space is refused; nothing changes
    dup = run("--db", str(new), "import", str(e1), code=4)
    assert dup.stderr.strip().startswith("error: space 't' is not empty (")


def write_conversation_turns() -> list[Any]:
    from tests.cases import TURNS

    return TURNS


# ----------------------------------------------------------------------------------- backup under writers
def test_backup_is_consistent_while_processes_write(backend_db, tmp_path, embedder):
    """Real processes: `hela add` in a loop and `hela ask` (learning) write while `hela backup` copies the
    database again and again (a SQLite file, or a Postgres database: its backup is a SQLite file too).
    Every copy passes the integrity checks and holds a point in time: the live turns it has are a prefix of
    the ones added, each with its vector, keyword row and link to the one before."""
    db = backend_db
    with Memory(Config(db=str(db)), embedder=embedder) as m:
        messages_file(tmp_path / "base.jsonl", 12, "base", sessions=2)
        m.ingest([tmp_path / "base.jsonl"], space="shared")
    env = hela_env(tmp_path, db)
    results: list[tuple[str, subprocess.CompletedProcess]] = []
    lock = threading.Lock()
    done = threading.Event()
    n_add = 6

    def writer() -> None:
        for i in range(n_add):
            r = hela(["add", "-s", "shared", "--id", f"live-{i}", f"live note {i} about the bike repair"], env)
            with lock:
                results.append(("add", r))
        done.set()

    def asker() -> None:
        i = 0
        while not done.is_set():
            r = hela(["ask", ["the bike repair", "a dog named Tofu"][i % 2], "-s", "shared", "--no-llm", "--json"],
                     env, timeout=600)
            with lock:
                results.append(("ask", r))
            i += 1

    threads = [threading.Thread(target=writer), threading.Thread(target=asker)]
    for t in threads:
        t.start()
    copies: list[Path] = []
    while not done.is_set() or len(copies) < 2:
        dest = tmp_path / f"copy{len(copies)}.db"
        r = hela(["backup", str(dest), "--json"], env)
        results.append(("backup", r))
        if r.returncode == 0:
            copies.append(dest)
    for t in threads:
        t.join()
    for kind, res in results:
        assert res.returncode == 0, f"{kind}: {res.stderr}"
        assert "Traceback" not in res.stderr and "locked" not in res.stderr, f"{kind}: {res.stderr}"

    seen = set()
    for c in copies:
        assert c.stat().st_mode & 0o777 == 0o600
        with Store(c) as s:
            assert s.integrity_problems() == [], c
            sp = s.require_space("shared")
            live = {n["source_id"]: n["id"] for n in s.iter_nodes(sp.id) if n["source_id"].startswith("live-")}
            k = len(live)
            assert set(live) == {f"live-{i}" for i in range(k)}, c  # a prefix: every add all or nothing
            assert s.count_nodes(sp.id) == 12 + k
            for i in range(1, k):  # each add's link to the previous live turn came with it
                assert s.edge_prior(sp, live[f"live-{i - 1}"], live[f"live-{i}"]) > 0
            seen.add(k)
    print(f"{len(copies)} copies; live turns in them: {sorted(seen)}")
    assert len(copies) >= 2 and max(seen) <= n_add


# ----------------------------------------------------------------------------------- backup (no model)
def _hash_memory(path: Path, hash_embedder, **changes: Any) -> Memory:
    cfg = Config(db=str(path)).replace(**changes) if changes else Config(db=str(path))
    return Memory(cfg, embedder=hash_embedder)


def test_backup_holds_no_deleted_text_and_refuses_bad_destinations(tmp_path, hash_embedder):
    secret = "zebra-pancake-7731 zebrapancake7731"
    with _hash_memory(tmp_path / "a.db", hash_embedder) as m:
        m.ingest([str(Path(__file__).resolve().parents[1] / "sample_data" / "conversation.json")], space="s")
        nid = m.add("s", f"my locker code is {secret}")
        with m.store.transaction():
            m.store.delete_nodes([nid])
        rep = m.backup(tmp_path / "b.db")
        assert rep["integrity"] == "ok" and rep["counts"]["nodes"] == m.store.count_nodes(1)
        data = (tmp_path / "b.db").read_bytes()
        assert secret.encode() not in data  # VACUUM INTO copies live rows only, not freed pages
        assert b"zebrapancake7731" not in data  # nor the keyword-index terms FTS5 keeps after a delete
        with pytest.raises(StoreError, match=r"b\.db: already exists \(use --force to replace it\)$"):
            m.backup(tmp_path / "b.db")
        with pytest.raises(StoreError, match="no such directory"):
            m.backup(tmp_path / "nowhere" / "b.db")
        with pytest.raises(StoreError, match="is a directory"):
            m.backup(tmp_path)
        with pytest.raises(StoreError, match="is the database itself"):
            m.backup(tmp_path / "a.db", force=True)
        assert not list(tmp_path.glob(".*hela-tmp*"))  # no temporary file left behind
    with pytest.raises(StoreError, match="no database yet"):
        _hash_memory(tmp_path / "none.db", hash_embedder).backup(tmp_path / "c.db")
    assert not (tmp_path / "none.db").exists()


# ----------------------------------------------------------------------------------- import (no model)
def _learned_space(path: Path, hash_embedder, **changes: Any) -> Memory:
    """A space with conversation links, learned edges, passages, access counts, a record and a hub state."""
    m = _hash_memory(path, hash_embedder, **{"ingest.passage_chars": 60, **changes})
    m.ingest([str(Path(__file__).resolve().parents[1] / "sample_data" / "conversation.json")], space="s")
    for q in ["Who adopted a dog?", "What did they cook?", "Where is the trip going?"] * 2:
        m.retrieve(q, "s", learn=True)
    s = m.store
    sp = s.require_space("s")
    ids = [n["id"] for n in s.iter_nodes(sp.id)]
    with s.transaction():
        s.insert_semantic(sp.id, "fact", "Jonas", "Jonas adopted a dog.", 0.9, "1 March 2024", ids[1],
                          [ids[1], ids[2]], hash_embedder.embed(["Jonas: Jonas adopted a dog."])[0])
        s.set_hub_state(sp.id, ids[1], [ids[1], ids[2], 99_999], sp.step, "ok")  # 99999: forgotten since
        s.set_consolidated_step(sp.id, sp.step)
    return m


def test_import_round_trip_same_content_and_recall(backend_db, tmp_path, hash_embedder):
    """From a SQLite file into a new space of a fresh database of each backend."""
    with _learned_space(tmp_path / "a.db", hash_embedder) as m:
        sp = m.store.require_space("s")
        a = json.loads(json.dumps(exporting.export_json(m.store, sp, m.config, vectors=True)))
        (tmp_path / "e.json").write_text(json.dumps(a))
        with _hash_memory(backend_db, hash_embedder, **{"ingest.passage_chars": 60}) as m2:
            rep = m2.import_export(tmp_path / "e.json", space="copy")
            b = json.loads(json.dumps(exporting.export_json(m2.store, m2.store.require_space("copy"),
                                                             m2.config, vectors=True)))
            to_old = inverse(rep["ids"])
            ca, cb = canonical(a, {}), canonical(b, to_old)
            ca["space"]["name"] = "copy"
            for key in ca:
                assert ca[key] == cb[key], key
            assert any(n["passages"] for n in a["nodes"]) and any(e["amp"] > 0 for e in a["edges"])
            assert a["space"]["step"] == 6 and next(iter(cb["hubs"].values()))["cluster"][2] == "gone"
            assert [h["cluster"][2] for h in b["hubs"]] == [-1]  # a forgotten id: never a real memory
            for q in ["Who adopted a dog?", "cooking pasta", "the trip"]:
                r0 = m.retrieve(q, "s", learn=False)
                r1 = m2.retrieve(q, "copy", learn=False)
                assert [x["id"] for x in r0.memories] == [to_old[x["id"]] for x in r1.memories]
                assert [x["score"] for x in r0.memories] == pytest.approx([x["score"] for x in r1.memories],
                                                                        abs=1e-6)
                assert [x["text"] for x in r0.semantic] == [x["text"] for x in r1.semantic]
            # learning goes on the same way in both
            m.retrieve("Who adopted a dog?", "s", learn=True)
            m2.retrieve("Who adopted a dog?", "copy", learn=True)
            w0 = {tuple(sorted(e[:2])): e[2] for e in m.store.all_edges(m.store.require_space("s"))}
            w1 = {tuple(sorted((to_old[e[0]], to_old[e[1]]))): e[2]
                  for e in m2.store.all_edges(m2.store.require_space("copy"))}
            assert w0 == w1


def test_import_other_decay_and_older_export_keep_current_weights(backend_db, tmp_path, hash_embedder):
    with _learned_space(tmp_path / "a.db", hash_embedder) as m:
        exp = exporting.export_json(m.store, m.store.require_space("s"), m.config, vectors=True)
    weights = {(e["source"], e["target"]): e["weight"] for e in exp["edges"]}
    old = json.loads(json.dumps(exp))  # an export written before prior / amp / base_step were exported
    for e in old["edges"]:
        del e["prior"], e["amp"]
    del old["space"]["base_step"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(exp))
    for f, decay in (("old.json", 0.995), ("new.json", 0.9)):
        with _hash_memory(backend_db, hash_embedder, **{"hebbian.decay": decay}) as m2:
            rep = m2.import_export(tmp_path / f, space=f"s-{decay}")
            to_old = inverse(rep["ids"])
            got = {(to_old[a], to_old[b]): w for a, b, w in m2.store.all_edges(m2.store.require_space(f"s-{decay}"))}
            assert got.keys() == {tuple(sorted(k)) for k in weights}
            assert all(abs(got[tuple(sorted(k))] - w) < 1e-12 for k, w in weights.items())


def _export(tmp_path: Path, hash_embedder) -> dict[str, Any]:
    with _hash_memory(tmp_path / "src.db", hash_embedder) as m:
        m.ingest([str(Path(__file__).resolve().parents[1] / "sample_data" / "conversation.json")], space="s")
        m.retrieve("Who adopted a dog?", "s", learn=True)
        return json.loads(json.dumps(exporting.export_json(m.store, m.store.require_space("s"), m.config,
                                                            vectors=True)))


def _break(exp: dict[str, Any], how: str) -> Any:
    e = json.loads(json.dumps(exp))
    if how == "text":
        del e["nodes"][3]["text"]
    elif how == "vector":
        e["nodes"][2]["vector"] = e["nodes"][2]["vector"][:10]
    elif how == "edge":
        e["edges"][1]["target"] = 424242
    elif how == "evidence":
        e["semantic"] = [{"kind": "fact", "text": "x", "evidence": [424242], "vector": e["nodes"][0]["vector"]}]
    elif how == "kind":
        e["semantic"] = [{"kind": "opinion", "text": "x", "evidence": [], "vector": e["nodes"][0]["vector"]}]
    elif how == "weight":
        e["edges"][0]["amp"] = -1
    elif how == "format":
        e["format"] = "something-else"
    elif how == "dup":
        e["nodes"][5]["hash"] = e["nodes"][4]["hash"]
    elif how == "ts":   # issue 57: imported with exit 0, then every read of the space exited 70
        e["nodes"][1]["ts"] = 1e308
    elif how == "float32":   # finite as JSON, infinite as the float32 it is stored as
        e["nodes"][0]["vector"] = [1e308] * len(e["nodes"][0]["vector"])
    elif how == "count":
        e["nodes"][2]["access_count"] = 10 ** 30
    elif how == "step":
        e["space"]["step"] = 10 ** 30
    elif how == "surrogate":
        e["nodes"][4]["text"] = "half a pair \ud800 here"
    return e


@pytest.mark.parametrize("how, where", [
    ("text", "nodes[3]: missing 'text'"),
    ("vector", "nodes[2].vector: vector has 10 numbers, the export's embedder has 64"),
    ("edge", "edges[1]: node 424242 is not in the export's nodes"),
    ("evidence", "semantic[0]: evidence 424242 is not in the export's nodes"),
    ("kind", "semantic[0]: unknown kind 'opinion' (one of trait, fact, knowledge)"),
    ("weight", "edges[0]: 'amp' must be a finite number >= 0, got -1"),
    ("format", "format: not a hela export"),
    ("dup", "nodes[5]: same 'hash' as nodes[4] (a memory twice)"),
    ("ts", "nodes[1]: 'ts' must be a time in epoch seconds within the years hela accepts, got 1e+308"),
    ("float32", "nodes[0].vector: a vector's numbers must be finite as 32-bit floats (one overflows)"),
    ("count", "nodes[2]: 'access_count' must be an integer >= 0 within 64 bits"),
    ("step", "space: 'step' must be an integer within 64 bits"),
    ("surrogate", "nodes[4]: 'text' must be a string of text (no lone surrogates)"),
])
def test_import_bad_input_one_line_nothing_written(tmp_path, hash_embedder, how, where):
    f = tmp_path / "a.json"
    f.write_text(json.dumps(_break(_export(tmp_path, hash_embedder), how)))
    target = tmp_path / "target.db"
    if how == "surrogate":
        assert "\\ud800" in f.read_text()   # JSON's escape: the file itself is valid UTF-8
    with pytest.raises(InputError) as e:
        _hash_memory(target, hash_embedder).import_export(f)
    assert str(e.value).startswith(f"{f}: {where}") and "\n" not in str(e.value)
    assert not target.exists()  # checked before the database is created


def test_a_stored_time_no_calendar_holds_is_shown_not_fatal(tmp_path, hash_embedder, monkeypatch):
    """A database an older hela filled from a hostile import (issue 57): its space still lists, and its
    memories still show, with the bad time said as such (exit 0, not 70)."""
    import sqlite3

    db = tmp_path / "old.db"
    with _hash_memory(db, hash_embedder) as m:
        m.add("s", "The deploy key rotates every Monday.", speaker="ana")
    con = sqlite3.connect(db)
    con.execute("UPDATE nodes SET ts = 1e308")
    con.commit()
    con.close()
    monkeypatch.setenv("HELA_DB", str(db))
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    from hela_cli.text.dates import fmt_ts, format_date, format_iso

    assert fmt_ts(1e308) == format_iso(1e308) == format_date(1e308) == "(bad time 1e+308)"
    assert fmt_ts(float("nan")) == "(bad time nan)"
    res = runner.invoke(app, ["spaces"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["memories", "-s", "s"])
    assert res.exit_code == 0 and "deploy key" in res.output and "bad time" in res.output, res.output


def test_import_cli_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("HELA_DB", str(tmp_path / "x.db"))
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    bad = tmp_path / "a.json"
    bad.write_text('{"format": "hela-export",\n "version": 1,,}')
    res = run("import", str(bad), code=2)
    assert res.stderr.strip() == f"error: {bad}: line 2 column 15: not valid JSON (Expecting property name " \
                                 "enclosed in double quotes)"
    res = run("import", str(tmp_path / "missing.json"), code=2)
    assert res.stderr.strip() == f"error: {tmp_path / 'missing.json'}: no such file"
    assert not (tmp_path / "x.db").exists()


def test_import_refusals(tmp_path, hash_embedder):
    exp = _export(tmp_path, hash_embedder)
    f = tmp_path / "e.json"
    f.write_text(json.dumps(exp))
    with _hash_memory(tmp_path / "t.db", hash_embedder) as m:
        m.import_export(f)
        before = Store.file_counts(tmp_path / "t.db")
        with pytest.raises(StoreError, match=r"^space 's' is not empty \(83 memories, \d+ edges\); import into a new or empty space \(-s NAME\)$"):
            m.import_export(f)
        assert Store.file_counts(tmp_path / "t.db") == before
    other = json.loads(json.dumps(exp))
    other["embedder"]["model"] = "someone:else"
    (tmp_path / "o.json").write_text(json.dumps(other))
    with pytest.raises(InputError, match=r"o\.json: embedder: exported with 'someone:else' \(64-d\), the configured "
                                         r"embedder is 'test:hash-64' \(64-d\); import with --reembed"):
        _hash_memory(tmp_path / "u.db", hash_embedder).import_export(tmp_path / "o.json")
    novec = json.loads(json.dumps(exp))
    novec["vectors"] = False
    for n in novec["nodes"]:
        n.pop("vector"), n.pop("passages")
    (tmp_path / "nv.json").write_text(json.dumps(novec))
    with pytest.raises(InputError, match=r"nv\.json: vectors: the export holds no vectors"):
        _hash_memory(tmp_path / "v.db", hash_embedder).import_export(tmp_path / "nv.json")
    with _hash_memory(tmp_path / "v.db", hash_embedder) as m:  # --reembed: the same vectors ingest made
        rep = m.import_export(tmp_path / "nv.json", reembed=True)
        sp = m.store.require_space("s")
        got = m.store.node_vectors(list(rep["ids"].values()))
        want = {rep["ids"][str(n["id"])]: np.asarray(n["vector"], dtype=np.float32) for n in exp["nodes"]}
        assert all(np.array_equal(got[i], want[i]) for i in want) and m.store.integrity_problems() == []
        assert sp.step == exp["space"]["step"]


def test_import_reembed_embeds_like_ingest(tmp_path, hash_embedder, embedder):
    """An export from another embedder (the hash one) imported with --reembed into a file on the real
    embedder: every memory, passage and record vector is what ingest / consolidation would have made."""
    conv = str(Path(__file__).resolve().parents[1] / "sample_data" / "conversation.json")
    with _learned_space(tmp_path / "a.db", hash_embedder) as m:
        exp = exporting.export_json(m.store, m.store.require_space("s"), m.config, vectors=True)
    (tmp_path / "e.json").write_text(json.dumps(exp))
    cfg = Config(db=str(tmp_path / "r.db")).replace(**{"ingest.passage_chars": 60})
    with Memory(cfg, embedder=embedder) as m:
        with pytest.raises(InputError, match="import with --reembed"):
            m.import_export(tmp_path / "e.json")
        rep = m.import_export(tmp_path / "e.json", reembed=True)
        assert rep["reembedded"] and rep["embedder"]["model"] == embedder.model_id
        sp = m.store.require_space("s")
        with Memory(Config(db=str(tmp_path / "i.db")).replace(**{"ingest.passage_chars": 60}),
                    embedder=embedder) as ref:
            ref.ingest([conv], space="s")
            rsp = ref.store.require_space("s")
            by_hash = {n["hash"]: n["id"] for n in ref.store.iter_nodes(rsp.id)}
            mine = {n["hash"]: n["id"] for n in m.store.iter_nodes(sp.id)}
            assert by_hash.keys() == mine.keys()
            a = ref.store.node_vectors(list(by_hash.values()))
            b = m.store.node_vectors(list(mine.values()))
            assert all(np.allclose(a[by_hash[h]], b[mine[h]], atol=1e-6) for h in by_hash)
            pa = ref.store.passage_vectors(list(by_hash.values()))
            pb = m.store.passage_vectors(list(mine.values()))
            assert pa and {h for h in by_hash if by_hash[h] in pa} == {h for h in mine if mine[h] in pb}
            rec = m.store.get_semantic(space_id=sp.id)[0]
            assert np.allclose(m.store.semantic_vector(rec["id"]),
                               embedder.embed([f"{rec['subject']}: {rec['text']}"])[0], atol=1e-6)
