"""Recall latency with many use traces: what reading the traces costs a recall.

Every recall with feedback becomes a use trace (its query vector and the memories it used); each later
recall compares its query with the space's newest 5,000 traces. This times ``Memory.retrieve`` (no
learning, so the space does not change between the timed recalls) on a space of ``--nodes`` memories with
0 and ``--traces`` traces written through the store's own asks-log calls, from a 384-d keyword-hash embedder
(no model). ``PYTHONPATH=OTHER_CHECKOUT python benchmarks/speed/use_traces.py`` times another checkout.

    python benchmarks/speed/use_traces.py --nodes 2000 --traces 1000,5000 --queries 60
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

# the tests' keyword-hash embedder; appended, so that PYTHONPATH still decides which hela_cli is timed

from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.testing import HashEmbedder

class Hash384(HashEmbedder):
    """The keyword-hash embedder at the default embedder's width (a trace row holds a 384-d vector)."""

    model_id, dim = "test:hash-384", 384


WORDS = ("tea boat garden river violin marathon kitten pottery lisbon porto sister concert recipe bike "
         "winter summer school doctor guitar novel camera island forest bakery").split()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--traces", default="1000,5000", help="comma-separated trace counts (0 is always run)")
    ap.add_argument("--queries", type=int, default=60)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    tmp = Path(tempfile.mkdtemp(prefix="hela-traces-"))
    mem = Memory(Config(db=str(tmp / "t.db")), embedder=Hash384())
    turns = [{"text": " ".join(rng.choice(WORDS, 6)) + f" note {i}"} for i in range(a.nodes)]
    mem.add_batch("t", turns)
    sp = mem.space("t")
    ids = [n["id"] for n in mem.store.iter_nodes(sp.id)]
    questions = [" ".join(rng.choice(WORDS, 3)) for _ in range(a.queries)]
    have = 0
    for want in [0, *sorted(int(x) for x in a.traces.split(",") if x)]:
        with mem.store.transaction():
            for i in range(have, want):
                q = questions[i % len(questions)] + f" {i}"
                vec = mem.embedder.embed([q])[0]
                used = [int(x) for x in rng.choice(ids, 2, replace=False)]
                rid = mem.store.log_ask(sp.id, q, None, used, i, kind="recall", vector=vec,
                                        retrieval=[{"id": u, "base": 0.5, "path": "base", "from": []} for u in used])
                mem.store.mark_feedback(rid, used, time.time())
        have = want
        for q in questions[:5]:   # warm-up
            mem.retrieve(q, "t", learn=False)
        times = []
        for q in questions:
            t = time.perf_counter()
            mem.retrieve(q, "t", learn=False)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        print(f"traces {want:>6}: recall p50 {statistics.median(times):6.1f} ms  "
              f"p95 {times[int(0.95 * (len(times) - 1))]:6.1f} ms  ({len(times)} recalls, {a.nodes} memories)")
    mem.close()


if __name__ == "__main__":
    main()
