"""Backup (a consistent copy of the whole file) and the writes that restore an exported space.

``Store.backup_to`` copies the database with ``VACUUM INTO`` run in one read transaction of this connection:
the copy is a snapshot of one moment even while other processes write (WAL: readers never block
writers, and they never see half a transaction). Measured against the online backup API
(``Connection.backup``, ``pages=-1``, the same snapshot guarantee; ``benchmarks/speed/backup_restore.py``): the
backup API copies every page as it is, free pages included - the text of a memory deleted since the last
VACUUM was in its copy - while ``VACUUM INTO`` writes only live rows (and compacts). At 100k memories
(409 MB) this backup, with the keyword-index merge and the integrity check of the copy, took 1.7 s CPU
against 0.8 s for the bare backup API. Copies are written next to the destination under a temporary
name created user-only (0600) and renamed into place once complete and checked, so a failed or
interrupted backup never leaves a partial file at the destination.

The ``restore_*`` methods write what :mod:`hela_cli.maintenance.importing` decided (ids already mapped), inside the
caller's write transaction; they keep each value as exported (edge ``prior`` / ``amp``, the space's
counters, access counts, record times) so that the current weights and every score come back exactly.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from hela_cli.errors import StoreError
from hela_cli.store.base import sqlite3

BACKUP_TABLES = ("spaces", "nodes", "edges", "semantic", "semantic_evidence", "hubs", "asks")


class Backup:
    """``backup_to`` and the restore writes of an import."""

    #: the SQLite store class a Postgres backup writes its copy with (set by :mod:`hela_cli.store`, which
    #: defines it: importing it here would make an import cycle through the Postgres backend)
    _copy_store: Any = None

    # ---------------------------------------------------------------- backup
    def backup_to(self, dest: str | Path, force: bool = False) -> dict[str, Any]:
        """Write a consistent copy of the whole database to ``dest`` (user-only), checked before it is
        moved into place. ``dest`` must not exist unless ``force`` (then it is replaced, atomically).

        Returns ``{"path", "bytes", "counts": {table: rows}, "integrity": "ok"}`` with the copy's counts."""
        if self.path == ":memory:":
            raise StoreError("an in-memory database has no file to back up")
        dest = Path(dest).expanduser()
        src = Path(self.path) if self.backend == "sqlite" else None
        if dest.is_dir():
            raise StoreError(f"{dest}: is a directory; give the backup file's name")
        if dest.exists():
            if not force:
                raise StoreError(f"{dest}: already exists (use --force to replace it)")
            with contextlib.suppress(OSError):
                if src is not None and dest.samefile(src):
                    raise StoreError(f"{dest}: is the database itself; back up to another file")
        if not dest.parent.is_dir():
            raise StoreError(f"{dest.parent}: no such directory")
        tmp = dest.parent / f".{dest.name}.hela-tmp-{os.getpid()}"
        try:
            fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)  # user-only before a byte is written
            os.close(fd)
        except FileExistsError:
            raise StoreError(f"{tmp}: a temporary file of another backup is in the way; remove it") from None
        except OSError as e:
            raise StoreError(f"{dest}: cannot write ({e.strerror})") from None
        try:
            if self._in_tx or self.db.in_transaction:
                raise StoreError("internal error: backup_to cannot run inside a transaction")
            self._write_copy(tmp, dest)
            os.chmod(tmp, 0o600)
            report = self._check_copy(tmp)
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, dest)
            with contextlib.suppress(OSError):  # make the rename durable
                dfd = os.open(dest.parent, os.O_RDONLY)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return {"path": str(dest), "bytes": dest.stat().st_size, **report}

    @staticmethod
    def _check_copy(path: Path) -> dict[str, Any]:
        """Check a finished copy: ``PRAGMA integrity_check`` and the row counts (a plain connection: the
        copy's vec0 tables are not queried, their shadow tables are ordinary tables to the check).

        ``VACUUM INTO`` copies live rows only; the keyword postings are a plain table (migration 0015), so a
        deleted memory's keywords are not in the copy (FTS5 kept them in its index segments until an
        ``optimize``: tests/test_backup.py)."""
        old_umask = os.umask(0o077)  # a journal file next to the copy is user-only too
        try:
            con = sqlite3.connect(str(path), isolation_level=None)
        finally:
            os.umask(old_umask)
        try:
            ok = con.execute("PRAGMA integrity_check").fetchone()[0]
            if ok != "ok":
                raise StoreError(f"{path}: the copy failed its integrity check ({ok})")
            counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in BACKUP_TABLES}
        finally:
            con.close()
        return {"integrity": ok, "counts": counts}

    @staticmethod
    def file_counts(path: str | Path) -> dict[str, int]:
        """Row counts of the main tables of a database file (read-only; tests and reports)."""
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        try:
            return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in BACKUP_TABLES}
        finally:
            con.close()

    # ---------------------------------------------------------------- restore (import)
    def space_contents(self, space_id: int) -> dict[str, int]:
        """What a space holds: memories, edges, semantic records, hub rows, logged asks."""
        q = {"nodes": "SELECT count(*) FROM nodes WHERE space_id=?",
             "edges": "SELECT count(*) FROM edges WHERE space_id=?",
             "semantic": "SELECT count(*) FROM semantic WHERE space_id=?",
             "hubs": "SELECT count(*) FROM hubs WHERE space_id=?",
             "asks": "SELECT count(*) FROM asks WHERE space_id=?"}
        return {k: self.db.execute(sql, (space_id,)).fetchone()[0] for k, sql in q.items()}

    def restore_node_state(self, rows: Iterable[tuple[int, int, float | None]]) -> None:
        """``(node_id, access_count, last_access)`` as exported (inside the write transaction)."""
        self.require_transaction("restore_node_state")
        self.db.executemany("UPDATE nodes SET access_count=?, last_access=? WHERE id=?",
                            [(count, last, nid) for nid, count, last in rows])

    def restore_edges(self, space_id: int, rows: Sequence[tuple[int, int, float, float]]) -> None:
        """``(a, b, prior, amp)`` written as given (a < b; both nodes of the space, checked by the caller,
        and by the transaction's foreign data: a missing node is an error, not a skip)."""
        self.require_transaction("restore_edges")
        self.db.executemany("INSERT INTO edges(a, b, space_id, prior, amp) VALUES (?, ?, ?, ?, ?)",
                            [(a, b, space_id, prior, amp) for a, b, prior, amp in rows])

    def restore_counters(self, space_id: int, step: int, base_step: int, consolidated_step: int,
                         decay: float | None = None) -> None:
        """The space's retrieval counter, last rebase, consolidated step and Eq.1 decay (None: not recorded),
        as exported."""
        self.require_transaction("restore_counters")
        self.db.execute("UPDATE spaces SET step=?, base_step=?, consolidated_step=?, decay=? WHERE id=?",
                        (int(step), int(base_step), int(consolidated_step),
                         None if decay is None else float(decay), space_id))

    def restore_semantic(self, space_id: int, rec: dict[str, Any], evidence: Sequence[int],
                         vector: np.ndarray) -> int:
        """One semantic record with its times, forgotten-evidence count, evidence links and vector."""
        self.require_transaction("restore_semantic")
        sid = self.db.execute(
            "INSERT INTO semantic(space_id, kind, subject, text, confidence, date, hub_id, forgotten_evidence, "
            "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?) RETURNING id",
            (space_id, rec["kind"], rec.get("subject"), rec["text"], rec.get("confidence"), rec.get("date"),
             rec.get("hub_id"), int(rec.get("forgotten_evidence") or 0), rec["created_at"], rec["updated_at"])
        ).fetchone()[0]
        self._put_semantic_vector(sid, space_id, np.asarray(vector, dtype=np.float32))
        self.db.executemany("INSERT INTO semantic_evidence(semantic_id, node_id) VALUES (?, ?)",
                            [(sid, n) for n in dict.fromkeys(evidence)])
        return sid

    def restore_hub(self, space_id: int, node_id: int, cluster: Sequence[int], step: int, status: str) -> None:
        self.require_transaction("restore_hub")
        self.db.execute("INSERT INTO hubs(node_id, space_id, cluster, distilled_step, status) VALUES (?,?,?,?,?)",
                        (node_id, space_id, json.dumps(list(cluster)), int(step), status))

    def passage_vectors(self, ids: Sequence[int]) -> dict[int, list[np.ndarray]]:
        """``{node_id: [passage vectors in order]}`` of the given nodes that have passage vectors."""
        out: dict[int, list[np.ndarray]] = {}
        for nid, _idx, blob in self.select_in(
                "SELECT node_id, idx, embedding FROM node_passage WHERE node_id IN ({ids}) ORDER BY node_id, idx",
                list(ids)):
            out.setdefault(nid, []).append(np.frombuffer(blob, dtype=np.float32))
        return out

    def raw_edges(self, space_id: int) -> tuple[int, int, float | None, list[tuple[int, int, float, float]]]:
        """``(step, base_step, decay, [(a, b, prior, amp)])`` of the space, read in one snapshot, as stored
        (``decay``: the space's recorded Eq.1 decay, None if none is recorded yet): ``prior + amp * decay **
        (step - base_step)`` is each current weight (export: an exact round trip)."""
        with self._snapshot():
            step, base, decay = self.db.execute("SELECT step, base_step, decay FROM spaces WHERE id=?",
                                                (space_id,)).fetchone()
            rows = self.db.execute("SELECT a, b, prior, amp FROM edges WHERE space_id=? ORDER BY a, b",
                                   (space_id,)).fetchall()
        return step, base, decay, rows

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads inside see one moment of the database (a read transaction; within a caller's transaction,
        that one). ``hela export`` reads a whole space in one."""
        with self._snapshot():
            yield
