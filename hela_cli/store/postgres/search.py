"""The Postgres engine's search: what SQLite does with vec0, the sign-bit index and FTS5.

Vectors (pgvector): a space up to ``hnsw_min`` memories is searched exactly (``ORDER BY embedding <=> q``
over the space's rows, read through the ``(space_id, node_id)`` index: the same top k as SQLite's exact
in-process index; cosines are rounded to float32 as that index computes them, so near-ties between
almost identical vectors break by node id on both backends); a larger space gets its own partial HNSW index (``WHERE space_id = <id>``, cosine,
built once with ``CREATE INDEX CONCURRENTLY`` the first time it is searched past the limit: right after that
search when it ran in a retrieval's snapshot, ``read.py``), queried with
the space id written into the statement so the planner can match the partial index. The limit is
measured (docs/benchmarks/speed.md, "Postgres backend").

Keywords: FTS5's BM25 (k1 1.2, b 0.75, IDF ``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, N and
the average length those of the searched space, ``spaces.fts_docs`` / ``fts_len``) computed in SQL from
``node_terms``, as on SQLite (``store/sqlite/search.py``, the same postings and statement): the same scores and
ranking on both engines (ties by node id), whatever the other spaces of the database hold.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hela_cli.store.base import term_rows

RESCORE_EXTRA = 20   # candidates beyond k that pgvector proposes for the float32 rescoring (as the int8 index)


def as_array(value: Any) -> np.ndarray:
    """A pgvector value as a float32 array (the adapter gives ``Vector`` objects)."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


class PgSearch:
    """KNN through pgvector and BM25 keyword search over ``node_terms``."""

    hnsw_min = 20_000

    # ---------------------------------------------------------------- vectors
    def node_vectors(self, ids: Sequence[int], space_id: int | None = None) -> dict[int, np.ndarray]:
        return self._cached_read(space_id, "vectors", ids, lambda missing: {
            int(nid): as_array(vec) for nid, vec in self.db.execute(
                "SELECT node_id, embedding FROM node_emb WHERE node_id = ANY(?)", (missing,), binary=True
            ).fetchall()} if missing else {})

    def _space_size(self, space_id: int) -> int:
        version = self._nodes_version(space_id)
        cached = self._sizes.get(space_id)
        if cached is None or cached[0] != version:
            cached = (version, self.count_nodes(space_id))
            self._sizes[space_id] = cached
        return cached[1]

    def vector_index_kind(self, space_id: int) -> str:
        """Which index a search of the space uses now: ``pgvector-exact`` or ``pgvector-hnsw``."""
        return "pgvector-hnsw" if self._space_size(space_id) > self.hnsw_min else "pgvector-exact"

    def knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        info = self.embedder_info()
        if info is None:
            return []
        q = np.asarray(vector, dtype=np.float32)
        if self._space_size(space_id) > self.hnsw_min and self._ensure_hnsw(space_id, info[1]):
            dim, sid = int(info[1]), int(space_id)
            self._ef_search(k)
            rows = self.db.execute(
                f"SELECT node_id, (1 - (embedding::vector({dim}) <=> ?))::float4 FROM node_emb WHERE space_id = {sid} "
                f"ORDER BY embedding::vector({dim}) <=> ? LIMIT ?", (q, q, int(k) + RESCORE_EXTRA)).fetchall()
        else:
            rows = self.db.execute(
                "SELECT node_id, (1 - (embedding <=> ?))::float4 AS sim FROM node_emb WHERE space_id = ? "
                "ORDER BY sim DESC, node_id LIMIT ?", (q, int(space_id), int(k) + RESCORE_EXTRA)).fetchall()
        return self._rescored([int(r[0]) for r in rows], q, k, space_id)

    def _rescored(self, ids: list[int], q: np.ndarray, k: int, space_id: int) -> list[tuple[int, float]]:
        """The candidates' cosines computed as SQLite's in-process index computes them (float32, the same
        einsum), best first: pgvector's double-precision order can swap near-ties (turns embedded in one
        batch differ by ~1e-7), which the float32 scores of the SQLite path do not see."""
        from hela_cli.store.vector_index import _matvec

        if not ids:
            return []
        vecs = self.node_vectors(ids, space_id)
        ids = sorted(i for i in ids if i in vecs)
        sims = _matvec(np.stack([vecs[i] for i in ids]), q)
        order = np.argsort(-sims, kind="stable")[:k]
        return [(ids[i], float(sims[i])) for i in order]

    def _ef_search(self, k: int) -> None:
        ef = min(1000, max(100, 2 * k))
        if getattr(self, "_ef", None) != ef:
            self.db.execute(f"SET hnsw.ef_search = {ef}")
            self._ef = ef

    def _ensure_hnsw(self, space_id: int, dim: int) -> bool:
        """The space's partial HNSW index exists (built now if not). False when it cannot be built (e.g. a
        role without the right to create indexes): the caller scans exactly."""
        if self._hnsw.get(space_id):
            return True
        name = f"node_emb_hnsw_{int(space_id)}"
        if self.db.execute("SELECT 1 FROM pg_indexes WHERE indexname = ?", (name,)).fetchone():
            self._hnsw[space_id] = True
            return True
        if self._in_tx or self.db.in_transaction:
            return False
        from hela_cli.errors import StoreError

        self._report(f"{self.path}: indexing the {self._space_size(space_id):,} memories of this space "
                     f"for search (HNSW, once)")
        try:
            self.db.execute("SELECT pg_advisory_lock(?)", (0x68656C61_0003,))
            try:
                self.db.execute(
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON node_emb USING hnsw "
                    f"((embedding::vector({int(dim)})) vector_cosine_ops) WHERE space_id = {int(space_id)}")
            finally:
                self.db.execute("SELECT pg_advisory_unlock(?)", (0x68656C61_0003,))
        except StoreError:
            return False
        self._hnsw[space_id] = True
        return True

    def semantic_knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        rows = self.db.execute(
            "SELECT semantic_id, (1 - (embedding <=> ?))::float4 AS sim FROM semantic_emb WHERE space_id = ? "
            "ORDER BY sim DESC, semantic_id LIMIT ?", (q, int(space_id), int(k))).fetchall()
        return [(int(n), float(s)) for n, s in rows]

    def semantic_vector(self, semantic_id: int) -> np.ndarray | None:
        row = self.db.execute("SELECT embedding FROM semantic_emb WHERE semantic_id=?", (semantic_id,)).fetchone()
        return as_array(row[0]) if row else None

    def _signs_after_write(self, space_id: int, add: Any = None, remove: Sequence[int] = ()) -> None:
        """No sign bits on Postgres (pgvector's HNSW serves large spaces)."""

    # ---------------------------------------------------------------- keywords
    def _index_terms(self, space_id: int, docs: dict[int, Sequence[str]]) -> None:
        """Keyword postings of new nodes and the space's BM25 counts (inside the write transaction), the
        postings through ``COPY``."""
        rows, total = term_rows(space_id, docs)
        self.db.copy_rows("node_terms", ("space_id", "term", "node_id", "tf", "dl"), rows)
        self.db.execute("UPDATE spaces SET fts_docs = fts_docs + ?, fts_len = fts_len + ? WHERE id = ?",
                        (len(docs), total, space_id))
