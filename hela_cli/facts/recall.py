"""Facts that change, in recall (issue 38; docs/retrieval.md, "Facts that change").

A memory may be superseded by a later one (:mod:`hela_cli.store.supersession`). Recall keeps history
recallable (most questions about the past need the old memory) but never serves a replaced fact alone:

* :class:`Marks`: the supersession rows of the memories a recall scored, read once, as in force at the
  recall's ``as_of`` (a row whose ``invalid_at`` is later is ignored);
* :func:`blocked_targets`: the superseded memories Eq.4 must not revive through their neighbours (the
  rule is applied where ``retrieval._spreading`` applies Eq.4);
* :func:`with_successors`: a recalled memory's successor (and its successor, ...) joins the result, placed
  above it, and every memory carries its marks: ``superseded_by``, ``invalid_at``, ``supersession_status``
  and ``supersedes``; only a ``superseded`` mark brings a successor in, and the recall keeps its budget
  (``retrieval._successors``: a successor brought in takes the last memory's place; with ``current_only``
  the successor of a superseded memory Eq.5 chose stands in for it). A ``possible`` mark brings nothing in
  and hides nothing, but when both of its memories are already recalled and the question asks about what
  they share (``about``: a keyword of the question in both), the newer ones are placed right above the older
  one: that takes no slot (issue 45; docs/retrieval.md).

With no supersession row among the scored memories nothing changes: the same memories, order and
scores as before (LoCoMo dev: BENCHMARKS.md).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

#: a chain of successors followed this far at most (a fact changed ten times: the newest ten)
MAX_CHAIN = 10


class Marks:
    """Supersession rows of some memories (:meth:`StoreAPI.supersessions_for`), read as in force at
    ``as_of`` (None: now)."""

    def __init__(self, rows: dict[int, list[dict[str, Any]]], as_of: float | None = None):
        self.as_of = as_of
        self.rows: dict[int, list[dict[str, Any]]] = {}
        self.add(rows)

    def add(self, rows: dict[int, list[dict[str, Any]]]) -> None:
        for nid, lst in rows.items():
            keep = [r for r in lst if self.as_of is None or r["invalid_at"] <= self.as_of]
            if keep:
                self.rows[nid] = keep

    def __bool__(self) -> bool:
        return bool(self.rows)

    def successor(self, nid: int) -> dict[str, Any] | None:
        """The row that supersedes ``nid``: a ``superseded`` one before a ``possible`` one, then the latest."""
        mine = [r for r in self.rows.get(nid, ()) if r["old_id"] == nid]
        if not mine:
            return None
        return max(mine, key=lambda r: (r["status"] == "superseded", r["invalid_at"], r["new_id"]))

    def superseded(self, nid: int) -> bool:
        """Whether ``nid`` is superseded for certain (a ``possible`` mark hides nothing)."""
        row = self.successor(nid)
        return row is not None and row["status"] == "superseded"

    def predecessors(self, nid: int) -> list[int]:
        return sorted({r["old_id"] for r in self.rows.get(nid, ()) if r["new_id"] == nid})

    def fields(self, nid: int) -> dict[str, Any]:
        """The keys a recalled memory carries (``superseded_by`` etc.; None / [] without a mark)."""
        row = self.successor(nid)
        return {"superseded_by": row["new_id"] if row else None, "invalid_at": row["invalid_at"] if row else None,
                "supersession_status": row["status"] if row else None, "supersedes": self.predecessors(nid)}


def blocked_targets(marks: Marks, ids: Iterable[int]) -> set[int]:
    """Those of ``ids`` Eq.4 spreading must not bring a bonus to: the memories superseded for certain."""
    return {i for i in ids if marks.superseded(i)}


def above(marks: Marks, nid: int, present: dict[int, Any], about: Callable[[int, int], bool] | None = None
          ) -> list[int]:
    """The memories recall places right above ``nid``, in ``present``'s order: the successor of its
    ``superseded`` mark (:meth:`Marks.successor`) when that is in ``present``; else every successor by a
    ``possible`` mark that is in ``present`` and about the question (``about(old, new)``; None: none is). A
    possible mark brings nothing in: only memories recalled on their own merits move, and moving them up
    takes no slot and hides nothing."""
    row = marks.successor(nid)
    if row is not None and row["status"] == "superseded":
        return [row["new_id"]] if row["new_id"] in present else []
    if about is None:
        return []
    news = {r["new_id"] for r in marks.rows.get(nid, ()) if r["old_id"] == nid and r["status"] == "possible"}
    return [m for m in present if m in news and about(nid, m)]


def with_successors(memories: list[dict[str, Any]], marks: Marks, load: Callable[[set[int]], list[dict[str, Any]]],
                    more: Callable[[set[int]], dict[int, list[dict[str, Any]]]],
                    about: Callable[[int, int], bool] | None = None) -> list[dict[str, Any]]:
    """The recalled ``memories`` with each superseded one's successor placed right above it (a successor
    already ranked higher stays where it is; one ranked lower moves up; one not recalled joins, only for a
    ``superseded`` mark: a ``possible`` one brings nothing in), following chains up to :data:`MAX_CHAIN`
    steps, and every memory's marks set (:meth:`Marks.fields`). The caller keeps the budget (the result may
    be longer than ``memories``: ``retrieval._successors`` cuts it, the last ones leaving). ``load(ids)``
    returns the rows of successors not recalled (``path`` ``"successor"``; those outside the recall's
    filters or time left out), ``more(ids)`` their supersession rows. A successor's ``score`` is raised to
    that of the memory it replaces, so an order by score keeps it above. A memory with only ``possible``
    marks gets every recalled successor that ``about`` accepts placed above it, in their order
    (:func:`above`); without ``about``, possible marks move nothing."""
    by_id = {m["id"]: m for m in memories}
    for _ in range(MAX_CHAIN):   # only a certain mark brings a successor in: a possible one takes no slot
        want = {row["new_id"] for nid in list(by_id)
                if (row := marks.successor(nid)) and row["status"] == "superseded"} - set(by_id)
        if not want:
            break
        for m in load(want):
            by_id[m["id"]] = m
        marks.add(more({m for m in want if m in by_id}))
    out: list[dict[str, Any]] = []
    placed: set[int] = set()

    up = {nid: nxt for nid in by_id if (nxt := above(marks, nid, by_id, about))}

    def place(nid: int, depth: int = 0) -> None:
        if nid in placed or nid not in by_id:
            return
        placed.add(nid)
        if depth < MAX_CHAIN:
            for nxt in up.get(nid, ()):
                place(nxt, depth + 1)
        out.append(by_id[nid])

    for m in memories:
        place(m["id"])
    for m in out:
        m.update(marks.fields(m["id"]))
    for m in reversed(out):   # successors above their predecessors: raise the score along each chain
        for nxt in up.get(m["id"], ()):
            if by_id[nxt]["score"] < m["score"]:
                by_id[nxt]["score"] = m["score"]
    return out
