"""Recall latency in a long-lived process (library / MCP server) at scale, query embedding included
(performance, not a test).

    python benchmarks/speed/recall_longlived.py --db DIR/scale-100000.db [--modes vector_cache,sign,auto] [--queries 55] [--write]

The database is one of ``benchmarks/speed/scale.py --keep`` (synthetic clustered vectors bound to a fake
embedder id). Each question (the synthetic questions of that script: topic words of a cluster) is
embedded by the real default embedder (all-MiniLM-L6-v2) inside ``retrieve``, so the figure includes the
query embedding; the KNN, keyword search, spreading and the Hebbian write are the real ones (the query
vectors do not fall in the synthetic clusters, which changes no cost: the candidate counts are fixed).
Modes, one ``Store`` each, interleaved per question after 5 warm-up questions: ``vector_cache`` (the
in-process index, ``retrieval.vector_cache: true``), ``sign`` (sign bits persisted in the file above 20k
nodes: a one-shot process, or ``vector_cache_auto: 0``) and ``auto`` (the default of a long-lived process:
``retrieval.vector_cache_auto``, the in-process index from the second search on). Reported per mode: p50 of each part (ms, wall), wall p50 / p95 and CPU p50 (ms,
``time.process_time``: this thread plus llama.cpp's), and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]

from hela_cli.config import Config  # noqa: E402
from hela_cli.memory import Memory  # noqa: E402  (before llama_cpp: hela_cli.models sets OMP_WAIT_POLICY)
from hela_cli.mechanics.retrieval import retrieve  # noqa: E402
from hela_cli.store import Store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--modes", default="vector_cache,sign,auto")
    ap.add_argument("--queries", type=int, default=55)
    ap.add_argument("--write", action="store_true", help="then add one memory through another connection and "
                    "time the next question in each mode (writes to --db: use a copy)")
    a = ap.parse_args()
    import scale

    cfg = Config()
    emb = Memory(cfg).embedder
    with Store(a.db) as s:
        n = int(s.get_meta("scale_bench_n") or 0)
    texts = [t for t, _ in scale.Synthetic(n).queries(a.queries, seed=77)]
    modes = a.modes.split(",")
    auto = cfg.retrieval.vector_cache_auto
    stores = {m: Store(a.db, vector_cache=(m == "vector_cache"), vector_cache_auto=auto if m == "auto" else 0)
              for m in modes}
    for s in stores.values():
        for t in texts[:5]:
            retrieve(s, s.require_space(scale.SPACE), emb, t, cfg)
    rows: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    for t in texts[5:]:
        for m, s in stores.items():
            w, c = time.perf_counter(), time.process_time()
            r = retrieve(s, s.require_space(scale.SPACE), emb, t, cfg)
            rows[m].append(dict(r.timings_ms, wall=(time.perf_counter() - w) * 1000,
                                cpu=(time.process_time() - c) * 1000))
    out: dict[str, object] = {"nodes": n, "questions": len(texts) - 5}
    for m in modes:
        out[m] = {k: round(float(np.median([x.get(k, 0.0) for x in rows[m]])), 2) for k in rows[m][0]}
        out[m]["wall_p95"] = round(float(np.percentile([x["wall"] for x in rows[m]], 95)), 2)  # type: ignore[index]
    if a.write:  # one `hela add` through another connection, then the next question in each mode
        with Store(a.db) as w:
            sp = w.require_space(scale.SPACE)
            vec = emb.embed(["a new memory written by another process"])
            with w.transaction():
                w.insert_nodes(sp.id, [dict(text="a new memory", ts=time.time(), ord=n + 1, hash=f"new{time.time()}",
                                            keywords=[])], vec)
        for m, s in stores.items():
            w, c = time.perf_counter(), time.process_time()
            retrieve(s, s.require_space(scale.SPACE), emb, texts[5], cfg)
            out[m]["after_write_wall"] = round((time.perf_counter() - w) * 1000, 2)  # type: ignore[index]
    out["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
