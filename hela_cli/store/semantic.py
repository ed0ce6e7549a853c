"""Semantic records distilled by consolidation and their evidence links: the SQL both engines share.

The records' vectors live in an engine table (SQLite: the sqlite-vec ``semantic_vec``; Postgres:
``semantic_emb``), written through the engine hook ``_put_semantic_vector`` and searched and read by the
engine's ``semantic_knn`` / ``semantic_vector``."""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

SEMANTIC_COLUMNS = ("id, space_id, kind, subject, text, confidence, date, hub_id, forgotten_evidence, created_at, "
                    "updated_at")


class Semantic:
    """Semantic records (``semantic``, ``semantic_evidence``; their vectors in the engine's table, written by
    :meth:`_put_semantic_vector` and searched by ``semantic_knn``); the hub state is in ``hubs.py``, the asks
    log in ``asks.py``."""

    # ---------------------------------------------------------------- semantic records
    def insert_semantic(self, space_id: int, kind: str, subject: str | None, text: str,
                        confidence: float | None, date: str | None, hub_id: int | None,
                        evidence: Sequence[int], vector: np.ndarray) -> int:
        self.require_transaction("insert_semantic")
        now = time.time()
        sid = self.db.execute(
            "INSERT INTO semantic(space_id, kind, subject, text, confidence, date, hub_id, created_at, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?) RETURNING id",
            (space_id, kind, subject, text, confidence, date, hub_id, now, now)).fetchall()[0][0]
        self._put_semantic_vector(sid, space_id, vector)
        self.add_evidence(sid, evidence)
        return sid

    def add_evidence(self, semantic_id: int, node_ids: Sequence[int]) -> None:
        """Link evidence turns, inside the write transaction. A turn forgotten since consolidation read its
        cluster gets no link (nothing may dangle); it is counted in ``forgotten_evidence`` instead."""
        self.require_transaction("add_evidence")
        missing = 0
        for n in dict.fromkeys(node_ids):
            cur = self.db.execute("INSERT OR IGNORE INTO semantic_evidence(semantic_id, node_id) "
                                  "SELECT ?, id FROM nodes WHERE id=?", (semantic_id, n))
            if cur.rowcount == 0 and not self.db.execute("SELECT 1 FROM nodes WHERE id=?", (n,)).fetchone():
                missing += 1
        self.db.execute("UPDATE semantic SET updated_at=?, forgotten_evidence = forgotten_evidence + ? "
                        "WHERE id=?", (time.time(), missing, semantic_id))

    def get_semantic(self, ids: Sequence[int] | None = None, space_id: int | None = None) -> list[dict[str, Any]]:
        """Records by id (in that order; the retrieval path, hand-written reads) or a whole space's records
        (inspect / export), each with its ``evidence`` node ids."""
        if ids is not None:
            ids = list(ids)
            rows = self.select_in(f"SELECT {SEMANTIC_COLUMNS} FROM semantic WHERE id IN ({{ids}})", ids)
            names = [c.strip() for c in SEMANTIC_COLUMNS.split(",")]
            order = {i: n for n, i in enumerate(ids)}
            out = sorted((dict(zip(names, r)) for r in rows), key=lambda rec: order[rec["id"]])
        else:
            out = self._dicts(f"SELECT {SEMANTIC_COLUMNS} FROM semantic WHERE space_id = ? ORDER BY id", (space_id,))
        evidence: dict[int, list[int]] = {rec["id"]: [] for rec in out}
        for sid, nid in self.select_in("SELECT semantic_id, node_id FROM semantic_evidence WHERE semantic_id IN "
                                       "({ids}) ORDER BY node_id", list(evidence)):
            evidence[sid].append(nid)
        for rec in out:
            rec["evidence"] = evidence[rec["id"]]
        return out

    def semantic_citing(self, node_id: int) -> list[int]:
        return [r[0] for r in self.db.execute(
            "SELECT semantic_id FROM semantic_evidence WHERE node_id=? ORDER BY semantic_id", (node_id,))]

    def count_semantic(self, space_id: int) -> int:
        return self.db.execute("SELECT count(*) FROM semantic WHERE space_id=?", (space_id,)).fetchone()[0]
