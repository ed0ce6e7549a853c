"""Issue 41: a space keeps the Eq.1 decay its stored weights depend on, and every reader uses it.

An edge stores ``prior + amp`` with ``amp`` relative to the space's ``base_step``; its current weight is
``prior + amp * decay ** (step - base_step)``. Before, every reader used its own configuration's
``hebbian.decay``: a space learned under 0.9 and read under 0.995 showed weights of 8.7e11. Now the space's
recorded decay governs reads; a process that learns under another decay rebases the space once (current
weights unchanged) and says so in one line; export / import / copy / backup carry the decay.
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


def test_learning_under_another_decay_rebases_the_space_once(backend_db, hash_embedder):
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
        with s.transaction(space=sp.id):             # a write under 0.995: the rebase alone (no weights)
            s.set_edges(sp, {}, 0.995)
        assert len(lines) == 1 and "0.9" in lines[0] and "0.995" in lines[0] and "'s'" in lines[0], lines
        step2, base2, decay2, rebased = s.raw_edges(sp.id)
        assert (step2, base2, decay2) == (step, step, 0.995)
        assert _close(before, s.all_edges(sp))       # current weights unchanged
        with s.transaction(space=sp.id):
            s.set_edges(sp, {}, 0.995)
            fresh = s.advance_step(sp.id, 0.995)     # from now on every step decays by 0.995
        assert len(lines) == 1                        # once
        assert _close([(a, b, prior + amp * 0.995) for a, b, prior, amp in rebased],
                      s.all_edges(fresh), rel=1e-9)
    # a process that learns under 0.9 again rebases back, and says so
    lines.clear()
    with _memory(backend_db, hash_embedder, 0.9, progress=lines.append) as m:
        m.retrieve(QUESTIONS[1], "s", learn=True)
        assert len(lines) == 1 and m.store.space_decay(m.store.require_space("s").id) == 0.9


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


def test_a_new_space_takes_the_first_learning_writers_decay_silently(tmp_path, hash_embedder):
    lines: list[str] = []
    with _memory(tmp_path / "n.db", hash_embedder, 0.8, progress=lines.append) as m:
        m.ingest([str(SAMPLE)], space="s")
        sp = m.store.require_space("s")
        assert m.store.space_decay(sp.id) == DEFAULT_DECAY   # nothing learned yet: the default
        m.retrieve(QUESTIONS[0], "s", learn=True)
        assert m.store.space_decay(sp.id) == 0.8 and not any("rebased" in x for x in lines)
