"""Crashes (issue 6): ``hela ingest``, ``hela forget --apply`` and ``hela consolidate`` killed with SIGKILL
at random moments.

* ingest: after every kill the database opens, passes ``PRAGMA integrity_check`` and the cross-table
  checks, and holds only whole batches: the stored turns of each conversation are a prefix of whole
  ingest batches (conversations in file order), with exactly the consecutive-turn links among them.
  Re-running the same ingest then yields exactly the full content once. Kills are chained: a trial may
  kill an ingest that is resuming an earlier killed one. ~3 trials in the normal suite, 24 in ``-m slow``.
* forget --apply: all candidates are gone (with their vectors, keyword rows, edges, and the evidence
  links of semantic records, counted) or none is; a re-run completes. 2 trials / 20 in ``-m slow``.
* consolidate: a semantic record exists only with its vector, its evidence and its hub's ``ok`` state
  (one transaction per hub); a re-run completes and does not redo committed hubs. ``-m slow`` only.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from hela_cli.store import Store
from tests.reliability import hela, hela_env, locomo_file, popen_hela

BATCH = 4
SAMPLES = {"conv-a": 18, "conv-b": 10}  # 2 sessions each


def _stored(db: Path) -> tuple[dict[str, list[str]], int]:
    """``({space: [dia_id, ...]}, edge count)`` after checking the database is whole."""
    with Store(db) as s:  # opens: migrations, WAL recovery
        assert s.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert s.integrity_problems() == []
        out = {}
        for sp in s.spaces():
            out[sp["name"]] = [n["source_id"] for n in s.iter_nodes(sp["id"])]
            dup = s.db.execute("SELECT count(*) - count(DISTINCT hash) FROM nodes WHERE space_id=?",
                               (sp["id"],)).fetchone()[0]
            assert dup == 0
        edges = s.db.execute("SELECT count(*) FROM edges").fetchone()[0]
    return out, edges


def _check_whole_batches(db: Path, ids: dict[str, list[str]]) -> int:
    stored, edges = _stored(db)
    expected_edges = 0
    complete_so_far = True
    for sid, all_ids in ids.items():  # conversations are ingested in file order
        have = stored.get(sid, [])
        n = len(have)
        if n:
            assert complete_so_far, f"{sid} started before the previous conversation was complete"
        assert sorted(have) == sorted(all_ids[:n]), f"{sid}: not a prefix of the conversation"
        assert n == len(all_ids) or n % BATCH == 0, f"{sid}: {n} turns is not a whole number of batches"
        complete_so_far = n == len(all_ids)
        sessions = {d.split(":")[0] for d in all_ids[:n]}
        expected_edges += n - len(sessions)
    assert edges == expected_edges, "consecutive-turn links do not match the stored turns"
    return sum(len(v) for v in stored.values())


def _node_count(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT count(*) FROM nodes").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _kill_trials(tmp_path: Path, trials: int, seed: int, again: bool = False) -> list[int]:
    rng = random.Random(seed)
    src = tmp_path / "locomo.json"
    ids = locomo_file(src, SAMPLES)
    total = sum(len(v) for v in ids.values())
    kept = []
    db = None
    for t in range(trials):
        if db is None or rng.random() < 0.5:  # a fresh database, or resume the killed one
            db = tmp_path / f"crash{t}.db"
        env = hela_env(tmp_path, db, HELA_INGEST_BATCH_SIZE=str(BATCH))
        before = _node_count(db)
        proc = popen_hela(["ingest", str(src), "--json"], env)
        mode = rng.random()
        if mode < 0.25:  # anywhere: start-up, model load, first batches
            time.sleep(rng.uniform(0.0, 3.0))
        else:  # once a random number of turns were written, plus jitter (mid-embedding / mid-commit)
            target = before + rng.randint(1, max(1, total - before - 1))
            deadline = time.monotonic() + 120
            while proc.poll() is None and _node_count(db) < target and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.05))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        n = _check_whole_batches(db, ids) if db.exists() else 0
        kept.append(n)
    # re-running the same ingest completes every database exactly once
    for d in sorted(tmp_path.glob("crash*.db")):
        env = hela_env(tmp_path, d, HELA_INGEST_BATCH_SIZE=str(BATCH))
        before = _node_count(d)
        res = hela(["ingest", str(src), "--json"], env)
        assert res.returncode == 0 and res.stderr.strip() == "", res.stderr
        out = json.loads(res.stdout)
        assert out["nodes_added"] == total - before and out["skipped_duplicates"] == before
        assert _check_whole_batches(d, ids) == total
    if again:  # and once more: nothing new
        out = json.loads(hela(["ingest", str(src), "--json"], env).stdout)
        assert out["nodes_added"] == 0 and out["skipped_duplicates"] == total
    return kept


def test_sigkill_ingest_short(tmp_path):
    _kill_trials(tmp_path, trials=3, seed=6)


@pytest.mark.slow
def test_sigkill_ingest_many(tmp_path):
    kept = _kill_trials(tmp_path, trials=24, seed=2024, again=True)
    print(f"\nturns kept after each of {len(kept)} kills: {kept}")
    assert len(kept) >= 20


# ----------------------------------------------------------------------------------- forget --apply
N_FORGET, N_RECENT = 1500, 10
MINILM_ID = "minilm:all-MiniLM-L6-v2-f16.gguf"


@pytest.fixture(scope="module")
def forget_db(tmp_path_factory) -> Path:
    """A space of 1500 old, never-used memories (all candidates) and 10 recent linked ones; two semantic
    records cite old memories (their evidence must be unlinked and counted, or untouched)."""
    import numpy as np

    db = tmp_path_factory.mktemp("forget") / "f.db"
    rng = np.random.default_rng(0)
    vec = rng.normal(size=(N_FORGET, 384)).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    with Store(db) as s:
        s.bind_embedder(MINILM_ID, 384)
        sp = s.ensure_space("f")
        old = N_FORGET - N_RECENT
        rows = [dict(text=f"memory {i}", speaker="A", ts=(1.6e9 + 60 * i if i < old else 1.7e9 + i),
                     keywords=[f"kw{i}"], ord=i, hash=f"h{i}", session="s1") for i in range(N_FORGET)]
        with s.transaction():
            ids = s.insert_nodes(sp.id, rows, vec)
            recent = ids[old:]
            s.set_edges(s.refresh_space(sp), {(a, b): 0.5 for a, b in zip(recent, recent[1:])}, 0.995)
            s.insert_semantic(sp.id, "fact", "A", "fact one", None, None, recent[0], [ids[0], ids[1], recent[0]],
                              vec[0])
            s.insert_semantic(sp.id, "trait", "A", "trait two", 0.9, None, recent[1], [ids[2]], vec[1])
    return db


def _forget_state(db: Path) -> tuple[int, list[tuple[int, int, int]]]:
    with Store(db) as s:
        assert s.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert s.integrity_problems() == []
        n = s.count_nodes(s.require_space("f").id)
        sem = s.db.execute("SELECT s.id, s.forgotten_evidence, (SELECT count(*) FROM semantic_evidence e "
                           "WHERE e.semantic_id = s.id) FROM semantic s ORDER BY s.id").fetchall()
    return n, [tuple(r) for r in sem]


BEFORE = (N_FORGET, [(1, 0, 3), (2, 0, 1)])
AFTER = (N_RECENT, [(1, 2, 1), (2, 1, 0)])


def _forget_trials(tmp_path: Path, forget_db: Path, trials: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    outcomes = []
    for t in range(trials):
        db = tmp_path / f"forget{t}.db"
        shutil.copy(forget_db, db)
        assert _forget_state(db) == BEFORE
        env = hela_env(tmp_path, db)
        proc = popen_hela(["forget", "--space", "f", "--apply", "--json"], env)
        time.sleep(rng.uniform(0.3, 3.5))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        state = _forget_state(db)
        assert state in (BEFORE, AFTER), f"half-applied forgetting: {state}"
        outcomes.append("none" if state == BEFORE else "all")
        res = hela(["forget", "--space", "f", "--apply", "--json"], env)  # re-run completes
        assert res.returncode == 0 and res.stderr.strip() == "", res.stderr
        assert json.loads(res.stdout)["removed"] == (N_FORGET - N_RECENT if state == BEFORE else 0)
        assert _forget_state(db) == AFTER
    return outcomes


def test_sigkill_forget_apply_short(tmp_path, forget_db):
    _forget_trials(tmp_path, forget_db, trials=2, seed=1)


@pytest.mark.slow
def test_sigkill_forget_apply_many(tmp_path, forget_db):
    outcomes = _forget_trials(tmp_path, forget_db, trials=20, seed=7)
    print(f"\nforget --apply kills: {outcomes}")


# ----------------------------------------------------------------------------------- consolidate
CONSOLIDATE_ENV = {"HELA_CONSOLIDATION_MAX_TOKENS": "96", "HELA_CONSOLIDATION_MAX_NEIGHBOURS": "2",
                   "HELA_CONSOLIDATION_DELTA_HUB": "0.5", "HELA_CONSOLIDATION_NEIGHBOUR_MIN_WEIGHT": "0.05"}


def _hub_db(tmp_path: Path, embedder) -> Path:
    """A space with three hubs (D(v) > 0.5 only at the hub; leaves stay below) over disjoint clusters."""
    from hela_cli.config import Config
    from hela_cli.memory import Memory
    from tests.cases import TURNS

    turns = TURNS + [(s, t.replace("Tofu", "Rex").replace("Lisbon", "Porto"), ts.replace("2023", "2024"))
                     for s, t, ts in TURNS]
    f = tmp_path / "hubs.jsonl"
    f.write_text("".join(json.dumps({"role": "user", "name": s, "content": t, "timestamp": ts}) + "\n"
                         for s, t, ts in turns))
    db = tmp_path / "hubs.db"
    cfg = Config(db=str(db))
    cfg.ingest.initial_weight = 0.1  # consecutive links alone stay below delta_hub
    cfg.ingest.fixed_links, cfg.ingest.keyword_links = False, 0  # links count in Eq.2 (paper); clusters disjoint
    cfg.consolidation.delta_hub = 0.5
    with Memory(cfg, embedder=embedder) as m:
        m.ingest([f], space="t")
        sp = m.store.require_space("t")
        ids = [n["id"] for n in m.store.iter_nodes(sp.id)]
        with m.store.transaction():
            m.store.set_edges(sp, {(ids[0], ids[4]): 0.25, (ids[0], ids[6]): 0.2, (ids[8], ids[12]): 0.25,
                                   (ids[8], ids[14]): 0.2, (ids[2], ids[10]): 0.28, (ids[2], ids[11]): 0.2},
                              0.995)
    return db


def _consolidation_state(db: Path) -> dict[str, str]:
    """Check nothing is half-applied; return ``{hub: status}``."""
    with Store(db) as s:
        assert s.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert s.integrity_problems() == []
        q = lambda sql: s.db.execute(sql).fetchone()[0]  # noqa: E731
        assert q("SELECT count(*) FROM semantic m WHERE NOT EXISTS "
                 "(SELECT 1 FROM semantic_vec v WHERE v.semantic_id = m.id)") == 0
        assert q("SELECT count(*) FROM semantic_vec v WHERE NOT EXISTS "
                 "(SELECT 1 FROM semantic m WHERE m.id = v.semantic_id)") == 0
        assert q("SELECT count(*) FROM semantic_evidence e WHERE NOT EXISTS "
                 "(SELECT 1 FROM semantic m WHERE m.id = e.semantic_id)") == 0
        # a record exists only together with its hub's 'ok' state (one transaction per hub)
        assert q("SELECT count(*) FROM semantic m WHERE NOT EXISTS "
                 "(SELECT 1 FROM hubs h WHERE h.node_id = m.hub_id AND h.status = 'ok')") == 0
        hubs = dict(s.db.execute("SELECT node_id, status FROM hubs").fetchall())
        for status in hubs.values():
            assert status == "ok" or status.startswith(("failed: ", "covered: ")), status
    return hubs


def _hub_count(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT count(*) FROM hubs").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _consolidate_trials(tmp_path: Path, embedder, trials: int, seed: int, complete: bool) -> list[int]:
    rng = random.Random(seed)
    db = _hub_db(tmp_path, embedder)
    env = hela_env(tmp_path, db, **CONSOLIDATE_ENV)
    done = []
    for t in range(trials):
        proc = popen_hela(["consolidate", "--space", "t", "--json"], env)
        if t % 2 == 0:  # once one more hub was committed, then a little later (mid-model-call or mid-commit)
            target = _hub_count(db) + 1
            deadline = time.monotonic() + 300
            while proc.poll() is None and _hub_count(db) < target and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 2.0))
        else:
            time.sleep(rng.uniform(0.5, 15.0))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        done.append(len(_consolidation_state(db)))
    if complete:
        res = hela(["consolidate", "--space", "t", "--json"], env, timeout=900)
        assert res.returncode == 0 and res.stderr.strip() == "", res.stderr
        hubs = _consolidation_state(db)
        assert len(hubs) == 3
        plan = json.loads(hela(["consolidate", "--space", "t", "--dry-run", "--json"], env).stdout)
        assert plan["to_distill"] == sum(1 for st in hubs.values() if st.startswith("failed"))
    return done


@pytest.mark.slow  # a distillation takes 10-20 s of CPU with the default chat model: opt-in only
def test_sigkill_consolidate_many(tmp_path, embedder):
    done = _consolidate_trials(tmp_path, embedder, trials=6, seed=11, complete=True)
    print(f"\nconsolidate kills: hubs recorded after each kill {done}")
