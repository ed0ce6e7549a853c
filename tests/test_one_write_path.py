"""A long turn written by ``hela add`` (``Memory.add``), MCP ``remember`` and a hook capture
(``Memory.add_many``, what ``store_in_chunks`` calls) has the passage vectors ``hela ingest`` gives it (issue 54:
with ``ingest.passage_chars: 200`` a long turn got 8 through ingest and none through add)."""

from __future__ import annotations

import json

import numpy as np

from hela_cli.config import Config
from hela_cli.memory import Memory

LONG = " ".join(f"Sentence {i} of the design note says the queue worker retries job {i} with backoff." for i in range(24))


def _passages(mem: Memory, space: str) -> list[np.ndarray]:
    ids = [r["id"] for r in mem.memories(space, limit=10)]
    got = mem.store.passage_vectors(ids)
    assert len(got) == 1, got.keys()
    return next(iter(got.values()))


def test_a_long_turn_has_the_same_passages_through_every_entry_point(tmp_path, embedder, cfg):
    cfg.db = str(tmp_path / "w.db")
    cfg.ingest.passage_chars = 200
    notes = tmp_path / "note.txt"
    notes.write_text(f"ana: {LONG}\n")
    with Memory(cfg, embedder=embedder) as mem:
        mem.ingest([str(notes)], space="ingested")
        mem.add("added", LONG, speaker="ana")
        mem.add_many("captured", [{"speaker": "ana", "text": LONG, "session": "s1", "id": "c1"}])
        ref = _passages(mem, "ingested")
        assert len(ref) >= 8
        for space in ("added", "captured"):
            got = _passages(mem, space)
            assert len(got) == len(ref) and all(np.allclose(a, b, atol=1e-5) for a, b in zip(got, ref)), space
    from hela_cli.mcp_server.tools import HelaServer, TurnIn

    server = HelaServer(cfg)
    server.remember("remembered", [TurnIn(text=LONG, speaker="ana")])
    got = _passages(server.memory, "remembered")
    assert len(got) == len(ref)
    server.memory.close()
