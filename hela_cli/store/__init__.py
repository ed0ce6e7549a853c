"""The storage layer: one SQLite file. ALL SQL of hela lives in this package.

* sqlite-vec ``vec0`` tables hold node and semantic-record vectors (partitioned by space, cosine).
* FTS5 holds node keywords for keyword candidates (BM25).
* ``edges`` holds undirected Hebbian edges, one row per pair ``a < b``. The current weight is
  ``amp * decay ** (step - base_step)`` with the space's retrieval counter ``step``: a retrieval decays
  every edge by bumping ``step`` (O(1)); see :mod:`hela_cli.dynamics`.
* Named, ordered migrations are applied under ``BEGIN IMMEDIATE``; WAL, ``busy_timeout``,
  ``synchronous=NORMAL``; the file is created user-only (0600).
"""

from hela_cli.store.base import Space, sqlite3
from hela_cli.store.connection import Connection
from hela_cli.store.edges import Edges
from hela_cli.store.integrity import Integrity
from hela_cli.store.nodes import Nodes
from hela_cli.store.schema import FTS_TOKENIZER, MIGRATIONS, SCHEMA_VERSION
from hela_cli.store.semantic import Semantic
from hela_cli.store.vectors import Search


class Store(Nodes, Search, Edges, Semantic, Integrity, Connection):
    """A hela database. ``Store(":memory:")`` gives a throw-away in-memory one (tests)."""


__all__ = ["FTS_TOKENIZER", "MIGRATIONS", "SCHEMA_VERSION", "Space", "Store", "sqlite3"]
