"""Semantic records distilled by consolidation, their evidence links and per-hub bookkeeping."""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

import numpy as np


from hela_cli.store.base import _blob


class Semantic:
    """Semantic records (``semantic``, ``semantic_vec``, ``semantic_evidence``) and ``hubs``."""

    # ---------------------------------------------------------------- semantic records
    def insert_semantic(self, space_id: int, kind: str, subject: str | None, text: str,
                        confidence: float | None, date: str | None, hub_id: int | None,
                        evidence: Sequence[int], vector: np.ndarray) -> int:
        assert self._in_tx, "insert_semantic must run inside a transaction"
        now = time.time()
        cur = self.db.execute(
            "INSERT INTO semantic(space_id, kind, subject, text, confidence, date, hub_id, created_at, "
            "updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (space_id, kind, subject, text, confidence, date, hub_id, now, now))
        sid = cur.lastrowid
        self.db.execute("INSERT INTO semantic_vec(semantic_id, space_id, embedding) VALUES (?,?,?)",
                        (sid, space_id, _blob(vector)))
        self.add_evidence(sid, evidence)
        return sid

    def add_evidence(self, semantic_id: int, node_ids: Sequence[int]) -> None:
        """Link evidence turns, inside the write transaction. A turn forgotten since consolidation read its
        cluster gets no link (nothing may dangle); it is counted in ``forgotten_evidence`` instead."""
        assert self._in_tx, "add_evidence must run inside a transaction"
        missing = 0
        for n in dict.fromkeys(node_ids):
            cur = self.db.execute("INSERT OR IGNORE INTO semantic_evidence(semantic_id, node_id) "
                                  "SELECT ?, id FROM nodes WHERE id=?", (semantic_id, n))
            if cur.rowcount == 0 and not self.db.execute("SELECT 1 FROM nodes WHERE id=?", (n,)).fetchone():
                missing += 1
        self.db.execute("UPDATE semantic SET updated_at=?, forgotten_evidence = forgotten_evidence + ? "
                        "WHERE id=?", (time.time(), missing, semantic_id))

    def semantic_knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        rows = self.db.execute(
            "SELECT semantic_id, distance FROM semantic_vec WHERE embedding MATCH ? AND k = ? AND space_id = ?",
            (_blob(vector), int(k), space_id)).fetchall()
        return [(sid, 1.0 - d) for sid, d in rows]

    def get_semantic(self, ids: Sequence[int] | None = None, space_id: int | None = None) -> list[dict[str, Any]]:
        cols = "id, space_id, kind, subject, text, confidence, date, hub_id, forgotten_evidence, created_at, updated_at"
        if ids is not None:
            ids = list(ids)
            if not ids:
                return []
            rows = self.db.execute(f"SELECT {cols} FROM semantic WHERE id IN ({','.join('?' * len(ids))})",
                                   ids).fetchall()
            order = {i: n for n, i in enumerate(ids)}
            rows.sort(key=lambda r: order[r[0]])
        else:
            rows = self.db.execute(f"SELECT {cols} FROM semantic WHERE space_id=? ORDER BY id", (space_id,)).fetchall()
        names = [c.strip() for c in cols.split(",")]
        out = [dict(zip(names, r)) for r in rows]
        evidence: dict[int, list[int]] = {rec["id"]: [] for rec in out}
        found = list(evidence)
        for i in range(0, len(found), 500):  # one query per 500 records, not one per record
            chunk = found[i:i + 500]
            for sid, nid in self.db.execute(
                    f"SELECT semantic_id, node_id FROM semantic_evidence WHERE semantic_id IN "
                    f"({','.join('?' * len(chunk))}) ORDER BY node_id", chunk):
                evidence[sid].append(nid)
        for rec in out:
            rec["evidence"] = evidence[rec["id"]]
        return out

    def semantic_citing(self, node_id: int) -> list[int]:
        return [r[0] for r in self.db.execute(
            "SELECT semantic_id FROM semantic_evidence WHERE node_id=? ORDER BY semantic_id", (node_id,))]

    def semantic_vector(self, semantic_id: int) -> np.ndarray | None:
        row = self.db.execute("SELECT embedding FROM semantic_vec WHERE semantic_id=?", (semantic_id,)).fetchone()
        return np.frombuffer(row[0], dtype=np.float32) if row else None

    def count_semantic(self, space_id: int) -> int:
        return self.db.execute("SELECT count(*) FROM semantic WHERE space_id=?", (space_id,)).fetchone()[0]

    # ---------------------------------------------------------------- hubs bookkeeping
    def hub_state(self, space_id: int) -> dict[int, dict[str, Any]]:
        return {r[0]: {"cluster": json.loads(r[1]), "distilled_step": r[2], "status": r[3]}
                for r in self.db.execute("SELECT node_id, cluster, distilled_step, status FROM hubs "
                                         "WHERE space_id=?", (space_id,))}

    def set_hub_state(self, space_id: int, node_id: int, cluster: Sequence[int], step: int, status: str) -> None:
        """Record a hub's consolidation state; nothing for a hub forgotten meanwhile (checked in the write)."""
        self.db.execute("INSERT INTO hubs(node_id, space_id, cluster, distilled_step, status) SELECT ?,?,?,?,? "
                        "WHERE EXISTS (SELECT 1 FROM nodes WHERE id=?) "
                        "ON CONFLICT(node_id) DO UPDATE SET cluster=excluded.cluster, "
                        "distilled_step=excluded.distilled_step, status=excluded.status",
                        (node_id, space_id, json.dumps(list(cluster)), step, status, node_id))

    def set_consolidated_step(self, space_id: int, step: int) -> None:
        self.db.execute("UPDATE spaces SET consolidated_step=? WHERE id=?", (step, space_id))

