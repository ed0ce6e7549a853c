"""The Postgres + pgvector engine: the same store over psycopg 3, for several machines sharing one memory.

:class:`PgStore` is the shared :class:`~hela_cli.store.core.StoreCore` with this package's pieces: the
connection, write locks, transactions and migrations (:mod:`.connection`, :mod:`.schema`), one snapshot
and fewer round trips per retrieval (:mod:`.read`), KNN through pgvector and FTS5's BM25 computed from term
statistics (:mod:`.search`), COPY for bulk loads (:mod:`.load`), and the engine's side of deletion
(VACUUM, ANALYZE: :mod:`.correct`). ``Store("postgresql://...")`` returns one; the driver is imported only
then (``pip install 'hela[postgres]'``).
"""

from __future__ import annotations

from hela_cli.store.core import StoreCore
from hela_cli.store.postgres.connection import POSTGRES, PgConnection, PgDB, connect, pg_sql
from hela_cli.store.postgres.correct import PgCorrect
from hela_cli.store.postgres.load import PgLoad
from hela_cli.store.postgres.read import PgReads
from hela_cli.store.postgres.search import PgSearch


class PgStore(PgCorrect, PgReads, PgSearch, PgLoad, PgConnection, StoreCore):
    """A hela database on Postgres + pgvector (``Store("postgresql://...")`` returns one)."""


__all__ = ["POSTGRES", "PgDB", "PgStore", "connect", "pg_sql"]
