"""Backup and import cost: `hela backup` (VACUUM INTO, against SQLite's online backup API) and
`hela export --format json --vectors` -> `hela import`, on a LoCoMo conversation and a synthetic store.

    python benchmarks/speed/backup_restore.py locomo LOCOMO.json [--sample conv-26] [--questions 20]
    python benchmarks/speed/backup_restore.py synthetic [--n 100000]

``locomo``: ingest one conversation with the default embedder, ask ``--questions`` of its QA with learning
(retrieval only), then time each step; the imported copy is asked the same questions without learning and
must give the same memories and scores (checked, reported). ``synthetic``: the clustered store of
``benchmarks/speed/scale.py`` (no model; its conversation links), with some learned edges. Prints one JSON
object: wall and CPU seconds of each step, file sizes, and whether the copies check out.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

REPO = Path(__file__).resolve().parents[2]

from hela_cli.maintenance import exporting  # noqa: E402
from hela_cli.config import Config  # noqa: E402
from hela_cli.memory import Memory  # noqa: E402
from hela_cli.store import sqlite3  # noqa: E402


def timed(fn: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, {"wall_s": round(time.perf_counter() - w, 3), "cpu_s": round(time.process_time() - c, 3)}


def backup_api(src: str, dest: Path) -> None:
    """SQLite's online backup API in one step (one read transaction: a consistent snapshot)."""
    con = sqlite3.connect(src)
    dst = sqlite3.connect(str(dest))
    try:
        con.backup(dst, pages=-1)
    finally:
        dst.close()
        con.close()


def steps(mem: Memory, space: str, work: Path, embedder_for_import: Any, cfg: Config,
          questions: list[str], query: Callable[[Memory, str, str], list[tuple[int, float]]]) -> dict[str, Any]:
    # a memory with a unique text, deleted again: which copy still holds its bytes?
    secret = "unique-deleted-text-4f1c9a"
    sp = mem.store.require_space(space)
    with mem.store.transaction():
        nid = mem.store.insert_nodes(sp.id, [{"text": secret, "ts": 0.0, "ord": -1, "hash": secret}],
                                     np.zeros((1, mem.store.embedder_info()[1]), dtype=np.float32) + 0.05)[0]
    with mem.store.transaction():
        mem.store.delete_nodes([nid])
    mem.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out: dict[str, Any] = {"db_bytes": os.path.getsize(mem.store.path)}
    rep, out["backup_vacuum_into"] = timed(lambda: mem.backup(work / "vacuum.db"))
    out["backup_vacuum_into"]["bytes"] = rep["bytes"]
    _, out["backup_api"] = timed(lambda: backup_api(mem.store.path, work / "api.db"))
    out["backup_api"]["bytes"] = os.path.getsize(work / "api.db")
    out["deleted_text_in"] = {f: secret.encode() in (work / f).read_bytes()
                              for f in ("hela.db", "vacuum.db", "api.db")}
    sp = mem.store.require_space(space)
    data, out["export_json_vectors"] = timed(lambda: json.dumps(exporting.export_json(mem.store, sp, cfg,
                                                                                       vectors=True)))
    (work / "e.json").write_text(data)
    out["export_json_vectors"]["bytes"] = len(data.encode())
    del data
    with Memory(cfg.replace(db=str(work / "imported.db")), embedder=embedder_for_import) as m2:
        rep, out["import"] = timed(lambda: m2.import_export(work / "e.json", space=space))
        out["import"]["memories"] = rep["memories"]
        out["import"]["edges"] = rep["edges"]
        to_old = {new: int(old) for old, new in rep["ids"].items()}
        same = 0
        for q in questions:
            a = query(mem, space, q)
            b = [(to_old[i], s) for i, s in query(m2, space, q)]
            same += [i for i, _ in a] == [i for i, _ in b] and all(abs(x - y) <= 1e-6 for (_, x), (_, y) in zip(a, b))
        out["same_recall"] = f"{same}/{len(questions)}"
        out["imported_integrity"] = m2.store.integrity_problems() or "ok"
    return out


def locomo(args: argparse.Namespace) -> dict[str, Any]:
    from hela_cli.formats import parse_file

    convs = [c for c in parse_file(args.file, "locomo") if c.name == args.sample]
    if not convs:
        raise SystemExit(f"{args.file}: no sample {args.sample}")
    qa = [q["question"] for q in convs[0].qa][: args.questions]
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        work = Path(d)
        cfg = Config(db=str(work / "hela.db"))
        with Memory(cfg) as mem:
            from hela_cli.ingest import ingest_conversations

            (_, t_ingest) = timed(lambda: ingest_conversations(mem.store, mem.embedder, convs, cfg, args.sample))
            for q in qa:
                mem.retrieve(q, args.sample, learn=True)
            sp = mem.store.require_space(args.sample)

            def query(m: Memory, space: str, q: str) -> list[tuple[int, float]]:
                return [(x["id"], x["score"]) for x in m.retrieve(q, space, learn=False).memories]

            out = {"kind": "locomo", "sample": args.sample, "memories": mem.store.count_nodes(sp.id),
                   "edges": mem.store.count_edges(sp.id), "step": sp.step, "ingest": t_ingest}
            out.update(steps(mem, args.sample, work, mem.embedder, cfg, qa, query))
            with Memory(Config(db=str(work / "reembedded.db")), embedder=mem.embedder) as m3:
                rep, out["import_reembed"] = timed(lambda: m3.import_export(work / "e.json", reembed=True))
    return out


def synthetic(args: argparse.Namespace) -> dict[str, Any]:
    import scale

    data = scale.Synthetic(args.n)
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        work = Path(d)
        cfg = Config(db=str(work / "hela.db"))
        t_build = scale.build(work / "hela.db", data, cfg, lambda s: print(s, file=sys.stderr))
        qs = data.queries(10)
        with Memory(cfg, embedder=scale.NoEmbedder()) as mem:
            from hela_cli.mechanics.retrieval import retrieve

            sp = mem.store.require_space(scale.SPACE)
            for text, v in qs * 3:  # learned edges among the retrieved memories
                r = retrieve(mem.store, mem.store.require_space(scale.SPACE), mem.embedder, text, cfg,
                             learn=True, query_vector=v)
            vec = dict(qs)

            def query(m: Memory, space: str, q: str) -> list[tuple[int, float]]:
                res = retrieve(m.store, m.store.require_space(space), m.embedder, q, cfg, learn=False,
                               query_vector=np.asarray(vec[q]))
                return [(x["id"], x["score"]) for x in res.memories]

            sp = mem.store.require_space(scale.SPACE)
            out = {"kind": "synthetic", "memories": mem.store.count_nodes(sp.id),
                   "edges": mem.store.count_edges(sp.id), "step": sp.step, "build_s": round(t_build, 1)}
            out.update(steps(mem, scale.SPACE, work, scale.NoEmbedder(), cfg, list(vec), query))
            del r
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    lo = sub.add_parser("locomo")
    lo.add_argument("file")
    lo.add_argument("--sample", default="conv-26")
    lo.add_argument("--questions", type=int, default=20)
    sy = sub.add_parser("synthetic")
    sy.add_argument("--n", type=int, default=100_000)
    for p in (lo, sy):
        p.add_argument("--dir", default=None, help="work directory [a temporary one]")
    args = ap.parse_args()
    out = locomo(args) if args.what == "locomo" else synthetic(args)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
