"""Page times of ``hela ui`` on a large synthetic space (performance, not a test).

    python benchmarks/speed/ui_pages.py                      # 100k memories
    python benchmarks/speed/ui_pages.py --n 10000 --keep --dir /tmp/uibench

The space is built as ``benchmarks/speed/scale.py`` builds it (clustered 384-d vectors, keywords, timestamps,
20-turn sessions with conversation links, written straight through ``Store``), then used: ``--learn``
learning retrievals (many different questions, then five taken in turn, so that hubs form) add learned
edges, and ``--semantic`` semantic records citing retrieved memories are written. Each page is then asked
through Starlette's TestClient (the whole app in process: token cookie, routing, handler, SQL, templates;
no socket), once cold (the first request of a fresh app and store) and ``--repeat`` times warm; the table
gives the cold time and the median and max of the warm ones, each wall-clock with the process's CPU time
in brackets (the CPU figure moves far less with the machine's load). Recall questions come with their vectors
(an embedder stand-in returns the synthetic query vector: the real embedder's ~10-20 ms per question is
not in these figures).

Nothing is written into the repository: the database goes to a temporary directory (``--dir`` / ``--keep``;
an existing database of the right size is reused).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import quote

import numpy as np

REPO = Path(__file__).resolve().parents[2]

from scale import DIM, FAKE_EMBEDDER, SPACE, Synthetic, build  # noqa: E402

from hela_cli.config import Config  # noqa: E402
from hela_cli.store import BrowseStore, Store  # noqa: E402


class QueryEmbedder:
    """The synthetic questions' vectors by text (the database is bound to the synthetic embedder id)."""

    model_id = FAKE_EMBEDDER
    dim = DIM

    def __init__(self, queries: Sequence[tuple[str, np.ndarray]]):
        self.vectors = dict(queries)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])


def use(path: Path, data: Synthetic, cfg: Config, learn: int, semantic: int, log) -> dict[str, Any]:
    """Learning retrievals (half of them five questions taken in turn: hubs form) and semantic records."""
    from hela_cli.mechanics.retrieval import retrieve

    qs = data.queries(learn)
    repeated = [qs[i % 5] for i in range(learn // 2)]
    emb = QueryEmbedder(qs)
    t0 = time.perf_counter()
    with Store(path) as store:
        if store.get_meta("ui_bench_used") == f"{learn},{semantic}":
            return {"reused": True}
        retrieved: list[list[int]] = []
        for text, vec in [*qs[: learn - len(repeated)], *repeated]:
            res = retrieve(store, store.require_space(SPACE), emb, text, cfg, query_vector=vec, learn=True)
            retrieved.append([m["id"] for m in res.memories])
        sp = store.require_space(SPACE)
        with store.transaction():
            for i in range(semantic):
                ids = retrieved[i % len(retrieved)][:4]
                store.insert_semantic(sp.id, "fact", f"subject {i}", f"synthetic record {i} about {ids}", 0.9,
                                      None, ids[0], ids, data.vectors(ids[0], ids[0] + 1)[0])
        store.set_meta("ui_bench_used", f"{learn},{semantic}")
        log(f"  {learn} learning retrievals and {semantic} semantic records in {time.perf_counter() - t0:.0f}s")
        return {"reused": False, "seconds": round(time.perf_counter() - t0, 1)}


def pages(store: Store, data: Synthetic, cfg: Config, repeat: int) -> list[tuple[str, Any]]:
    """(name, path or [paths]) of every page, with ids picked from the data: the strongest hub, the last
    page of the list; recall asks ``repeat + 1`` different questions (the first one cold)."""
    from hela_cli.ui import views

    with Store(store.path) as other:   # not the measured store: its caches stay cold
        hubs = views.hubs(other, other.require_space(SPACE), cfg, top=1)
    hub = hubs[0]["id"] if hubs else 1
    n = store.count_nodes(store.require_space(SPACE).id)
    last = -(-n // views.PAGE_SIZE)
    qs = [quote(t) for t, _ in data.queries(repeat + 1, seed=5)]
    kw = data.vocab[data.topics[0][0]]
    return [("spaces", "/"),
            ("memories, page 1", f"/memories?space={SPACE}"),
            ("memories, last page", f"/memories?space={SPACE}&page={last}"),
            ("memories, speaker filter, page 100", f"/memories?space={SPACE}&speaker=A&page=100"),
            ("memories, session filter", f"/memories?space={SPACE}&session=session_{n // 40}"),
            ("memories, since/until", f"/memories?space={SPACE}&since=2021-03-01&until=2021-04-01"),
            ("memories, text contains", f"/memories?space={SPACE}&contains={kw}"),
            ("memories, keyword search", f"/memories?space={SPACE}&q={kw}"),
            ("one memory (strongest hub)", f"/memory/{hub}"),
            ("recall (learning off), a new question each time", [f"/recall?space={SPACE}&q={q}" for q in qs]),
            ("hubs (top 30)", f"/hubs?space={SPACE}"),
            ("hub neighbourhood graph", f"/graph?space={SPACE}&id={hub}"),
            ("semantic records, page 1", f"/semantic?space={SPACE}"),
            ("heatmap, 20 strongest", f"/heatmap?space={SPACE}"),
            ("heatmap, hubs and clusters", f"/heatmap?space={SPACE}&hubs=1")]


def measure(path: Path, data: Synthetic, cfg: Config, repeat: int) -> list[dict[str, Any]]:
    from starlette.testclient import TestClient

    from hela_cli.memory import Memory
    from hela_cli.ui.app import create_app

    cfg = cfg.replace(db=str(path))
    qs = data.queries(repeat + 1, seed=5)
    r = cfg.retrieval
    store = BrowseStore.open(path, vector_cache=r.vector_cache, sign_index_min=r.sign_index_min,
                             sign_rescore=r.sign_rescore, vector_cache_auto=0)   # as hela ui opens it
    mem = Memory(cfg, store=store, embedder=QueryEmbedder(qs))
    client = TestClient(create_app(mem, "bench"))
    client.get("/static/ui.css?token=bench")
    todo = pages(store, data, cfg, repeat)
    out = []
    for name, ps in todo:
        ps = ps if isinstance(ps, list) else [ps] * (repeat + 1)
        p = ps[0]
        c0, t0 = time.process_time(), time.perf_counter()
        r = client.get(p)
        cold, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert r.status_code == 200, (p, r.status_code, r.text[:300])
        warm, warm_cpu = [], []
        for p in ps[1:]:
            c0, t0 = time.process_time(), time.perf_counter()
            r = client.get(p)
            warm.append(time.perf_counter() - t0)
            warm_cpu.append(time.process_time() - c0)
            assert r.status_code == 200, (p, r.status_code, r.text[:300])
        out.append({"page": name, "path": p, "bytes": len(r.content), "cold_ms": round(cold * 1000, 1),
                    "cold_cpu_ms": round(cold_cpu * 1000, 1),
                    "warm_median_ms": round(statistics.median(warm) * 1000, 1),
                    "warm_max_ms": round(max(warm) * 1000, 1),
                    "warm_cpu_median_ms": round(statistics.median(warm_cpu) * 1000, 1)})
    # another process learns (one retrieval with Eq.1): the next hubs / heatmap page reads the edges again
    from hela_cli.mechanics.retrieval import retrieve

    for name, p in [("hubs, after another process learned", f"/hubs?space={SPACE}"),
                    ("heatmap, after another process learned", f"/heatmap?space={SPACE}")]:
        with Store(path) as other:
            text, vec = data.queries(1, seed=11)[0]
            retrieve(other, other.require_space(SPACE), QueryEmbedder([(text, vec)]), text, cfg,
                     query_vector=vec, learn=True)
        c0, t0 = time.process_time(), time.perf_counter()
        r = client.get(p)
        assert r.status_code == 200
        out.append({"page": name, "path": p, "bytes": len(r.content),
                    "cold_ms": round((time.perf_counter() - t0) * 1000, 1),
                    "cold_cpu_ms": round((time.process_time() - c0) * 1000, 1), "warm_median_ms": None,
                    "warm_max_ms": None, "warm_cpu_median_ms": None})
    mem.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="memories in the space [100000]")
    ap.add_argument("--learn", type=int, default=500, help="learning retrievals before measuring [500]")
    ap.add_argument("--semantic", type=int, default=200, help="semantic records to write [200]")
    ap.add_argument("--repeat", type=int, default=5, help="warm requests per page [5]")
    ap.add_argument("--dir", default=None, help="work directory [a temporary one]")
    ap.add_argument("--keep", action="store_true", help="keep the database")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    work = Path(args.dir or tempfile.mkdtemp(prefix="hela-ui-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    cfg = Config()
    data = Synthetic(args.n)
    path = work / f"ui_{args.n}.db"
    ok = False
    if path.exists():
        with Store(path) as s:
            ok = s.get_meta("scale_bench_n") == str(args.n)
    if not ok:
        path.unlink(missing_ok=True)
        log(f"building {args.n:,} memories in {path}")
        build(path, data, cfg, log)
    used = use(path, data, cfg, args.learn, args.semantic, log)
    with Store(path) as s:
        sp = s.require_space(SPACE)
        shape = {"nodes": s.count_nodes(sp.id), "edges": s.count_edges(sp.id), "semantic": s.count_semantic(sp.id),
                 "step": sp.step}
    from hela_cli.ui import views

    with Store(path) as s:
        shape["hubs"] = len(views.hubs(s, s.require_space(SPACE), cfg, top=10**6))
    log(f"space: {shape}")
    results = measure(path, data, cfg, args.repeat)
    print("| page | cold ms (CPU) | warm median ms (CPU) | warm max ms | KiB |\n|---|---|---|---|---|")
    for r in results:
        warm = f"{r['warm_median_ms']} ({r['warm_cpu_median_ms']})" if r["warm_median_ms"] is not None else "-"
        print(f"| {r['page']} | {r['cold_ms']} ({r['cold_cpu_ms']}) | {warm} | {r['warm_max_ms'] or '-'} | "
              f"{r['bytes'] // 1024} |")
    def slowest(r: dict[str, Any]) -> float:
        return max(r["cold_ms"], r["warm_max_ms"] or 0.0)

    worst = max(results, key=slowest)
    print(f"\nslowest: {worst['page']} ({slowest(worst)} ms); space {shape}; load average {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps({"space": shape, "use": used, "pages": results}, indent=2))
    if not args.keep and not args.dir:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
