"""Round trips of one retrieval on Postgres (performance, not a test): every statement the store sends,
counted by wrapping ``PgDB.execute`` / ``executemany`` / ``copy_rows`` (psycopg has no counter of its own),
grouped by the store method that sent it; with the p50 / p95 of ``retrieve`` (learning on).

    python benchmarks/speed/pg_roundtrips.py URL [--queries 40] [--json out.json] [--sql]

URL: a database built by ``pg_scale.py`` (``scale.py``'s synthetic space ``scale``); a SQLite path works
too (statements through ``sqlite3`` are not counted there: only the latency is measured).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path
from typing import Any


import scale  # noqa: E402
from hela_cli.config import Config  # noqa: E402
from hela_cli.store import Store  # noqa: E402


def _caller() -> str:
    """The first frame outside the driver wrapper: the store (or retrieval) function that sent it."""
    f = sys._getframe(2)
    while f is not None and (f.f_code.co_filename.endswith("contextlib.py") or f.f_code.co_name in
                             ("dicts", "select_in", "_wrapped", "_snapshot", "transaction")):
        f = f.f_back
    return f"{Path(f.f_code.co_filename).stem}.{f.f_code.co_name}" if f else "?"


def instrument(store: Any) -> tuple[collections.Counter, collections.Counter]:
    """Count (and time, in ms) every statement by the function that sent it."""
    counts: collections.Counter = collections.Counter()
    ms: collections.Counter = collections.Counter()
    db = store.db
    for name in ("execute", "executemany", "copy_rows"):
        orig = getattr(db, name)

        def wrapped(*a: Any, _orig: Any = orig, _name: str = name, **kw: Any) -> Any:
            who = _caller()
            counts[who] += 1
            t = time.perf_counter()
            try:
                return _orig(*a, **kw)
            finally:
                ms[who] += (time.perf_counter() - t) * 1000

        setattr(db, name, wrapped)
    return counts, ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--json", default=None)
    ap.add_argument("--hnsw-min", type=int, default=None)
    args = ap.parse_args()
    from hela_cli.mechanics.retrieval import retrieve

    cfg = Config()
    kw = {} if args.hnsw_min is None else {"hnsw_min": args.hnsw_min}
    with Store(args.url, progress=None, **kw) as store:
        n = int(store.get_meta("scale_bench_n"))
        qs = scale.Synthetic(n).queries(args.queries + 4)
        emb = scale.NoEmbedder()
        pg = store.backend == "postgres"
        counts, ms = instrument(store) if pg else (collections.Counter(), collections.Counter())
        times, cpu, per = [], [], []
        for i, (text, vec) in enumerate(qs):
            before = sum(counts.values())
            t, c = time.perf_counter(), time.process_time()
            sp = store.require_space(scale.SPACE)
            retrieve(store, sp, emb, text, cfg, query_vector=vec)
            if i >= 4:
                times.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)   # this process only (not the server's)
                per.append(sum(counts.values()) - before)
            if i == 3:
                counts.clear()
                ms.clear()
        q = len(times)
        out = {"url_kind": store.backend, "n": n, "queries": q,
               "p50_ms": round(scale.pct(times, 50), 1), "p95_ms": round(scale.pct(times, 95), 1),
               "client_cpu_p50_ms": round(scale.pct(cpu, 50), 2),
               "statements_per_retrieve": round(sum(per) / q, 2) if pg else None,
               "by_caller": {k: round(v / q, 2) for k, v in counts.most_common()},
               "ms_by_caller": {k: round(v / q, 2) for k, v in ms.most_common()}}
    text = json.dumps(out, indent=2)
    if args.json:
        Path(args.json).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
