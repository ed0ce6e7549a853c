"""The storage layer: one SQLite file. ALL SQL of hela lives in this package.

* sqlite-vec ``vec0`` tables hold node and semantic-record vectors (partitioned by space, cosine).
* ``node_terms`` holds the keyword postings, ``spaces.fts_docs`` / ``fts_len`` each space's counts: BM25
  keyword candidates with the space's own statistics (as on Postgres).
* ``edges`` holds undirected Hebbian edges, one row per pair ``a < b``. The current weight is
  ``amp * decay ** (step - base_step)`` with the space's retrieval counter ``step``: a retrieval decays
  every edge by bumping ``step`` (O(1)); see :mod:`hela_cli.mechanics.dynamics`.
* Named, ordered migrations (sqlite-utils ``Migrations``) are applied under ``BEGIN IMMEDIATE``, one
  committed transaction each; WAL, ``busy_timeout``, ``synchronous=NORMAL``; the file is user-only (0600).

sqlite-utils (``Store.sdb``) does the schema, migrations, inserts / upserts and the reads that return
whole rows as dicts (spaces, hubs, a space's records, export). Hand-written SQL is kept where it is
measured to matter or where sqlite-utils cannot go:

* the hot reads of retrieval (node features, vectors and semantic records by id, edges of the candidates):
  150 rows by id took 403-467 us as plain tuples and 811-821 us through ``rows_where`` / ``query`` (which
  wrap each read in a SAVEPOINT and build dicts), on every ask; ``import sqlite_utils`` alone costs
  60-80 ms, which a read-only ``hela ask --no-learn`` never pays because ``sdb`` is created lazily;
* the KNN (sqlite-vec ``MATCH ... AND k = ?``) and the BM25 statement, and every write to the vec0 virtual
  tables and the keyword postings (``Table.create`` cannot make virtual tables, CHECK constraints or
  WITHOUT ROWID);
* the edge writes of Eq.1 (one ``INSERT ... ON CONFLICT`` per learning step) and the O(1) global decay.
"""

from typing import Any

from hela_cli.store.asks import AsksLog
from hela_cli.store.backup import Backup
from hela_cli.store.base import Space, sqlite3
from hela_cli.store.browse import Browse, NodeFilter, StrengthCache, database_kind
from hela_cli.store.connection import Connection
from hela_cli.store.correct import Correct, FilteredSearch
from hela_cli.store.edges import Edges
from hela_cli.store.hubs import Hubs
from hela_cli.store.integrity import Integrity
from hela_cli.store.nodes import Nodes
from hela_cli.store.reembed import Reembed
from hela_cli.store.schema import FTS_TOKENIZER, MIGRATIONS, SCHEMA_VERSION
from hela_cli.store.semantic import Semantic
from hela_cli.store.target import is_postgres
from hela_cli.store.transfer import Transfer
from hela_cli.store.vectors import Search


class Store(Correct, FilteredSearch, Transfer, Nodes, Search, Edges, Semantic, Hubs, AsksLog, Reembed, Integrity, Backup,
            Browse, Connection):
    """A hela database (``Correct``: list / complete delete / edit, store/correct.py). ``Store(":memory:")``
    gives a throw-away in-memory one (tests).

    ``Store("postgresql://user@host/db")`` (and ``Store.open`` of such a URL) gives the same API on
    Postgres + pgvector (:class:`hela_cli.store.postgres.PgStore`); a URL of another scheme is refused
    (:func:`hela_cli.store.target.is_postgres`)."""

    backend = "sqlite"

    def __new__(cls, path: Any = ":memory:", *args: Any, **kw: Any) -> Any:
        if is_postgres(path):
            from hela_cli.store.postgres import PgStore

            return PgStore(str(path), *args, **kw)
        return super().__new__(cls)

    @classmethod
    def open(cls, path: Any = None, *, must_exist: bool = True, vector_cache: bool = False, **kw: Any) -> Any:
        if is_postgres(path):
            from hela_cli.store.postgres import PgStore

            return PgStore.open(path, must_exist=must_exist, vector_cache=vector_cache, **kw)
        return super().open(path, must_exist=must_exist, vector_cache=vector_cache, **kw)



Backup._copy_store = Store   # what a Postgres backup writes (store/pg_correct.py)


class BrowseStore(StrengthCache, Store):
    """A :class:`Store` for a long-lived reader (``hela ui``): Eq.2 strengths read once per database state."""

    @classmethod
    def open(cls, path: Any = None, *, must_exist: bool = True, vector_cache: bool = False, **kw: Any) -> Any:
        if is_postgres(path):
            from hela_cli.store.pg_browse import PgBrowseStore

            return PgBrowseStore.open(path, must_exist=must_exist, vector_cache=vector_cache, **kw)
        return super().open(path, must_exist=must_exist, vector_cache=vector_cache, **kw)


__all__ = ["BrowseStore", "FTS_TOKENIZER", "MIGRATIONS", "NodeFilter", "SCHEMA_VERSION", "Space", "Store", "database_kind", "sqlite3"]
