"""The privacy promise, end to end with real processes and real models: a secret written through
``hela add``, asked about (asks log, learned edges), consolidated (the chat model distils hubs), then
deleted; afterwards the database file and its WAL hold no byte of it. Also: the CLI's refusals and exit
codes, the MCP tools through a real server, and a delete racing asks, a consolidation and a forget (these
three on a SQLite file and on a Postgres database: ``backend_db``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from hela_cli.mechanics.consolidate import Record, store_records
from hela_cli.store import Store
from tests.reliability import PY, REPO, hela, hela_env
from tests.support import call_tool, mcp_params

SECRET = "8675-QUASAR-ZEBRA"
TURNS = [
    ("user", "I moved to Lisbon last spring and I love the trams"),
    ("assistant", "Lisbon is lovely; the tram 28 goes through Alfama"),
    ("user", f"Please remember my bank PIN, it is {SECRET}"),
    ("assistant", "I will remember your bank PIN"),
    ("user", "My sister Marta visits me in June"),
    ("user", "I adopted a dog called Pixel from the shelter"),
]


def _bytes(db: Path) -> bytes:
    wal = Path(str(db) + "-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_secret_is_gone_from_every_table_and_the_file_bytes(tmp_path, embedder):
    db = tmp_path / "p.db"
    env = hela_env(tmp_path, db, HELA_CONSOLIDATION_DELTA_HUB="0.05", HELA_CONSOLIDATION_AUTO="false")
    for speaker, turn in TURNS:
        r = hela(["add", "-s", "me", "--speaker", speaker, "--session", "s1", turn], env)
        assert r.returncode == 0, r.stderr
    for q in ("What is my bank PIN?", "Tell me my bank PIN number", "Where did I move to?"):
        r = hela(["ask", "-s", "me", "--json", q], env)
        assert r.returncode == 0, r.stderr
    with Store(db) as s:
        sp = s.require_space("me")
        secret_id = s.list_nodes(sp.id, contains=SECRET)[0]["id"]
        assert s.db.execute("SELECT count(*) FROM asks a WHERE EXISTS (SELECT 1 FROM json_each(a.memories) "
                            "WHERE value = ?)", (secret_id,)).fetchone()[0] >= 2
        assert s.db.execute("SELECT count(*) FROM edges WHERE amp > 0 AND (a = ? OR b = ?)",
                            (secret_id, secret_id)).fetchone()[0] >= 1
    r = hela(["consolidate", "-s", "me", "--json"], env, timeout=900)
    assert r.returncode == 0, r.stderr
    with Store(db) as s:
        sp = s.require_space("me")
        hubs = s.hub_state(sp.id)
        assert any(secret_id in h["cluster"] for h in hubs.values())  # consolidation went over its cluster
        if not s.semantic_citing(secret_id):
            # SmolLM2-135M mostly fails to distil this cluster ("text too short"): write the record it should
            # have written through consolidation's own write path, so that deletion is tested against one
            rec = Record("fact", "user", f"The user's bank PIN is {SECRET}.", 0.9, None, [secret_id])
            with s.transaction():
                store_records(s, sp, secret_id, [rec], embedder.embed([rec.embed_text()]),
                              merge_similarity=0.99)
                s.set_hub_state(sp.id, secret_id, [secret_id], sp.step, "ok")
        citing = s.semantic_citing(secret_id)
        assert citing
    assert SECRET.encode() in _bytes(db)
    assert SECRET.lower().split("-")[1].encode() in _bytes(db)   # its keyword "quasar" in the FTS index

    r = hela(["delete", "-s", "me", "--contains", "quasar"], env)   # a filter, no tty, no --yes: refused
    assert r.returncode == 2 and "add --yes" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = hela(["delete", "-s", "me", "--contains", "quasar", "--yes", "--json"], env)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["deleted"] == [secret_id] and set(citing) <= set(rep["semantic"]) and rep["asks"] >= 2
    assert rep["scrub"]["verified"]

    data = _bytes(db)
    for needle in (SECRET, SECRET.lower(), "QUASAR", "quasar", "ZEBRA-", "8675-"):
        assert needle.encode() not in data, needle
    with Store(db) as s:
        sp = s.require_space("me")
        assert s.integrity_problems() == []
        assert not s.list_nodes(sp.id, contains="quasar")
        assert all(SECRET not in (a["answer"] or "") and secret_id not in a["memories"] for a in s.asks(sp.id, 100))
        assert all(secret_id not in r["evidence"] for r in s.get_semantic(space_id=sp.id))
        assert all(secret_id not in h["cluster"] for h in s.hub_state(sp.id).values())  # may distil again
        assert len(s.list_nodes(sp.id)) == len(TURNS) - 1
    r = hela(["export", "-s", "me", "--format", "json"], env)
    assert r.returncode == 0 and "QUASAR" not in r.stdout.upper()
    r = hela(["ask", "-s", "me", "--no-llm", "--json", "What is my bank PIN?"], env)
    assert r.returncode == 0 and "QUASAR" not in r.stdout


def test_cli_correct_commands_and_exit_codes(backend_db, tmp_path):
    db = backend_db
    env = hela_env(tmp_path, db, COLUMNS="80")
    for i, (speaker, turn) in enumerate(TURNS):
        assert hela(["add", "-s", "me", "--speaker", speaker, "--id", f"t{i}", "--time",
                     f"2024-05-0{i + 1}T10:00:00Z", turn], env).returncode == 0
    r = hela(["memories", "-s", "me"], env)
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and len(lines) == len(TURNS) and all(len(line) <= 80 for line in lines)
    assert "Pixel" in lines[0] and "Lisbon" in lines[-1]          # newest first
    r = hela(["memories", "-s", "me", "--speaker", "assistant", "--json"], env)
    assert [m["source_id"] for m in json.loads(r.stdout)] == ["t3", "t1"]
    r = hela(["memories", "-s", "me", "--since", "2024-05-05", "--limit", "1", "--json"], env)
    assert [m["source_id"] for m in json.loads(r.stdout)] == ["t5"]
    r = hela(["edit", "-s", "me", "--source-id", "t4", "My sister Marta visits me in July"], env)
    assert r.returncode == 0, r.stderr
    r = hela(["history", "-s", "me", "--source-id", "t4", "--json"], env)
    assert [v["text"][-4:] for v in json.loads(r.stdout)["versions"]] == ["June", "July"]
    r = hela(["ask", "-s", "me", "--no-llm", "--no-learn", "--json", "--speaker", "assistant", "Lisbon trams"], env)
    assert r.returncode == 0 and {m["speaker"] for m in json.loads(r.stdout)["memories"]} == {"assistant"}
    for args, code, needle in ((["delete", "-s", "me", "4242"], 2, "no memory 4242 in space 'me'"),
                               (["delete", "-s", "me", "--source-id", "nope"], 2, "source id 'nope'"),
                               (["edit", "-s", "me", "1", " "], 2, "empty"),
                               (["history", "-s", "me", "999"], 2, "no memory 999"),
                               (["delete", "-s", "nospace", "1"], 4, "unknown space"),
                               (["spaces", "drop", "me"], 2, "--yes")):
        r = hela(args, env)
        assert r.returncode == code and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r)
    assert len(json.loads(hela(["memories", "-s", "me", "--json"], env).stdout)) == len(TURNS)  # nothing changed
    r = hela(["delete", "-s", "me", "--speaker", "nobody", "--yes"], env)
    assert r.returncode == 0 and "nothing deleted" in r.stdout
    r = hela(["delete", "-s", "me", "1", "--source-id", "t5"], env)
    assert r.returncode == 0 and "deleted 2 memories" in r.stdout
    assert hela(["spaces", "rename", "me", "you"], env).returncode == 0
    assert hela(["spaces", "drop", "you", "--yes"], env).returncode == 0
    assert json.loads(hela(["spaces", "--json"], env).stdout) == []


def test_mcp_server_memories_update_delete(backend_db, tmp_path):
    db = backend_db
    postgres = db.startswith("postgresql://")
    errlog = (tmp_path / "server.err").open("w")

    async def main() -> None:
        async with stdio_client(mcp_params(tmp_path, db), errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert {"speaker", "session", "since", "until"} <= set(tools["recall"].input_schema["properties"])
            assert {"ids", "source_ids", "confirm"} <= set(tools["delete"].input_schema["properties"])
            turns = [{"speaker": sp, "text": t, "id": f"t{i}"} for i, (sp, t) in enumerate(TURNS)]
            err, out = await call_tool(s, "remember", {"space": "me", "turns": turns})
            assert not err
            ids = dict(zip([t["id"] for t in turns], out["added"]))
            err, out = await call_tool(s, "recall", {"space": "me", "query": "bank PIN"})
            assert ids["t2"] in [m["id"] for m in out["memories"]]      # the server's index holds it
            err, out = await call_tool(s, "memories", {"space": "me", "speaker": "assistant"})
            assert not err and [m["id"] for m in out["memories"]] == [ids["t3"], ids["t1"]]
            err, out = await call_tool(s, "update", {"space": "me", "source_id": "t5", "text": "I adopted a cat"})
            assert not err and out["previous"].endswith("shelter")
            err, msg = await call_tool(s, "delete", {"space": "me", "contains": "PIN"})
            assert err and "confirm" in msg
            err, msg = await call_tool(s, "delete", {"space": "me", "ids": [999]})
            assert err and msg == "no memory 999 in space 'me'"
            err, out = await call_tool(s, "delete", {"space": "me", "contains": "PIN", "confirm": True})
            assert not err and sorted(out["deleted"]) == sorted([ids["t2"], ids["t3"]])
            assert out["bytes_verified"] is (None if postgres else True)   # a server's files: not hela's to read
            err, out = await call_tool(s, "recall", {"space": "me", "query": "bank PIN", "k": 20})
            assert not ({ids["t2"], ids["t3"]} & {m["id"] for m in out["memories"]})   # dropped at once
            # a delete from another process: the server's next recall no longer returns it
            r = hela(["delete", "-s", "me", "--source-id", "t0"], hela_env(tmp_path, db))
            assert r.returncode == 0, r.stderr
            err, out = await call_tool(s, "recall", {"space": "me", "query": "Lisbon trams", "k": 20})
            assert ids["t0"] not in {m["id"] for m in out["memories"]}

    anyio.run(main)
    if not postgres:
        assert SECRET.encode() not in _bytes(Path(db))




def test_delete_racing_asks_consolidate_and_forget(backend_db, tmp_path):
    db = backend_db
    env = hela_env(tmp_path, db, HELA_CONSOLIDATION_DELTA_HUB="0.05", HELA_CONSOLIDATION_AUTO="false")
    assert hela(["ingest", str(REPO / "sample_data" / "conversation.json")], env).returncode == 0
    with Store(db) as s:
        sp = s.require_space("demo")
        all_ids = [n["id"] for n in s.list_nodes(sp.id)]
    victims = all_ids[::7]
    procs = [subprocess.Popen([PY, "-m", "hela_cli", "ask", "-s", "demo", "--no-llm", q], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=str(REPO))
             for q in ("What did they cook?", "Where did Jonas go?", "What about the dog?")]
    procs.append(subprocess.Popen([PY, "-m", "hela_cli", "consolidate", "-s", "demo"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=str(REPO)))
    procs.append(subprocess.Popen([PY, "-m", "hela_cli", "forget", "-s", "demo"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=str(REPO)))
    deletes = [subprocess.Popen([PY, "-m", "hela_cli", "delete", "-s", "demo", *map(str, victims[i::2])], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO))
               for i in range(2)]
    for p in procs + deletes:
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, err
    with Store(db) as s:
        sp = s.require_space("demo")
        assert s.integrity_problems() == []
        left = {n["id"] for n in s.list_nodes(sp.id)}
        assert left == set(all_ids) - set(victims)          # nothing else lost
        assert all(not set(r["evidence"]) & set(victims) for r in s.get_semantic(space_id=sp.id))
        assert all(not set(a["memories"]) & set(victims) for a in s.asks(sp.id, 1000))
        assert s.db.execute("SELECT count(*) FROM hubs h WHERE " + s.dialect.json_holds("h.cluster", ",".join(
            map(str, victims)))).fetchone()[0] == 0
