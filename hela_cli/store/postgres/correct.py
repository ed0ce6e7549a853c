"""The Postgres engine's side of deleting and correcting, backup, browsing and integrity: the hooks of
:mod:`hela_cli.store.correct`, :mod:`hela_cli.store.backup` and :mod:`hela_cli.store.browse` where the engine
differs. Everything else (``hela memories`` / ``delete`` / ``edit`` / ``history`` / ``spaces drop|rename``,
``hela import``) runs the shared SQL, translated by ``PgDB`` (``postgres/connection.py``).

* **Complete deletion** deletes the same rows as on SQLite in one transaction: the node, ``node_emb``,
  ``node_passage``, the keyword postings in ``node_terms`` with the space's BM25 counts (``fts_docs`` /
  ``fts_len``: a delete leaves the scores a fresh ingest of the remaining memories would give), history,
  edges, asks-log rows, the semantic records citing it, hub state; tombstones as on SQLite.
* **The bytes** (:meth:`PgCorrect.scrub`): SQLite's ``secure_delete`` has no Postgres counterpart. A
  deleted row stays in its heap page as a dead tuple until ``VACUUM`` frees it; hela runs a plain ``VACUUM
  (ANALYZE)`` of the tables that held the text right after the delete commits (not ``VACUUM FULL``: it
  takes an exclusive lock on a shared server); ANALYZE because the planner statistics (``pg_stats``,
  readable by SQL) quoted the deleted text as a most common value. Measured (``benchmarks/quality/pg_delete_bytes.py``, docs/benchmarks/speed.md
  "Deleting on Postgres"): plain VACUUM frees the tuples but leaves their bytes in the page's free space
  until a later write reuses it, and the WAL keeps the inserted text until its segments are recycled; only a
  table rewrite (``VACUUM FULL``, ``pg_repack``) removes them from the table files. The server's files, WAL
  archive, base backups and replicas are the operator's domain: hela cannot read them and says so
  (``verified`` is None, with a ``note``).
* **Backup** (:meth:`PgCorrect._write_copy`): a SQLite file of every space, read in one ``REPEATABLE READ``
  snapshot through the ``hela copy`` code (:mod:`hela_cli.store.transfer`), then checked, fsynced and
  renamed by :meth:`hela_cli.store.backup.Backup.backup_to` exactly as a SQLite backup.
* **Browsing** (``hela ui``): read-only through ``default_transaction_read_only`` (SQLite: ``query_only``);
  a change token for the strength cache.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hela_cli.errors import StoreError
from hela_cli.store.correct import probes

# The tables that hold a memory's text or what was derived from it: VACUUMed after a delete or an edit.
VACUUM_TABLES = ("nodes", "node_terms", "node_emb", "node_passage", "history", "asks", "semantic",
                 "semantic_emb", "semantic_evidence", "edges", "hubs")

SCRUB_NOTE = ("Postgres: the rows are deleted and the tables VACUUMed and ANALYZEd; the server keeps freed bytes "
              "in its pages until reused and in its WAL until recycled (see docs/correcting.md)")


class PgCorrect:
    """Postgres hooks of ``Nodes.delete_nodes``, ``Correct``, ``FilteredSearch``, ``Backup``, ``Browse`` and
    ``Integrity``."""

    # ---------------------------------------------------------------- a node's engine rows
    def _forget_nodes(self, space_id: int, ids: Sequence[int]) -> None:
        """Nothing: every index row of a node on Postgres (``node_emb``, the keyword postings) is a shared
        table the shared :meth:`delete_nodes` empties; partial HNSW indexes follow their table."""

    def _write_vectors(self, space_id: int, vectors: dict[int, np.ndarray], now: float) -> None:
        for nid, vec in vectors.items():
            self.db.execute("UPDATE node_emb SET embedding = ? WHERE node_id = ?",
                            (np.asarray(vec, dtype=np.float32), nid))
            self.db.execute("UPDATE nodes SET created_at = greatest(?, created_at + 0.001) WHERE id = ?", (now, nid))

    def _signs_replace(self, space_id: int, vectors: dict[int, np.ndarray]) -> None:
        """No persisted sign bits on Postgres."""

    def checkpoint(self) -> bool:
        """Nothing to do from a client: the server's checkpointer writes pages out on its own schedule."""
        return True

    def scrub(self, texts: Sequence[str]) -> dict[str, Any]:
        """After the deleting transaction committed: plain ``VACUUM (ANALYZE)`` of :data:`VACUUM_TABLES`, so
        the dead tuples are freed now rather than at autovacuum's next pass, and the planner statistics
        (``pg_stats``: most common values, histogram bounds) are sampled again without the deleted rows. What it does not do (measured, module
        docstring) is in ``note``; ``verified`` is None: the server's files are not hela's to read. A role
        that may not VACUUM these tables (not their owner) gets the reason in ``note``; the delete stands."""
        t0 = time.perf_counter()
        needles = [n for n in probes(texts) if not self._still_held(n)]
        note = SCRUB_NOTE
        vacuumed = False
        try:
            # ANALYZE too: the planner statistics keep most common values and histogram bounds of each
            # column (an often-asked question that quoted the text: in `asks`' most common values), readable
            # in pg_stats by anyone who may read the table; re-sampling leaves deleted rows out (measured)
            self.db.execute("VACUUM (ANALYZE) " + ", ".join(VACUUM_TABLES))
            vacuumed = True
            self._clear_stats_of_empty_tables()
        except StoreError as e:
            note = f"Postgres: the rows are deleted; VACUUM was not run ({e.message.split(': ', 1)[-1]})"
        return {"checkpointed": False, "vacuumed": vacuumed, "verified": None, "probes": len(needles),
                "seconds": round(time.perf_counter() - t0, 3), "note": note}

    def drop_space(self, space_id: int) -> dict[str, Any]:
        """As on SQLite, then the space's partial HNSW index (if a search built one) is dropped too: it would
        stay empty (space ids are never reused) but still cost every write to ``node_emb`` a check."""
        rep = super().drop_space(space_id)
        if not self._in_tx:
            try:
                self.db.execute(f"DROP INDEX IF EXISTS node_emb_hnsw_{int(space_id)}")
            except StoreError:   # a role that may not drop it: harmless, the index is empty
                pass
            self._hnsw.pop(space_id, None)
        return rep

    def _clear_stats_of_empty_tables(self) -> None:
        """ANALYZE keeps a table's old statistics when it samples no row: after a delete that emptied a table
        (the last space dropped, the last logged ask deleted) they would still quote deleted text. Postgres 18
        lets the table's owner clear them (``pg_clear_attribute_stats``); older servers keep them until rows
        arrive and the table is analyzed again (docs/correcting.md)."""
        if not self.db.execute("SELECT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'pg_clear_attribute_stats')"
                               ).fetchone()[0]:
            return
        for table in VACUUM_TABLES:
            if self.db.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0]:
                continue
            for schema, att in self.db.execute(
                    "SELECT schemaname, attname FROM pg_stats WHERE tablename = ? AND schemaname = current_schema()",
                    (table,)).fetchall():
                self.db.execute("SELECT pg_clear_attribute_stats(?, ?, ?, false)", (schema, table, att))

    # ---------------------------------------------------------------- recall filters (FilteredSearch)
    def knn_among(self, space_id: int, vector: np.ndarray, k: int, allowed: set[int]) -> list[tuple[int, float]]:
        """Exact nearest of the ``allowed`` memories (pgvector scan of those rows), rescored in float32 as
        :meth:`knn` does."""
        from hela_cli.store.postgres.search import RESCORE_EXTRA

        if k <= 0 or not allowed or self.embedder_info() is None:
            return []
        q = np.asarray(vector, dtype=np.float32)
        rows = self.db.execute(
            "SELECT node_id, (1 - (embedding <=> ?))::float4 AS sim FROM node_emb WHERE space_id = ? AND "
            "node_id = ANY(?) ORDER BY sim DESC, node_id LIMIT ?",
            (q, int(space_id), sorted(int(i) for i in allowed), int(k) + RESCORE_EXTRA)).fetchall()
        return self._rescored([int(r[0]) for r in rows], q, k, space_id)

    # ---------------------------------------------------------------- browsing (hela ui)
    def set_query_only(self, on: bool) -> None:
        """This session's transactions read-only (``default_transaction_read_only``): every write is refused
        by the server, as SQLite's ``query_only`` refuses it."""
        self.db.execute(f"SET default_transaction_read_only = {'on' if on else 'off'}")

    def _change_token(self) -> Any:
        """Changes whenever a transaction that wrote anything on the server commits or starts: the snapshot's
        ``xmax`` (next transaction id) and its in-progress list."""
        return self.db.execute("SELECT pg_current_snapshot()::text").fetchone()[0]

    # ---------------------------------------------------------------- backup
    def _write_copy(self, tmp: Path, dest: Path) -> None:
        """Every space into the SQLite file ``tmp`` (``hela copy``'s dump and load, ids kept): all spaces
        read in one ``REPEATABLE READ`` snapshot, so the copy is one moment of the database while other
        processes write. The dumps are held in memory until written (a space's vectors and rows)."""
        with self._snapshot():
            names = [r["name"] for r in self.spaces()]
            dumps = [self.space_dump(n) for n in names]
            info = self.embedder_info()
        from hela_cli.store.sqlite import SqliteStore

        old_umask = os.umask(0o077)   # the copy's -wal / -shm files user-only too
        try:
            copy = SqliteStore(tmp)
        finally:
            os.umask(old_umask)
        try:
            if info is not None:
                copy.bind_embedder(*info)
            for d in dumps:
                copy.space_load(d)
            copy.checkpoint()
        except StoreError as e:
            raise StoreError(f"{dest}: backup failed ({e.message})") from None
        finally:
            copy.close()

    # ---------------------------------------------------------------- integrity
    def _engine_integrity(self) -> list[str]:
        """Nothing beyond the table checks: the server keeps its own structures consistent."""
        return []

    def _engine_checks(self) -> dict[str, str]:
        """No engine-only tables on Postgres (the keyword postings are checked on both engines)."""
        return {}
