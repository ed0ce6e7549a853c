"""What a delete leaves in a Postgres server's files: the table and index files and the WAL, searched byte
for byte for a deleted secret after each step. Reports; asserts nothing.

    python benchmarks/quality/pg_delete_bytes.py [N]        # N memories (default 1,500); needs the test extra

Starts a private Postgres + pgvector (``hela_cli.testing.local_postgres``) in a temporary directory, so it
can read the server's own data directory. The workload is ``benchmarks/quality/secure_delete.py``'s: N memories
(a deterministic keyword-hash embedder, no model file), a secret added after the first ~half, 60 learning
retrievals (every fifth about the secret) each logged as an ask that quotes it. Then, with a
``CHECKPOINT`` (dirty pages written to the files) before every search:

1. before the delete, after an ``ANALYZE`` (as autovacuum runs one on its own schedule);
2. after ``erase_nodes(..., scrub=False)``: the rows deleted and committed, no VACUUM (what autovacuum would
   find later);
3. after hela's scrub (``Memory.delete`` runs it: plain ``VACUUM (ANALYZE)`` of the tables that held the
   text);
4. after ``VACUUM FULL`` of those tables (rewrites them: what an operator can run in a quiet moment);
5. after ``pg_switch_wal()`` and two more CHECKPOINTs (WAL segments recycled).

Also times ``hela backup`` of the database before the delete (wall and this process's CPU).

For each step: which relations' files and how many WAL segments hold the secret or its keyword, and which
columns' planner statistics (``pg_stats``, readable by SQL) quote it.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path


from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.store.postgres.correct import VACUUM_TABLES

# the tests' keyword-hash embedder (no model); appended, so that PYTHONPATH still decides which hela_cli runs
from hela_cli.testing import HashEmbedder, local_postgres, new_database  # noqa: E402

SECRET = "the vault code is QX-ZORBLAX-77-TANGERINE"
NEEDLES = (b"ZORBLAX", b"zorblax")


def scan(conn, datadir: Path, dboid: int) -> dict[str, object]:
    """Relations whose files hold a needle, and the WAL segments that do."""
    conn.execute("CHECKPOINT")
    names = {}
    for relname, filenode in conn.execute(
            "SELECT c.relname, pg_relation_filenode(c.oid) FROM pg_class c WHERE pg_relation_filenode(c.oid) IS NOT NULL"):
        names[str(filenode)] = relname
    rels: dict[str, int] = {}
    for f in sorted((datadir / "base" / str(dboid)).iterdir()):
        if not f.is_file():
            continue
        data = f.read_bytes()
        n = sum(data.count(x) for x in NEEDLES)
        if n:
            base = f.name.split(".")[0].split("_")[0]
            rel = names.get(base, f"file {f.name}") + ("" if f.name == base else f" ({f.name.split('_', 1)[-1]})"
                                                       if "_" in f.name else "")
            rels[rel] = rels.get(rel, 0) + n
    wal = [f.name for f in sorted((datadir / "pg_wal").iterdir()) if f.is_file()
           and any(x in f.read_bytes() for x in NEEDLES)]
    stats = conn.execute(   # what SQL can read: the planner statistics of the database's tables
        "SELECT string_agg(tablename || '.' || attname, ' ') FROM pg_stats WHERE schemaname = 'public' AND "
        "(most_common_vals::text ILIKE '%zorblax%' OR histogram_bounds::text ILIKE '%zorblax%')").fetchone()[0]
    return {"relations": rels, "pg_stats": stats, "wal_segments_with_it": len(wal),
            "wal_segments": sum(1 for f in (datadir / "pg_wal").iterdir() if f.is_file())}


def main() -> None:
    import psycopg

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
    tmp = Path(tempfile.mkdtemp(prefix="hela-pgbytes-"))
    with local_postgres() as admin:
        with psycopg.connect(admin, autocommit=True) as c:
            datadir = Path(c.execute("SHOW data_directory").fetchone()[0])
        url = new_database(admin, "bytes")
        conn = psycopg.connect(url, autocommit=True)
        dboid = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
        print(f"server {conn.execute('SHOW server_version').fetchone()[0]}, {n} memories")

        m = Memory(Config(db=url), embedder=HashEmbedder())
        random.seed(1)
        words = "apple river garden music travel office paper bread window mountain coffee yellow".split()
        turns = [{"text": " ".join(random.choices(words, k=12)) + f" n{i}", "speaker": random.choice(["Ana", "Bo"])}
                 for i in range(n)]
        half = int(n * 0.47)
        m.add_many("s", turns[:half])
        sid = m.add("s", SECRET, speaker="Ana")
        m.add_many("s", turns[half:])
        for i in range(60):
            q = "vault code tangerine zorblax" if i % 5 == 0 else " ".join(random.choices(words, k=3))
            r = m.retrieve(q, "s", learn=True)
            m.store.log_ask(m.store.require_space("s").id, q, "answer " + SECRET if i % 5 == 0 else "x",
                            [x["id"] for x in r.memories], 1)
        conn.execute("ANALYZE")   # the statistics autovacuum gathers on its own schedule (it had at 100,000)
        print("1 before the delete (after ANALYZE):", scan(conn, datadir, dboid))
        t0, c0 = time.perf_counter(), time.process_time()
        b = m.backup(tmp / "backup.db")
        print(f"  hela backup (a SQLite file of the space): {time.perf_counter() - t0:.2f} s wall, "
              f"{time.process_time() - c0:.2f} s client CPU, {b['bytes']:,} bytes, {b['counts']['nodes']} memories")

        space = m.store.require_space("s")
        t0 = time.perf_counter()
        rep = m.store.erase_nodes(space.id, [sid], scrub=False)
        t1 = time.perf_counter()
        print(f"2 rows deleted, no VACUUM ({t1 - t0:.3f} s, {rep['asks']} asks rows):", scan(conn, datadir, dboid))

        t0 = time.perf_counter()
        scrub = m.store.scrub([SECRET])
        t1 = time.perf_counter()
        print(f"3 after hela's scrub (plain VACUUM (ANALYZE), {t1 - t0:.3f} s): {scrub}")
        print("  ", scan(conn, datadir, dboid))

        t0 = time.perf_counter()
        conn.execute("VACUUM FULL " + ", ".join(VACUUM_TABLES))
        t1 = time.perf_counter()
        print(f"4 after VACUUM FULL ({t1 - t0:.3f} s):", scan(conn, datadir, dboid))

        conn.execute("SELECT pg_switch_wal()")
        conn.execute("CHECKPOINT")
        conn.execute("SELECT pg_switch_wal()")
        print("5 after pg_switch_wal + CHECKPOINTs:", scan(conn, datadir, dboid))
        conn.close()
        m.close()


if __name__ == "__main__":
    main()
