"""Time ``Store.insert_nodes`` (the bulk load of ingest) on a fresh SQLite file: rows, vectors, keyword rows.

    python benchmarks/speed/insert_nodes_speed.py [N] [BATCH] [REPEATS]

Inserts N nodes (384-d random unit vectors, 6 keywords each) in batches of BATCH, one write transaction per
batch as ingest does, into a new file, REPEATS times; prints the median seconds per 1,000 nodes as JSON.
The code measured is whatever ``hela_cli`` this Python imports: run it with ``PYTHONPATH`` pointing at
another checkout to compare two commits, alternating the two in one session (timings are comparable only
within one run on a shared machine).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    import hela_cli
    from hela_cli.store import Store

    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(n, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    words = [f"w{i}" for i in range(500)]
    rows = [{"text": f"turn {i} " + " ".join(words[(i * k) % 500] for k in range(1, 7)), "speaker": "a",
             "ts": 1.7e9 + i, "ord": i, "hash": f"h{i}", "session": f"s{i // 20}", "source_id": f"d{i}",
             "keywords": [words[(i * k) % 500] for k in range(1, 7)]} for i in range(n)]
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            with Store(Path(tmp) / "b.db") as s:
                s.bind_embedder("bench", 384)
                sp = s.ensure_space("b")
                t0 = time.perf_counter()
                for i in range(0, n, batch):
                    with s.transaction(space=sp.id):
                        s.insert_nodes(sp.id, rows[i:i + batch], vecs[i:i + batch])
                times.append(time.perf_counter() - t0)
    print(json.dumps({"code": str(Path(hela_cli.__file__).parent.parent), "n": n, "batch": batch,
                      "s_per_1000": round(statistics.median(times) / n * 1000, 4),
                      "runs_s": [round(t, 3) for t in times]}))


if __name__ == "__main__":
    main()
