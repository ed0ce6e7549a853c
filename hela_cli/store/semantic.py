"""Semantic records distilled by consolidation, their evidence links and per-hub bookkeeping."""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

import numpy as np


from hela_cli.store.base import _blob


SEMANTIC_COLUMNS = ("id, space_id, kind, subject, text, confidence, date, hub_id, forgotten_evidence, created_at, "
                    "updated_at")


class Semantic:
    """Semantic records (``semantic``, ``semantic_vec``, ``semantic_evidence``) and ``hubs``."""

    # ---------------------------------------------------------------- semantic records
    def insert_semantic(self, space_id: int, kind: str, subject: str | None, text: str,
                        confidence: float | None, date: str | None, hub_id: int | None,
                        evidence: Sequence[int], vector: np.ndarray) -> int:
        self.require_transaction("insert_semantic")
        now = time.time()
        sid = self.sdb["semantic"].insert(
            {"space_id": space_id, "kind": kind, "subject": subject, "text": text, "confidence": confidence,
             "date": date, "hub_id": hub_id, "created_at": now, "updated_at": now}).last_pk
        self.db.execute("INSERT INTO semantic_vec(semantic_id, space_id, embedding) VALUES (?,?,?)",
                        (sid, space_id, _blob(vector)))
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

    def semantic_knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        rows = self.db.execute(
            "SELECT semantic_id, distance FROM semantic_vec WHERE embedding MATCH ? AND k = ? AND space_id = ?",
            (_blob(vector), int(k), space_id)).fetchall()
        return [(sid, 1.0 - d) for sid, d in rows]

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
            out = list(self.sdb["semantic"].rows_where("space_id = ?", [space_id], select=SEMANTIC_COLUMNS,
                                                       order_by="id"))
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

    def semantic_vector(self, semantic_id: int) -> np.ndarray | None:
        row = self.db.execute("SELECT embedding FROM semantic_vec WHERE semantic_id=?", (semantic_id,)).fetchone()
        return np.frombuffer(row[0], dtype=np.float32) if row else None

    def count_semantic(self, space_id: int) -> int:
        return self.db.execute("SELECT count(*) FROM semantic WHERE space_id=?", (space_id,)).fetchone()[0]

    # ---------------------------------------------------------------- hubs bookkeeping
    def hub_state(self, space_id: int) -> dict[int, dict[str, Any]]:
        return {r["node_id"]: {"cluster": json.loads(r["cluster"]), "distilled_step": r["distilled_step"],
                               "status": r["status"]}
                for r in self.sdb["hubs"].rows_where("space_id = ?", [space_id])}

    def set_hub_state(self, space_id: int, node_id: int, cluster: Sequence[int], step: int, status: str) -> None:
        """Record a hub's consolidation state; nothing for a hub forgotten meanwhile (checked in the write),
        nor for a cluster holding a memory deleted meanwhile (``hela delete``)."""
        if self.deleted_ids(cluster):
            return
        self.db.execute("INSERT INTO hubs(node_id, space_id, cluster, distilled_step, status) SELECT ?,?,?,?,? "
                        "WHERE EXISTS (SELECT 1 FROM nodes WHERE id=?) "
                        "ON CONFLICT(node_id) DO UPDATE SET cluster=excluded.cluster, "
                        "distilled_step=excluded.distilled_step, status=excluded.status",
                        (node_id, space_id, json.dumps(list(cluster)), step, status, node_id))

    # ---------------------------------------------------------------- the asks log
    def log_ask(self, space_id: int, question: str, answer: str | None, memories: Sequence[int], step: int, *,
                kind: str = "ask", retrieval: Sequence[dict[str, Any]] | None = None,
                vector: np.ndarray | None = None) -> int | None:
        """Record one ask or recall, as `llm` logs prompts; returns its id (the recall id feedback names).
        ``retrieval``: the retrieved set as the feedback rule reads it (``[{id, base, path, from}]``);
        ``vector``: the query vector (with feedback, the row becomes a use trace). Nothing is logged (None)
        when one of its memories was deleted meanwhile (``hela delete``: the answer may restate it)."""
        with self.transaction():
            if memories and self.deleted_ids(memories):
                return None
            return self.sdb["asks"].insert({"space_id": space_id, "question": question, "answer": answer,
                                            "memories": json.dumps(list(memories)), "step": step,
                                            "created_at": time.time(), "kind": kind,
                                            "retrieval": None if retrieval is None else json.dumps(list(retrieval)),
                                            "vector": None if vector is None else _blob(vector)}).last_pk

    @staticmethod
    def _ask_row(r: dict[str, Any]) -> dict[str, Any]:
        r = dict(r)
        r.pop("vector", None)
        for key in ("memories", "retrieval", "used"):
            if r.get(key) is not None:
                r[key] = json.loads(r[key])
        return r

    def asks(self, space_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """The space's most recent asks and recalls, newest first (JSON columns decoded)."""
        rows = self.sdb["asks"].rows_where("space_id = ?", [space_id], order_by="created_at desc, id desc",
                                           limit=limit)
        return [self._ask_row(r) for r in rows]

    def get_ask(self, ask_id: int) -> dict[str, Any] | None:
        """One row of the asks log by id (JSON columns decoded), or None."""
        rows = list(self.sdb["asks"].rows_where("id = ?", [int(ask_id)]))
        return self._ask_row(rows[0]) if rows else None

    def latest_ask(self, space_id: int) -> dict[str, Any] | None:
        """The space's most recent ask or recall, or None."""
        rows = self.asks(space_id, limit=1)
        return rows[0] if rows else None

    def mark_feedback(self, ask_id: int, used: Sequence[int], when: float) -> bool:
        """Record the feedback of one recall inside the write transaction; False if it already has feedback
        (checked in the write, so two processes cannot both apply feedback to one recall)."""
        self.require_transaction("mark_feedback")
        cur = self.db.execute("UPDATE asks SET used=?, used_at=? WHERE id=? AND used IS NULL",
                              (json.dumps(list(used)), when, int(ask_id)))
        return cur.rowcount == 1

    def use_traces(self, space_id: int, limit: int = 5000) -> tuple[np.ndarray, list[list[int]]]:
        """The space's use traces, newest first (at most ``limit``): recalls with feedback and a query vector.
        Returns ``(vectors (n, dim) float32, used ids per trace)``; an empty (0, 0) matrix when there are none."""
        rows = self.db.execute("SELECT vector, used FROM asks WHERE space_id=? AND used IS NOT NULL AND used != '[]' "
                               "AND vector IS NOT NULL ORDER BY id DESC LIMIT ?", (space_id, int(limit))).fetchall()
        if not rows:
            return np.zeros((0, 0), dtype=np.float32), []
        return (np.stack([np.frombuffer(v, dtype=np.float32) for v, _ in rows]),
                [json.loads(u) for _, u in rows])

    def set_consolidated_step(self, space_id: int, step: int) -> None:
        self.db.execute("UPDATE spaces SET consolidated_step=? WHERE id=?", (step, space_id))

