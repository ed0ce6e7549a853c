"""Server-level SQL for a Postgres that hela's tests and benchmarks start themselves: a fresh database, and the
probe that a server's pgvector can compute a distance at all (:mod:`hela_cli.testing` uses both).

Nothing here touches a hela database; psycopg is imported on call (the ``postgres`` extra).
"""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit, urlunsplit

#: the dimension of the default embedder (all-MiniLM-L6-v2): the probe computes a distance of this size, so
#: a pgvector built for another CPU dies on it here, not in the middle of a test
PROBE_DIM = 384


def with_database(url: str, dbname: str) -> str:
    """``url`` naming database ``dbname`` instead (keeps host, socket and user)."""
    return urlunsplit(urlsplit(url)._replace(path="/" + dbname))


def create_database(admin_url: str, prefix: str = "hela_test") -> str:
    """Create an empty database named ``<prefix>_<random>`` on ``admin_url``'s server; returns its URL."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return with_database(admin_url, name)


def drop_database(admin_url: str, url: str) -> None:
    """Drop the database ``url`` names (on ``admin_url``'s server), if it exists."""
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def vector_probe(url: str, dim: int = PROBE_DIM) -> dict[str, str]:
    """In the database ``url``: ``CREATE EXTENSION vector``, then one cosine distance (``<=>``) of two
    ``dim``-d vectors, with its value checked. Returns the server's and pgvector's versions. Raises psycopg's
    error as it comes (a backend killed by an illegal instruction is an ``OperationalError``: the server
    closed the connection) or ``AssertionError`` for a wrong distance."""
    import psycopg

    a = "[" + ",".join("1" if i % 2 == 0 else "0" for i in range(dim)) + "]"
    b = "[" + ",".join("1" if i % 2 == 1 else "0" for i in range(dim)) + "]"
    with psycopg.connect(url, autocommit=True, connect_timeout=30) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        row = conn.execute(f"SELECT %s::vector({dim}) <=> %s::vector({dim}), %s::vector({dim}) <=> %s::vector({dim})",
                           (a, b, a, a)).fetchone()
        assert row is not None and abs(row[0] - 1.0) < 1e-6 and abs(row[1]) < 1e-6, row
        server = conn.execute("SHOW server_version").fetchone()
        ext = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return {"postgres": str(server[0]) if server else "?", "pgvector": str(ext[0]) if ext else "?"}
