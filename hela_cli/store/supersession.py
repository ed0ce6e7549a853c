"""Facts that change: which memory a later one superseded (issue 38). The SQL both engines share.

A row of ``supersessions`` says that memory ``old_id`` was replaced by the later memory ``new_id`` of the
same space: from when (``invalid_at``, by default the successor's time), by which detector (``explicit``
for a person or an agent saying so; ``cue``, ``judge``, ... for automatic detection) and with what
confidence; ``status`` is ``superseded`` (the old memory no longer holds) or ``possible`` (a detector was
not sure: the old memory is marked, never hidden). Nothing is deleted by a mark: both memories stay, and
the rows are the fact's history (``hela history``, ``hela inspect node``). A memory deleted completely takes
its rows with it (:meth:`~hela_cli.store.nodes.Nodes.delete_nodes`, ``spaces drop``).

A semantic record is *stale* when a memory of its evidence is superseded (:meth:`stale_records`): a
derived view, nothing is stored for it.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Sequence

from hela_cli.errors import InputError

#: the table (migration SQLite 0017_supersession / Postgres 0007_supersession; ``{int}`` / ``{real}``: the
#: engine's types)
SUPERSESSIONS_SQL = """
    CREATE TABLE supersessions(
        space_id {int} NOT NULL,
        old_id {int} NOT NULL,
        new_id {int} NOT NULL,
        invalid_at {real} NOT NULL,
        detector TEXT NOT NULL,
        confidence {real} NOT NULL DEFAULT 1.0,
        status TEXT NOT NULL CHECK (status IN ('superseded', 'possible')),
        created_at {real} NOT NULL,
        PRIMARY KEY(old_id, new_id)
    );
    CREATE INDEX supersessions_new ON supersessions(new_id);
    CREATE INDEX supersessions_space ON supersessions(space_id, old_id)
"""

STATUSES = ("superseded", "possible")
_COLUMNS = ("space_id", "old_id", "new_id", "invalid_at", "detector", "confidence", "status", "created_at",
            "reason")   # reason: why a judge decided (migration 0018_judge_reason; None for the others)


def _row(r: Sequence[Any]) -> dict[str, Any]:
    return dict(zip(_COLUMNS, r))


class Supersession:
    """Marks between the memories of a space (see the module docstring)."""

    def mark_superseded(self, space_id: int, old_id: int, new_id: int, *, invalid_at: float | None = None,
                        detector: str = "explicit", confidence: float = 1.0, status: str = "superseded",
                        reason: str | None = None) -> dict[str, Any]:
        """Record that memory ``old_id`` is superseded by the later memory ``new_id`` (both of space
        ``space_id``; ``old_id`` strictly earlier by time, then conversation order). ``invalid_at`` defaults
        to the successor's time. Marking the same pair again updates it, except that an automatic detector
        never overrides an ``explicit`` mark. Returns the stored row. Raises :class:`InputError` (nothing
        written) for an unknown memory, a memory of another space, a pair out of order or a bad status."""
        if status not in STATUSES:
            raise InputError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        if not detector or not isinstance(detector, str):
            raise InputError("detector must be a non-empty name")
        old_id, new_id = int(old_id), int(new_id)
        if old_id == new_id:
            raise InputError(f"memory {old_id} cannot supersede itself")
        confidence = float(confidence)
        if not 0.0 <= confidence <= 1.0:
            raise InputError(f"confidence must be between 0 and 1, not {confidence}")
        with self.transaction(space=space_id):
            rows = {r[0]: r for r in self.db.execute(
                "SELECT id, space_id, ts, ord FROM nodes WHERE id IN (?, ?)", (old_id, new_id))}
            for nid in (old_id, new_id):
                if nid not in rows or rows[nid][1] != space_id:   # the space's name is read only for the error
                    raise InputError(f"no memory {nid} in space '{self._space_name(space_id)}'")
            old, new = rows[old_id], rows[new_id]
            if (old[2], old[3], old[0]) >= (new[2], new[3], new[0]):
                raise InputError(f"memory {old_id} is not earlier than memory {new_id}: only a later memory "
                                 f"can supersede an earlier one")
            at = float(new[2]) if invalid_at is None else float(invalid_at)
            self.db.execute(
                "INSERT INTO supersessions(space_id, old_id, new_id, invalid_at, detector, confidence, status, "
                "created_at, reason) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(old_id, new_id) DO UPDATE SET "
                "invalid_at = excluded.invalid_at, detector = excluded.detector, confidence = excluded.confidence, "
                "status = excluded.status, created_at = excluded.created_at, reason = excluded.reason "
                "WHERE supersessions.detector <> 'explicit' OR excluded.detector = 'explicit'",
                (space_id, old_id, new_id, at, detector, confidence, status, time.time(), reason))
            got = self.db.execute(f"SELECT {', '.join(_COLUMNS)} FROM supersessions WHERE old_id = ? AND new_id = ?",
                                  (old_id, new_id)).fetchone()
        return _row(got)

    def unmark_superseded(self, space_id: int, old_id: int, new_id: int | None = None) -> int:
        """Remove the mark(s) of ``old_id`` (only the one naming ``new_id`` when given) in the space; returns
        the number of rows removed (0: there was none)."""
        with self.transaction(space=space_id):
            if new_id is None:
                cur = self.db.execute("DELETE FROM supersessions WHERE space_id = ? AND old_id = ?",
                                      (space_id, int(old_id)))
            else:
                cur = self.db.execute("DELETE FROM supersessions WHERE space_id = ? AND old_id = ? AND new_id = ?",
                                      (space_id, int(old_id), int(new_id)))
            return cur.rowcount

    def supersessions_for(self, node_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
        """The rows naming any of ``node_ids``, in both directions: ``{node id: [row, ...]}`` (a row is listed
        under its old and under its new memory when both are asked for), oldest ``invalid_at`` first. Ids
        without a row are absent."""
        ids = sorted({int(i) for i in node_ids})
        out: dict[int, list[dict[str, Any]]] = {}
        if not ids:
            return out
        want = set(ids)
        rows = []
        cols = ", ".join(_COLUMNS)
        for i in range(0, len(ids), 500):   # one statement per 500 ids (a recall asks once)
            chunk = ids[i:i + 500]
            marks = ",".join("?" * len(chunk))
            rows += [_row(r) for r in self.db.execute(
                f"SELECT {cols} FROM supersessions WHERE old_id IN ({marks}) OR new_id IN ({marks})",
                (*chunk, *chunk))]
        rows = list({(r["old_id"], r["new_id"]): r for r in rows}.values())
        rows.sort(key=lambda r: (r["invalid_at"], r["old_id"], r["new_id"]))
        for row in rows:
            for nid in {row["old_id"], row["new_id"]} & want:
                out.setdefault(nid, []).append(row)
        return out

    def space_supersessions(self, space_id: int) -> list[dict[str, Any]]:
        """Every row of the space, oldest ``invalid_at`` first (export, copy)."""
        return [_row(r) for r in self.db.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM supersessions WHERE space_id = ? "
            f"ORDER BY invalid_at, old_id, new_id", (space_id,))]

    def has_supersessions(self, space_id: int) -> bool:
        """Whether the space has any mark: a recall reads the marks of its memories only then (5 us against
        ~70 us for the marks of 200 memories, measured on SQLite: docs/benchmarks/quality.md "Facts that change")."""
        return bool(self.db.execute("SELECT EXISTS (SELECT 1 FROM supersessions WHERE space_id = ?)",
                                    (space_id,)).fetchone()[0])

    def count_supersessions(self, space_id: int) -> int:
        return self.db.execute("SELECT count(*) FROM supersessions WHERE space_id = ?", (space_id,)).fetchone()[0]

    def restore_supersessions(self, space_id: int, rows: Iterable[dict[str, Any]]) -> int:
        """Inside a write transaction (import, copy): write rows as exported, ids already mapped to this
        database; rows naming a memory not in the space are skipped. Returns the rows written."""
        self.require_transaction("restore_supersessions")
        rows = list(rows)
        have = {r[0] for r in self.select_in("SELECT id FROM nodes WHERE space_id = ? AND id IN ({ids})",
                                             sorted({int(r[k]) for r in rows for k in ("old_id", "new_id")}),
                                             (space_id,))}
        keep = [r for r in rows if int(r["old_id"]) in have and int(r["new_id"]) in have]
        self.db.executemany(
            "INSERT INTO supersessions(space_id, old_id, new_id, invalid_at, detector, confidence, status, created_at, "
            "reason) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(old_id, new_id) DO NOTHING",
            [(space_id, int(r["old_id"]), int(r["new_id"]), float(r["invalid_at"]), str(r["detector"]),
              float(r.get("confidence", 1.0)), str(r["status"]), float(r.get("created_at") or time.time()),
              None if r.get("reason") is None else str(r["reason"])) for r in keep])
        return len(keep)

    def stale_records(self, record_ids: Iterable[int], as_of: float | None = None) -> dict[int, list[int]]:
        """Semantic records whose evidence holds a superseded memory (status ``superseded``, in force at
        ``as_of`` when given): ``{record id: [superseded evidence ids]}``."""
        ids = sorted({int(i) for i in record_ids})
        out: dict[int, list[int]] = {}
        cond = "" if as_of is None else " AND s.invalid_at <= ?"
        extra = () if as_of is None else (float(as_of),)
        for rid, nid in self.select_in(
                "SELECT DISTINCT e.semantic_id, e.node_id FROM semantic_evidence e JOIN supersessions s "
                "ON s.old_id = e.node_id WHERE s.status = 'superseded'" + cond + " AND e.semantic_id IN ({ids})",
                ids, extra):
            out.setdefault(rid, []).append(nid)
        return {r: sorted(v) for r, v in out.items()}

    def undecided_supersessions(self, space_id: int, limit: int = 50) -> list[dict[str, Any]]:
        """The ``possible`` marks of the space no judge has decided yet (any detector but ``judge`` and
        ``explicit``), newest successor first: what the deferred change judge is asked about."""
        return [_row(r) for r in self.db.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM supersessions WHERE space_id = ? AND status = 'possible' "
            f"AND detector NOT IN ('judge', 'explicit') ORDER BY new_id DESC, old_id DESC LIMIT ?",
            (space_id, int(limit)))]

    def _space_name(self, space_id: int) -> str:
        row = self.db.execute("SELECT name FROM spaces WHERE id = ?", (space_id,)).fetchone()
        return row[0] if row else str(space_id)
