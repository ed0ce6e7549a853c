"""The SQLite engine: one file per database, sqlite-vec and an in-process index for vectors.

:class:`SqliteStore` is the shared :class:`~hela_cli.store.core.StoreCore` with this package's pieces:
the connection, transactions and migrations (:mod:`.connection`, :mod:`.schema`), vector and keyword
search (:mod:`.search`), the bulk load of new rows (:mod:`.load`) and the engine's side of deletion down
to the file's bytes (:mod:`.correct`). ``Store(path)`` returns one for a path (or ``":memory:"``).
"""

from __future__ import annotations

from hela_cli.store.core import StoreCore
from hela_cli.store.sqlite.connection import SQLITE, SqliteConnection, sqlite_database_kind
from hela_cli.store.sqlite.correct import SqliteCorrect
from hela_cli.store.sqlite.load import SqliteLoad
from hela_cli.store.sqlite.search import SqliteSearch


class SqliteStore(SqliteCorrect, SqliteLoad, SqliteSearch, SqliteConnection, StoreCore):
    """A hela database in one SQLite file (``Store(path)``, ``Store(":memory:")``)."""


__all__ = ["SQLITE", "SqliteStore", "sqlite_database_kind"]
