"""The connection: sqlean + sqlite-vec, WAL, pragmas, transactions, migrations, meta, the embedder binding
and spaces."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any, Iterator


from hela_cli.errors import StoreError
from hela_cli.paths import ensure_private_dir

from hela_cli.store.base import BUSY_TIMEOUT_MS, CACHE_KIB, MMAP_BYTES, Space, sqlite3
from hela_cli.store.schema import MIGRATIONS, SCHEMA_VERSION


class Connection:
    """Opens the file and owns the connection, transactions, migrations, meta and spaces."""

    def __init__(self, path: str | Path = ":memory:", vector_cache: bool = False):
        """``vector_cache``: keep each space's vectors in memory for KNN at any size (long-lived processes;
        see :mod:`hela_cli.store.vector_index`). Off: spaces up to 20k nodes still use the exact in-process index,
        larger ones are searched by sqlite-vec (best for one-shot CLI calls: nothing to load)."""
        self.path = str(path)
        self._in_tx = False
        self.vector_cache = vector_cache
        self._indexes: dict[int, tuple[int, Any]] = {}
        self._sizes: dict[int, tuple[int, int]] = {}
        self._caches: dict[tuple[int, str], tuple[int, dict[int, Any]]] = {}
        if self.path != ":memory:":
            p = Path(self.path).expanduser()
            if p.is_dir():
                raise StoreError(f"{p}: is a directory, not a database file")
            ensure_private_dir(p.parent)
            if not p.exists():
                try:
                    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o600)
                    os.close(fd)
                except OSError as e:
                    raise StoreError(f"{p}: cannot create database ({e.strerror})") from None
            self.path = str(p)
        old_umask = os.umask(0o077)  # -wal / -shm files are user-only too
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                                      check_same_thread=False)
            self.db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._load_vec()
            if self.path != ":memory:":
                self._set_wal()
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            self.db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as e:
            with contextlib.suppress(Exception):
                self.db.close()
            raise StoreError(f"{self.path}: not a usable hela database ({e})") from None
        finally:
            os.umask(old_umask)

    def _set_wal(self) -> None:
        """``PRAGMA journal_mode=WAL``, retried: switching a new file to WAL needs an exclusive lock and SQLite
        answers SQLITE_BUSY at once instead of waiting ``busy_timeout`` (several processes opening the same
        new database together got 'database is locked')."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        delay = 0.002
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as e:
                if not ("locked" in str(e) or "busy" in str(e).lower()) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(2 * delay, 0.05)

    @classmethod
    def memory(cls) -> "Connection":
        return cls(":memory:")

    def _load_vec(self) -> None:
        import sqlite_vec

        try:
            self.db.enable_load_extension(True)
            sqlite_vec.load(self.db)
            self.db.enable_load_extension(False)
        except AttributeError:  # pragma: no cover
            raise StoreError("this Python's sqlite3 cannot load extensions; install hela with its "
                             "dependencies (sqlean-py)") from None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.db.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---------------------------------------------------------------- transactions
    @contextlib.contextmanager
    def transaction(self) -> Iterator["sqlite3.Connection"]:
        """A write transaction (``BEGIN IMMEDIATE``): all or nothing. Nested calls join the outer one."""
        if self._in_tx:
            yield self.db
            return
        self.db.execute("BEGIN IMMEDIATE")
        self._in_tx = True
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")
        finally:
            self._in_tx = False

    def _migrate(self) -> None:
        def applied() -> int:
            row = self.db.execute(
                "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='migrations'").fetchone()
            if not row[0]:
                return 0
            return self.db.execute("SELECT count(*) FROM migrations").fetchone()[0]

        if applied() == SCHEMA_VERSION:
            return
        with self.transaction():
            self.db.execute("CREATE TABLE IF NOT EXISTS migrations("
                            "id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at REAL NOT NULL)")
            done = [r[0] for r in self.db.execute("SELECT name FROM migrations ORDER BY id")]
            known = [name for name, _ in MIGRATIONS]
            if len(done) > len(known) or done != known[: len(done)]:
                raise StoreError(
                    f"{self.path}: database schema is newer than this hela understands "
                    f"({len(done)} migrations, this version knows {len(known)}); upgrade hela")
            for i, (name, fn) in enumerate(MIGRATIONS[len(done):], start=len(done) + 1):
                fn(self.db)
                self.db.execute("INSERT INTO migrations(id, name, applied_at) VALUES (?,?,?)",
                                (i, name, time.time()))
            self._set_meta("schema_version", str(SCHEMA_VERSION))

    def applied_migrations(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM migrations ORDER BY id")]

    # ---------------------------------------------------------------- meta / embedder
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT INTO meta(key, value) VALUES (?, ?) "
                        "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (key, value))

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction():
            self._set_meta(key, value)

    def embedder_info(self) -> tuple[str, int] | None:
        model, dim = self.get_meta("embed_model"), self.get_meta("embed_dim")
        return (model, int(dim)) if model and dim else None

    def bind_embedder(self, model_id: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different one later (vectors would not compare)."""
        info = self.embedder_info()
        if info is not None:
            if info != (model_id, dim):
                raise StoreError(
                    f"{self.path}: this database was built with embedder '{info[0]}' ({info[1]}-d); "
                    f"the configured embedder is '{model_id}' ({dim}-d). Use the same embedder or a "
                    f"new --db file")
            return
        if not isinstance(dim, int) or dim <= 0:
            raise StoreError(f"invalid embedding dimension {dim!r}")
        with self.transaction():
            if self.embedder_info() is None:  # another process may have won the race
                self._set_meta("embed_model", model_id)
                self._set_meta("embed_dim", str(dim))
                for table, key in (("node_vec", "node_id"), ("semantic_vec", "semantic_id")):
                    self.db.execute(
                        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
                        f"{key} INTEGER PRIMARY KEY, space_id INTEGER partition key, "
                        f"embedding float[{dim}] distance_metric=cosine)")
        self.bind_embedder(model_id, dim)

    # ---------------------------------------------------------------- spaces
    def get_space(self, name: str) -> Space | None:
        row = self.db.execute("SELECT id, name, step, base_step, consolidated_step FROM spaces "
                              "WHERE name=?", (name,)).fetchone()
        return Space(*row) if row else None

    def require_space(self, name: str) -> Space:
        sp = self.get_space(name)
        if sp is None:
            names = [s["name"] for s in self.spaces()]
            hint = f" (spaces: {', '.join(names[:10])})" if names else " (the database has no spaces yet)"
            raise StoreError(f"unknown space '{name}'{hint}")
        return sp

    @staticmethod
    def check_space_name(name: str) -> None:
        """Raise :class:`StoreError` for a name :meth:`ensure_space` would refuse (check before writing)."""
        if not isinstance(name, str) or not name or len(name) > 200 or any(ord(c) < 32 for c in name):
            shown = repr(name) if len(repr(name)) <= 60 else repr(name)[:57] + "..."
            raise StoreError(f"invalid space name {shown} (1-200 characters, no control characters)")

    def ensure_space(self, name: str) -> Space:
        self.check_space_name(name)
        sp = self.get_space(name)
        if sp is None:
            with self.transaction():
                self.db.execute("INSERT OR IGNORE INTO spaces(name, created_at) VALUES (?, ?)",
                                (name, time.time()))
            sp = self.get_space(name)
        assert sp is not None
        return sp

    def spaces(self) -> list[dict[str, Any]]:
        rows = self.db.execute(
            """SELECT s.id, s.name, s.step,
                      (SELECT count(*) FROM nodes n WHERE n.space_id = s.id),
                      (SELECT count(*) FROM edges e WHERE e.space_id = s.id),
                      (SELECT count(*) FROM semantic m WHERE m.space_id = s.id),
                      (SELECT min(ts) FROM nodes n WHERE n.space_id = s.id),
                      (SELECT max(ts) FROM nodes n WHERE n.space_id = s.id)
               FROM spaces s ORDER BY s.name""").fetchall()
        return [dict(id=r[0], name=r[1], steps=r[2], nodes=r[3], edges=r[4], semantic=r[5],
                     first_ts=r[6], last_ts=r[7]) for r in rows]

    def space_now(self, space_id: int) -> float | None:
        """The space's present: the newest memory's timestamp."""
        return self.db.execute("SELECT max(ts) FROM nodes WHERE space_id=?", (space_id,)).fetchone()[0]

