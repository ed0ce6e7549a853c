"""Scale benchmark (performance, not a test): storage size, retrieval latency, ingest speed, peak RSS.

    python benchmarks/speed/scale.py                                   # 10k and 100k nodes, sample_data ingest
    python benchmarks/speed/scale.py --sizes 10000 --ingest-file ../shared/data/locomo_dev.json
    python benchmarks/speed/scale.py --with-1m                          # adds 1M nodes (builds for a while)

What it measures, on this machine, in one run (see BENCHMARKS.md for recorded numbers):

* **build**: synthetic clustered unit vectors (384-d, ~100 nodes per cluster, cosine to the cluster centre
  ~0.7) with keywords, timestamps and consecutive-turn edges written directly through ``Store`` (the
  database is bound to a fake embedder id; no model involved). Time to build, file size per node.
* **retrieval latency** of ``hela_cli.mechanics.retrieval.retrieve`` without an LLM, Hebbian update included (learning
  on: each query is one write transaction), p50 / p95 over ``--queries`` questions whose vectors are
  given as ``query_vector`` (so no embedder runs), once with the default store (``retrieval.vector_cache:
  false``: sqlite-vec KNN above 20k nodes, the exact in-process index up to 20k) and once with the
  in-process vector index at any size (``vector_cache: true``; its one-off load is the ``first_ms`` of
  that row). ``first_ms`` is the first query of a fresh ``Store``; p50/p95 follow 4 warm-up queries.
* **index recall@100** of the quantized in-process index (sizes above 20k) against sqlite-vec's exact KNN.
* **naive baseline** written here: the same memories in a JSON file that is loaded for every query and
  every node scored in a Python loop (cosine with numpy per node, like a typical research prototype; no
  learning, no writes), reported as the ratio naive / hela.
* **peak RSS** (VmHWM) of a fresh process doing one retrieval on the N-node database, and of a full
  ``Memory.ask`` with the real default models (embedder + chat) on the ingested conversation.
* **cold process** (sizes above 20k): the sign bits persisted in the file (migration 0009) are built once
  (``sign_build``: seconds, peak RSS of this process, file size before / after), then ``--cold`` fresh
  processes each run ONE retrieval (the default store: sign bits above 20k, learning on). Reported
  separately: ``query_ms`` (inside the process: ``retrieve`` called on an opened store, so it includes
  reading the space's bits from the file, the Hamming scan, the exact rescoring, keyword search,
  spreading and the Hebbian write; not Python start, imports or opening the file), ``open_ms`` (opening
  the store), ``retrieve_import_ms`` (importing the retrieval module, after the script's own imports of
  numpy and the store) and ``process_wall_ms`` (spawn to exit as this script sees it: Python start, every
  import, reading the query, opening, the retrieval, exit), with the children's CPU seconds.
  ``sqlite_vec`` is the same retrieval through sqlite-vec's brute force (``sign_index_min`` raised), the
  pre-0009 default, and ``sign_recall_at_100`` the sign path's top 100 against sqlite-vec's exact top 100.
* **ingest** turns/s with the real default embedder on ``--ingest-file`` (default
  ``sample_data/conversation.json``; model load time excluded).

Nothing is written into the repository: databases and JSON files go to a temporary directory (``--dir``
to choose one; ``--keep`` keeps them, and an existing database of the right size is reused).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]

from hela_cli.config import Config  # noqa: E402
from hela_cli.store import Store  # noqa: E402

DIM = 384
FAKE_EMBEDDER = "synthetic:clustered-384"
SPACE = "scale"
DAY = 86400.0


class NoEmbedder:
    """Stands in for the embedder: the benchmark always passes ``query_vector``."""

    model_id = FAKE_EMBEDDER
    dim = DIM

    def embed(self, texts: Any) -> np.ndarray:  # pragma: no cover - never called
        raise RuntimeError("the scale benchmark passes query vectors; no embedding expected")


# ----------------------------------------------------------------------------------- synthetic data
def _vocab(rng: np.random.Generator, n: int) -> list[str]:
    letters = np.array(list("bcdfghjklmnpqrstvwxz"))
    vowels = np.array(list("aeiou"))
    words: dict[str, None] = {}
    while len(words) < n:
        w = "".join(rng.choice(letters) + rng.choice(vowels) for _ in range(3))
        words.setdefault(w, None)
    return list(words)


class Synthetic:
    """Deterministic clustered data: node i belongs to cluster ``cl[i]``."""

    def __init__(self, n: int, seed: int = 7):
        self.n = n
        self.rng = np.random.default_rng(seed)
        self.n_clusters = max(10, n // 100)
        c = self.rng.standard_normal((self.n_clusters, DIM)).astype(np.float32)
        self.centers = c / np.linalg.norm(c, axis=1, keepdims=True)
        self.vocab = _vocab(self.rng, 5000)
        self.topics = self.rng.integers(0, len(self.vocab), size=(self.n_clusters, 8))
        self.cl = self.rng.integers(0, self.n_clusters, size=n)
        self.t0 = 1_600_000_000.0
        self.span = 2 * 365 * DAY

    def vectors(self, lo: int, hi: int) -> np.ndarray:
        rng = np.random.default_rng(1000 + lo)
        v = self.centers[self.cl[lo:hi]] + 0.05 * rng.standard_normal((hi - lo, DIM)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def keywords(self, i: int) -> list[str]:
        rng = np.random.default_rng(i)
        topic = self.topics[self.cl[i]]
        words = [self.vocab[j] for j in rng.choice(topic, 3, replace=False)]
        words += [self.vocab[j] for j in rng.integers(0, len(self.vocab), 2)]
        return list(dict.fromkeys(words))

    def row(self, i: int) -> dict[str, Any]:
        kw = self.keywords(i)
        return dict(text=f"synthetic memory {i}: " + " ".join(kw), speaker="A" if i % 2 else "B", role=None,
                    ts=self.t0 + self.span * i / self.n, time_str="", keywords=kw,
                    source_id=f"D{i // 20}:{i % 20}", session=f"session_{i // 20}", ord=i, hash=f"h{i}",
                    source="synthetic")

    def queries(self, q: int, seed: int = 99) -> list[tuple[str, np.ndarray]]:
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(q):
            c = int(self.cl[rng.integers(0, self.n)])
            v = self.centers[c] + 0.05 * rng.standard_normal(DIM).astype(np.float32)
            words = [self.vocab[j] for j in rng.choice(self.topics[c], 3, replace=False)]
            out.append((f"what about {' and '.join(words)}?", v / np.linalg.norm(v)))
        return out


def build(path: Path, data: Synthetic, cfg: Config, log) -> float:
    """Write ``data`` into a fresh database at ``path``; returns seconds."""
    t0 = time.perf_counter()
    with Store(path) as store:
        store.bind_embedder(FAKE_EMBEDDER, DIM)
        sp = store.ensure_space(SPACE)
        chunk = 5000
        for lo in range(0, data.n, chunk):
            hi = min(data.n, lo + chunk)
            rows = [data.row(i) for i in range(lo, hi)]
            vecs = data.vectors(lo, hi)
            with store.transaction():
                ids = store.insert_nodes(sp.id, rows, vecs)
                links = {(ids[j - 1], ids[j]): cfg.ingest.initial_weight
                         for j in range(1, len(ids)) if rows[j]["session"] == rows[j - 1]["session"]}
                store.set_edges(store.refresh_space(sp), links, cfg.hebbian.decay)
            if (hi // chunk) % 20 == 0 or hi == data.n:
                log(f"  built {hi:,}/{data.n:,} nodes ({time.perf_counter() - t0:.0f}s)")
        store.set_meta("scale_bench_build_s", f"{time.perf_counter() - t0:.1f}")
        store.set_meta("scale_bench_n", str(data.n))
    return time.perf_counter() - t0


def db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())


# ----------------------------------------------------------------------------------- measurements
def pct(values: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values), p)) if values else float("nan")


def latency(path: Path, data: Synthetic, cfg: Config, queries: int, vector_cache: bool,
            **store_kw: Any) -> dict[str, Any]:
    from hela_cli.mechanics.retrieval import retrieve

    qs = data.queries(queries + 5)
    totals: list[float] = []
    parts: dict[str, list[float]] = {}
    with Store(path, vector_cache=vector_cache, **store_kw) as store:
        emb = NoEmbedder()
        t0 = time.perf_counter()
        first = retrieve(store, store.require_space(SPACE), emb, qs[0][0], cfg, query_vector=qs[0][1])
        first_ms = (time.perf_counter() - t0) * 1000
        for text, vec in qs[1:5]:  # warm-up
            retrieve(store, store.require_space(SPACE), emb, text, cfg, query_vector=vec)
        for text, vec in qs[5:]:
            t = time.perf_counter()
            res = retrieve(store, store.require_space(SPACE), emb, text, cfg, query_vector=vec)
            totals.append((time.perf_counter() - t) * 1000)
            for k, v in res.timings_ms.items():
                parts.setdefault(k, []).append(v)
        assert len(first.memories) == cfg.retrieval.k + cfg.retrieval.m
    return {"vector_cache": vector_cache, "queries": len(totals), "first_ms": round(first_ms, 1),
            "p50_ms": round(pct(totals, 50), 2), "p95_ms": round(pct(totals, 95), 2),
            "parts_p50_ms": {k: round(pct(v, 50), 2) for k, v in parts.items() if k != "total"}}


def index_recall(path: Path, data: Synthetic, queries: int, k: int = 100) -> dict[str, Any] | None:
    """recall@k of the in-process index against sqlite-vec's exact KNN (quantized sizes only)."""
    from hela_cli.store.vector_index import EXACT_LIMIT

    if data.n <= EXACT_LIMIT:
        return None
    with Store(path) as exact, Store(path, vector_cache=True) as cached:
        return _knn_recall(exact, cached, data, queries, k)


def _knn_recall(exact: Store, other: Store, data: Synthetic, queries: int, k: int) -> dict[str, Any]:
    """recall@k of ``other``'s KNN against ``exact``'s on the synthetic queries."""
    sp = exact.require_space(SPACE)
    recalls = []
    for _, vec in data.queries(queries, seed=123):
        truth = {n for n, _ in exact.knn(sp.id, vec, k)}
        got = {n for n, _ in other.knn(sp.id, vec, k)}
        recalls.append(len(truth & got) / k)
    return {"k": k, "queries": len(recalls), "recall": round(float(np.mean(recalls)), 4),
            "min": round(float(np.min(recalls)), 4)}


def naive_write(path: Path, data: Synthetic) -> float:
    t0 = time.perf_counter()
    mems = []
    for lo in range(0, data.n, 5000):
        hi = min(data.n, lo + 5000)
        vecs = data.vectors(lo, hi)
        for i in range(lo, hi):
            r = data.row(i)
            mems.append({"id": i, "text": r["text"], "keywords": r["keywords"], "ts": r["ts"],
                         "embedding": vecs[i - lo].tolist()})
    with open(path, "w") as f:
        json.dump(mems, f)
    return time.perf_counter() - t0


def naive_query(path: Path, question_kw: list[str], q: np.ndarray, top: int) -> list[int]:
    """The naive prototype: load everything, score every node in a Python loop, sort."""
    with open(path) as f:
        mems = json.load(f)
    qn = float(np.linalg.norm(q))
    qkw = set(question_kw)
    scored = []
    for m in mems:
        e = np.array(m["embedding"], dtype=np.float32)
        cos = float(np.dot(q, e) / (qn * np.linalg.norm(e)))
        kw = len(qkw & set(m["keywords"])) / len(qkw) if qkw else 0.0
        scored.append((cos + kw, m["id"]))
    scored.sort(reverse=True)
    return [i for _, i in scored[:top]]


def naive(path: Path, data: Synthetic, cfg: Config, queries: int) -> dict[str, Any]:
    from hela_cli.text.keywords import keywords

    write_s = naive_write(path, data)
    times = []
    for text, vec in data.queries(queries, seed=5):
        t = time.perf_counter()
        naive_query(path, keywords(text), vec, cfg.retrieval.k + cfg.retrieval.m)
        times.append((time.perf_counter() - t) * 1000)
    return {"queries": queries, "json_mb": round(path.stat().st_size / 1e6, 1), "write_s": round(write_s, 1),
            "p50_ms": round(pct(times, 50), 1), "p95_ms": round(pct(times, 95), 1)}


def child_rss(args: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:] or ["failed"]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def vm_hwm_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_retrieve(db: str) -> None:
    from hela_cli.mechanics.retrieval import retrieve

    cfg = Config()
    with Store(db) as store:
        n = int(store.get_meta("scale_bench_n") or 0)
    q = Synthetic(n).queries(1, seed=11)[0]  # the generator holds ~n/100 centres (15 MB at 1M)
    base = vm_hwm_mb()
    with Store(db) as store:
        retrieve(store, store.require_space(SPACE), NoEmbedder(), q[0], cfg, query_vector=q[1])
    print(json.dumps({"peak_rss_mb": round(vm_hwm_mb(), 1), "before_mb": round(base, 1)}))


def child_cold(db: str, qfile: str, i: int) -> None:
    """One retrieval in a fresh process (query ``i`` of ``qfile``); prints timings and peak RSS."""
    t_imp = time.perf_counter()
    from hela_cli.mechanics.retrieval import retrieve

    import_ms = (time.perf_counter() - t_imp) * 1000
    qs = json.loads(Path(qfile).read_text())
    text, vec = qs[i]["text"], np.asarray(qs[i]["vector"], dtype=np.float32)
    from hela_cli.config import load_config

    cfg = load_config(None)  # HELA_RETRIEVAL_SIGN_INDEX_MIN / _SIGN_RESCORE from the environment apply
    t = time.perf_counter()
    store = Store(db, sign_index_min=cfg.retrieval.sign_index_min, sign_rescore=cfg.retrieval.sign_rescore)
    sp = store.require_space(SPACE)
    open_ms = (time.perf_counter() - t) * 1000
    t, c = time.perf_counter(), time.process_time()
    res = retrieve(store, sp, NoEmbedder(), text, cfg, query_vector=vec)
    query_ms = (time.perf_counter() - t) * 1000
    query_cpu_ms = (time.process_time() - c) * 1000
    store.close()
    print(json.dumps({"query_ms": round(query_ms, 1), "query_cpu_ms": round(query_cpu_ms, 1),
                      "open_ms": round(open_ms, 1),
                      "retrieve_import_ms": round(import_ms, 1), "parts_ms": res.timings_ms,
                      "peak_rss_mb": round(vm_hwm_mb(), 1)}))


def cold(path: Path, data: Synthetic, work: Path, runs: int) -> dict[str, Any]:
    """The persisted sign bits: one-off build, then ``runs`` fresh processes of one retrieval each."""
    import resource

    out: dict[str, Any] = {}
    rss0 = vm_hwm_mb()
    with Store(path) as store:
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # sizes without the write-ahead log
        size0 = db_bytes(path)
        sp = store.require_space(SPACE)
        out["bits_present_before"] = bool(store.db.execute("SELECT count(*) FROM sign_state").fetchone()[0])
        t = time.perf_counter()
        store._sign_index(sp.id)
        build_s = time.perf_counter() - t
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        out["sign_build"] = {"seconds": round(build_s, 2),
                             "bytes_before": size0, "bytes_after": db_bytes(path),
                             "file_delta_mb": round((db_bytes(path) - size0) / 1e6, 1),
                             "delta_bytes_per_node": round((db_bytes(path) - size0) / data.n, 1),
                             "peak_rss_mb_parent": round(max(vm_hwm_mb(), rss0), 1)}
    qs = data.queries(runs, seed=31)
    qfile = work / "cold-queries.json"
    qfile.write_text(json.dumps([{"text": t, "vector": v.tolist()} for t, v in qs]))
    rows, walls, cpus = [], [], []
    for i in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--child-cold", str(path), str(qfile), str(i)],
                              capture_output=True, text=True, check=False)
        walls.append((time.perf_counter() - t) * 1000)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
        if proc.returncode != 0:
            raise SystemExit(f"cold child failed: {proc.stderr.strip().splitlines()[-1:]}")
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    qfile.unlink(missing_ok=True)
    med = lambda key: round(pct([r[key] for r in rows], 50), 1)  # noqa: E731
    parts = {k: round(pct([r["parts_ms"][k] for r in rows if k in r["parts_ms"]], 50), 1)
             for k in rows[0]["parts_ms"] if k != "total"}
    out.update({"runs": runs, "query_ms_p50": med("query_ms"), "query_cpu_ms_p50": med("query_cpu_ms"), "query_ms_max": round(max(r["query_ms"] for r in rows), 1),
                "open_ms_p50": med("open_ms"), "retrieve_import_ms_p50": med("retrieve_import_ms"),
                "process_wall_ms_p50": round(pct(walls, 50), 1), "process_cpu_s_p50": round(pct(cpus, 50), 3),
                "peak_rss_mb_max": max(r["peak_rss_mb"] for r in rows), "parts_p50_ms": parts})
    return out


def sign_recall(path: Path, data: Synthetic, queries: int, k: int = 100) -> dict[str, Any]:
    """recall@k of the persisted sign bits (default store) against sqlite-vec's exact KNN."""
    with Store(path, sign_index_min=10 ** 12) as exact, Store(path) as signs:
        return _knn_recall(exact, signs, data, queries, k)


def child_ask(db: str, space: str, question: str) -> None:
    from hela_cli.memory import Memory

    cfg = Config()
    cfg.db = db
    base = vm_hwm_mb()
    t = time.perf_counter()
    with Memory(cfg) as mem:
        res = mem.ask(question, space)
    print(json.dumps({"peak_rss_mb": round(vm_hwm_mb(), 1), "before_mb": round(base, 1),
                      "seconds": round(time.perf_counter() - t, 2), "answer": res["answer"]}))


def ingest_speed(path: Path, db: Path, cfg: Config, max_turns: int | None) -> dict[str, Any]:
    from hela_cli.formats import parse_file
    from hela_cli.ingest import ingest_conversations
    from hela_cli.memory import Memory

    convs = parse_file(path)
    if max_turns:
        left = max_turns
        for c in convs:
            c.turns = c.turns[:left]
            left -= len(c.turns)
        convs = [c for c in convs if c.turns]
    turns = sum(len(c.turns) for c in convs)
    # always measure a fresh ingest: a kept database from an earlier run would skip every turn as a duplicate
    for p in db.parent.glob(db.name + "*"):
        p.unlink()
    t = time.perf_counter()
    mem = Memory(cfg, store=Store(db))
    embedder = mem.embedder
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    summary = ingest_conversations(mem.store, embedder, convs, cfg)
    secs = time.perf_counter() - t
    mem.close()
    if summary["nodes_added"] != turns:
        raise SystemExit(f"ingest figure: {summary['nodes_added']} of {turns} turns added; expected all")
    return {"file": str(path), "turns": turns, "seconds": round(secs, 2), "turns_per_s": round(turns / secs, 1),
            "model_load_s": round(load_s, 2), "space": next(iter(summary["spaces"])),
            "nodes_added": summary["nodes_added"]}


# ----------------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated node counts [10000,100000]")
    ap.add_argument("--with-1m", action="store_true", help="also 1,000,000 nodes (opt-in: slow to build)")
    ap.add_argument("--queries", type=int, default=100, help="measured retrievals per size [100]")
    ap.add_argument("--naive-max", type=int, default=100_000, help="run the naive baseline up to this size")
    ap.add_argument("--naive-queries", type=int, default=5, help="naive baseline queries per size [5]")
    ap.add_argument("--ingest-file", default=str(REPO / "sample_data" / "conversation.json"),
                    help="transcript for the ingest figure (e.g. ../shared/data/locomo_dev.json)")
    ap.add_argument("--ingest-max-turns", type=int, default=None, help="ingest at most N turns of it")
    ap.add_argument("--skip-ingest", action="store_true", help="skip the ingest and real-ask figures")
    ap.add_argument("--dir", default=None, help="work directory [a temporary one]")
    ap.add_argument("--keep", action="store_true", help="keep the databases (reused by the next run)")
    ap.add_argument("--json", dest="json_out", default=None, help="also write the results to this JSON file")
    ap.add_argument("--child-retrieve", help=argparse.SUPPRESS)
    ap.add_argument("--child-ask", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--child-cold", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--cold", type=int, default=11, help="fresh processes of one retrieval each per size [11]")
    ap.add_argument("--no-sqlite-vec", action="store_true", help="skip the sqlite-vec (pre-0009) latency row")
    ap.add_argument("--cold-only", action="store_true",
                    help="only the persisted sign bits: build, cold processes, recall (sizes above 20k)")
    args = ap.parse_args()
    if args.child_retrieve:
        return child_retrieve(args.child_retrieve)
    if args.child_ask:
        return child_ask(*args.child_ask)
    if args.child_cold:
        return child_cold(args.child_cold[0], args.child_cold[1], int(args.child_cold[2]))

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.with_1m and 1_000_000 not in sizes:
        sizes.append(1_000_000)
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="hela-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    cfg = Config()
    results: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "loadavg_start": [round(x, 2) for x in os.getloadavg()]},
        "config": {"k": cfg.retrieval.k, "m": cfg.retrieval.m, "vector_candidates": cfg.retrieval.vector_candidates,
                   "keyword_candidates": cfg.retrieval.keyword_candidates},
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "sizes": {},
    }
    try:
        if not args.skip_ingest:
            log(f"ingest speed on {args.ingest_file} ...")
            ing = ingest_speed(Path(args.ingest_file), work / "ingest.db", cfg, args.ingest_max_turns)
            results["ingest"] = ing
            log(f"  {ing['turns']} turns in {ing['seconds']}s = {ing['turns_per_s']} turns/s")
            from hela_cli.formats import parse_file

            conv = parse_file(args.ingest_file)[0]
            question = (conv.qa[0]["question"] if conv.qa else "What did they talk about?")
            results["ask_rss"] = child_rss(["--child-ask", str(work / "ingest.db"), ing["space"], question])
            log(f"  peak RSS of a full ask (embedder + chat): {results['ask_rss']}")
        for n in sizes:
            log(f"{n:,} nodes:")
            path = work / f"scale-{n}.db"
            data = Synthetic(n)
            reused = False
            if path.exists():
                with Store(path) as s:
                    reused = s.get_meta("scale_bench_n") == str(n)
                    build_s = float(s.get_meta("scale_bench_build_s") or "nan")
                if not reused:
                    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                        p.unlink(missing_ok=True)
            if not reused:
                build_s = build(path, data, cfg, log)
            size = db_bytes(path)
            r: dict[str, Any] = {"build_s": round(build_s, 1), "reused_db": reused, "file_mb": round(size / 1e6, 1),
                                 "bytes_per_node": round(size / n)}
            log(f"  build {build_s:.0f}s, {size / 1e6:.0f} MB, {size / n:.0f} B/node")
            from hela_cli.store.vector_index import EXACT_LIMIT

            if n > EXACT_LIMIT:  # the persisted sign bits: built once here, then cold processes
                r["cold"] = cold(path, data, work, args.cold)
                log(f"  cold processes (persisted sign bits): {r['cold']}")
                r["sign_recall_at_100"] = sign_recall(path, data, 20)
                log(f"  sign bits recall@100 vs exact: {r['sign_recall_at_100']}")
                if args.cold_only:
                    results["sizes"][str(n)] = r
                    continue
                if not args.no_sqlite_vec:
                    r["retrieve_sqlite_vec"] = latency(path, data, cfg, args.queries if n < 1_000_000 else
                                                       min(args.queries, 50), vector_cache=False,
                                                       sign_index_min=10 ** 12)
                    log(f"  retrieve (sqlite-vec, the pre-0009 default): {r['retrieve_sqlite_vec']}")
            r["retrieve_default"] = latency(path, data, cfg, args.queries, vector_cache=False)
            log(f"  retrieve (default store): {r['retrieve_default']}")
            r["retrieve_vector_cache"] = latency(path, data, cfg, args.queries, vector_cache=True)
            log(f"  retrieve (vector_cache): {r['retrieve_vector_cache']}")
            r["index_recall_at_100"] = index_recall(path, data, 20)
            log(f"  in-process index recall@100 vs exact: {r['index_recall_at_100']}")
            r["retrieve_rss"] = child_rss(["--child-retrieve", str(path)])
            log(f"  peak RSS of one retrieval in a fresh process: {r['retrieve_rss']}")
            if n <= args.naive_max:
                nv = naive(work / f"naive-{n}.json", data, cfg, args.naive_queries)
                nv["ratio_vs_default_p50"] = round(nv["p50_ms"] / r["retrieve_default"]["p50_ms"], 1)
                if "retrieve_sqlite_vec" in r:
                    nv["ratio_vs_sqlite_vec_p50"] = round(nv["p50_ms"] / r["retrieve_sqlite_vec"]["p50_ms"], 1)
                nv["ratio_vs_vector_cache_p50"] = round(nv["p50_ms"] / r["retrieve_vector_cache"]["p50_ms"], 1)
                r["naive"] = nv
                (work / f"naive-{n}.json").unlink(missing_ok=True)
                log(f"  naive JSON baseline: {nv}")
            results["sizes"][str(n)] = r
    finally:
        results["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
        for p in work.glob("naive-*.json"):
            p.unlink(missing_ok=True)
        if not args.keep:
            if args.dir:  # remove what this script created, leave the directory
                for p in [*work.glob("scale-*.db*"), *work.glob("ingest.db*")]:
                    p.unlink(missing_ok=True)
            else:
                shutil.rmtree(work, ignore_errors=True)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
