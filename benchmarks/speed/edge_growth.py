"""Edge growth benchmark (issue 14): edges and retrieval time after N learning asks, with and without
pruning of negligible edges.

    python benchmarks/speed/edge_growth.py                       # 10k nodes, 10k learning asks, both modes
    python benchmarks/speed/edge_growth.py --asks 2000 --every 500

A synthetic 10k-node space (``benchmarks/speed/scale.py``'s clustered 384-d unit vectors with keywords and
consecutive-turn links of 0.5; no model involved) is built once and copied, then each mode runs the same
``--asks`` learning retrievals (``hela_cli.mechanics.retrieval.retrieve`` with ``query_vector``, learning on: Eq.1
writes up to 78 edges per ask) on its copy:

* ``prune``: the code as it is (at most ``PRUNE_PER_STEP`` edges below ``PRUNE_WEIGHT`` deleted per step);
* ``no-prune``: ``PRUNE_PER_STEP`` set to 0, i.e. edges are only dropped at a rebase, which deletes what
  has decayed below ``PRUNE_WEIGHT``: every ln(2^-64)/ln(decay) steps, 8,850 at decay 0.995 (before
  pruning existed the rebase came every 20,000 steps, so up to there this is the old behaviour).

Every ``--every`` asks it prints the space's edge count, the median and p95 retrieval time of that block
(learning write included) and the database size. Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

import hela_cli.store.edges as edges_mod  # noqa: E402
from hela_cli.config import Config  # noqa: E402
from hela_cli.mechanics.retrieval import retrieve  # noqa: E402
from hela_cli.store import Store  # noqa: E402
from scale import SPACE, NoEmbedder, Synthetic, build, db_bytes  # noqa: E402


def run_mode(path: Path, data: Synthetic, cfg: Config, asks: int, every: int, prune: bool) -> list[dict]:
    saved = edges_mod.PRUNE_PER_STEP
    edges_mod.PRUNE_PER_STEP = saved if prune else 0
    rows = []
    try:
        with Store(path) as store:
            sp = store.require_space(SPACE)
            queries = data.queries(asks, seed=123)
            block: list[float] = []
            for i, (question, vec) in enumerate(queries, start=1):
                t = time.perf_counter()
                retrieve(store, store.refresh_space(sp), NoEmbedder(), question, cfg, query_vector=vec, learn=True)
                block.append((time.perf_counter() - t) * 1000)
                if i % every == 0 or i == asks:
                    block.sort()
                    rows.append({"mode": "prune" if prune else "no-prune", "asks": i,
                                 "edges": store.count_edges(sp.id),
                                 "p50_ms": round(statistics.median(block), 2),
                                 "p95_ms": round(block[int(0.95 * (len(block) - 1))], 2),
                                 "db_mib": round(db_bytes(path) / 2**20, 1)})
                    print(json.dumps(rows[-1]), flush=True)
                    block = []
    finally:
        edges_mod.PRUNE_PER_STEP = saved
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--asks", type=int, default=10_000)
    ap.add_argument("--every", type=int, default=1_000)
    ap.add_argument("--modes", default="no-prune,prune")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()
    cfg = Config()
    cfg.consolidation.auto = False
    data = Synthetic(args.nodes)
    with tempfile.TemporaryDirectory(prefix="hela-edges-") as tmp:
        base = Path(tmp) / "base.db"
        build(base, data, cfg, lambda *a: None)
        rows = []
        for mode in args.modes.split(","):
            path = Path(tmp) / f"{mode}.db"
            shutil.copy(base, path)
            t0 = time.perf_counter()
            rows += run_mode(path, data, cfg, args.asks, args.every, prune=(mode == "prune"))
            print(f"{mode}: {time.perf_counter() - t0:.0f} s", flush=True)
    print("\n| mode | asks | edges | p50 ms | p95 ms | db MiB |\n| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['mode']} | {r['asks']} | {r['edges']} | {r['p50_ms']} | {r['p95_ms']} | {r['db_mib']} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
