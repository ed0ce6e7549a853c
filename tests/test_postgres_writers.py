"""Many writers on Postgres: real processes adding, asking with learning, consolidating and forgetting in
one space at once lose nothing; a connection lost mid-write leaves the database as before that write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hela_cli.errors import StoreError
from hela_cli.store import Store

TESTS = Path(__file__).parent


def _run_writers(db: str, n: int, rounds: int) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(TESTS) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [subprocess.Popen([sys.executable, str(TESTS / "pg_writer.py"), db, f"w{k}", str(rounds)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for k in range(n)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-2000:]
        assert err.strip() == "", err[-2000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    return outs


@pytest.mark.parametrize("writers", [3])
def test_many_writer_processes_lose_nothing(pg_url, hash_embedder, writers):
    rounds = 24
    from hela_cli.config import Config
    from hela_cli.memory import Memory

    cfg = Config()
    cfg.db = pg_url
    with Memory(cfg, embedder=hash_embedder) as m:   # the space and the embedder binding exist up front
        m.add("shared", "the first turn", speaker="init", time=1_700_000_000.0)
    outs = _run_writers(pg_url, writers, rounds)
    with Store.open(pg_url) as s:
        sp = s.require_space("shared")
        texts = [n["text"] for n in s.iter_nodes(sp.id)]
        # every added turn stored once (forgetting at this `now` removes nothing: every turn is a day old)
        want = {"the first turn"} | {f"w{k} says: turn {i} about the {t}" for k in range(writers)
                                     for i, t in zip(range(rounds), ["hiking trip", "dog named Tofu", "Lisbon flat",
                                                                     "piano lessons", "garden bike repair"] * rounds)}
        want |= {f"everyone: common turn {i} about the "
                 f"{['hiking trip', 'dog named Tofu', 'Lisbon flat', 'piano lessons', 'garden bike repair'][i % 5]}"
                 for i in range(0, rounds, 4)}
        assert sorted(texts) == sorted(want)
        # the step counter equals the number of learning retrievals; each saw its own step
        steps = [st for o in outs for st in o["learned"]]
        assert sp.step == len(steps) == len(set(steps))
        assert sorted(steps) == list(range(1, sp.step + 1))
        # no duplicate or dangling edge, weights finite, lazy decay's pair consistent
        assert s.integrity_problems() == []
        edges = s.db.execute("SELECT a, b, count(*) FROM edges GROUP BY a, b HAVING count(*) > 1").fetchall()
        assert edges == []
        assert 0 <= sp.base_step <= sp.step
        assert s.count_semantic(sp.id) > 0


def test_a_connection_lost_mid_write_leaves_the_database_as_before(pg_url, hash_embedder):
    s = Store(pg_url)
    s.bind_embedder(hash_embedder.model_id, hash_embedder.dim)
    sp = s.ensure_space("x")
    vec = hash_embedder.embed(["one", "two"])
    with s.transaction():
        s.insert_nodes(sp.id, [{"text": "one", "ts": 1.0, "ord": 0, "hash": "h1", "keywords": ["one"]}], vec[:1])
    killer = Store(pg_url)
    with pytest.raises(StoreError) as e:
        with s.transaction():
            s.insert_nodes(sp.id, [{"text": "two", "ts": 2.0, "ord": 1, "hash": "h2", "keywords": ["two"]}], vec[1:])
            pid = s.db.conn.info.backend_pid
            killer.db.execute("SELECT pg_terminate_backend(?)", (pid,))
            s.advance_step(sp.id, 0.995)
    assert "lost the connection" in str(e.value) and "not applied" in str(e.value)
    s.close()
    with Store.open(pg_url) as fresh:
        sp2 = fresh.require_space("x")
        assert [n["text"] for n in fresh.iter_nodes(sp2.id)] == ["one"]
        assert sp2.step == 0 and fresh.integrity_problems() == []
    killer.close()
