"""Reads for browsing a space page by page (``hela ui``): filtered memory lists paginated in SQL, one memory's
edges with their parts (fixed prior, learned weight) and its place in its session.

Shared by both engines (keyword search: the engine's BM25 statement ``_bm25`` over ``node_terms``); each
engine adds the read-only switch (``set_query_only``) and the change token the strength cache keys on
(``_change_token``). Whether a file
or URL is a hela database at all is :func:`hela_cli.store.database_kind`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from hela_cli.store.base import NODE_COLUMNS, Space, _node, term_key


@dataclass
class NodeFilter:
    """Filters of a memory list; None / empty: no filter. ``since`` / ``until``: epoch seconds (inclusive
    start, exclusive end). ``contains``: a case-insensitive substring of the text. ``terms``: keywords (as
    :func:`hela_cli.text.keywords.keywords` gives them) matched in the keyword postings, results best BM25
    first."""

    speaker: str | None = None
    session: str | None = None
    since: float | None = None
    until: float | None = None
    contains: str | None = None
    terms: tuple[str, ...] = ()


def _like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class StrengthCache:
    """``edge_strengths`` for a long-lived reader (``hela ui``): one read of the space's edges aggregated with
    numpy (1,078-1,192 ms against 1,375-1,553 ms for the ``UNION ALL ... GROUP BY`` of
    ``Edges.edge_strengths`` at 114k edges, alternating in one run on a machine with load 13 on 2 cores; the
    plain read alone took 626-656 ms), kept until the database changes. A change is any commit by another
    connection (``PRAGMA data_version``) or by this one (``total_changes``); the hubs, heatmap and overview
    of one state share one read. Mixed in before :class:`~hela_cli.store.Store` (``BrowseStore``)."""

    def edge_strengths(self, space: Space, *, with_priors: bool = False) -> dict[int, tuple[float, int]]:
        import numpy as np

        key = (space.id, with_priors, self._change_token())
        cached = getattr(self, "_strengths", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        with self._snapshot():
            factor = self._factor(space.id)
            rows = self.db.execute("SELECT a, b, amp, prior FROM edges WHERE space_id = ?", (space.id,)).fetchall()
        if not rows:
            out: dict[int, tuple[float, int]] = {}
        else:
            arr = np.array(rows, dtype=np.float64)
            ends = np.concatenate([arr[:, 0], arr[:, 1]]).astype(np.int64)
            nodes, inv = np.unique(ends, return_inverse=True)
            amp = np.bincount(inv, weights=np.concatenate([arr[:, 2], arr[:, 2]]))
            deg = np.bincount(inv)
            total = amp * factor
            if with_priors:
                total = total + np.bincount(inv, weights=np.concatenate([arr[:, 3], arr[:, 3]]))
            out = dict(zip(nodes.tolist(), zip(total.tolist(), deg.tolist())))
        self._strengths = (key, out)
        return out


class Browse:
    """Paginated, filtered reads of a space's memories and a memory's edges by kind."""

    def _filter_sql(self, space_id: int, f: NodeFilter, alias: str = "n", space: bool = True
                    ) -> tuple[str, list[Any]]:
        """``f`` as an SQL condition on ``alias`` with its arguments; ``space``: the space's own condition
        first (without it: only the filters, "" when there are none)."""
        where, args = ([f"{alias}.space_id = ?"], [space_id]) if space else ([], [])
        if f.speaker:
            where.append(f"{alias}.speaker = ?")
            args.append(f.speaker)
        if f.session:
            where.append(f"{alias}.session = ?")
            args.append(f.session)
        if f.since is not None:
            where.append(f"{alias}.ts >= ?")
            args.append(f.since)
        if f.until is not None:
            where.append(f"{alias}.ts < ?")
            args.append(f.until)
        if f.contains:
            where.append(f"{alias}.text {self.dialect.like} ? ESCAPE '\\'")
            args.append(f"%{_like_escape(f.contains)}%")
        return " AND ".join(where), args

    def browse_nodes(self, space_id: int, f: NodeFilter, limit: int, offset: int = 0,
                     newest_first: bool = True) -> list[dict[str, Any]]:
        """One page of the space's memories matching ``f``: by conversation order (newest first by default),
        or, with keyword ``terms``, best BM25 match first (the space's statistics, ties by id). LIMIT /
        OFFSET in SQL."""
        if f.terms:
            where, args = self._filter_sql(space_id, f, space=False)
            ids = [nid for nid, _ in self._bm25(space_id, f.terms, f" AND {where}" if where else "", args,
                                                limit, offset)]
            rows = {r[0]: _node(r) for r in self.select_in(
                f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE id IN ({{ids}})", ids)}
            return [rows[i] for i in ids if i in rows]
        cols = ", ".join(f"n.{c}" for c in NODE_COLUMNS)
        where, args = self._filter_sql(space_id, f)
        order = "DESC" if newest_first else "ASC"
        sql = f"SELECT {cols} FROM nodes n WHERE {where} ORDER BY n.ord {order}, n.id {order} LIMIT ? OFFSET ?"
        return [_node(r) for r in self.db.execute(sql, (*args, int(limit), int(offset)))]

    def count_browse(self, space_id: int, f: NodeFilter) -> int:
        """How many memories of the space match ``f`` (with ``terms``: those holding any of them)."""
        where, args = self._filter_sql(space_id, f)
        if f.terms:
            keys = sorted({term_key(t) for t in f.terms if t})
            if not keys:
                return 0
            return self.db.execute(   # the terms one JSON parameter: a search box of any length (issue 44)
                f"SELECT count(DISTINCT t.node_id) FROM node_terms t JOIN nodes n ON n.id = t.node_id "
                f"WHERE t.space_id = ? AND t.term IN ({self.dialect.json_values}) AND {where}",
                (int(space_id), json.dumps(keys), *args)).fetchone()[0]
        return self.db.execute(f"SELECT count(*) FROM nodes n WHERE {where}", args).fetchone()[0]

    def node_positions(self, ids: list[int] | set[int]) -> dict[int, tuple[str, int]]:
        """``{node: (session or '', ord)}``."""
        return {nid: (session, ord_) for nid, session, ord_ in self.select_in(
            "SELECT id, coalesce(session, ''), ord FROM nodes WHERE id IN ({ids})", list(ids))}

    def turns_between(self, space_id: int, session: str, lo: int, hi: int) -> bool:
        """Whether the session has a turn strictly between conversation positions ``lo`` and ``hi``: a range
        of the ``(space_id, ord)`` index, as long as the gap between the two turns (one row for consecutive
        turns), never the whole space."""
        return self.db.execute("SELECT 1 FROM nodes WHERE space_id = ? AND ord > ? AND ord < ? "
                               "AND coalesce(session, '') = ? LIMIT 1", (space_id, lo, hi, session)).fetchone() is not None

    def node_edges(self, space: Space, node_id: int) -> list[tuple[int, float, float]]:
        """The memory's edges as ``[(other, fixed prior, learned weight now)]``; current weight = the sum."""
        with self._snapshot():
            factor = self._factor(space.id)
            rows = self.db.execute("SELECT b, prior, amp FROM edges WHERE a = ? UNION ALL "
                                   "SELECT a, prior, amp FROM edges WHERE b = ?", (node_id, node_id)).fetchall()
        return [(other, prior, amp * factor) for other, prior, amp in rows]

    def edge_parts(self, space: Space, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], tuple[float, float]]:
        """``{(a, b): (fixed prior, learned weight now)}`` for the pairs that have an edge (keys ``a < b``)."""
        wanted = {(min(a, b), max(a, b)) for a, b in pairs if a != b}
        ids = sorted({i for pair in wanted for i in pair})
        if not ids:
            return {}
        with self._snapshot():  # one read for all pairs (the UI's graphs hold at most a few hundred)
            factor = self._factor(space.id)
            rows = self._edges_among_ids(ids)
        return {(a, b): (prior, amp * factor) for a, b, amp, prior in rows if (a, b) in wanted}

    def semantic_page(self, space_id: int, limit: int, offset: int = 0) -> list[int]:
        """Ids of one page of the space's semantic records (newest first)."""
        return [r[0] for r in self.db.execute("SELECT id FROM semantic WHERE space_id = ? ORDER BY id DESC "
                                              "LIMIT ? OFFSET ?", (space_id, int(limit), int(offset)))]

    def node_space_name(self, node_id: int) -> str | None:
        return self.node_space_names([node_id]).get(int(node_id))

    def node_space_names(self, node_ids: Sequence[int]) -> dict[int, str]:
        """``{node id: its space's name}`` for those of ``node_ids`` that exist, in one query per 500 ids."""
        return {int(i): name for i, name in self.select_in(
            "SELECT n.id, s.name FROM nodes n JOIN spaces s ON s.id = n.space_id WHERE n.id IN ({ids})",
            sorted({int(i) for i in node_ids}))}
