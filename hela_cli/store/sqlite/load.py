"""The SQLite engine's bulk writes: new nodes with their vectors and keyword rows, semantic vectors, and
the vector tables a re-embed rewrites.

New node rows go in with ``executemany`` (batched statements; the ids SQLite gives are read back by content
hash), their vectors twice (``node_emb``, the float32 bytes every engine keeps, and the sqlite-vec
``node_vec`` row KNN falls back to) and their keyword postings (:meth:`SqliteSearch._index_terms`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hela_cli.store.base import _blob


class SqliteLoad:
    """``_load_nodes``, ``_put_semantic_vector``, ``_replace_vectors`` and ``_after_load`` on SQLite."""

    def _load_nodes(self, space_id: int, fresh: dict[str, tuple[dict[str, Any], np.ndarray]], now: float
                    ) -> dict[str, int]:
        """Inside :meth:`insert_nodes`' transaction: write the ``fresh`` rows (by hash) with their vectors and
        keyword rows; returns ``{hash: new node id}``."""
        columns, rows = self._node_rows(space_id, fresh, now)
        self.db.executemany(f"INSERT INTO nodes({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                            rows)
        new = self.existing_hashes(space_id, list(fresh))
        self.db.executemany("INSERT INTO node_emb(node_id, space_id, embedding) VALUES (?, ?, ?)",
                            [(new[h], space_id, _blob(vec)) for h, (_, vec) in fresh.items()])
        # vec0 is a virtual table
        self.db.executemany("INSERT INTO node_vec(node_id, space_id, embedding) VALUES (?, ?, ?)",
                            [(new[h], space_id, _blob(vec)) for h, (_, vec) in fresh.items()])
        self._index_terms(space_id, {new[h]: row.get("keywords", []) for h, (row, _) in fresh.items()})
        return new

    def _put_semantic_vector(self, semantic_id: int, space_id: int, vector: np.ndarray) -> None:
        self.db.execute("INSERT INTO semantic_vec(semantic_id, space_id, embedding) VALUES (?,?,?)",
                        (semantic_id, space_id, _blob(vector)))

    def _replace_vectors(self, dim: int) -> None:
        """Inside :meth:`reembed_swap`' transaction, the new binding recorded: the vec0 tables re-created for
        ``dim`` and every node and semantic vector taken from ``reembed_stage``."""
        db = self.db
        db.execute("DROP TABLE IF EXISTS node_vec")
        db.execute("DROP TABLE IF EXISTS semantic_vec")
        self._create_vector_tables(dim)
        db.execute("INSERT INTO node_vec(node_id, space_id, embedding) SELECT s.id, n.space_id, s.embedding "
                   "FROM reembed_stage s JOIN nodes n ON n.id = s.id WHERE s.kind = 'node'")
        db.execute("DELETE FROM node_emb")
        db.execute("INSERT INTO node_emb(node_id, space_id, embedding) SELECT s.id, n.space_id, s.embedding "
                   "FROM reembed_stage s JOIN nodes n ON n.id = s.id WHERE s.kind = 'node'")
        db.execute("INSERT INTO semantic_vec(semantic_id, space_id, embedding) SELECT s.id, r.space_id, "
                   "s.embedding FROM reembed_stage s JOIN semantic r ON r.id = s.id WHERE s.kind = 'semantic'")

    def _after_load(self) -> None:
        """Nothing: SQLite's next id follows the largest one written (``hela copy`` keeps ids)."""
