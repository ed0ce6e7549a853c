"""The SQLite engine's connection: sqlean + sqlite-vec, WAL, pragmas, transactions, migrations.

One file per database, user-only (0600, and its ``-wal`` / ``-shm`` too). Every connection runs in WAL
mode with ``busy_timeout``, ``synchronous=NORMAL``, a 64 MiB page cache, a memory map and
``secure_delete=ON`` (deleted cells and freed pages are zeroed: see :mod:`hela_cli.store.sqlite.correct`).
Writes run in ``BEGIN IMMEDIATE`` transactions (one writer per file; nested calls are savepoints).
Migrations are sqlite-utils ``Migrations`` (:mod:`hela_cli.store.sqlite.schema`), one committed
transaction each, reported through the caller's progress callback. Driver errors that mean "another
process held the lock too long" (``SQLITE_BUSY`` / ``SQLITE_LOCKED``, read from the exception's
``sqlite_errorcode``) become :class:`~hela_cli.errors.StoreLocked` in :class:`SqliteDB`.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from hela_cli.errors import StoreError, StoreFull, StoreLocked, StoreReadOnly
from hela_cli.store.sqlite.files import no_checkpoint_on_close, unwritable_dir
from hela_cli.paths import ensure_private_dir
from hela_cli.store.base import BUSY_TIMEOUT_MS, CACHE_KIB, MMAP_BYTES, sqlite3
from hela_cli.store.connection import Connection, Progress
from hela_cli.store.dialect import Dialect
from hela_cli.store.sqlite.schema import MIGRATION_SET, MIGRATIONS

if TYPE_CHECKING:
    from sqlite_utils import Database

SQLITE = Dialect(
    name="sqlite", greatest="max", fsum="sum({})", like="LIKE", semantic_vectors="semantic_vec",
    space_index_tables=("sign_blocks", "sign_state"),
    json_holds_sql="EXISTS (SELECT 1 FROM json_each({column}) WHERE value IN ({placeholders}))",
    begin_read="BEGIN", float_type="REAL", json_terms="SELECT value AS term, key AS pos FROM json_each(?)",
    json_values="SELECT value FROM json_each(?)", ordered_sum_sql="hela_ordered_sum({value} ORDER BY {order})")


class OrderedSum:
    """``hela_ordered_sum(x ORDER BY y)``: the floats added one by one in the order SQLite feeds them, as
    plain ``+`` (SQLite's ``sum()`` compensates its rounding, so its last bit can differ from FTS5's and
    Postgres' order-by-order sum). One SQL expression whatever the number of rows: a query of 50,000
    keywords is one statement of fixed size."""

    def __init__(self) -> None:
        self.total: float | None = None

    def step(self, value: float | None) -> None:
        if value is not None:
            self.total = value if self.total is None else self.total + value

    def finalize(self) -> float | None:
        return self.total

_LOCK_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def error_code(e: BaseException) -> int | None:
    """The primary SQLite result code of a driver exception (extended codes folded), or None."""
    code = getattr(e, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def is_lock_error(e: BaseException) -> bool:
    """``SQLITE_BUSY`` or ``SQLITE_LOCKED``: another connection held a lock past the busy timeout."""
    return error_code(e) in _LOCK_CODES


def is_readonly_error(e: BaseException) -> bool:
    """``SQLITE_READONLY``: the file (or this connection, ``query_only``) cannot be written."""
    return error_code(e) == sqlite3.SQLITE_READONLY


class SqliteDB:
    """The sqlite3 connection with lock errors mapped: ``execute`` / ``executemany`` raise
    :class:`StoreLocked` for ``SQLITE_BUSY`` / ``SQLITE_LOCKED``; every other attribute is the connection's."""

    __slots__ = ("conn", "where", "read_only", "query_only")

    def __init__(self, conn: Any, where: str):
        self.conn = conn
        self.where = where
        self.read_only = False
        self.query_only = False

    def _unwritable(self, e: BaseException) -> StoreError:
        return StoreReadOnly(f"{self.where}: the database cannot be written here (a read-only file, directory or "
                          f"mount); reading works, nothing was written")

    def _locked(self, e: BaseException) -> StoreLocked:
        return StoreLocked(f"{self.where}: the database stayed locked by another process for too long "
                           f"({error_code_name(e)}); try again")

    def _full(self, e: BaseException) -> StoreFull:
        return StoreFull(f"{self.where}: the disk is full ({error_code_name(e)}); the write that met it stored "
                         f"nothing")

    def execute(self, sql: str, params: Any = ()) -> Any:
        try:
            return self.conn.execute(sql, params)
        except sqlite3.OperationalError as e:
            if is_lock_error(e):
                raise self._locked(e) from None
            if error_code(e) == sqlite3.SQLITE_FULL:
                raise self._full(e) from None
            if is_readonly_error(e) and not self.query_only:   # a read-only file, directory or mount
                raise self._unwritable(e) from None
            raise

    def executemany(self, sql: str, rows: Any) -> Any:
        try:
            return self.conn.executemany(sql, rows)
        except sqlite3.OperationalError as e:
            if is_lock_error(e):
                raise self._locked(e) from None
            if error_code(e) == sqlite3.SQLITE_FULL:
                raise self._full(e) from None
            if is_readonly_error(e) and not self.query_only:   # a read-only file, directory or mount
                raise self._unwritable(e) from None
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def error_code_name(e: BaseException) -> str:
    return getattr(e, "sqlite_errorname", None) or type(e).__name__


def _vec0_path() -> str:
    """sqlite-vec's loadable extension, as ``sqlite_vec.loadable_path()`` gives it, without importing the
    package: its ``__init__`` imports the standard library's sqlite3 (for type hints), 15 ms of every
    one-shot command (measured with ``python -X importtime``)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StoreError("sqlite-vec is not installed; install hela with its dependencies")
    return os.path.normpath(os.path.join(list(spec.submodule_search_locations)[0], "vec0"))


def _private_if_new(p: Path) -> None:
    """An empty file someone created for hela (``touch hela.db``) keeps the mode it was made with, often
    0644: hela makes it user-only when it initialises it, as it does the files it creates (issue 57). A file
    that already holds a database keeps its owner's choice."""
    try:
        st = p.stat()
        if st.st_size == 0 and st.st_uid == os.getuid() and st.st_mode & 0o077:
            os.chmod(p, 0o600)
    except OSError:
        pass


class SqliteConnection(Connection):
    """Opens the file and owns the connection, transactions and migrations."""

    dialect = SQLITE

    def __init__(self, path: str | Path = ":memory:", vector_cache: bool = False,
                 progress: Progress | None = None, sign_index_min: int = 20_000,
                 sign_rescore: int = 2000, vector_cache_auto: int = 0):
        """``progress``: where an upgrade of an existing database reports its steps (None: silent; the CLI
        passes a stderr writer). ``vector_cache``: keep each space's vectors in memory for KNN at any size
        (long-lived processes; see :mod:`hela_cli.store.vector_index`). Off: spaces up to 20k nodes still use
        the exact in-process index, larger ones are searched by the sign bits persisted in the file.
        ``sign_index_min``: spaces with more nodes than this use the persisted sign bits (when
        ``vector_cache`` is off); ``sign_rescore``: how many of their Hamming-nearest candidates are rescored
        exactly (``retrieval.sign_index_min`` / ``retrieval.sign_rescore``). ``vector_cache_auto``: a space
        of at most this many nodes searched a second time through this connection gets the in-process index
        from then on, as with ``vector_cache`` (0: never; ``retrieval.vector_cache_auto``)."""
        self.path = str(path)
        self._sdb: Database | None = None
        self._init_state(progress=progress, vector_cache=vector_cache, sign_index_min=sign_index_min,
                         sign_rescore=sign_rescore, vector_cache_auto=vector_cache_auto)
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
            else:
                _private_if_new(p)
            self.path = str(p)
        self.read_only = False
        old_umask = os.umask(0o077)  # -wal / -shm files are user-only too
        try:
            try:
                self._connect(self.path)
                if self.path != ":memory:":
                    self._set_wal()
            except sqlite3.DatabaseError as e:
                # a database on a read-only mount, in a directory hela cannot write, or an immutable file:
                # opened read-only, so that reading works (issue 57: "unable to open database file")
                if self.path == ":memory:" or not (not os.access(self.path, os.W_OK) or
                                                     unwritable_dir(Path(self.path).parent)):
                    raise
                with contextlib.suppress(Exception):
                    self.db.close()
                self._open_read_only(e)
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            self.db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            self.db.execute("PRAGMA foreign_keys=ON")
            # deleted cells and freed pages are overwritten with zeros: a deleted memory leaves the file's
            # bytes (complete deletion, store/sqlite/correct.py)
            self.db.execute("PRAGMA secure_delete=ON")
            if self.path != ":memory:":
                with contextlib.suppress(OSError):
                    st = os.stat(self.path)
                    self._file_id = (st.st_dev, st.st_ino)
            if not self.read_only and self.path != ":memory:" and not os.access(self.path, os.W_OK):
                self.read_only = self.db.read_only = True   # SQLite opened it read-only itself (an immutable file)
            if self.read_only:
                if not self._migrations_current():
                    raise StoreError(f"{self.path}: the database is read-only here and was written by an older "
                                     f"hela; open it once where it can be written (it is upgraded then)")
            else:
                self._migrate()
        except sqlite3.DatabaseError as e:
            with contextlib.suppress(Exception):
                self.db.close()
            raise StoreError(f"{self.path}: not a usable hela database ({e})") from None
        except BaseException:
            with contextlib.suppress(Exception):
                self.db.close()
            raise
        finally:
            os.umask(old_umask)

    def _moved(self) -> bool:
        """Whether the file at ``self.path`` is no longer the one this connection opened (deleted, or replaced
        by another: a restore, ``rm`` then a new database made there). One ``stat``."""
        opened = getattr(self, "_file_id", None)
        if opened is None:
            return False
        try:
            st = os.stat(self.path)
        except OSError:
            return True
        return (st.st_dev, st.st_ino) != opened

    def close(self) -> None:
        """Close the connection. When the file was deleted or replaced meanwhile, without SQLite's checkpoint
        on the last close: that checkpoint ends by unlinking ``PATH-wal`` by name, which is then the new
        database's (a soak of hooks with the database deleted once lost 58 turns to it and broke the new file's
        index: BENCHMARKS.md, issue 53)."""
        if self.path != ":memory:" and self._moved():
            no_checkpoint_on_close(self.db.conn, self.path)
        with contextlib.suppress(Exception):
            self.db.close()

    def _connect(self, target: str, uri: bool = False) -> None:
        self.db = SqliteDB(sqlite3.connect(target, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                                           check_same_thread=False, uri=uri), self.path)
        self.db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        self.db.conn.create_aggregate("hela_ordered_sum", 1, OrderedSum)
        self._load_vec()

    def _open_read_only(self, first: BaseException) -> None:
        """Reopen ``self.path`` read-only (``mode=ro``; ``immutable=1`` too where even the WAL index cannot be
        made: a read-only mount, a directory nobody may write); a write then fails as one line
        (:meth:`SqliteDB.execute`)."""
        p = Path(self.path)
        uri = p.resolve().as_uri() + "?mode=ro"
        if unwritable_dir(p.parent):
            uri += "&immutable=1"
        try:
            self._connect(uri, uri=True)
            self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError:
            raise first from None
        self.read_only = True
        self.db.read_only = True

    def _set_wal(self) -> None:
        """``PRAGMA journal_mode=WAL``, retried: switching a new file to WAL needs an exclusive lock and SQLite
        answers SQLITE_BUSY at once instead of waiting ``busy_timeout`` (several processes opening the same
        new database together got 'database is locked')."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        delay = 0.002
        while True:
            try:
                self.db.conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as e:
                if not is_lock_error(e):
                    raise
                if time.monotonic() > deadline:
                    raise self.db._locked(e) from None
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
    def memory(cls) -> Any:
        return cls(":memory:")

    def _load_vec(self) -> None:
        try:
            self.db.enable_load_extension(True)
            self.db.load_extension(_vec0_path())
            self.db.enable_load_extension(False)
        except AttributeError:  # pragma: no cover
            raise StoreError("this Python's sqlite3 cannot load extensions; install hela with its "
                             "dependencies (sqlean-py)") from None

    # ---------------------------------------------------------------- transactions
    @property
    def sdb(self) -> "Database":
        """The connection wrapped by sqlite-utils, for the migrations only (:mod:`hela_cli.store.sqlite.schema`).

        Created on first use: sqlite-utils costs 60-80 ms to import (measured), which commands on a current
        database never pay."""
        if self._sdb is None:
            from sqlite_utils import Database

            self._sdb = Database(self.db.conn, recursive_triggers=False, execute_plugins=False)
        return self._sdb

    @contextlib.contextmanager
    def transaction(self, space: int | None = None) -> Iterator[Any]:
        """A write transaction (``BEGIN IMMEDIATE``): all or nothing. ``space``: the one space whose rows the
        transaction writes, if the caller knows it (Postgres then locks only that space; a SQLite file has
        one writer at a time whatever it names).

        A nested call runs in a SAVEPOINT: if the inner block fails, its writes are rolled back and the
        error propagates; nothing is committed before the outer block ends."""
        if self._in_tx:
            name = f"hela_sp_{id(object()):x}"
            self.db.execute(f"SAVEPOINT {name}")
            try:
                yield self.db
            except BaseException:
                self.db.execute(f"ROLLBACK TO SAVEPOINT {name}")
                self.db.execute(f"RELEASE SAVEPOINT {name}")
                raise
            else:
                self.db.execute(f"RELEASE SAVEPOINT {name}")
            return
        if self._moved():
            raise StoreError(f"{self.path}: the database file was deleted or replaced while hela had it open; "
                             f"nothing was written (run the command again)")
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

    # ---------------------------------------------------------------- migrations
    def _table_exists(self, name: str) -> bool:
        return bool(self.db.execute("SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?",
                                    (name,)).fetchone()[0])

    def _migrations_current(self) -> bool:
        """Plain-SQL fast path for the common case (no sqlite-utils import): every migration recorded."""
        if not self._table_exists("_sqlite_migrations"):
            return False
        return self.applied_migrations() == [name for name, _ in MIGRATIONS]

    def _migrate(self) -> None:
        """Apply pending migrations (sqlite-utils ``Migrations``), one committed transaction each.

        Each migration commits with its record, so a process killed during a long upgrade loses only the
        migration it was in, and the next open resumes there. Several processes opening the file at once
        take turns (``BEGIN IMMEDIATE``) and re-read what is pending inside the transaction. Upgrading a
        database that already holds memories reports each step (and a heartbeat during long ones) through
        ``self.progress``."""
        if self._migrations_current():
            return
        from hela_cli.store.sqlite.schema import legacy_records, migration_set

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

    def _create_vector_tables(self, dim: int) -> None:
        """The sqlite-vec KNN tables for vectors of ``dim``."""
        for table, key in (("node_vec", "node_id"), ("semantic_vec", "semantic_id")):
            self.db.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
                f"{key} INTEGER PRIMARY KEY, space_id INTEGER partition key, "
                f"embedding float[{dim}] distance_metric=cosine)")


def sqlite_database_kind(path: str | Path) -> str | None:
    """Why the file ``path`` is not a hela database (a one-line reason), or None when it is one (the
    SQLite side of :func:`hela_cli.store.database_kind`).

    Opened read-only (``mode=ro``): a foreign SQLite file is never migrated or written, and nothing is
    created. A hela database holds hela's migration records (or, from hela 0.1.0, its ``migrations`` table
    with ``spaces`` and ``nodes``)."""
    p = Path(path).expanduser()
    if not p.exists():
        return "no such file"
    if p.is_dir():
        return "is a directory"
    try:
        db = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as e:
        return f"cannot open it ({e})"
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        if "_sqlite_migrations" in tables:
            n = db.execute("SELECT count(*) FROM _sqlite_migrations WHERE migration_set = 'hela'").fetchone()[0]
            if n:
                return None
        if {"migrations", "spaces", "nodes"} <= tables:
            return None
        return "not a hela database (no hela tables in it)"
    except sqlite3.DatabaseError as e:
        return f"not an SQLite database ({e})"
    finally:
        db.close()
