"""The storage layer: one declared interface, an engine per package. ALL SQL of hela lives in this package.

Layout:

* :mod:`.interface`: :class:`~hela_cli.store.interface.StoreAPI`, the methods everything above the store
  (memory, ingest, mechanics, maintenance, ui, bench, cli) may call, composed of one protocol per concern
  (memories, links, search, marks, spaces and administration, transfer, ...); ``Store(...)`` / ``Store.open(...)``
  return an object that implements it on the engine the path or URL names;
* the shared modules (``nodes``, ``edges``, ``semantic``, ``hubs``, ``asks``, ``passages``, ``correct``,
  ``transfer``, ``backup``, ``browse``, ``integrity``, ``reembed``, ``connection``), composed in
  :class:`~hela_cli.store.core.StoreCore`: the SQL both engines share, written once in plain SQL (no
  sqlite-utils table API), with the spellings that differ taken from the engine's
  :class:`~hela_cli.store.dialect.Dialect`; ``core`` declares, as abstract methods, what every engine supplies;
* :mod:`.sqlite` and :mod:`.postgres`: one package per engine, holding only what differs (connection,
  schema and migrations, vector and keyword search, bulk load, the engine's index rows of a node and
  byte-level deletion).

SQLite (one file): sqlite-vec ``vec0`` tables hold node and semantic-record vectors (partitioned by space,
cosine); ``node_terms`` holds the keyword postings and ``spaces.fts_docs`` / ``fts_len`` each space's
counts (BM25 keyword candidates with the space's own statistics, as on Postgres); ``edges`` holds undirected
Hebbian edges, one row per pair ``a < b``, the current weight ``prior + amp * decay ** (step - base_step)``
with the space's own decay and retrieval counter ``step`` (a retrieval decays every edge by bumping ``step``: O(1); see
:mod:`hela_cli.mechanics.dynamics`). Postgres: pgvector and the same tables; see :mod:`.postgres`.

Hand-written SQL is kept where it is measured to matter: the hot reads of retrieval (node features,
vectors and semantic records by id, edges of the candidates): 150 rows by id took 403-467 us as plain
tuples and 811-821 us through sqlite-utils' ``rows_where`` / ``query`` (which wrap each read in a SAVEPOINT
and build dicts), on every ask; ``import sqlite_utils`` alone costs 60-80 ms, which only a migration pays
now. The store prints nothing: long steps (a migration, a first index build) go to the ``progress``
callback a caller passes (the CLI passes one that writes to stderr).
"""

from __future__ import annotations

from typing import Any

from hela_cli.store.base import Space, sqlite3
from hela_cli.store.browse import NodeFilter, StrengthCache
from hela_cli.store.interface import StoreAPI
from hela_cli.store.sqlite import SqliteStore, sqlite_database_kind
from hela_cli.store.sqlite.schema import FTS_TOKENIZER, MIGRATIONS, SCHEMA_VERSION
from hela_cli.store.target import is_postgres


class Store:
    """Opens a hela database on the engine its location names and returns it (a :class:`StoreAPI`).

    ``Store(path)`` / ``Store.open(path)``: a SQLite file (:class:`~hela_cli.store.sqlite.SqliteStore`);
    ``Store(":memory:")`` / ``Store.memory()`` a throw-away in-memory one (tests);
    ``Store("postgresql://user@host/db")``: Postgres + pgvector (:class:`~hela_cli.store.postgres.PgStore`);
    a URL of another scheme is refused (:func:`hela_cli.store.target.is_postgres`). Keyword arguments are
    the engine's (``vector_cache``, ``progress``, ``sign_index_min``, ...)."""

    _browse = False

    def __new__(cls, path: Any = ":memory:", *args: Any, **kw: Any) -> Any:
        return _engine(path, cls._browse)(str(path) if is_postgres(path) else path, *args, **kw)

    @classmethod
    def open(cls, path: Any = None, *, must_exist: bool = True, vector_cache: bool = False, **kw: Any) -> Any:
        """Open ``path`` (default: the user's ``hela.db``); ``must_exist``: a missing database is a
        :class:`~hela_cli.errors.StoreError` ("no database yet") instead of a new empty one."""
        return _engine(path, cls._browse).open(path, must_exist=must_exist, vector_cache=vector_cache, **kw)

    @classmethod
    def memory(cls) -> Any:
        return SqliteStore(":memory:")

    #: checks that need no database: a space name :meth:`StoreAPI.ensure_space` would accept; the row counts
    #: of a (backup) file
    check_space_name = staticmethod(SqliteStore.check_space_name)
    file_counts = staticmethod(SqliteStore.file_counts)


class BrowseStore(Store):
    """A :class:`Store` for a long-lived reader (``hela ui``): Eq.2 strengths read once per database state."""

    _browse = True


class SqliteBrowseStore(StrengthCache, SqliteStore):
    """``BrowseStore.open(path)`` of a SQLite file."""


def _engine(path: Any, browse: bool) -> Any:
    """The engine class for ``path``: Postgres for a ``postgresql://`` URL (imported only then), else SQLite."""
    if is_postgres(path):
        if browse:
            from hela_cli.store.postgres.browse import PgBrowseStore

            return PgBrowseStore
        from hela_cli.store.postgres import PgStore

        return PgStore
    return SqliteBrowseStore if browse else SqliteStore


def database_kind(target: Any) -> str | None:
    """Why ``target`` (a file path or a ``postgresql://`` URL) is not a hela database (one line), or None
    when it is one. Nothing is created, migrated or written."""
    if is_postgres(target):
        from hela_cli.store.postgres.browse import pg_database_kind

        return pg_database_kind(str(target))
    return sqlite_database_kind(target)


__all__ = ["BrowseStore", "FTS_TOKENIZER", "MIGRATIONS", "NodeFilter", "SCHEMA_VERSION", "Space", "Store",
           "StoreAPI", "database_kind", "sqlite3"]
