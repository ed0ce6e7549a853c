"""A database file deleted or replaced while hela has it open (issue 53's soak: `rm` of the file during a
session). SQLite's last close of the old file checkpoints it and then unlinks ``PATH-wal`` by name, which by then
is the new database's: the new file's committed writes vanished for every other connection and its index broke.
hela's store closes a moved file without that checkpoint, and refuses to write through it."""

from __future__ import annotations

import os
from hela_cli.store.base import sqlite3   # hela's own SQLite library: one copy per process (two copies drop each other's locks)

import pytest

from hela_cli.config import Config
from hela_cli.errors import StoreError
from hela_cli.memory import Memory
from hela_cli.store import Store


def _count(path) -> int:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT count(*) FROM nodes").fetchone()[0]
    finally:
        con.close()


def test_closing_a_deleted_database_leaves_the_new_one_whole(tmp_path, hash_embedder):
    db = tmp_path / "m.db"
    old = Memory(Config(db=str(db)), store=Store(str(db)), embedder=hash_embedder)
    old.add("s", "written to the first file")
    for suffix in ("", "-wal", "-shm"):   # the user's rm
        os.unlink(f"{db}{suffix}") if os.path.exists(f"{db}{suffix}") else None
    new = Memory(Config(db=str(db)), store=Store(str(db)), embedder=hash_embedder)
    for i in range(5):
        new.add("s", f"written to the new file, {i}")
    assert os.path.exists(f"{db}-wal") and _count(db) == 5   # in the new file's WAL, seen by another reader
    with pytest.raises(StoreError, match="deleted or replaced while hela had it open"):
        old.add("s", "through the old connection")   # refused, not lost in an unlinked file
    old.close()   # before: the checkpoint of the old file, then the unlink of the NEW file's -wal
    assert os.path.exists(f"{db}-wal") and _count(db) == 5
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    new.close()
    assert _count(db) == 5


def test_hela_keeps_its_locks_while_another_connection_closes(tmp_path):
    """A second connection's close must not checkpoint and unlink the -wal under an open hela store: hela never
    opens the database file outside SQLite (closing such a descriptor drops every POSIX lock of the process on
    the file, SQLite's included). The read-only probe did, and another reader's close then deleted the WAL."""
    db = tmp_path / "y.db"
    store = Store(str(db))
    with store.transaction():
        store.ensure_space("a")
    reader = sqlite3.connect(db)
    reader.execute("SELECT count(*) FROM spaces").fetchall()
    reader.close()
    assert os.path.exists(f"{db}-wal"), "another connection's close unlinked the WAL of an open store"
    store.close()
