"""The SQL spellings that differ between the engines, as one small object the shared code is given.

The shared modules of :mod:`hela_cli.store` write one SQL text for both engines. Where SQLite and Postgres
spell the same thing differently (a two-argument maximum, an order-independent float sum, a
case-insensitive LIKE, a JSON array membership test, the name of a table), the text takes the spelling
from the engine's :class:`Dialect` (``store.dialect``) instead of a class attribute an engine overrides.
Each engine package defines its instance (``SQLITE`` in :mod:`hela_cli.store.sqlite.connection`,
``POSTGRES`` in :mod:`hela_cli.store.postgres.connection`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    """What differs in the text of otherwise shared SQL."""

    #: ``"sqlite"`` or ``"postgres"`` (``Store.backend``)
    name: str
    #: the two-argument maximum: SQLite's scalar ``max()``, Postgres' ``greatest()``
    greatest: str
    #: a sum of float weights whose result does not depend on row order, with ``{}`` for the expression:
    #: SQLite (>= 3.43) sums floats with Kahan-Babuska-Neumaier compensation; Postgres sums exactly as numeric
    fsum: str
    #: LIKE ignoring the case of ASCII letters (SQLite's LIKE does; Postgres needs ILIKE)
    like: str
    #: the table holding the semantic records' vectors
    semantic_vectors: str
    #: per-space tables of the engine's own vector index, deleted with a space
    space_index_tables: tuple[str, ...]
    #: SQL true when the JSON array of ids in ``{column}`` holds one of ``{placeholders}`` (``?,?``)
    json_holds_sql: str
    #: the statement opening a read snapshot (SQLite: a read transaction; Postgres: REPEATABLE READ, read-only)
    begin_read: str
    #: the 8-byte float type of a CAST (SQLite's REAL is 8 bytes; Postgres' REAL is 4)
    float_type: str
    #: rows ``(term, pos)`` of the JSON array of text bound to the one ``?``, ``pos`` its index from 0
    json_terms: str
    #: rows ``(value)`` of the JSON array of text bound to the one ``?`` (a list of any length as one parameter)
    json_values: str
    #: the aggregate adding float ``{value}`` one by one in the order of ``{order}``, without compensation
    #: (``c0 + c1 + ...``, as FTS5's ``bm25()`` adds a query's terms): SQLite's own ``sum()`` compensates
    #: (Kahan-Babuska-Neumaier), so the SQLite engine registers ``hela_ordered_sum``; Postgres' ``sum(float8)``
    #: is plain addition in the order the ``ORDER BY`` feeds it
    ordered_sum_sql: str

    def ordered_sum(self, value: str, order: str) -> str:
        return self.ordered_sum_sql.format(value=value, order=order)

    def json_holds(self, column: str, placeholders: str) -> str:
        return self.json_holds_sql.format(column=column, placeholders=placeholders)
