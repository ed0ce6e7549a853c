"""Speed of correcting memory at scale: a complete delete and an edit in a synthetic store (no model).

    python benchmarks/speed/correct_speed.py [--n 100000] [--reps 10] [--asks 10000]

Builds the clustered synthetic store of ``benchmarks/speed/scale.py`` (``--n`` memories, 384-d, session links),
searches it once (so the persisted sign bits exist and deletes / edits keep them current), logs ``--asks``
asks (each retrieving 13 memories), then times, each ``--reps`` times on a different memory:

* ``delete``: ``Store.erase_nodes`` of one memory (every table, then the scrub: WAL checkpoint, a byte
  search of the file, VACUUM only if a probe is found), wall and CPU time, and the scrub alone;
* ``edit``: ``hela_cli.maintenance.correct.edit`` with a stand-in embedder returning fixed vectors (the embedding
  itself is not timed: ~10-20 ms a text with the default embedder), wall and CPU time;
* ``delete --session``: a filter delete of one session (20 memories);
* ``memories --contains``: a listing that scans every memory's text;
* ``VACUUM``: what the scrub's fallback would cost at this size.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np


from hela_cli.config import Config  # noqa: E402
from hela_cli.maintenance.correct import edit  # noqa: E402
from hela_cli.store import Store  # noqa: E402
from scale import DIM, FAKE_EMBEDDER, SPACE, Synthetic, build  # noqa: E402


class FixedEmbedder:
    model_id, dim, n_ctx = FAKE_EMBEDDER, DIM, 512

    def __init__(self) -> None:
        self.rng = np.random.default_rng(5)

    def embed(self, texts: Any) -> np.ndarray:
        v = self.rng.standard_normal((len(texts), DIM)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return (time.perf_counter() - w) * 1000, (time.process_time() - c) * 1000, out


def med(xs: list[float]) -> float:
    return round(statistics.median(xs), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--asks", type=int, default=10_000)
    args = ap.parse_args()
    cfg = Config()
    data = Synthetic(args.n)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "c.db"
        build_s = build(path, data, cfg, lambda s: print(s, file=sys.stderr))
        store = Store(path)
        sp = store.require_space(SPACE)
        store.knn(sp.id, data.queries(1)[0][1], 10)   # persisted sign bits (space above 20k)
        rng = np.random.default_rng(3)
        ids = [r[0] for r in store.db.execute("SELECT id FROM nodes WHERE space_id=? ORDER BY id", (sp.id,))]
        with store.transaction():
            for a in range(args.asks):
                mem = [int(x) for x in rng.choice(ids, 13, replace=False)]
                store.sdb["asks"].insert({"space_id": sp.id, "question": f"question {a}", "answer": f"answer {a}",
                                          "memories": json.dumps(mem), "step": a, "created_at": time.time()})
        store.checkpoint()
        size_mb = path.stat().st_size / 1e6
        picks = [int(x) for x in rng.choice(ids, 2 * args.reps, replace=False)]
        dele: list[tuple[float, float]] = []
        scrub_ms: list[float] = []
        vacuumed = 0
        for nid in picks[:args.reps]:
            w, c, rep = timed(lambda: store.erase_nodes(sp.id, [nid]))
            dele.append((w, c))
            scrub_ms.append(rep["scrub"]["seconds"] * 1000)
            vacuumed += rep["scrub"]["vacuumed"]
            assert rep["scrub"]["verified"]
        emb = FixedEmbedder()
        edits: list[tuple[float, float]] = []
        for nid in picks[args.reps:]:
            w, c, _ = timed(lambda: edit(store, emb, sp, cfg, f"edited text of memory {nid} with new words",
                                         node_id=nid))
            edits.append((w, c))
        session = store.get_node(picks[-1])["session"]
        w_sess, c_sess, rep = timed(lambda: store.erase_nodes(
            sp.id, [n["id"] for n in store.list_nodes(sp.id, session=session)]))
        w_list, _, rows = timed(lambda: store.list_nodes(sp.id, contains="memory 4242", limit=20))
        version = store.db.execute("SELECT nodes_version FROM spaces WHERE id=?", (sp.id,)).fetchone()[0]
        state = store.db.execute("SELECT version FROM sign_state WHERE space_id=?", (sp.id,)).fetchone()
        bits_current = None if state is None else state[0] == version   # None: no bits (<= 20k memories)
        w_vac, _, _ = timed(lambda: store.db.execute("VACUUM"))
        problems = store.integrity_problems()
        store.close()
    print(json.dumps({
        "n": args.n, "asks": args.asks, "build_s": round(build_s, 1), "db_mb": round(size_mb, 1),
        "delete_one_ms": {"wall_median": med([w for w, _ in dele]), "cpu_median": med([c for _, c in dele]),
                          "wall_max": round(max(w for w, _ in dele), 1), "scrub_median": med(scrub_ms),
                          "vacuumed": vacuumed, "reps": args.reps},
        "edit_one_ms": {"wall_median": med([w for w, _ in edits]), "cpu_median": med([c for _, c in edits]),
                        "wall_max": round(max(w for w, _ in edits), 1), "reps": args.reps},
        "delete_session_ms": {"wall": round(w_sess, 1), "cpu": round(c_sess, 1), "memories": len(rep["deleted"])},
        "memories_contains_ms": round(w_list, 1), "vacuum_ms": round(w_vac, 1),
        "sign_bits_current": bits_current, "integrity_problems": problems}, indent=2))


if __name__ == "__main__":
    main()
