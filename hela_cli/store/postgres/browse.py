"""``hela ui``'s store on Postgres: :class:`~hela_cli.store.postgres.PgStore` with the strength cache of a
long-lived reader (its change token is Postgres',
:meth:`hela_cli.store.postgres.correct.PgCorrect._change_token`), and the check that a database is hela's
before ``hela ui`` opens it."""

from __future__ import annotations

from hela_cli.errors import StoreError
from hela_cli.store.browse import StrengthCache
from hela_cli.store.postgres import PgStore
from hela_cli.store.postgres.connection import connect


class PgBrowseStore(StrengthCache, PgStore):
    """``BrowseStore.open("postgresql://...")`` returns one."""


def pg_database_kind(url: str) -> str | None:
    """Why the Postgres database at ``url`` is not a hela database, or None when it is one (the Postgres side of
    :func:`hela_cli.store.database_kind`). Connects without creating or migrating anything
    (``must_exist``: a database without hela's tables is refused before any write); a connection that
    fails raises the usual one-line :class:`~hela_cli.errors.InputError`."""
    try:
        conn, _, _ = connect(url, must_exist=True)
    except StoreError:
        return "not a hela database (no hela tables in it)"
    try:
        missing = [t for t in ("spaces", "nodes")
                   if not conn.execute("SELECT to_regclass(%s) IS NOT NULL", (t,)).fetchone()[0]]
        return "not a hela database (no hela tables in it)" if missing else None
    finally:
        conn.close()


__all__ = ["PgBrowseStore", "pg_database_kind"]
