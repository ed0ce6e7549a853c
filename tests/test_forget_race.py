"""Forgetting racing asking and consolidation (issue 14): every write that refers to nodes checks them
inside its write transaction, readers tolerate a node that vanished.

The in-process tests replay the interleaving deterministically: an ask retrieves, a ``forget --apply``
(another connection) removes some of what it retrieved, then the ask learns from its retrieval; a
consolidation writes evidence for a cluster partly forgotten since it read it. The ``-m slow`` test runs
the race with real processes for 60 s.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest

from hela_cli.config import Config
from hela_cli.mechanics.consolidate import Record, store_records
from hela_cli.mechanics.forget import forget
from hela_cli.memory import Memory
from hela_cli.mechanics.retrieval import learn_from
from hela_cli.store import Store
from tests.conftest import SAMPLE
from tests.reliability import PY, hela, hela_env

# every node never accessed is a forgetting candidate: no weight is "strong", no age is "recent"
FORGET_ALL_UNUSED = {"forgetting.delta_prune": 1e9, "forgetting.delta_age_days": 0.0}


def _setup(embedder, tmp_path):
    cfg = Config(db=str(tmp_path / "race.db"))
    cfg.retrieval.theta = 0.0  # every candidate spreads: a dangling edge would be followed
    mem = Memory(cfg, embedder=embedder)
    mem.ingest([SAMPLE / "conversation.json"])
    used = mem.retrieve("Jonas and his dog", "demo").memories  # accessed: these survive forgetting
    return mem, {m["id"] for m in used}


def test_ask_learning_after_a_forget_writes_no_dangling_edge(embedder, tmp_path):
    mem, used = _setup(embedder, tmp_path)
    with mem:
        res = mem.retrieve("What did Jonas cook for dinner?", "demo", learn=False)  # the ask's retrieval
        ids = [m["id"] for m in res.memories]
        assert set(ids) - used and len(set(ids) & used) >= 2  # some will be forgotten, a pair survives
        with Store(mem.config.db) as other:  # `hela forget --apply` in another process, meanwhile
            rep = forget(other, other.require_space("demo"), mem.config.replace(**FORGET_ALL_UNUSED), apply=True)
        assert set(ids) & {c["id"] for c in rep["candidates"]}  # part of the ask's retrieval is gone
        learn_from(mem.store, mem.store.require_space("demo"), ids, mem.config, when=time.time())
        assert mem.store.integrity_problems() == []
        survivors = sorted(set(ids) & used)
        # pairs of survivors still learnt
        assert mem.store.edge_weight(mem.store.require_space("demo"), survivors[0], survivors[1]) > 0
        again = mem.retrieve("What did Jonas cook for dinner?", "demo")
        alive = {n["id"] for n in mem.store.iter_nodes(mem.store.require_space("demo").id)}
        assert again.memories and {m["id"] for m in again.memories} <= alive


def test_retrieval_tolerates_an_edge_to_a_vanished_node(embedder, tmp_path):
    mem, used = _setup(embedder, tmp_path)
    with mem:
        src = mem.retrieve("Jonas and his dog", "demo", learn=False).memories[0]["id"]
        # an edge left dangling (a database written by an older hela)
        mem.store.db.execute("INSERT INTO edges(a, b, space_id, amp) VALUES (?, 999999, ?, 0.9)",
                             (src, mem.store.require_space("demo").id))
        res = mem.retrieve("Jonas and his dog", "demo", learn=False)
        assert res.memories and 999999 not in {m["id"] for m in res.memories}


def test_consolidation_evidence_for_a_forgotten_turn_is_counted_not_linked(embedder, tmp_path):
    mem, used = _setup(embedder, tmp_path)
    with mem:
        sp = mem.store.require_space("demo")
        ids = [n["id"] for n in mem.store.iter_nodes(sp.id)]
        kept, gone = sorted(used)[0], next(i for i in ids if i not in used)
        # consolidation read the cluster [kept, gone], then generated for a minute; meanwhile:
        with Store(mem.config.db) as other:
            forget(other, other.require_space("demo"), mem.config.replace(**FORGET_ALL_UNUSED), apply=True)
        vec = embedder.embed(["Jonas has a dog."])
        recs = [Record("fact", "Jonas", "Jonas has a dog.", None, None, [kept, gone])]
        with mem.store.transaction():
            inserted, _ = store_records(mem.store, sp, kept, recs, vec, 0.92)
            mem.store.set_hub_state(sp.id, gone, [gone, kept], sp.step, "ok")  # a hub forgotten meanwhile
        assert mem.store.integrity_problems() == []
        rec = mem.store.get_semantic(inserted)[0]
        assert rec["evidence"] == [kept] and rec["forgotten_evidence"] == 1
        assert gone not in mem.store.hub_state(sp.id)


# a consolidation process distilling one hub per run (`hela consolidate` distils every hub: minutes here)
CONSOLIDATE_ONE_HUB = """
from hela_cli.config import load_config
from hela_cli.memory import Memory
with Memory(load_config()) as mem:
    rep = mem.consolidate("demo", max_hubs=1)
    print(rep["distilled"], rep["failed"])
"""


@pytest.mark.slow
def test_forget_ask_consolidate_race_60s(embedder, tmp_path):
    """Real processes for 60 s: `forget --apply` (every unused node a candidate) in a loop, two loops of
    learning `ask --no-llm`, re-ingesting the conversation (forgotten turns come back, so there is always
    something to forget) and consolidation runs. No process may fail; nothing may dangle at the end."""
    db = tmp_path / "race.db"
    conv = SAMPLE / "conversation.json"
    env = hela_env(tmp_path, db, HELA_INGEST_INITIAL_WEIGHT="0.9", HELA_CONSOLIDATION_DELTA_HUB="0.5",
                   HELA_CONSOLIDATION_MAX_TOKENS="48", HELA_CONSOLIDATION_MAX_NEIGHBOURS="3",
                   HELA_RETRIEVAL_THETA="0")
    forget_env = {**env, "HELA_FORGETTING_DELTA_PRUNE": "1e9", "HELA_FORGETTING_DELTA_AGE_DAYS": "0"}
    assert hela(["ingest", str(conv)], env).returncode == 0
    questions = ["Jonas and his dog", "What did they cook?", "Where did they travel?", "the new job"]
    results: list[tuple[str, subprocess.CompletedProcess]] = []
    lock = threading.Lock()
    end = time.monotonic() + 60

    def loop(kind: str, args_of, e) -> None:
        i = 0
        while time.monotonic() < end:
            args = args_of(i)
            res = (subprocess.run([PY, "-c", args], env=e, capture_output=True, text=True, timeout=600)
                   if isinstance(args, str) else hela(args, e, timeout=600))
            with lock:
                results.append((kind, res))
            i += 1

    workers = [
        threading.Thread(target=loop, args=("forget", lambda i: ["forget", "--space", "demo", "--apply", "--json"],
                                            forget_env)),
        threading.Thread(target=loop, args=("ask", lambda i: ["ask", questions[i % 4], "--space", "demo",
                                                              "--no-llm", "--json"], env)),
        threading.Thread(target=loop, args=("ask", lambda i: ["ask", questions[(i + 2) % 4], "--space",
                                                              "demo", "--no-llm", "--json"], env)),
        threading.Thread(target=loop, args=("ingest", lambda i: ["ingest", str(conv)], env)),
        threading.Thread(target=loop, args=("consolidate", lambda i: CONSOLIDATE_ONE_HUB, env)),
    ]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    failed = [(k, r.returncode, r.stderr[-500:]) for k, r in results if r.returncode != 0 or r.stderr.strip()]
    assert not failed, failed
    kinds = {k for k, _ in results}
    assert kinds == {"forget", "ask", "ingest", "consolidate"}, kinds
    forgot = sum(json.loads(r.stdout)["removed"] for k, r in results if k == "forget")
    assert forgot > 0  # the race happened: nodes were forgotten while the others ran
    with Store(db) as s:
        assert s.integrity_problems() == []
