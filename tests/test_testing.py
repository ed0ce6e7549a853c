"""hela_cli.testing: the test doubles tests and benchmarks share, and the probe that keeps a Postgres whose
pgvector was built for another CPU from failing dozens of tests one by one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import hela_cli.testing as testing
from hela_cli.testing import HashEmbedder, PostgresUnusable, local_postgres, probe_postgres
from tests.conftest import REPO


def test_hash_embedder_is_deterministic_and_unit_length():
    e = HashEmbedder()
    a, b, c = e.embed(["Miso the grey cat sleeps", "Miso the grey cat sleeps", "marathon training in Berlin"])
    assert np.array_equal(a, b) and abs(float(np.linalg.norm(a)) - 1.0) < 1e-6
    assert float(a @ b) > float(a @ c)


def test_probe_reports_the_versions_of_the_run_server(pg_server):
    versions = probe_postgres(pg_server)
    major = int(versions["postgres"].split(".")[0])
    pgvector = tuple(int(x) for x in versions["pgvector"].split(".")[:2])
    assert major >= 14 and pgvector >= (0, 5), versions   # the minimum docs/sharing.md states


def test_a_backend_killed_by_an_illegal_instruction_is_one_line(monkeypatch):
    """What a pgvector built for another CPU does (SIGILL in the backend on the first distance), done for
    real: the probe's backend gets signal 4 before it computes the distance."""
    import psycopg

    def dies(url: str, dim: int = 384) -> dict[str, str]:
        with psycopg.connect(url, autocommit=True) as conn:
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            os.kill(pid, signal.SIGILL)
            conn.execute("SELECT 1")
        raise AssertionError("the backend survived SIGILL")

    monkeypatch.setattr(testing, "vector_probe", dies)
    with pytest.raises(PostgresUnusable) as info:
        with local_postgres():   # its own temporary folder: pytest resets its folders to 0700 (as root, the
            # server runs as another user that must reach its data)
            pytest.fail("the probe passed")
    line = info.value.message
    assert "\n" not in line and "384-d pgvector `<=>` probe" in line
    assert "terminated by signal 4: Illegal instruction" in line and "built for another CPU" in line


def test_an_unusable_server_fails_every_postgres_test_with_one_line(tmp_path):
    """HELA_TEST_PG naming a server that is not there: each Postgres test errors with the probe's line (no
    cascade of connection errors); the SQLite half of a both-backends test still runs."""
    env = {**os.environ, "HELA_TEST_PG": "postgresql://nobody@127.0.0.1:9/none?connect_timeout=5"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                        "tests/test_postgres.py::test_missing_database_and_reads_that_must_not_create",
                        "tests/test_postgres.py::test_a_read_never_creates_the_schema",
                        "tests/test_postgres.py::test_library_behaves_the_same_on_both_backends",
                        "--basetemp", str(tmp_path / "t")],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    line = ("the test Postgres (HELA_TEST_PG) cannot create a database: connection failed: connection to server "
            'at "127.0.0.1", port 9 failed: Connection refused')
    assert out.splitlines().count(line) == 3, out     # one line per Postgres test, nothing else about it
    assert "1 passed, 3 errors" in out and "During handling" not in out, out
