"""Node-insert cost of the store alone (no model): 10,000 synthetic nodes in batches of 64.

    python benchmarks/insert_nodes.py                          # the installed hela_cli
    PYTHONPATH=OTHER_CHECKOUT python benchmarks/insert_nodes.py   # another checkout's hela_cli

Prints nodes/s. Time it as a whole process to A/B two checkouts, e.g. with ``/usr/bin/time -v`` or any
tool that alternates runs and reports medians.
"""

import os
import tempfile
import time

import numpy as np  # noqa: E402

from hela_cli.store import Store  # noqa: E402

N, BATCH, DIM = 10_000, 64, 384
rng = np.random.default_rng(0)
vecs = rng.standard_normal((N, DIM)).astype("float32")
vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
rows = [{"text": f"turn {i} about topic {i % 97}", "ts": float(i), "ord": i, "hash": f"h{i}",
         "keywords": [f"k{i % 97}", f"w{i % 13}"], "speaker": "x", "session": "s"} for i in range(N)]
with tempfile.TemporaryDirectory() as d:
    s = Store(os.path.join(d, "x.db"))
    s.bind_embedder("synthetic", DIM)
    sp = s.ensure_space("a")
    t = time.perf_counter()
    for i in range(0, N, BATCH):
        with s.transaction():
            s.insert_nodes(sp.id, rows[i:i + BATCH], vecs[i:i + BATCH])
    print(f"{N / (time.perf_counter() - t):.0f} nodes/s")
    s.close()
