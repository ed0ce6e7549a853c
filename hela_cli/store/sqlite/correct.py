"""The SQLite engine's side of deleting and correcting: its index rows, byte-level deletion, backups.

* **Its own rows of a memory**: the sqlite-vec row (``node_vec``) and the persisted sign bits
  (``sign_blocks`` / ``sign_state``): dropped with the node (:meth:`_forget_nodes`), rewritten by an edit
  (:meth:`_write_vectors`, :meth:`_signs_replace`). The keyword postings are shared (``node_terms``).
* **The bytes** (:meth:`SqliteCorrect.scrub`): every connection runs with ``PRAGMA secure_delete=ON``
  (:mod:`hela_cli.store.sqlite.connection`), so SQLite overwrites deleted cells and freed pages with zeros
  (the keyword postings are a plain table since migration 0015: a deleted posting leaves no delete marker
  behind, as FTS5's did without its ``secure-delete`` option); ``PRAGMA wal_checkpoint(TRUNCATE)`` copies
  the zeroed pages into the database file and truncates the WAL, which still held the old page images, to
  0 bytes; the file is then read back and searched for probes of the deleted texts (those no remaining row
  still holds). SQLite can still leave a stale copy of a cell in the unallocated gap of a page that a
  B-tree rebalance rebuilt (rebuildPage does not zero that gap); when a probe is found the file is
  rewritten with ``VACUUM`` (and checkpointed again) and searched once more. Measured in
  tests/test_correct.py and docs/benchmarks/speed.md ("Correcting memory").
* **Backup**: ``VACUUM INTO`` (:meth:`_write_copy`); **browsing**: ``PRAGMA query_only`` and the change
  token ``hela ui``'s strength cache keys on; **integrity**: ``PRAGMA integrity_check`` and the vec0 cross
  checks.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hela_cli.errors import StoreError
from hela_cli.store.base import _blob, sqlite3
from hela_cli.store.correct import file_holds, probes


class SqliteCorrect:
    """The SQLite engine's hooks of deletion, edits, scrubbing, backup, browsing and integrity."""

    # ---------------------------------------------------------------- a node's engine rows
    def _forget_nodes(self, space_id: int, ids: Sequence[int]) -> None:
        """Inside :meth:`delete_nodes`, right after the space's ``nodes_version`` bump: the nodes' sign bits and
        sqlite-vec rows."""
        self._signs_after_write(space_id, remove=ids)
        for nid in ids:
            self.db.execute("DELETE FROM node_vec WHERE node_id=?", (nid,))

    def _write_vectors(self, space_id: int, vectors: dict[int, np.ndarray], now: float) -> None:
        """Inside a write transaction: new vectors for existing nodes (``node_emb``, ``node_vec``); their
        ``created_at`` moves, so another process's in-process index, which tells a changed row by
        ``(id, created_at)``, reloads them. The caller bumps ``nodes_version`` and then calls
        :meth:`_signs_replace`."""
        for nid, vec in vectors.items():
            self.db.execute("UPDATE node_emb SET embedding = ? WHERE node_id = ?", (_blob(vec), nid))
            self.db.execute("DELETE FROM node_vec WHERE node_id = ?", (nid,))
            self.db.execute("INSERT INTO node_vec(node_id, space_id, embedding) VALUES (?, ?, ?)",
                            (nid, space_id, _blob(vec)))
            self.db.execute("UPDATE nodes SET created_at = max(?, created_at + 0.001) WHERE id = ?", (now, nid))

    def _signs_replace(self, space_id: int, vectors: dict[int, np.ndarray]) -> None:
        """Keep the space's persisted sign bits current when nodes' vectors change in place (call right
        after the transaction's ``nodes_version`` bump); bits already stale stay stale."""
        from hela_cli.store.vector_index import block_arrays, block_bytes, sign_words

        state = self.db.execute("SELECT version, dim, center FROM sign_state WHERE space_id = ?",
                                (space_id,)).fetchone()
        version = self._nodes_version(space_id)
        if state is None or state[0] != version - 1:
            return
        dim, center = state[1], np.frombuffer(state[2], dtype=np.float32)
        for nid, vec in vectors.items():
            row = self.db.execute("SELECT id, ids, bits FROM sign_blocks WHERE space_id = ? AND lo <= ? AND hi >= ? "
                                  "ORDER BY lo DESC LIMIT 1", (space_id, nid, nid)).fetchone()
            if row is None:
                continue
            ids, words = block_arrays(row[1], row[2], dim)
            pos = np.flatnonzero(ids == nid)
            if not len(pos):
                continue
            words = words.copy()
            words[:, pos[0]] = sign_words(np.asarray(vec, dtype=np.float32)[None, :], center)[:, 0]
            self.db.execute("UPDATE sign_blocks SET bits = ? WHERE id = ?", (block_bytes(ids, words)[1], row[0]))
        self.db.execute("UPDATE sign_state SET version = ? WHERE space_id = ?", (version, space_id))

    # ---------------------------------------------------------------- the bytes
    def checkpoint(self) -> bool:
        """``PRAGMA wal_checkpoint(TRUNCATE)``: the WAL's pages into the file, the WAL cut to 0 bytes. Waits
        for readers (busy timeout); False when one still held the WAL."""
        if self.path == ":memory:":
            return True
        busy, _, _ = self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return busy == 0

    def scrub(self, texts: Sequence[str]) -> dict[str, Any]:
        """Make deleted ``texts`` leave the file bytes (call after the deleting transaction committed):
        checkpoint (TRUNCATE), search the database file and WAL for their probes (those no remaining row
        holds), ``VACUUM`` when one is found, search again. ``{"checkpointed", "vacuumed", "verified",
        "probes", "seconds"}``; ``verified`` False only when a probe is still in the bytes after all that
        (a reader held the WAL the whole busy timeout)."""
        t0 = time.perf_counter()
        if self.path == ":memory:":
            return {"checkpointed": True, "vacuumed": False, "verified": True, "probes": 0, "seconds": 0.0}
        needles = [n for n in probes(texts) if not self._still_held(n)]
        ok = self.checkpoint()
        files = [self.path, self.path + "-wal"]
        found = [n for f in files for n in file_holds(f, needles)]
        vacuumed = False
        if found:
            self.db.execute("VACUUM")
            vacuumed = True
            ok = self.checkpoint()
            found = [n for f in files for n in file_holds(f, needles)]
        return {"checkpointed": ok, "vacuumed": vacuumed, "verified": not found, "probes": len(needles),
                "seconds": round(time.perf_counter() - t0, 3)}

    # ---------------------------------------------------------------- backup, browsing, integrity
    def _write_copy(self, tmp: Path, dest: Path) -> None:
        """Write the snapshot copy into the (empty, user-only) file ``tmp``: ``VACUUM INTO`` run in one read
        transaction of this connection (see :mod:`hela_cli.store.backup`)."""
        try:
            self.db.execute("VACUUM INTO ?", (str(tmp),))
        except sqlite3.OperationalError as e:
            raise StoreError(f"{dest}: backup failed ({e})") from None

    def _change_token(self) -> Any:
        """A value that changes whenever the database changes: any commit by another connection (``PRAGMA
        data_version``) or by this one (``total_changes``)."""
        return self.db.execute("PRAGMA data_version").fetchone()[0], self.db.total_changes

    def set_query_only(self, on: bool) -> None:
        """``PRAGMA query_only``: with it on, this connection refuses every write (a browser reads the file
        other processes write; only an explicit learning recall turns it off for its own transaction)."""
        self.db.execute(f"PRAGMA query_only={'ON' if on else 'OFF'}")
        self.db.query_only = on   # a refused write is then this choice, not a read-only file

    def _engine_integrity(self) -> list[str]:
        """``PRAGMA integrity_check`` (its first line when not ``ok``)."""
        ok = self.db.execute("PRAGMA integrity_check").fetchone()[0]
        return [] if ok == "ok" else [f"integrity_check: {ok}"]

    def _engine_checks(self) -> dict[str, str]:
        """Checks of the SQLite-only tables (vec0); the Postgres store has none of its own."""
        return {
            "nodes without vector": "SELECT count(*) FROM nodes n WHERE NOT EXISTS "
                                    "(SELECT 1 FROM node_vec v WHERE v.node_id = n.id)",
            "vectors without node": "SELECT count(*) FROM node_vec v WHERE NOT EXISTS "
                                    "(SELECT 1 FROM nodes n WHERE n.id = v.node_id)",
        }
