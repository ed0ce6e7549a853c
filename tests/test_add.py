"""``hela add`` / ``Memory.add``: turns written one at a time, stored exactly as ingest stores them.

Linking (session rule), idempotent source ids, stdin batches all-or-nothing with the failing line named,
and real processes adding while an ingest and ``ask`` loops run on the same file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import threading

import numpy as np
import pytest
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.errors import InputError
from hela_cli.text.keywords import keywords
from hela_cli.memory import Memory
from tests.reliability import PY, REPO, hela, hela_env, messages_file, popen_hela

runner = CliRunner()
T0 = 1_714_557_600.0  # 2024-05-01 10:00 UTC


def _edges(mem: Memory, space: str) -> dict[tuple[int, int], float]:
    sp = mem.store.require_space(space)
    rows = mem.store.db.execute("SELECT a, b FROM edges WHERE space_id=?", (sp.id,)).fetchall()
    return {(a, b): mem.store.edge_weight(sp, a, b) for a, b in rows}


def test_add_links_same_session_and_embeds_like_ingest(tmp_path, embedder):
    turns = [("Alice", "I adopted a grey cat called Miso last week"), ("Bob", "Lovely! How old is Miso?"),
             ("Alice", "Two years old, from the shelter on Pine Street")]
    with Memory(Config(db=str(tmp_path / "a.db")), embedder=embedder) as mem:
        ids = [mem.add("live", text, speaker=who, time=T0 + 60 * i) for i, (who, text) in enumerate(turns)]
        assert ids == sorted(ids) and len(set(ids)) == 3
        w = mem.config.ingest.initial_weight
        assert _edges(mem, "live") == {(ids[0], ids[1]): pytest.approx(w), (ids[1], ids[2]): pytest.approx(w)}

        # the same turns through ingest: same vectors (turn + previous turn), keywords and FTS rows
        f = tmp_path / "chat.jsonl"
        f.write_text("".join(json.dumps({"role": who, "content": text, "timestamp": T0 + 60 * i}) + "\n"
                             for i, (who, text) in enumerate(turns)), encoding="utf-8")
        mem.ingest([f], space="batch")
        live, batch = mem.store.require_space("live"), mem.store.require_space("batch")
        batch_ids = [n["id"] for n in mem.store.iter_nodes(batch.id)]
        va, vb = mem.store.node_vectors(ids), mem.store.node_vectors(batch_ids)
        for a, b in zip(ids, batch_ids):
            assert float(np.dot(va[a], vb[b])) == pytest.approx(1.0, abs=1e-4)
        expect = embedder.embed([f"Alice: {turns[0][1]}\nBob: {turns[1][1]}"])[0]
        assert float(np.dot(va[ids[1]], expect)) == pytest.approx(1.0, abs=1e-4)
        node = mem.store.get_node(ids[2])
        assert node["keywords"] == keywords(turns[2][1]) and node["speaker"] == "Alice"
        assert node["ts"] == T0 + 120 and node["source"] == "hela add"
        assert ids[2] in dict(mem.store.keyword_search(live.id, keywords("shelter Pine"), 10))

        # gap rule: two days later is a new session (no link); an explicit session links to its own newest turn
        late = mem.add("live", "Back from the trip to Porto", speaker="Alice", time=T0 + 2 * 86400)
        s1 = mem.add("live", "first of s9", session="s9", time=T0 + 2 * 86400 + 10)
        s2 = mem.add("live", "second of s9", session="s9", time=T0 + 2 * 86400 + 20)
        same = mem.add("live", "still the Porto chat", time=T0 + 2 * 86400 + 30)  # newest is s9: joins it
        edges = _edges(mem, "live")
        assert (ids[2], late) not in edges
        assert (s1, s2) in edges and (s2, same) in edges and (late, s1) not in edges
        assert mem.store.get_node(late)["session"] != mem.store.get_node(ids[2])["session"]

        # retrieval finds an added turn
        res = mem.retrieve("What is the name of Alice's cat?", "live", learn=False)
        assert ids[0] in [m["id"] for m in res.memories[:3]]


def test_add_source_id_idempotent_and_repeats_without_id(tmp_path, hash_embedder):
    with Memory(Config(db=str(tmp_path / "a.db")), embedder=hash_embedder) as mem:
        a = mem.add("s", "Meeting moved to Friday", source_id="msg-1")
        assert mem.add("s", "Meeting moved to Friday", source_id="msg-1") == a
        rep = mem.add_batch("s", [{"text": "x", "id": "msg-1"}, {"text": "new", "id": "msg-2"},
                                  {"text": "again", "id": "msg-2"}])
        assert rep["skipped"] == [{"id": a, "source_id": "msg-1"}, {"id": rep["added"][0], "source_id": "msg-2"}]
        assert len(rep["added"]) == 1 and rep["ids"] == [a, rep["added"][0], rep["added"][0]]
        x, y = mem.add("s", "ok"), mem.add("s", "ok")  # a person can say the same thing twice
        assert x != y
        assert mem.store.count_nodes(mem.store.require_space("s").id) == 4
        with pytest.raises(InputError, match="turn 2: missing 'text'"):
            mem.add_many("s", [{"text": "fine"}, {"speaker": "Bob"}])
        with pytest.raises(InputError, match="turn 1: cannot parse date/time"):
            mem.add("s", "hi", time="not a date")
        assert mem.store.count_nodes(mem.store.require_space("s").id) == 4


def _cli(args, input=None):
    return runner.invoke(app, list(args), input=input)


def test_cli_add_text_id_json(cli_env):
    first = _cli(["add", "-s", "me", "--speaker", "Alice", "--time", "2024-05-01 10:00", "I", "like", "tea"])
    assert first.exit_code == 0, first.output
    nid = int(first.stdout.strip())
    out = json.loads(_cli(["add", "-s", "me", "--id", "k1", "--json", "Second", "turn"]).stdout)
    assert out == {"space": "me", "added": [nid + 1], "skipped": []}
    again = _cli(["add", "-s", "me", "--id", "k1", "--json", "Second", "turn"])
    assert again.exit_code == 0
    assert json.loads(again.stdout) == {"space": "me", "added": [], "skipped": [{"id": nid + 1, "source_id": "k1"}]}
    bad = _cli(["add", "-s", "me", "--time", "yesterday-ish", "hi"])
    assert bad.exit_code == 2 and bad.stderr.strip().splitlines() == ["error: --time: cannot parse date/time 'yesterday-ish'"]
    with Memory(Config(db=os.environ["HELA_DB"])) as mem:   # the test's database, on either backend
        nodes = list(mem.store.iter_nodes(mem.store.require_space("me").id))
    assert [n["text"] for n in nodes] == ["I like tea", "Second turn"]
    assert nodes[0]["speaker"] == "Alice" and nodes[0]["time_str"] == "2024-05-01 10:00"


def test_hela_space_sets_the_default_space_and_a_flag_wins(cli_env, monkeypatch):
    monkeypatch.setenv("HELA_SPACE", "alice")
    assert _cli(["add", "I", "like", "tea"]).exit_code == 0
    assert _cli(["add", "-s", "bob", "Bob", "likes", "coffee"]).exit_code == 0
    listed = json.loads(_cli(["memories", "--json"]).stdout)
    assert [m["text"] for m in listed] == ["I like tea"]
    monkeypatch.delenv("HELA_SPACE")
    unknown = _cli(["memories"])
    assert unknown.exit_code != 0 and "unknown space 'default'" in unknown.stderr


def test_cli_add_stdin_all_or_nothing(cli_env):
    if os.environ["HELA_DB"].startswith("postgresql"):   # HELA_TEST_BACKEND=postgres
        pytest.skip("checks that no SQLite file is created; on Postgres test_postgres.py checks no schema is")
    db = cli_env / "hela.db"
    lines = [{"speaker": "Ana", "text": "We should repaint the kitchen", "time": "2024-06-01T09:00:00Z", "id": "a1"},
             {"role": "assistant", "content": "Which colour?", "time": 1717232460},
             {"speaker": "Ana", "txt": "typo key"}]
    stdin = "".join(json.dumps(x) + "\n" for x in lines)
    res = _cli(["add", "-s", "home", "-"], input=stdin)
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == ["error: <stdin>:3: missing 'text' (or 'content')"]
    assert not db.exists()  # nothing written, not even an empty database
    broken = _cli(["add", "-s", "home", "-"], input=json.dumps(lines[0]) + "\n\n" + '{"text": "cut\n')
    assert broken.exit_code == 2 and broken.stderr.startswith("error: <stdin>:3: not valid JSON")
    assert not db.exists()

    lines[2] = {"speaker": "Ana", "text": "Olive green", "session": "kitchen"}
    res = _cli(["add", "-s", "home", "-", "--json"], input="".join(json.dumps(x) + "\n" for x in lines) + "\n")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert len(out["added"]) == 3 and out["skipped"] == []
    with Memory(Config(db=str(db))) as mem:
        sp = mem.store.require_space("home")
        nodes = {n["id"]: n for n in mem.store.iter_nodes(sp.id)}
        a, b, c = out["added"]
        assert nodes[b]["speaker"] == "assistant" and nodes[b]["role"] == "assistant"
        assert nodes[a]["session"] == nodes[b]["session"] != "kitchen" == nodes[c]["session"]
        assert set(_edges(mem, "home")) == {(a, b)}
    # the whole batch again: every id'd line is a duplicate, the others are new
    res = _cli(["add", "-s", "home", "-", "--json"], input=json.dumps(lines[0]) + "\n")
    assert json.loads(res.stdout)["skipped"] == [{"id": a, "source_id": "a1"}]
    assert _cli(["add", "-s", "home", "-", "--speaker", "x"], input="{}").exit_code == 2


def test_add_concurrent_with_ingest_and_ask(tmp_path):
    """Real processes: `hela add` in a loop (single turns and a stdin batch) while `hela ingest` writes a file in
    small batches and `hela ask --no-llm` loops, all on one database: every turn stored once, no error."""
    db = tmp_path / "shared.db"
    env = hela_env(tmp_path, db, HELA_INGEST_BATCH_SIZE="4")
    seed = hela(["add", "-s", "shared", "--id", "seed", "We planted tomatoes in the garden"], env)
    assert seed.returncode == 0, seed.stderr
    big = tmp_path / "big.jsonl"
    rows = messages_file(big, 80, "ing")
    results: list[tuple[str, subprocess.CompletedProcess]] = []
    lock = threading.Lock()
    done = threading.Event()

    def ingest() -> None:
        proc = popen_hela(["ingest", str(big), "--space", "shared", "--json"], env)
        out, err = proc.communicate(timeout=900)
        with lock:
            results.append(("ingest", subprocess.CompletedProcess(proc.args, proc.returncode, out, err)))
        done.set()

    def ask() -> None:
        i = 0
        while not done.is_set() or i < 2:
            r = hela(["ask", ["Who planted tomatoes?", "the dog named Tofu"][i % 2], "-s", "shared", "--no-llm",
                      "--json"], env, timeout=600)
            with lock:
                results.append(("ask", r))
            i += 1

    threads = [threading.Thread(target=ingest), threading.Thread(target=ask)]
    for t in threads:
        t.start()
    added: list[int] = []
    for i in range(6):
        r = hela(["add", "-s", "shared", "--id", f"live-{i}", "--json", f"live note {i} about the bike repair"], env)
        results.append(("add", r))
        if r.returncode == 0:
            added += json.loads(r.stdout)["added"]
    batch = "".join(json.dumps({"speaker": "Ana", "text": f"batch line {i}", "id": f"b-{i}"}) + "\n" for i in range(5))
    r = subprocess.run([PY, "-m", "hela_cli", "add", "-s", "shared", "-", "--json"], input=batch, env=env,
                       capture_output=True, text=True, timeout=600, cwd=str(REPO))
    results.append(("add-stdin", r))
    if r.returncode == 0:
        added += json.loads(r.stdout)["added"]
    for t in threads:
        t.join()

    for kind, res in results:
        assert res.returncode == 0, f"{kind}: {res.stderr}"
        assert "locked" not in res.stderr and "Traceback" not in res.stderr, f"{kind}: {res.stderr}"
    assert sum(1 for k, _ in results if k == "ask") >= 2
    assert len(added) == len(set(added)) == 11
    con = sqlite3.connect(db)
    src = [r[0] for r in con.execute("SELECT source_id FROM nodes")]
    con.close()
    assert sorted(src) == sorted(["seed", *[f"live-{i}" for i in range(6)], *[f"b-{i}" for i in range(5)],
                                  *[r["id"] for r in rows]])


@pytest.mark.parametrize("args, stdin, code, line", [
    (["add", "-s", "", "hi"], None, 4, "error: invalid space name '' (1-200 characters, no control characters)"),
    (["add", "-s", "x", "   "], None, 2, "error: hela add: 'text' is empty"),
    (["add", "-s", "x", "-"], "[1, 2]\n", 2, "error: <stdin>:1: expected a JSON object with 'text', not list"),
    (["add", "-s", "x", "-"], '{"text": "a", "time": true}\n', 2,
     "error: <stdin>:1: time must be a date string or epoch seconds, not bool"),
    (["add", "-s", "x", "-"], '{"text": "a", "time": "9999-01-01"}\n', 2, "error: <stdin>:1: year 9999 is outside 1900..2200"),
    (["add", "-s", "x", "-"], '{"text": "a", "speaker": 7}\n', 2, "error: <stdin>:1: 'speaker' must be a string, not int"),
    (["add", "-s", "x", "-"], "\n\n", 2, "error: <stdin>: no turns to add"),
])
def test_cli_add_refusals_write_nothing(bare_cli_env, args, stdin, code, line):
    res = _cli(args, input=stdin)
    assert res.exit_code == code and res.stderr.strip().splitlines() == [line]
    assert not (bare_cli_env / "hela.db").exists()


def test_cli_add_model_fault_writes_nothing(bare_cli_env, monkeypatch):
    cli_env = bare_cli_env
    bad = cli_env / "bad.gguf"
    bad.write_bytes(b"not a model")
    monkeypatch.setenv("HELA_MODELS_EMBEDDER", str(bad))
    res = _cli(["add", "-s", "x", "hello"])
    assert res.exit_code == 3 and res.stderr.startswith(f"error: {bad}:")
    assert not (cli_env / "hela.db").exists()


def test_parse_time_forms():
    from datetime import datetime, timezone

    from hela_cli.text.dates import parse_time

    assert parse_time("2024-05-01 10:00", "t") == (T0, "2024-05-01 10:00")
    assert parse_time("2024-05-01T12:00:00+02:00", "t")[0] == T0
    assert parse_time("1714557600", "t") == (T0, "2024-05-01T10:00:00Z") == parse_time(T0, "t")
    assert parse_time(datetime(2024, 5, 1, 10), "t") == (T0, "2024-05-01T10:00:00Z")
    assert parse_time(datetime(2024, 5, 1, 10, tzinfo=timezone.utc), "t")[0] == T0
    with pytest.raises(InputError, match="^t: cannot parse date/time 'soonish'$"):
        parse_time("soonish", "t")


def test_add_links_a_rare_shared_keyword_across_sessions(tmp_path, hash_embedder):
    cfg = Config(db=str(tmp_path / "k.db")).replace(**{"ingest.keyword_link_min_score": 0.0})
    with Memory(cfg, embedder=hash_embedder) as mem:
        a = mem.add("live", "We booked the ferry to Stromboli", speaker="Alice", session="s1", time=T0)
        mem.add("live", "Nice, when do you leave?", speaker="Bob", session="s1", time=T0 + 60)
        other = mem.add("live", "Lunch was fine today", speaker="Bob", session="s2", time=T0 + 86400)
        b = mem.add("live", "Stromboli was loud and wonderful", speaker="Alice", session="s3", time=T0 + 9 * 86400)
        edges = _edges(mem, "live")
        assert edges[(a, b)] == pytest.approx(cfg.ingest.keyword_link_weight)   # "stromboli": s1 <-> s3
        assert (other, b) not in edges
        assert mem.store.integrity_problems() == []
