"""Keyword search over the postings both engines keep: ``node_terms`` rows ``(space, term, node, tf, dl)`` and
each space's BM25 counts (``spaces.fts_docs`` / ``fts_len``).

BM25 as FTS5 computes it (k1 1.2, b 0.75, IDF ``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6), with N,
n and the average length of the searched space only (migration 0015 on SQLite; issue 35): a space's scores
do not depend on what other spaces hold. The reads and the removal of postings are plain SQL shared by
both engines; the engines write new postings (``_index_terms``: ``executemany`` / ``COPY``) and run the
scoring statement (``_bm25``: SQLite's and Postgres' spellings of the same arithmetic).
"""

from __future__ import annotations

from typing import Sequence

from hela_cli.store.base import fts_length, term_key


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

    def keyword_search(self, space_id: int, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """Nodes of the space matching any term, ``[(node_id, bm25)]`` with bm25 >= 0, best first (ties by
        id)."""
        return self._bm25(space_id, terms, "", (), limit)

    def term_counts(self, space_id: int, terms: Sequence[str]) -> dict[str, int]:
        """Document frequency of each keyword in the space (memories whose keywords hold it), cached per
        space until its nodes change. One statement for the terms not cached."""
        cache = self._space_cache(space_id, "term_df")
        want = [t for t in dict.fromkeys(terms) if t]
        missing = [t for t in want if cache is None or t not in cache]
        out: dict[str, int] = {}
        if missing:
            keys = sorted({term_key(t) for t in missing})
            counts = dict(self.db.execute(
                f"SELECT term, count(*) FROM node_terms WHERE space_id = ? AND term IN ({','.join('?' * len(keys))}) "
                f"GROUP BY term", (int(space_id), *keys)).fetchall())
            for t in missing:
                out[t] = int(counts.get(term_key(t), 0))
                if cache is not None:
                    cache[t] = out[t]
        return {t: out[t] if t in out else cache[t] for t in want}  # type: ignore[index]

    def term_postings(self, space_id: int, terms: Sequence[str], max_df: int) -> dict[str, list[int]]:
        """The memories holding each keyword, for keywords held by at most ``max_df`` memories of the space
        (rarer ones are left out after reading ``max_df + 1`` postings). One query per term."""
        out: dict[str, list[int]] = {}
        for t in dict.fromkeys(terms):
            if not t:
                continue
            ids = [r[0] for r in self.db.execute(
                "SELECT node_id FROM node_terms WHERE space_id = ? AND term = ? ORDER BY node_id LIMIT ?",
                (int(space_id), term_key(t), max_df + 1))]
            if len(ids) <= max_df:
                out[t] = ids
        return out
