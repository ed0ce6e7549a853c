"""The per-space write lock on Postgres, with real processes: writers of two spaces run at the same time and
lose nothing; a writer of a space waits for that space's open transaction, and only for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hela_cli.errors import StoreError
from hela_cli.store import Store
from hela_cli.store.postgres.connection import LOCK_SPACE, LOCK_WRITE

TESTS = Path(__file__).parent
TOPICS = ["hiking trip", "dog named Tofu", "Lisbon flat", "piano lessons", "garden bike repair"]
HANG_GUARD_S = 600   # a hang guard only: a process that never finishes fails the test; no timing is asserted


def _writer(db: str, tag: str, rounds: int, space: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(TESTS) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, str(TESTS / "pg_writer.py"), db, tag, str(rounds), space],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _result(p: subprocess.Popen) -> dict:
    out, err = p.communicate(timeout=HANG_GUARD_S)
    assert p.returncode == 0, err[-2000:]
    assert err.strip() == "", err[-2000:]
    return json.loads(out.strip().splitlines()[-1])


def _want(tag: str, rounds: int) -> set[str]:
    return {f"{tag} says: turn {i} about the {TOPICS[i % 5]}" for i in range(rounds)} | \
           {f"everyone: common turn {i} about the {TOPICS[i % 5]}" for i in range(0, rounds, 4)}


def _setup(pg_url: str, hash_embedder, *spaces: str) -> None:
    from hela_cli.config import Config
    from hela_cli.memory import Memory

    cfg = Config()
    cfg.db = pg_url
    with Memory(cfg, embedder=hash_embedder) as m:   # the spaces and the embedder binding exist up front
        for name in spaces:
            m.add(name, f"the first turn of {name}", speaker="init", time=1_700_000_000.0)


def _check_space(s: Store, name: str, tag: str, rounds: int, learned: list[int]) -> None:
    sp = s.require_space(name)
    texts = [n["text"] for n in s.iter_nodes(sp.id)]
    assert sorted(texts) == sorted(_want(tag, rounds) | {f"the first turn of {name}"})
    # the space's own step counter: one step per learning retrieval in that space, each seen once
    assert sp.step == len(learned) == len(set(learned))
    assert sorted(learned) == list(range(1, sp.step + 1))
    assert 0 <= sp.base_step <= sp.step


def test_writers_of_two_spaces_at_once_lose_nothing(pg_url, hash_embedder):
    rounds = 16
    _setup(pg_url, hash_embedder, "one", "two")
    procs = {name: _writer(pg_url, f"w-{name}", rounds, name) for name in ("one", "two")}
    outs = {name: _result(p) for name, p in procs.items()}
    with Store.open(pg_url) as s:
        for name in ("one", "two"):
            _check_space(s, name, f"w-{name}", rounds, outs[name]["learned"])
            assert s.count_semantic(s.require_space(name).id) > 0   # consolidation wrote in each space
        assert s.integrity_problems() == []
        assert s.db.execute("SELECT a, b FROM edges GROUP BY a, b HAVING count(*) > 1").fetchall() == []
        # no edge joins two spaces
        assert s.db.execute("SELECT count(*) FROM edges e JOIN nodes x ON x.id = e.a JOIN nodes y ON y.id = e.b "
                            "WHERE x.space_id <> y.space_id OR e.space_id <> x.space_id").fetchone()[0] == 0


def _waiting_on_space(s: Store, space_id: int) -> int:
    """Backends waiting for the space's advisory lock (the two-int key: classid, objid; objsubid 2)."""
    return s.db.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                        "AND classid::bigint = ? AND objid::bigint = ? AND objsubid = 2",
                        (LOCK_SPACE, space_id)).fetchone()[0]


def test_a_writer_waits_only_for_its_own_space(pg_url, hash_embedder):
    _setup(pg_url, hash_embedder, "a", "b")
    holder, watcher = Store(pg_url), Store(pg_url)
    a, b = holder.require_space("a"), holder.require_space("b")
    try:
        with holder.transaction(space=a.id):
            holder.advance_step(a.id, 0.995)          # space a's transaction is open, its lock held
            # a process writing space b (adds, asks with learning, consolidates, forgets) finishes meanwhile
            out_b = _result(_writer(pg_url, "w-b", 8, "b"))
            assert out_b["added"] == 8 and out_b["learned"]
            # a process writing space a waits for the open transaction: seen in pg_locks, not by timing
            p_a = _writer(pg_url, "w-a", 1, "a")
            deadline = time.monotonic() + HANG_GUARD_S
            while _waiting_on_space(watcher, a.id) == 0:
                assert p_a.poll() is None, "the writer of space a finished while space a was locked"
                assert time.monotonic() < deadline, "the writer of space a never reached the lock"
                time.sleep(0.05)
            assert p_a.poll() is None
            assert [n["text"] for n in watcher.iter_nodes(a.id)] == ["the first turn of a"]
        out_a = _result(p_a)                          # released at commit: it goes on and finishes
        with Store.open(pg_url) as s:
            _check_space(s, "b", "w-b", 8, out_b["learned"])
            sp_a = s.require_space("a")
            assert len([n for n in s.iter_nodes(sp_a.id)]) == 3   # first turn, its turn, the common turn
            # the held transaction's step came first; the writer's learning retrieval took the next one
            assert out_a["learned"] == [2] and sp_a.step == 2
            assert s.integrity_problems() == []
    finally:
        holder.close()
        watcher.close()


def test_a_database_wide_write_waits_for_every_space_and_nested_locks(pg_url, hash_embedder):
    _setup(pg_url, hash_embedder, "a", "b")
    s, other = Store(pg_url), Store(pg_url)
    a, b = s.require_space("a"), s.require_space("b")
    try:
        with s.transaction(space=a.id):
            # a database-wide writer (e.g. `hela copy`, reembed's swap) cannot start while space a writes
            got = other.db.execute("SELECT pg_try_advisory_xact_lock(?)", (LOCK_WRITE,)).fetchone()[0]
            assert got is False
            # another space's writer can
            other.db.execute("BEGIN")
            assert other.db.execute("SELECT pg_try_advisory_xact_lock_shared(?), pg_try_advisory_xact_lock(?, ?)",
                                    (LOCK_WRITE, LOCK_SPACE, b.id)).fetchone() == (True, True)
            other.db.execute("ROLLBACK")
            with s.transaction(space=a.id):               # nested in the same space: a savepoint
                s.advance_step(a.id, 0.995)
            with pytest.raises(StoreError, match="internal error"):
                with s.transaction(space=b.id):            # another space inside a's transaction: refused
                    pass
            s.set_meta("bench_note", "x")                  # database-wide bookkeeping nested: LOCK_META
        assert s.get_meta("bench_note") == "x" and s.refresh_space(a).step == 1
        with s.transaction():                              # database-wide: no space writer can start
            got = other.db.execute("SELECT pg_try_advisory_xact_lock_shared(?)", (LOCK_WRITE,)).fetchone()[0]
            assert got is False
    finally:
        s.close()
        other.close()
