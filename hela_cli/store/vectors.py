"""Vector and keyword search: the KNN policy (in-process index or sqlite-vec), per-space caches of
vectors, and FTS5 keyword candidates."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


from hela_cli.store.base import _blob, _fts_phrase


class Search:
    """KNN by cosine and keyword search over a space."""

    def node_vectors(self, ids: Sequence[int], space_id: int | None = None) -> dict[int, np.ndarray]:
        """Stored float32 vectors by node id (cached per space like :meth:`node_features` with ``space_id``)."""
        return self._cached_read(space_id, "vectors", ids, lambda missing: {
            nid: np.frombuffer(blob, dtype=np.float32) for nid, blob in self.select_in(
                "SELECT node_id, embedding FROM node_emb WHERE node_id IN ({ids})", missing)})

    def knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Nearest nodes of the space by cosine: ``[(node_id, cosine_similarity)]``, best first."""
        if k <= 0:
            return []
        if self.embedder_info() is not None and (self.vector_cache or self._small_space(space_id)):
            index = self._vector_index(space_id)
            if index.exact:
                return index.knn(vector, k)
            # quantized index: it proposes k + 20 ids; the stored float32 vectors give the exact cosines
            # and the final top k (int8 rounding can swap near-ties at the border)
            hits = index.knn(vector, k + 20)
            vecs = self.node_vectors([nid for nid, _ in hits], space_id)
            q = np.asarray(vector, dtype=np.float32)
            exact = [(nid, float(np.dot(vecs[nid], q))) for nid, _ in hits if nid in vecs]
            return sorted(exact, key=lambda t: (-t[1], t[0]))[:k]
        rows = self.db.execute(
            "SELECT node_id, distance FROM node_vec WHERE embedding MATCH ? AND k = ? AND space_id = ?",
            (_blob(vector), int(k), space_id)).fetchall()
        return [(nid, 1.0 - dist) for nid, dist in rows]

    def _nodes_version(self, space_id: int) -> int:
        row = self.db.execute("SELECT nodes_version FROM spaces WHERE id=?", (space_id,)).fetchone()
        return row[0] if row else -1

    def _small_space(self, space_id: int) -> bool:
        """Spaces up to ``EXACT_LIMIT`` nodes use the in-process index even without ``vector_cache``: there it
        is exact (same results as sqlite-vec), loads in milliseconds and answers in ~2 ms instead of ~16."""
        from hela_cli.store.vector_index import EXACT_LIMIT

        version = self._nodes_version(space_id)
        cached = self._sizes.get(space_id)
        if cached is None or cached[0] != version:
            cached = (version, self.count_nodes(space_id))
            self._sizes[space_id] = cached
        return cached[1] <= EXACT_LIMIT

    def _vector_index(self, space_id: int) -> Any:
        from hela_cli.store.vector_index import VectorIndex

        version = self._nodes_version(space_id)
        cached = self._indexes.get(space_id)
        if cached is None or cached[0] != version:
            info = self.embedder_info()
            assert info is not None
            rows = self.db.execute("SELECT node_id, embedding FROM node_emb WHERE space_id = ? ORDER BY node_id",
                                   (space_id,))
            cached = (version, VectorIndex.from_rows(rows, info[1]))
            self._indexes[space_id] = cached
        return cached[1]

    def keyword_search(self, space_id: int, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """Nodes of the space matching any term, ``[(node_id, bm25)]`` with bm25 >= 0, best first."""
        terms = [t for t in dict.fromkeys(terms) if t]
        if not terms or limit <= 0:
            return []
        query = " OR ".join(_fts_phrase(f"s{space_id}_{t}") for t in terms)
        rows = self.db.execute(
            "SELECT rowid, -bm25(node_fts) AS score FROM node_fts WHERE node_fts MATCH ? "
            "ORDER BY bm25(node_fts) LIMIT ?", (query, int(limit))).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def term_counts(self, space_id: int, terms: Sequence[str]) -> dict[str, int]:
        """Document frequency of each keyword in the space (memories whose keywords hold it), cached per
        space until its nodes change. One FTS5 count per new term."""
        cache = self._space_cache(space_id, "term_df")
        out: dict[str, int] = {}
        for t in dict.fromkeys(terms):
            if not t:
                continue
            if cache is not None and t in cache:
                out[t] = cache[t]
                continue
            n = self.db.execute("SELECT count(*) FROM node_fts WHERE node_fts MATCH ?",
                                (_fts_phrase(f"s{space_id}_{t}"),)).fetchone()[0]
            out[t] = n
            if cache is not None:
                cache[t] = n
        return out

    def term_postings(self, space_id: int, terms: Sequence[str], max_df: int) -> dict[str, list[int]]:
        """The memories holding each keyword, for keywords held by at most ``max_df`` memories of the space
        (rarer ones are left out after reading ``max_df + 1`` postings). One FTS5 query per term."""
        out: dict[str, list[int]] = {}
        for t in dict.fromkeys(terms):
            if not t:
                continue
            ids = [r[0] for r in self.db.execute("SELECT rowid FROM node_fts WHERE node_fts MATCH ? LIMIT ?",
                                                 (_fts_phrase(f"s{space_id}_{t}"), max_df + 1))]
            if len(ids) <= max_df:
                out[t] = ids
        return out

    def speaker_counts(self, space_id: int) -> dict[str, int]:
        """``{speaker: number of memories}`` of the space, cached per space until its nodes change."""
        cache = self._space_cache(space_id, "speakers")
        if cache:
            return dict(cache)
        rows = self.db.execute("SELECT coalesce(speaker, ''), count(*) FROM nodes WHERE space_id=? "
                               "GROUP BY speaker", (space_id,)).fetchall()
        out = {s: n for s, n in rows if s}
        if cache is not None:
            cache.update(out)
        return out

    # ---------------------------------------------------------------- passage vectors of long turns
    def insert_passages(self, space_id: int, passages: dict[int, np.ndarray]) -> None:
        """Store passage vectors ``{node_id: (n, dim) array}`` (replacing a node's earlier ones). Call inside
        :meth:`transaction`."""
        assert self._in_tx, "insert_passages must run inside a transaction"
        for nid, vecs in passages.items():
            self.db.execute("DELETE FROM node_passage WHERE node_id=?", (nid,))
            self.db.executemany("INSERT INTO node_passage(node_id, idx, space_id, embedding) VALUES (?,?,?,?)",
                                [(nid, i, space_id, _blob(v)) for i, v in enumerate(vecs)])
        if passages:
            self.db.execute("UPDATE spaces SET nodes_version = nodes_version + 1 WHERE id=?", (space_id,))

    def passage_cosines(self, space_id: int, vector: np.ndarray) -> dict[int, float]:
        """``{node_id: best cosine of its passages}`` for every node of the space that has passage vectors.

        The space's passage matrix is loaded once per process and kept until the space's nodes change
        (passages exist only for long turns: a few per long turn, one matrix product per question)."""
        version = self._nodes_version(space_id)
        cached = self._caches.get((space_id, "passages"))
        if cached is None or cached[0] != version:
            owners, blobs = [], []
            for nid, blob in self.db.execute(
                    "SELECT node_id, embedding FROM node_passage WHERE space_id=? ORDER BY node_id, idx",
                    (space_id,)):
                owners.append(nid)
                blobs.append(blob)
            mat = (np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
                   if blobs else np.zeros((0, 0), dtype=np.float32))
            cached = (version, {"owners": np.asarray(owners, dtype=np.int64), "mat": mat})
            self._caches[(space_id, "passages")] = cached
        owners, mat = cached[1]["owners"], cached[1]["mat"]
        if not len(owners):
            return {}
        sims = mat @ np.asarray(vector, dtype=np.float32)
        out: dict[int, float] = {}
        for nid, s in zip(owners.tolist(), sims.tolist()):
            if s > out.get(nid, -2.0):
                out[nid] = s
        return out

    def long_nodes_without_passages(self, space_id: int, min_chars: int) -> list[tuple[int, str, str]]:
        """``[(node_id, speaker, text)]`` of the space's turns longer than ``min_chars`` with no passage vectors."""
        return self.db.execute(
            "SELECT id, coalesce(speaker, ''), text FROM nodes n WHERE space_id=? AND length(text) > ? AND NOT "
            "EXISTS (SELECT 1 FROM node_passage p WHERE p.node_id = n.id) ORDER BY id",
            (space_id, int(min_chars))).fetchall()

    def nodes_in_window(self, space_id: int, start: float, end: float, limit: int) -> list[int]:
        """Ids of up to ``limit`` memories of the space with ``start <= ts <= end`` (index ``nodes_space_ts``)."""
        lo = start if start != float("-inf") else -1e300
        hi = end if end != float("inf") else 1e300
        return [r[0] for r in self.db.execute(
            "SELECT id FROM nodes WHERE space_id=? AND ts BETWEEN ? AND ? ORDER BY ts LIMIT ?",
            (space_id, lo, hi, int(limit)))]
