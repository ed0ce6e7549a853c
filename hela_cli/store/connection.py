"""The connection: sqlean + sqlite-vec, WAL, pragmas, transactions, migrations, meta, the embedder binding
and spaces."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence


from hela_cli.errors import StoreError
from hela_cli.paths import ensure_private_dir

from hela_cli.store.base import BUSY_TIMEOUT_MS, CACHE_KIB, MMAP_BYTES, Space, sqlite3
from hela_cli.store.schema import MIGRATION_SET, MIGRATIONS
from hela_cli.store.search_state import SearchState

if TYPE_CHECKING:
    from sqlite_utils import Database


def _stderr_line(line: str) -> None:
    print(f"hela: {line}", file=sys.stderr, flush=True)


def _vec0_path() -> str:
    """sqlite-vec's loadable extension, as ``sqlite_vec.loadable_path()`` gives it, without importing the
    package: its ``__init__`` imports the standard library's sqlite3 (for type hints), 15 ms of every
    one-shot command (measured with ``python -X importtime``)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StoreError("sqlite-vec is not installed; install hela with its dependencies")
    return os.path.normpath(os.path.join(list(spec.submodule_search_locations)[0], "vec0"))


class Connection:
    """Opens the file and owns the connection, transactions, migrations, meta and spaces."""

    def __init__(self, path: str | Path = ":memory:", vector_cache: bool = False,
                 progress: Callable[[str], None] | None = _stderr_line, sign_index_min: int = 20_000,
                 sign_rescore: int = 2000, vector_cache_auto: int = 0):
        """``progress``: where an upgrade of an existing database reports its steps (stderr; None: silent).
        ``vector_cache``: keep each space's vectors in memory for KNN at any size (long-lived processes;
        see :mod:`hela_cli.store.vector_index`). Off: spaces up to 20k nodes still use the exact in-process index,
        larger ones are searched by the sign bits persisted in the file (see :mod:`hela_cli.store.vector_index`).
        ``sign_index_min``: spaces with more nodes than this use the persisted sign bits (when
        ``vector_cache`` is off); ``sign_rescore``: how many of their Hamming-nearest candidates are rescored
        exactly (``retrieval.sign_index_min`` / ``retrieval.sign_rescore``). ``vector_cache_auto``: a space
        of at most this many nodes searched a second time through this connection gets the in-process index
        from then on, as with ``vector_cache`` (0: never; ``retrieval.vector_cache_auto``)."""
        self.path = str(path)
        self._in_tx = False
        self._sdb: Database | None = None
        self.progress = progress
        self.vector_cache = vector_cache
        self.sign_index_min = sign_index_min
        self.sign_rescore = sign_rescore
        self.vector_cache_auto = vector_cache_auto
        self.search_state = SearchState()
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
            # deleted cells and freed pages are overwritten with zeros: a deleted memory leaves the file's
            # bytes (complete deletion, store/correct.py)
            self.db.execute("PRAGMA secure_delete=ON")
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
    def open(cls, path: str | Path | None = None, *, must_exist: bool = True, vector_cache: bool = False,
             **kw: Any) -> Any:
        """Open ``path`` (default: the user's ``hela.db``). ``must_exist``: a missing file is a
        :class:`StoreError` ("no database yet") instead of a new empty database - reads never create one."""
        from hela_cli.paths import default_db_path

        p = Path(path).expanduser() if path not in (None, "") else default_db_path()
        if must_exist and str(path) != ":memory:" and not p.exists():
            raise StoreError(f"{p}: no database yet (run `hela ingest` or `hela add` first)")
        return cls(str(path) if str(path) == ":memory:" else p, vector_cache=vector_cache, **kw)

    @classmethod
    def memory(cls) -> "Connection":
        return cls(":memory:")

    def _load_vec(self) -> None:
        try:
            self.db.enable_load_extension(True)
            self.db.load_extension(_vec0_path())
            self.db.enable_load_extension(False)
        except AttributeError:  # pragma: no cover
            raise StoreError("this Python's sqlite3 cannot load extensions; install hela with its "
                             "dependencies (sqlean-py)") from None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.db.close()

    # the search state's parts under the names the search code uses (one object: ``search_state``)
    _searches = property(lambda self: self.search_state.searches)
    _indexes = property(lambda self: self.search_state.indexes)
    _sizes = property(lambda self: self.search_state.sizes)
    _caches = property(lambda self: self.search_state.caches)
    _hnsw = property(lambda self: self.search_state.hnsw)

    @property
    def _signs(self) -> dict[int, tuple[int, Any]]:
        return self.search_state.signs

    @_signs.setter
    def _signs(self, value: dict[int, tuple[int, Any]]) -> None:
        self.search_state.signs = value

    def held_index(self, space_id: int) -> Any | None:
        """The in-process vector index this process holds for the space, or None (see ``search_state``)."""
        return self.search_state.held_index(space_id)

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---------------------------------------------------------------- transactions
    @property
    def sdb(self) -> "Database":
        """The connection wrapped by sqlite-utils (schema, migrations, inserts/upserts, rows as dicts).

        Created on first use: sqlite-utils costs 60-80 ms to import (measured), which read-only commands
        such as ``hela ask --no-llm --no-learn`` never pay."""
        if self._sdb is None:
            from sqlite_utils import Database

            self._sdb = Database(self.db, recursive_triggers=False, execute_plugins=False)
        return self._sdb

    @contextlib.contextmanager
    def transaction(self, space: int | None = None) -> Iterator["sqlite3.Connection"]:
        """A write transaction (``BEGIN IMMEDIATE``): all or nothing. ``space``: the one space whose rows the
        transaction writes, if the caller knows it (Postgres then locks only that space; a SQLite file has
        one writer at a time whatever it names).

        A nested call runs in a SAVEPOINT (sqlite-utils ``atomic()``): if the inner block fails, its writes
        are rolled back and the error propagates; nothing is committed before the outer block ends."""
        if self._in_tx:
            with self.sdb.atomic():
                yield self.db
            return
        self.db.execute("BEGIN IMMEDIATE")
        self._in_tx = True
        try:
            yield self.db
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")
        finally:
            self._in_tx = False

    @contextlib.contextmanager
    def reading(self, space_id: int) -> Iterator[None]:
        """The enclosed reads of one space (a retrieval's): nothing on SQLite, where a read is a function
        call; Postgres runs them in one snapshot and reads the space's state once (``store/pg_read.py``)."""
        yield

    def require_transaction(self, what: str) -> None:
        """Raise :class:`StoreError` unless a write transaction is open (a programming error, but one that
        must not silently write outside a transaction when Python runs with ``-O``)."""
        if not self._in_tx:
            raise StoreError(f"internal error: {what} must run inside Store.transaction()")

    def select_in(self, sql: str, ids: Sequence[Any], params: Sequence[Any] = ()) -> Iterator[tuple]:
        """Rows of ``sql`` whose ``{ids}`` placeholder is an ``IN`` list of ``ids``, 500 at a time.

        Hand-written on purpose: an ``IN (?, ...)`` list read 400 ids in 338 us where
        ``IN (SELECT value FROM json_each(?))`` took 513 us (100k-row table); retrieval reads ~150-200
        rows by id per ask. Chunks keep every statement under SQLite's variable limit."""
        ids = list(ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            yield from self.db.execute(sql.format(ids=",".join("?" * len(chunk))), (*params, *chunk))

    def _table_exists(self, name: str) -> bool:
        return bool(self.db.execute("SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?",
                                    (name,)).fetchone()[0])

    def _migrations_current(self) -> bool:
        """Plain-SQL fast path for the common case (no sqlite-utils import): every migration recorded."""
        if not self._table_exists("_sqlite_migrations"):
            return False
        done = [r[0] for r in self.db.execute(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY rowid", (MIGRATION_SET,))]
        return done == [name for name, _ in MIGRATIONS]

    def _migrate(self) -> None:
        """Apply pending migrations (sqlite-utils ``Migrations``), one committed transaction each.

        Each migration commits with its record, so a process killed during a long upgrade loses only the
        migration it was in, and the next open resumes there. Several processes opening the file at once
        take turns (``BEGIN IMMEDIATE``) and re-read what is pending inside the transaction. Upgrading a
        database that already holds memories reports each step (and a heartbeat during long ones) through
        ``self.progress`` (stderr by default)."""
        if self._migrations_current():
            return
        from hela_cli.store.schema import legacy_records, migration_set

        ms = migration_set(MIGRATIONS)
        known = [name for name, _ in MIGRATIONS]
        while True:
            with self.transaction():
                if self._table_exists("migrations"):  # a hela 0.1.0 file: adopt its record of migrations
                    rows = self.db.execute("SELECT name, applied_at FROM migrations ORDER BY id").fetchall()
                    ms.ensure_migrations_table(self.sdb)
                    self.sdb["_sqlite_migrations"].insert_all(legacy_records(rows))
                    self.sdb["migrations"].drop()
                done = [m.name for m in ms.applied(self.sdb)]
                if done != known[: len(done)]:
                    raise StoreError(
                        f"{self.path}: database schema is newer than this hela understands "
                        f"({len(done)} migrations, this version knows {len(known)}); upgrade hela")
                pending = ms.pending(self.sdb)
                if not pending:
                    break
                name = pending[0].name
                report = self._upgrade_reporter(name, len(done) + 1, len(known))
                try:
                    ms.apply(self.sdb, stop_before=pending[1].name if len(pending) > 1 else None)
                finally:
                    report(None)
                self._set_meta("schema_version", str(len(done) + 1))

    def _upgrade_reporter(self, name: str, number: int, total: int) -> Callable[[Any], None]:
        """Progress for one migration of a database that holds memories: a line before it, a heartbeat every
        10 s while one statement runs long (1M nodes took 1,403 s for 0004+0005), and the time it took."""
        out = self.progress
        if out is None or not self._table_exists("nodes") or \
                self.db.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is None:
            return lambda _: None
        t0 = time.monotonic()
        last = [t0]
        out(f"{self.path}: upgrading the database: migration {name} ({number} of {total})")

        def beat() -> int:
            now = time.monotonic()
            if now - last[0] >= 10:
                last[0] = now
                out(f"{self.path}: still applying {name} ({now - t0:.0f} s)")
            return 0

        self.db.set_progress_handler(beat, 1_000_000)

        def done(_: Any) -> None:
            self.db.set_progress_handler(None, 0)
            out(f"{self.path}: {name} applied in {time.monotonic() - t0:.1f} s")

        return done

    def applied_migrations(self) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY rowid", (MIGRATION_SET,))]

    # ---------------------------------------------------------------- meta / embedder
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def _set_meta(self, key: str, value: str) -> None:
        self.sdb["meta"].upsert({"key": key, "value": value}, pk="key")

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
                    f"the configured embedder is '{model_id}' ({dim}-d). Use the same embedder, a "
                    f"new --db file, or `hela reembed` to move this file to the configured one")
            return
        if not isinstance(dim, int) or dim <= 0:
            raise StoreError(f"invalid embedding dimension {dim!r}")
        with self.transaction():
            if self.embedder_info() is None:  # another process may have won the race
                self._set_meta("embed_model", model_id)
                self._set_meta("embed_dim", str(dim))
                self._create_vector_tables(dim)
        self.bind_embedder(model_id, dim)

    def _create_vector_tables(self, dim: int) -> None:
        """The sqlite-vec KNN tables for vectors of ``dim`` (the Postgres store needs none)."""
        for table, key in (("node_vec", "node_id"), ("semantic_vec", "semantic_id")):
            self.db.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
                f"{key} INTEGER PRIMARY KEY, space_id INTEGER partition key, "
                f"embedding float[{dim}] distance_metric=cosine)")

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
                self.sdb["spaces"].insert({"name": name, "created_at": time.time()}, ignore=True)
            sp = self.get_space(name)
        if sp is None:  # pragma: no cover - a concurrent delete of the space
            raise StoreError(f"space '{name}' vanished while being created")
        return sp

    def spaces(self) -> list[dict[str, Any]]:
        return list(self.sdb.query(
            """SELECT s.id, s.name, s.step AS steps,
                      (SELECT count(*) FROM nodes n WHERE n.space_id = s.id) AS nodes,
                      (SELECT count(*) FROM edges e WHERE e.space_id = s.id) AS edges,
                      (SELECT count(*) FROM semantic m WHERE m.space_id = s.id) AS semantic,
                      (SELECT min(ts) FROM nodes n WHERE n.space_id = s.id) AS first_ts,
                      (SELECT max(ts) FROM nodes n WHERE n.space_id = s.id) AS last_ts
               FROM spaces s ORDER BY s.name"""))

    def space_now(self, space_id: int) -> float | None:
        """The space's present: the newest memory's timestamp."""
        return self.db.execute("SELECT max(ts) FROM nodes WHERE space_id=?", (space_id,)).fetchone()[0]

