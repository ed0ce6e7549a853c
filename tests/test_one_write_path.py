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


OLD = "Our staging database runs on Postgres 14."
NEW = "We upgraded the staging database from Postgres 14 to Postgres 16 yesterday. " + LONG


def _shape(mem: Memory, space: str) -> dict:
    """What a space holds of the two turns, by position: passages, the links between them, the marks."""
    rows = sorted(mem.memories(space, limit=10), key=lambda r: r["id"])
    assert [r["text"] for r in rows] == [OLD, NEW]
    a, b = rows[0]["id"], rows[1]["id"]
    sp = mem.store.require_space(space)
    marks = mem.store.supersessions_for([a])
    return {"passages": sorted(len(v) for v in mem.store.passage_vectors([a, b]).values()),
            "link": round(mem.store.edge_weight(sp, a, b), 6),
            "marks": sorted((m["status"], m["new_id"] == b) for ms in marks.values() for m in ms)}


def test_two_turns_get_the_same_links_passages_and_marks_through_every_entry_point(tmp_path, embedder, cfg):
    cfg.db = str(tmp_path / "w.db")
    cfg.ingest.passage_chars = 200
    notes = tmp_path / "notes.txt"
    notes.write_text(f"ana: {OLD}\nana: {NEW}\n")
    turns = [{"speaker": "ana", "text": OLD, "session": "s1"}, {"speaker": "ana", "text": NEW, "session": "s1"}]
    with Memory(cfg, embedder=embedder) as mem:
        mem.ingest([str(notes)], space="ingested")
        ref = _shape(mem, "ingested")
        assert ref["passages"] and ref["link"] > 0 and ref["marks"], ref   # the case holds each part
        mem.add_many("added", turns)
        mem.add_many("captured", [{**t, "id": f"c{i}"} for i, t in enumerate(turns)])
        for space in ("added", "captured"):
            assert _shape(mem, space) == ref, space
    from hela_cli.mcp_server.tools import HelaServer, TurnIn

    server = HelaServer(cfg)
    server.remember("remembered", [TurnIn(text=OLD, speaker="ana", session="s1"),
                                   TurnIn(text=NEW, speaker="ana", session="s1")])
    assert _shape(server.memory, "remembered") == ref
    server.memory.close()
