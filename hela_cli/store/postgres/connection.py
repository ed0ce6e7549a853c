"""The Postgres engine's connection: psycopg 3, the write locks, transactions, migrations, errors.

* :class:`PgDB` wraps the psycopg connection with the calls the store's SQL uses (``execute``,
  ``executemany``, ``copy_rows``) and translates the shared SQL's placeholders: ``?`` and ``:name`` become
  psycopg's ``%s`` / ``%(name)s``, ``INSERT OR IGNORE`` becomes ``ON CONFLICT DO NOTHING``, ``instr()``
  becomes ``strpos()``; so the shared modules of :mod:`hela_cli.store` run unchanged on both engines.

Transactions: one write transaction at a time per space, as SQLite's ``BEGIN IMMEDIATE`` per file: a write
transaction that names its space (``transaction(space=id)``) takes that space's transaction-scoped advisory
lock first (and the database key in shared mode), so Eq.1's read-modify-write of edge weights, the step
counter and content-hash deduplication behave exactly as on SQLite with several writer processes, while
writers of other spaces proceed; a transaction that names no space locks the whole database (see
:meth:`PgConnection.transaction`). Reads (``_snapshot``, and a retrieval's ``reading``) run in
``REPEATABLE READ`` read-only transactions: the step pair and the amplitudes come from one snapshot.

Errors: every driver error becomes a :class:`StoreError` (or :class:`InputError` for a database that
cannot be used at all) naming host and database, never the password; a lock that could not be had
(SQLSTATE 55P03, 40P01, 40001) is :class:`~hela_cli.errors.StoreLocked`; a connection lost mid-write rolls
that write back on the server and says so.
"""

from __future__ import annotations

import contextlib
import functools
import re
from typing import Any, Iterator, Sequence

from hela_cli.errors import InputError, StoreError, StoreFull, StoreLocked
from hela_cli.store.connection import Connection, Progress
from hela_cli.store.dialect import Dialect
from hela_cli.store.postgres.schema import PG_MIGRATIONS
from hela_cli.store.target import describe, scrub

POSTGRES = Dialect(
    name="postgres", greatest="greatest", fsum="sum(({})::numeric)::float8", like="ILIKE",
    semantic_vectors="semantic_emb", space_index_tables=(),
    json_holds_sql="EXISTS (SELECT 1 FROM json_array_elements_text(({column})::json) AS j(value) "
                   "WHERE j.value::bigint IN ({placeholders}))",
    begin_read="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", float_type="float8",
    json_terms="SELECT j.value AS term, j.ordinality - 1 AS pos FROM json_array_elements_text(CAST(? AS json)) "
               "WITH ORDINALITY AS j(value, ordinality)",
    json_values="SELECT j.value FROM json_array_elements_text(CAST(? AS json)) AS j(value)",
    ordered_sum_sql="sum(({value})::float8 ORDER BY {order})")

#: SQLSTATEs that mean "another transaction held what this one needed": lock_not_available (lock_timeout,
#: NOWAIT), deadlock_detected, serialization_failure; mapped to :class:`StoreLocked`
LOCK_SQLSTATES = frozenset({"55P03", "40P01", "40001"})

PGVECTOR_MIN = (0, 7)
# Advisory lock keys. 64-bit keys: migrations, the database's write key (exclusive: a database-wide write;
# shared: a write to one space), the database-wide bookkeeping nested in a space's write (meta, new spaces).
# Two-int keys (a separate key space in Postgres): (LOCK_SPACE, space id), one per space.
LOCK_MIGRATE = 0x68656C61_0001
LOCK_WRITE = 0x68656C61_0002
LOCK_META = 0x68656C61_0004
LOCK_SPACE = 0x68656C61
CONNECT_TIMEOUT_S = 10

_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|::|\?|(?<![:\w]):([A-Za-z_]\w*)|%|INSERT OR IGNORE|"
                    r"\binstr\(", re.IGNORECASE)


@functools.lru_cache(maxsize=2048)
def pg_sql(sql: str) -> str:
    """The store's portable SQL (sqlite3 placeholders) in psycopg's placeholder style (and SQLite's
    ``instr()`` as Postgres' ``strpos()``)."""
    ignore = False

    def sub(m: re.Match) -> str:
        nonlocal ignore
        tok = m.group(0)
        if tok == "::":
            return tok
        if tok[0] in "'\"":
            return tok.replace("%", "%%")   # psycopg reads every % of the statement, quoted or not
        if tok == "?":
            return "%s"
        if tok == "%":
            return "%%"
        if tok.lower() == "instr(":        # SQLite's instr(haystack, needle): the same 1-based position
            return "strpos("
        if tok.upper() == "INSERT OR IGNORE":
            ignore = True
            return "INSERT"
        return f"%({m.group(1)})s"

    out = _TOKEN.sub(sub, sql)
    if ignore and "ON CONFLICT" not in out.upper():
        out = out.rstrip().rstrip(";") + " ON CONFLICT DO NOTHING"
    return out


def write_lock_sql(space: int | None) -> str:
    """The lock statement a write transaction starts with (see :meth:`PgConnection.transaction`). Space ids
    above 2**31 - 1 share keys modulo 2**31 (the two-int form takes int4): they would wait for each other,
    never skip a lock."""
    if space is None:
        return f"SELECT pg_advisory_xact_lock({LOCK_WRITE})"
    return (f"SELECT pg_advisory_xact_lock_shared({LOCK_WRITE}), "
            f"pg_advisory_xact_lock({LOCK_SPACE}, {int(space) % 2 ** 31})")


def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


class PgDB:
    """The psycopg connection as the store's SQL uses it: ``execute`` / ``executemany`` with sqlite3-style
    placeholders, ``in_transaction``; driver errors become :class:`StoreError` naming the database."""

    def __init__(self, conn: Any, where: str, url: str):
        self.conn = conn
        self.where = where
        self._url = url

    def error(self, e: Exception) -> StoreError:
        import psycopg

        first = scrub(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__, self._url)
        if getattr(e, "sqlstate", None) in LOCK_SQLSTATES:
            return StoreLocked(f"{self.where}: the database stayed locked by another transaction too long "
                               f"({first}); try again")
        if getattr(e, "sqlstate", None) == "53100":   # disk_full
            return StoreFull(f"{self.where}: the disk is full ({first}); the write that met it stored nothing")
        if isinstance(e, (psycopg.OperationalError, psycopg.InterfaceError)) or self.conn.closed:
            return StoreError(f"{self.where}: lost the connection to the database ({first}); the write in "
                              f"progress was not applied")
        return StoreError(f"{self.where}: database error ({first})")

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = (), *, binary: bool = False) -> Any:
        """``binary``: rows in Postgres' binary format (vectors: 0.03 ms each to load instead of 0.33 ms from
        pgvector's text form, measured on 300 384-d vectors)."""
        import psycopg

        try:
            cur = self.conn.cursor(binary=True) if binary else self.conn.cursor()
            cur.execute(pg_sql(sql), params if params is not None else ())
            return cur
        except psycopg.Error as e:
            raise self.error(e) from None

    def executemany(self, sql: str, rows: Any) -> Any:
        import psycopg

        rows = list(rows)
        if not rows:
            return None
        try:
            cur = self.conn.cursor()
            cur.executemany(pg_sql(sql), rows)
            return cur
        except psycopg.Error as e:
            raise self.error(e) from None

    def copy_rows(self, table: str, columns: Sequence[str], rows: Any, types: Sequence[str] | None = None) -> None:
        """Write rows with ``COPY ... FROM STDIN`` (the bulk inserts of ingest: keyword postings went from
        6.0 to 2.3 s per 25k rows against pipelined INSERTs, busy machine). ``types``: binary COPY with these
        column types (vectors: pgvector's text form costs ~2 ms per 384-d vector in Python)."""
        import psycopg

        binary = " (FORMAT BINARY)" if types else ""
        try:
            with self.conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN{binary}") as cp:
                if types:
                    cp.set_types(list(types))
                for row in rows:
                    cp.write_row(row)
        except psycopg.Error as e:
            raise self.error(e) from None

    def dicts(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        cur = self.execute(sql, params)
        names = [d.name for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.conn.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


def connect(url: str, *, must_exist: bool) -> tuple[Any, str, bool]:
    """Connect to ``url`` and check pgvector. Returns ``(connection, where, schema_present)``.

    Refusals (:class:`InputError`, exit 2, nothing written): psycopg or pgvector not installed, a URL
    libpq cannot parse, a refused connection or failed login, pgvector missing or older than 0.7."""
    where = describe(url)
    try:
        import psycopg
    except ImportError:
        raise InputError(f"{where}: the Postgres backend needs psycopg and pgvector "
                         f"(pip install 'hela[postgres]')") from None
    try:
        import pgvector.psycopg  # noqa: F401
    except ImportError:
        raise InputError(f"{where}: the Postgres backend needs the pgvector package "
                         f"(pip install 'hela[postgres]')") from None
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                               application_name="hela")
    except psycopg.Error as e:
        raise InputError(f"{where}: cannot connect ({_first_line(e, url)})") from None
    except Exception as e:  # a malformed URL (e.g. a bad port) is refused before any connection
        raise InputError(f"{where}: not a usable Postgres URL ({_first_line(e, url)})") from None
    try:
        where = _where(conn, url)
        row = conn.execute("SELECT default_version, installed_version FROM pg_available_extensions "
                           "WHERE name = 'vector'").fetchone()
        if row is None:
            raise InputError(f"{where}: the pgvector extension is not available on this server "
                             f"(hela needs pgvector >= 0.7)")
        version = row[1] or row[0]
        if _version_tuple(version) < PGVECTOR_MIN:
            raise InputError(f"{where}: pgvector {version} is too old (hela needs >= 0.7)")
        present = conn.execute("SELECT to_regclass('hela_migrations') IS NOT NULL").fetchone()[0]
        if not present and must_exist:
            raise StoreError(f"{where}: no hela database yet (run `hela ingest` or `hela add` first)")
        if row[1] is None:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as e:
                raise InputError(f"{where}: cannot enable pgvector ({_first_line(e, url)}); run "
                                 f"CREATE EXTENSION vector as a database owner") from None
        from pgvector.psycopg import register_vector

        register_vector(conn)
        return conn, where, present
    except psycopg.Error as e:  # e.g. a role that may not read the catalog: one line, never a traceback
        with contextlib.suppress(Exception):
            conn.close()
        raise InputError(f"{where}: cannot use this database ({_first_line(e, url)})") from None
    except BaseException:
        with contextlib.suppress(Exception):
            conn.close()
        raise


def _first_line(e: BaseException, url: str) -> str:
    text = str(e).strip()
    # libpq's "connection to server at ... failed: <reason>\n<hint>": the reason is what the user needs
    if "failed: " in text:
        text = text.rsplit("failed: ", 1)[1]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return scrub(lines[0] if lines else type(e).__name__, url)[:300]


def _where(conn: Any, url: str) -> str:
    info = conn.info
    host = info.host or "localhost"
    port = "" if host.startswith("/") or not info.port else f":{info.port}"
    return f"postgresql://{host}{port}/{info.dbname}"


class PgConnection(Connection):
    """Connection, transactions (with the write lock) and migrations on Postgres."""

    dialect = POSTGRES

    def __init__(self, url: str, vector_cache: bool = False,
                 progress: Progress | None = None, sign_index_min: int = 20_000,
                 sign_rescore: int = 2000, vector_cache_auto: int = 0, must_exist: bool = False,
                 hnsw_min: int | None = None):
        conn, where, _ = connect(url, must_exist=must_exist)
        self.url = url
        self.path = where           # what messages name: host and database, never the password
        self._init_state(progress=progress, vector_cache=vector_cache, sign_index_min=sign_index_min,
                         sign_rescore=sign_rescore, vector_cache_auto=vector_cache_auto)
        self._tx_space: int | None = None   # the space the open write transaction locked (None: all)
        self._tx_meta = False                # the open transaction holds LOCK_META
        # (step - base_step, decay) per space, as this transaction left them (read.py)
        self._tx_exp: dict[int, tuple[int, float | None]] = {}
        if hnsw_min is not None:
            self.hnsw_min = hnsw_min
        self.db = PgDB(conn, where, url)
        self._migrate()

    @classmethod
    def open(cls, path: Any = None, *, must_exist: bool = True, vector_cache: bool = False, **kw: Any) -> Any:
        return cls(str(path), vector_cache=vector_cache, must_exist=must_exist, **kw)

    # ---------------------------------------------------------------- transactions
    @contextlib.contextmanager
    def transaction(self, space: int | None = None) -> Iterator[Any]:
        """A write transaction: all or nothing. A nested call runs in a SAVEPOINT.

        The write locks (transaction-scoped advisory locks, released at COMMIT / ROLLBACK):

        * ``space`` given: the transaction writes only that space's rows. It takes the database key in
          shared mode and the space's own key ``(LOCK_SPACE, space)`` exclusively, so writers of one space
          take turns exactly as SQLite's ``BEGIN IMMEDIATE`` writers (Eq.1's read-modify-write, the step
          counter, deduplication, forgetting's checks), while writers of other spaces run at the same time;
        * ``space`` None: database-wide, the database key exclusively (migrations, the embedder binding,
          a new space, ``hela copy``, ``reembed``'s swap, and any caller that names no space): it waits for
          every writer and every writer waits for it.

        Inside a space's transaction a nested database-wide call (``ensure_space`` of a new name, the first
        ``bind_embedder``) takes ``LOCK_META`` exclusively: such bookkeeping rows are serialised between
        spaces without a lock upgrade (no deadlock: the keys are always taken in the order database,
        space, meta). A nested call naming another space is a programming error."""
        if self._in_tx:
            if space is not None and self._tx_space is not None and space != self._tx_space:
                raise StoreError(f"internal error: a write to space {space} inside a transaction that "
                                 f"locked space {self._tx_space}")
            name = f"hela_sp_{id(object())}"
            lock = f"; SELECT pg_advisory_xact_lock({LOCK_META})" \
                if space is None and self._tx_space is not None and not self._tx_meta else ""
            self.db.execute(f"SAVEPOINT {name}{lock}")
            self._tx_meta = self._tx_meta or bool(lock)
            try:
                yield self.db
            except BaseException:
                self._tx_exp.clear()
                with contextlib.suppress(StoreError):
                    self.db.execute(f"ROLLBACK TO SAVEPOINT {name}")
                raise
            else:
                self.db.execute(f"RELEASE SAVEPOINT {name}")
            return
        if getattr(self, "_memo", None) is not None:  # pragma: no cover - a programming error
            raise StoreError("internal error: a write transaction inside a read snapshot (Store.reading)")
        # BEGIN and the lock in one round trip (no parameters: libpq's simple protocol takes both)
        self.db.execute("BEGIN; " + write_lock_sql(space))
        self._in_tx, self._tx_space, self._tx_meta = True, space, False
        try:
            yield self.db
        except BaseException:
            with contextlib.suppress(StoreError):
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")
        finally:
            self._in_tx, self._tx_space, self._tx_meta = False, None, False
            self._tx_exp.clear()

    # ---------------------------------------------------------------- migrations
    def _migrate(self) -> None:
        known = [name for name, _ in PG_MIGRATIONS]
        if self.db.execute("SELECT to_regclass('hela_migrations') IS NOT NULL").fetchone()[0] and \
                self.applied_migrations() == known:
            return
        while True:
            with self.transaction():
                self.db.execute("SELECT pg_advisory_xact_lock(?)", (LOCK_MIGRATE,))
                self.db.execute("CREATE TABLE IF NOT EXISTS hela_migrations(name TEXT PRIMARY KEY, "
                                "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
                done = self.applied_migrations()
                if done != known[: len(done)]:
                    raise StoreError(f"{self.path}: database schema is newer than this hela understands "
                                     f"({len(done)} migrations, this version knows {len(known)}); upgrade hela")
                if len(done) == len(known):
                    return
                name, sql = PG_MIGRATIONS[len(done)]
                for stmt in sql.split(";"):
                    if stmt.strip():
                        self.db.conn.execute(stmt)
                self.db.execute("INSERT INTO hela_migrations(name) VALUES (?)", (name,))
                self._set_meta("schema_version", str(len(done) + 1))

    def applied_migrations(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM hela_migrations ORDER BY name")]

    def _table_exists(self, name: str) -> bool:
        return bool(self.db.execute("SELECT to_regclass(?) IS NOT NULL", (name,)).fetchone()[0])

    # ---------------------------------------------------------------- vector tables
    def _create_vector_tables(self, dim: int) -> None:
        """Nothing: pgvector columns take any width; the per-space HNSW indexes are built by searches."""


__all__ = ["POSTGRES", "PgConnection", "PgDB", "connect", "pg_sql"]
