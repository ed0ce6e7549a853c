"""Issue 41: a space keeps the Eq.1 decay its stored weights depend on, and every reader uses it.

An edge stores ``prior + amp`` with ``amp`` relative to the space's ``base_step``; its current weight is
``prior + amp * decay ** (step - base_step)``. Before, every reader used its own configuration's
``hebbian.decay``: a space learned under 0.9 and read under 0.995 showed weights of 8.7e11. Now the space's
recorded decay governs reads; a process that learns under another decay learns under the space's and says
so once (issue 44; before, it rebased the space, and two writers configured differently rebased it back and
forth); ``hela spaces decay`` changes it; export / import / copy / backup carry the decay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hela_cli.config import Config, HebbianConfig
from hela_cli.maintenance import exporting, inspection
from hela_cli.maintenance.copying import copy_spaces
from hela_cli.memory import Memory
from hela_cli.store import Store
from hela_cli.store.base import DEFAULT_DECAY

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "conversation.json"
QUESTIONS = ["Who adopted a dog?", "What did they cook?", "Where is the trip going?", "What job did Maya start?",
             "Who looked after Tofu?", "Which spice is in the apple cake?"]


def _memory(db: Any, hash_embedder: Any, decay: float, progress: Any = None) -> Memory:
    cfg = Config(db=str(db)).replace(**{"hebbian.decay": decay})
    return Memory(cfg, embedder=hash_embedder, store_progress=progress)


def _learn(db: Any, hash_embedder: Any, decay: float, steps: int) -> None:
    with _memory(db, hash_embedder, decay) as m:
        m.ingest([str(SAMPLE)], space="s")
        for i in range(steps):
            m.retrieve(QUESTIONS[i % len(QUESTIONS)], "s", learn=True)


def _seen(m: Memory) -> dict[str, Any]:
    """What a reader shows of space ``s``: every current weight, Eq.2 strengths, the hubs, the export."""
    sp = m.store.require_space("s")
    exp = exporting.export_json(m.store, sp, m.config)
    ov = inspection.overview(m.store, sp, m.config)
    return {"edges": m.store.all_edges(sp), "strengths": m.store.edge_strengths(sp),
            "export": sorted((e["source"], e["target"], e["weight"]) for e in exp["edges"]),
            "export_decay": exp["hebbian"]["decay"], "decay": ov["decay"], "hubs": ov["hubs"]["count"],
            "step": m.store.refresh_space(sp).step}


def _close(a: list, b: list, rel: float = 1e-12) -> bool:
    return len(a) == len(b) and all(x[:2] == y[:2] and y[2] == pytest.approx(x[2], rel=rel, abs=1e-15)
                                    for x, y in zip(a, b))


def test_the_default_decay_is_the_configuration_default():
    assert DEFAULT_DECAY == HebbianConfig().decay


def test_learned_under_one_decay_read_the_same_under_any(backend_db, hash_embedder):
    _learn(backend_db, hash_embedder, 0.9, 60)
    with _memory(backend_db, hash_embedder, 0.9) as m:
        learned = _seen(m)
    assert learned["decay"] == learned["export_decay"] == 0.9
    assert max(w for _, _, w in learned["edges"]) <= 1.0 + 1e-9   # hebbian.cap: what Eq.1 can reach
    for decay in (0.995, 0.5, 0.9999):
        with _memory(backend_db, hash_embedder, decay) as m:
            seen = _seen(m)
        # read under another decay: the very same weights (before: 0.995 read 0.9's amplitudes as 1e11s)
        assert seen == learned, decay


def test_a_writer_under_another_decay_keeps_the_spaces_and_says_so_once(backend_db, hash_embedder):
    """Issue 44: a writer configured with another decay learns under the space's (no rebase) and says so once;
    only ``set_space_decay`` (``hela spaces decay``) rebases."""
    _learn(backend_db, hash_embedder, 0.9, 30)
    lines: list[str] = []
    with _memory(backend_db, hash_embedder, 0.995, progress=lines.append) as m:
        s = m.store
        sp = s.require_space("s")
        before = s.all_edges(sp)
        step, base, decay, raw = s.raw_edges(sp.id)
        assert decay == 0.9 and step > base and any(amp > 0 for *_, amp in raw)
        m.retrieve(QUESTIONS[0], "s", learn=False)   # a read writes nothing
        assert lines == [] and s.raw_edges(sp.id) == (step, base, decay, raw)
        with s.transaction(space=sp.id):             # a write under 0.995: nothing rebased
            s.set_edges(sp, {}, 0.995)
        assert len(lines) == 1 and "0.9" in lines[0] and "0.995" in lines[0] and "'s'" in lines[0], lines
        assert "hela spaces decay s 0.995" in lines[0]
        assert s.raw_edges(sp.id) == (step, base, 0.9, raw)   # amplitudes, base step and decay as they were
        with s.transaction(space=sp.id):
            fresh = s.advance_step(sp.id, 0.995)     # the step decays by the space's 0.9
        assert _close([(a, b, prior + amp * 0.9 ** (fresh.step - base)) for a, b, prior, amp in raw],
                      s.all_edges(fresh), rel=1e-9)
        for q in QUESTIONS:
            m.retrieve(q, "s", learn=True)
        assert len(lines) == 1 and s.space_decay(sp.id) == 0.9   # said once
        assert s.raw_edges(sp.id)[1] == base                      # never rebased
        # the explicit command rebases: current weights unchanged, the new decay recorded
        now = s.all_edges(sp)
        assert s.set_space_decay(sp.id, 0.995) > 0
        step3, base3, decay3, _ = s.raw_edges(sp.id)
        assert (base3, decay3) == (step3, 0.995) and _close(now, s.all_edges(sp))
    assert before   # the space had learned weights to keep


def test_two_processes_with_different_decays_leave_the_space_as_it_is(backend_db, hash_embedder, tmp_path):
    """Two real ``hela`` processes that learn in one space, one configured with 0.5 and one with the space's
    0.9: the space keeps 0.9 and is never rebased; the 0.5 process says so once; ``hela spaces decay``
    changes it."""
    from tests.reliability import hela, hela_env

    _learn(backend_db, hash_embedder, 0.9, 10)
    with _memory(backend_db, hash_embedder, 0.9) as m:
        recalls = [m.retrieve(q, "s", learn=True) for q in QUESTIONS[:3]]   # one feedback each
        used = [[f"--recall={r.recall_id}", *(str(x["id"]) for x in r.memories[:3])] for r in recalls]
        sid = m.store.require_space("s").id
        _, base, decay, _ = m.store.raw_edges(sid)
    assert decay == 0.9
    half, same = tmp_path / "half.yaml", tmp_path / "same.yaml"
    half.write_text("hebbian:\n  decay: 0.5\n")
    same.write_text("hebbian:\n  decay: 0.9\n")
    env = hela_env(tmp_path, backend_db)
    for (config, says), ids in zip(((half, True), (same, False), (half, True)), used):
        args = ["--config", str(config), "reinforce", "-s", "s", *ids]
        res = hela(args, env)
        assert res.returncode == 0, res.stderr
        told = [x for x in res.stderr.splitlines() if "hebbian.decay" in x]
        assert len(told) == (1 if says else 0), res.stderr
        if says:
            assert "0.9" in told[0] and "0.5" in told[0] and "hela spaces decay s 0.5" in told[0]
        with Store(backend_db) as s:
            step, base_now, decay_now, _ = s.raw_edges(sid)
        assert (base_now, decay_now) == (base, 0.9), (config, step)
    res = hela(["spaces", "decay", "s", "0.5"], env)
    assert res.returncode == 0 and "0.9 -> 0.5" in res.stdout, res.stderr
    res = hela(["spaces", "decay", "s", "--json"], env)
    assert res.returncode == 0 and __import__("json").loads(res.stdout)["decay"] == 0.5
    with Store(backend_db) as s:
        step, base_now, decay_now, _ = s.raw_edges(sid)
    assert (base_now, decay_now) == (step, 0.5)


def test_an_export_learned_under_09_imported_under_0995_keeps_its_weights(backend_db, tmp_path, hash_embedder):
    src = tmp_path / "src.db"
    _learn(src, hash_embedder, 0.9, 40)
    with _memory(src, hash_embedder, 0.9) as m:
        exp = exporting.export_json(m.store, m.store.require_space("s"), m.config, vectors=True)
    assert exp["hebbian"]["decay"] == 0.9
    (tmp_path / "e.json").write_text(__import__("json").dumps(exp))
    weights = {(e["source"], e["target"]): e["weight"] for e in exp["edges"]}
    with _memory(backend_db, hash_embedder, 0.995) as m2:
        rep = m2.import_export(tmp_path / "e.json", space="s")
        to_old = {new: int(old) for old, new in rep["ids"].items()}
        sp = m2.store.require_space("s")
        got = {(to_old[a], to_old[b]): w for a, b, w in m2.store.all_edges(sp)}
        assert got.keys() == weights.keys()
        assert all(abs(got[k] - w) < 1e-12 for k, w in weights.items())
        step, base, decay, raw = m2.store.raw_edges(sp.id)   # the amplitudes as exported, bit for bit
        assert (step, base, decay) == (exp["space"]["step"], exp["space"]["base_step"], 0.9)
        assert sorted(amp for *_, amp in raw) == sorted(e["amp"] for e in exp["edges"])
        again = exporting.export_json(m2.store, sp, m2.config)
        assert again["hebbian"]["decay"] == 0.9
        assert max(e["weight"] for e in again["edges"]) == max(weights.values())


def test_copy_and_backup_carry_the_decay(backend_db, tmp_path, hash_embedder):
    _learn(backend_db, hash_embedder, 0.9, 30)
    with _memory(backend_db, hash_embedder, 0.9) as m:
        learned = _seen(m)
        m.backup(tmp_path / "backup.db")
    copy_spaces(backend_db, str(tmp_path / "copy.db"))
    for db in (tmp_path / "backup.db", tmp_path / "copy.db"):
        with Store(db) as s:
            assert s.space_decay(s.require_space("s").id) == 0.9
        with _memory(db, hash_embedder, 0.995) as m:
            seen = _seen(m)
        assert seen["decay"] == 0.9 and _close(learned["edges"], seen["edges"]) and seen["hubs"] == learned["hubs"]


def test_a_new_space_takes_its_creators_decay_silently(tmp_path, hash_embedder):
    lines: list[str] = []
    with _memory(tmp_path / "n.db", hash_embedder, 0.8, progress=lines.append) as m:
        m.ingest([str(SAMPLE)], space="s")
        m.add("t", "a turn added to a new space")
        for name in ("s", "t"):
            assert m.store.space_decay(m.store.require_space(name).id) == 0.8
        m.retrieve(QUESTIONS[0], "s", learn=True)
        assert m.store.space_decay(m.store.require_space("s").id) == 0.8 and lines == []
    with Store(tmp_path / "n.db") as s:   # created by the store alone (no configuration): the default
        assert s.space_decay(s.ensure_space("u").id) == DEFAULT_DECAY
