"""The asks log: each ask's question, answer, the memories it rested on and the step, as `llm` logs
prompts (``answer.log``), and every learning recall: its id is the recall id feedback names (``used``)."""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

import numpy as np

from hela_cli.store.base import _blob


#: how often (in asks rows) ``log_ask`` prunes old recalls without feedback: a recall row is ~4 KB (query
#: vector + retrieved set), so an agent recalling all day would otherwise grow the file without bound
PRUNE_EVERY = 64
#: how many spaces' use traces a store keeps decoded in memory (5,000 traces of 384 floats: ~7.7 MB a space)
TRACE_CACHE_SPACES = 8


class AsksLog:
    """``asks`` rows, newest first per space."""

    def log_ask(self, space_id: int, question: str, answer: str | None, memories: Sequence[int], step: int, *,
                kind: str = "ask", retrieval: Sequence[dict[str, Any]] | None = None,
                vector: np.ndarray | None = None, keep_recalls: int = 0) -> int | None:
        """Record one ask or recall, as `llm` logs prompts; returns its id (the recall id feedback names).
        ``retrieval``: the retrieved set as the feedback rule reads it (``[{id, base, path, from}]``);
        ``vector``: the query vector (with feedback, the row becomes a use trace). Nothing is logged (None)
        when one of its memories was deleted meanwhile (``hela delete``: the answer may restate it).
        ``keep_recalls`` > 0: recalls that never got feedback are kept for the space's newest
        ``keep_recalls`` of them (pruned every :data:`PRUNE_EVERY` rows; asks and recalls with feedback stay)."""
        with self.transaction(space=space_id):
            if memories and self.deleted_ids(memories):
                return None
            # plain SQL (not sqlite-utils): the same statement runs on SQLite and Postgres (postgres/connection.py)
            new_id = self.db.execute(
                "INSERT INTO asks(space_id, question, answer, memories, step, created_at, kind, retrieval, vector) "
                "VALUES (?,?,?,?,?,?,?,?,?) RETURNING id",
                (space_id, question, answer, json.dumps(list(memories)), step, time.time(), kind,
                 None if retrieval is None else json.dumps(list(retrieval)),
                 None if vector is None else _blob(vector))).fetchone()[0]
            if keep_recalls > 0 and new_id % PRUNE_EVERY == 0:
                self.prune_recalls(space_id, keep_recalls)
            return new_id

    def prune_recalls(self, space_id: int, keep: int) -> int:
        """Delete the space's recalls without feedback older than its newest ``keep`` of them (they can no
        longer take feedback); returns how many. Inside a write transaction."""
        self.require_transaction("prune_recalls")
        return self.db.execute(
            "DELETE FROM asks WHERE space_id = ? AND kind = 'recall' AND used IS NULL AND id <= "
            "(SELECT id FROM asks WHERE space_id = ? AND kind = 'recall' AND used IS NULL "
            "ORDER BY id DESC LIMIT 1 OFFSET ?)", (space_id, space_id, int(keep))).rowcount

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
        return [self._ask_row(r) for r in self._ask_dicts(
            "SELECT * FROM asks WHERE space_id = ? ORDER BY created_at DESC, id DESC LIMIT ?", (space_id, limit))]

    def _ask_dicts(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def get_ask(self, ask_id: int) -> dict[str, Any] | None:
        """One row of the asks log by id (JSON columns decoded), or None."""
        rows = self._ask_dicts("SELECT * FROM asks WHERE id = ?", (int(ask_id),))
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
        Returns ``(vectors (n, dim) float32, used ids per trace)``; an empty (0, 0) matrix when there are none.

        Kept in memory per space (the newest :data:`TRACE_CACHE_SPACES` spaces) until the traces change: a
        recall over 5,000 traces took 35-42 ms p50 reading them each time, 9-10 ms with this cache (4.3-4.8 ms
        with none; ``benchmarks/speed/use_traces.py``, 2,000 memories).
        Traces are only ever added (feedback sets ``used`` once, so their count grows) or deleted with a
        memory (which bumps the space's ``nodes_version``): the count, the newest id and ``nodes_version``
        tell when to read them again, from the partial index ``asks_traces`` alone."""
        sig = (*self.db.execute("SELECT count(*), max(id) FROM asks WHERE space_id=? AND used IS NOT NULL "
                                "AND vector IS NOT NULL", (space_id,)).fetchone(), self._nodes_version(space_id), limit)
        cache = self.__dict__.setdefault("_trace_cache", {})
        hit = cache.pop(space_id, None)
        if hit is None or hit[0] != sig:
            rows = self.db.execute("SELECT vector, used FROM asks WHERE space_id=? AND used IS NOT NULL "
                                   "AND used != '[]' AND vector IS NOT NULL ORDER BY id DESC LIMIT ?",
                                   (space_id, int(limit))).fetchall()
            traces = ((np.stack([np.frombuffer(bytes(v), dtype=np.float32) for v, _ in rows]),
                       [json.loads(u) for _, u in rows]) if rows else (np.zeros((0, 0), dtype=np.float32), []))
            hit = (sig, traces)
        cache[space_id] = hit   # newest last
        while len(cache) > TRACE_CACHE_SPACES:
            cache.pop(next(iter(cache)))
        return hit[1]
