"""The Postgres engine's bulk writes: new nodes with their vectors and keyword postings, semantic vectors,
the vectors a re-embed swaps in, and the id sequences after a copy.

New rows go in with ``COPY ... FROM STDIN`` (the bulk inserts of ingest: keyword postings went from 6.0 to
2.3 s per 25k rows against pipelined INSERTs, busy machine), vectors in binary COPY (pgvector's text form
costs ~2 ms per 384-d vector in Python); the keyword postings and the space's BM25 counts are
:meth:`~hela_cli.store.postgres.search.PgSearch._index_terms`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hela_cli.store.postgres.search import as_array


class PgLoad:
    """``_load_nodes``, ``_put_semantic_vector``, ``_replace_vectors`` and ``_after_load`` on Postgres."""

    def _load_nodes(self, space_id: int, fresh: dict[str, tuple[dict[str, Any], np.ndarray]], now: float
                    ) -> dict[str, int]:
        """Inside :meth:`insert_nodes`' transaction: COPY the ``fresh`` rows (by hash), their vectors and
        keyword postings; returns ``{hash: new node id}``."""
        self.db.copy_rows("nodes", *self._node_rows(space_id, fresh, now))
        new = self.existing_hashes(space_id, list(fresh))
        self.db.copy_rows("node_emb", ("node_id", "space_id", "embedding"),
                          [(new[h], space_id, np.asarray(vec, dtype=np.float32)) for h, (_, vec) in fresh.items()],
                          types=("int8", "int8", "vector"))
        self._index_terms(space_id, {new[h]: row.get("keywords", []) for h, (row, _) in fresh.items()})
        return new

    def _put_semantic_vector(self, semantic_id: int, space_id: int, vector: np.ndarray) -> None:
        self.db.execute("INSERT INTO semantic_emb(semantic_id, space_id, embedding) VALUES (?,?,?)",
                        (semantic_id, space_id, np.asarray(vector, dtype=np.float32)))

    def _replace_vectors(self, dim: int) -> None:
        """Inside :meth:`reembed_swap`' transaction: the spaces' HNSW indexes (built for the old width) are
        dropped (the next search rebuilds them), and ``node_emb`` / ``semantic_emb`` rewritten from the stage."""
        db = self.db
        for (name,) in db.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'node_emb_hnsw_%'"
                                  ).fetchall():
            db.execute(f'DROP INDEX IF EXISTS "{name}"')
        for table, key, owner, kind in (("node_emb", "node_id", "nodes", "node"),
                                        ("semantic_emb", "semantic_id", "semantic", "semantic")):
            rows = [(i, sid, as_array(np.frombuffer(bytes(b), dtype=np.float32)))
                    for i, sid, b in db.execute(
                        f"SELECT s.id, o.space_id, s.embedding FROM reembed_stage s JOIN {owner} o ON o.id = s.id "
                        f"WHERE s.kind = ?", (kind,)).fetchall()]
            db.execute(f"DELETE FROM {table}")
            db.copy_rows(table, (key, "space_id", "embedding"), rows, types=("int8", "int8", "vector"))

    def _after_load(self) -> None:
        for table in ("nodes", "semantic", "asks"):
            self.db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                            f"greatest((SELECT max(id) FROM {table}), 1))")
