"""Re-embedding a database with another embedder (``hela reembed``): staged vectors and the final swap.

The embedder binding (``meta.embed_model`` / ``embed_dim``) covers the whole file, and the vec0 tables
have the dimension in their schema, so a re-embed covers every space. New vectors go to
``reembed_stage`` one batch per transaction (an interrupted run keeps what it staged and resumes);
:meth:`Reembed.reembed_swap` then replaces every vector and the binding in ONE transaction: a reader sees
either the old embedder's vectors everywhere or the new one's everywhere. The engine rewrites its own
vector tables (``_replace_vectors``: SQLite's vec0 tables re-created for the new width, Postgres' HNSW
indexes dropped); the passages, counts and bookkeeping are shared.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from hela_cli.errors import StoreError
from hela_cli.store.base import _blob

_KINDS = ("node", "passage", "semantic")


class Reembed:
    def reembed_target(self) -> tuple[str, int] | None:
        """The embedder a staged, unfinished re-embed is for, or None."""
        model, dim = self.get_meta("reembed_model"), self.get_meta("reembed_dim")
        return (model, int(dim)) if model and dim else None

    def reembed_begin(self, model_id: str, dim: int) -> int:
        """Start (or resume) staging vectors of ``model_id``; vectors staged for another model are dropped.
        Returns how many vectors were already staged for this one."""
        if not isinstance(dim, int) or dim <= 0:
            raise StoreError(f"invalid embedding dimension {dim!r}")
        with self.transaction():
            if self.reembed_target() != (model_id, dim):
                self.db.execute("DELETE FROM reembed_stage")
                self._set_meta("reembed_model", model_id)
                self._set_meta("reembed_dim", str(dim))
            return self.db.execute("SELECT count(*) FROM reembed_stage").fetchone()[0]

    def reembed_abandon(self) -> None:
        """Drop staged vectors and the target (the database keeps its embedder)."""
        with self.transaction():
            self.db.execute("DELETE FROM reembed_stage")
            self.db.execute("DELETE FROM meta WHERE key IN ('reembed_model', 'reembed_dim')")

    def reembed_staged(self, kind: str) -> dict[int, int]:
        """``{id: staged vectors}`` (node or semantic record id; several for passages) of ``kind``."""
        return dict(self.db.execute("SELECT id, count(*) FROM reembed_stage WHERE kind=? GROUP BY id", (kind,)))

    def reembed_nodes(self) -> list[tuple[int, int, str | None, str, str, float, str | None]]:
        """Every node as ``(id, space_id, session, speaker, text, ts, source_id)``, by space then order."""
        return self.db.execute("SELECT id, space_id, session, coalesce(speaker, ''), text, ts, source_id "
                               "FROM nodes ORDER BY space_id, ord, id").fetchall()

    def reembed_passage_owners(self) -> set[int]:
        """Nodes that have passage vectors now (they get new ones; see :mod:`hela_cli.maintenance.reembed`)."""
        return {r[0] for r in self.db.execute("SELECT DISTINCT node_id FROM node_passage")}

    def reembed_semantic(self) -> list[tuple[int, str | None, str]]:
        """Every semantic record as ``(id, subject, text)``."""
        return self.db.execute("SELECT id, subject, text FROM semantic ORDER BY id").fetchall()

    def stage_vectors(self, kind: str, rows: Iterable[tuple[int, int, np.ndarray]]) -> None:
        """Stage ``(id, part, vector)`` rows of ``kind``. Call inside :meth:`transaction`."""
        self.require_transaction("stage_vectors")
        if kind not in _KINDS:
            raise StoreError(f"unknown vector kind {kind!r}")
        self.db.executemany("INSERT INTO reembed_stage(kind, id, part, embedding) VALUES (?,?,?,?) "
                            "ON CONFLICT(kind, id, part) DO UPDATE SET embedding = excluded.embedding",
                            [(kind, int(i), int(p), _blob(v)) for i, p, v in rows])

    def reembed_missing(self) -> dict[str, int]:
        """Nodes and semantic records without a staged vector (added since the run started, or not yet done)."""
        n = self.db.execute("SELECT count(*) FROM nodes n WHERE NOT EXISTS (SELECT 1 FROM reembed_stage s "
                            "WHERE s.kind='node' AND s.id=n.id)").fetchone()[0]
        m = self.db.execute("SELECT count(*) FROM semantic r WHERE NOT EXISTS (SELECT 1 FROM reembed_stage s "
                            "WHERE s.kind='semantic' AND s.id=r.id)").fetchone()[0]
        return {"nodes": n, "semantic": m}

    def reembed_swap(self, model_id: str, dim: int) -> dict[str, Any] | None:
        """Replace every vector with the staged one and bind ``model_id`` (``dim``), in one transaction.

        Returns None (nothing changed) when a node or record has no staged vector yet (another process
        added memories meanwhile: embed those and call again). Passage vectors are replaced by the staged
        ones; a node whose passages were not re-embedded loses them (they would not compare)."""
        if self.reembed_target() != (model_id, dim):
            raise StoreError(f"no re-embed staged for '{model_id}' ({dim}-d)")
        with self.transaction():
            if any(self.reembed_missing().values()):
                return None
            previous = self.embedder_info()
            db = self.db
            db.execute("DELETE FROM meta WHERE key IN ('embed_model', 'embed_dim')")
            self._set_meta("embed_model", model_id)
            self._set_meta("embed_dim", str(dim))
            self._replace_vectors(dim)   # the engine's vector tables: node and semantic vectors from the stage
            dropped = db.execute("SELECT count(DISTINCT node_id) FROM node_passage").fetchone()[0]
            db.execute("DELETE FROM node_passage")
            db.execute("INSERT INTO node_passage(node_id, idx, space_id, embedding) SELECT s.id, s.part, "
                       "n.space_id, s.embedding FROM reembed_stage s JOIN nodes n ON n.id = s.id "
                       "WHERE s.kind = 'passage'")
            kept = db.execute("SELECT count(DISTINCT node_id) FROM node_passage").fetchone()[0]
            counts = {k: db.execute("SELECT count(*) FROM reembed_stage WHERE kind=?", (k,)).fetchone()[0]
                      for k in _KINDS}
            db.execute("UPDATE spaces SET nodes_version = nodes_version + 1")
            db.execute("DELETE FROM reembed_stage")
            db.execute("DELETE FROM meta WHERE key IN ('reembed_model', 'reembed_dim')")
        self.search_state.clear()
        return {"previous": list(previous) if previous else None, "vectors": counts,
                "passages_dropped": max(0, dropped - kept)}
