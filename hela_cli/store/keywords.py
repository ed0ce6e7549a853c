"""Keyword search over the postings both engines keep: ``node_terms`` rows ``(space, term, node, tf, dl)`` and
each space's BM25 counts (``spaces.fts_docs`` / ``fts_len``).

BM25 as FTS5 computes it (k1 1.2, b 0.75, IDF ``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6), with N,
n and the average length of the searched space only (migration 0015 on SQLite; issue 35): a space's scores
do not depend on what other spaces hold. The reads and the removal of postings are plain SQL shared by
both engines, and so is the scoring statement (``_bm25``, with the dialect's float type and term rows);
the engines write new postings (``_index_terms``: ``executemany`` / ``COPY``).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from hela_cli.store.base import BM25_B, BM25_K1, fts_length, term_key


class Keywords:
    """The keyword postings: a node's out, an edited node's replaced, searches, document frequencies."""

    def _unindex_terms(self, space_id: int, ids: Sequence[int]) -> None:
        """The postings of nodes about to be deleted (their rows still there) out, and their counts."""
        total = sum(fts_length(space_id, kws.split() if kws else []) for _, kws in self.select_in(
            "SELECT id, keywords FROM nodes WHERE id IN ({ids})", list(ids)))
        self.db.executemany("DELETE FROM node_terms WHERE node_id = ?", [(i,) for i in ids])
        self.db.execute("UPDATE spaces SET fts_docs = fts_docs - ?, fts_len = fts_len - ? WHERE id = ?",
                        (len(ids), total, space_id))

    def _replace_keyword_row(self, space_id: int, node_id: int, keywords: Sequence[str]) -> None:
        """Inside an edit's transaction, before the node row's ``keywords`` change: the node's postings and
        the space's counts, out with the stored keywords, in with ``keywords``."""
        self._unindex_terms(space_id, [node_id])
        self._index_terms(space_id, {node_id: list(keywords)})

    def _bm25(self, space_id: int, terms: Sequence[str], where: str, args: Sequence[Any], limit: int,
              offset: int = 0) -> list[tuple[int, float]]:
        """FTS5's ``-bm25()`` over the space's memories with the space's own statistics, best first, ties by
        id; ``where`` (``" AND ..."`` on the nodes' alias ``n``, with ``args``) narrows them (recall filters,
        ``hela ui``'s search) without changing the statistics.

        One statement on both engines: the space's counts, the document frequencies, the IDFs and the
        scores (a query term folded to the same key as another counts twice, as a repeated phrase did in
        FTS5). Each score is FTS5's arithmetic in FTS5's order, the terms' parts added in query order
        (the dialect's ``ordered_sum``, plain ``+`` in ``pos`` order): a space alone scores as FTS5's
        ``bm25()`` did to the last bit, and Postgres as SQLite (``tests/test_postgres.py``). The dialect gives
        the float type and the rows ``(term, pos)`` of the JSON array of query terms, ``pos`` from 0. Measured
        against FTS5's ``bm25()`` and a Python scorer over FTS5 matches (docs/benchmarks/quality.md,
        "Keyword statistics per space").

        Bounded by construction (issue 44): the statement's text is the same for 1 term or 50,000 (the terms
        are one JSON parameter, the score one aggregate); before, each term added a ``CASE`` to the score and
        a 1,000-term query exceeded SQLite's expression depth."""
        terms = [t for t in dict.fromkeys(terms) if t]
        if not terms or limit <= 0:
            return []
        keys = [term_key(t) for t in terms]
        nodes = " JOIN nodes n ON n.id = t.node_id" if where else ""
        real = self.dialect.float_type
        rows = self.db.execute(
            f"""WITH tot AS (SELECT CAST(fts_docs AS {real}) AS n, CAST(fts_len AS {real}) AS len FROM spaces WHERE id = ?),
                    k AS ({self.dialect.json_terms}),
                    df AS (SELECT term, CAST(count(*) AS {real}) AS df FROM node_terms
                           WHERE space_id = ? AND term IN (SELECT term FROM k) GROUP BY term),
                    q AS (SELECT k.term, k.pos, ln((tot.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS v
                          FROM k CROSS JOIN tot LEFT JOIN df ON df.term = k.term),
                    p AS (SELECT t.node_id, q.pos, (CASE WHEN q.v > 0 THEN q.v ELSE 1e-6 END)
                                 * ((t.tf * ?) / (t.tf + ? * (? + ? * t.dl / (tot.len / tot.n)))) AS c
                          FROM q JOIN node_terms t ON t.space_id = ? AND t.term = q.term CROSS JOIN tot{nodes}
                          WHERE tot.n > 0{where})
               SELECT node_id, {self.dialect.ordered_sum("c", "pos")} AS score FROM p
               GROUP BY node_id ORDER BY score DESC, node_id LIMIT ? OFFSET ?""",
            (int(space_id), json.dumps(keys), int(space_id), BM25_K1 + 1.0, BM25_K1, 1.0 - BM25_B, BM25_B,
             int(space_id), *args, int(limit), int(offset))).fetchall()
        return [(int(n), float(s)) for n, s in rows]

    def keyword_search(self, space_id: int, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """Nodes of the space matching any term, ``[(node_id, bm25)]`` with bm25 >= 0, best first (ties by
        id)."""
        return self._bm25(space_id, terms, "", (), limit)

    def term_counts(self, space_id: int, terms: Sequence[str]) -> dict[str, int]:
        """Document frequency of each keyword in the space (memories whose keywords hold it), cached per
        space until its nodes change. One statement for the terms not cached (the terms one JSON parameter:
        any number)."""
        cache = self._space_cache(space_id, "term_df")
        want = [t for t in dict.fromkeys(terms) if t]
        missing = [t for t in want if cache is None or t not in cache]
        out: dict[str, int] = {}
        if missing:
            counts = self._doc_counts(space_id, missing)
            for t in missing:
                out[t] = int(counts.get(term_key(t), 0))
                if cache is not None:
                    cache[t] = out[t]
        return {t: out[t] if t in out else cache[t] for t in want}  # type: ignore[index]

    def _doc_counts(self, space_id: int, terms: Sequence[str]) -> dict[str, int]:
        """``{key: memories holding it}`` of the terms' keys held by any memory, read now (no cache); one
        statement, the keys one JSON parameter."""
        keys = sorted({term_key(t) for t in terms if t})
        if not keys:
            return {}
        return {k: int(n) for k, n in self.db.execute(
            f"SELECT term, count(*) FROM node_terms WHERE space_id = ? AND term IN ({self.dialect.json_values}) "
            "GROUP BY term", (int(space_id), json.dumps(keys)))}

    def term_postings(self, space_id: int, terms: Sequence[str], max_df: int) -> dict[str, list[int]]:
        """The memories holding each keyword, for keywords held by at most ``max_df`` memories of the space
        (the others left out). Two statements whatever the number of terms (issue 44: a 50,000-word turn
        made one query per distinct keyword): the document frequencies, then the postings of the rare
        keywords, each list one JSON parameter."""
        want = [t for t in dict.fromkeys(terms) if t]
        counts = self._doc_counts(space_id, want)
        rare = sorted(k for k, n in counts.items() if n <= max_df)
        held: dict[str, list[int]] = {}
        if rare:
            for key, nid in self.db.execute(
                    f"SELECT term, node_id FROM node_terms WHERE space_id = ? AND term IN ({self.dialect.json_values}) "
                    "ORDER BY term, node_id", (int(space_id), json.dumps(rare))):
                held.setdefault(key, []).append(int(nid))
        out: dict[str, list[int]] = {}
        for t in want:
            if counts.get(term_key(t), 0) <= max_df:
                out[t] = held.get(term_key(t), [])
        return out
