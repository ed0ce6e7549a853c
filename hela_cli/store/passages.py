"""Passage vectors of long turns: a long memory is embedded in overlapping passages as well as whole, and
retrieval scores it by its best passage (:meth:`Passages.passage_cosines`). Plain SQL both engines share
(``node_passage`` holds float32 bytes on both)."""

from __future__ import annotations

import numpy as np

from hela_cli.store.base import _blob


class Passages:
    """``node_passage``: write a node's passage vectors, score a space's passages against a question."""

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
            self._signs_after_write(space_id)

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
