"""MCP server latency (performance, not a test): ``hela mcp`` driven by the official SDK's stdio client.

    python benchmarks/speed/mcp_latency.py                      # 10k memories, first recall + p50 of the next 50
    python benchmarks/speed/mcp_latency.py --nodes 10000 --queries 50 --json mcp.json

What it measures, on this machine, in one run (see BENCHMARKS.md for recorded numbers):

* **the space**: ``--nodes`` memories in one space. ``--real`` of them (default 50) are real sentences
  written with ``Memory.add_many`` (real embedder, the same path as ``hela add``); the rest are the
  synthetic clustered memories of ``benchmarks/speed/scale.py`` (text, keywords, timestamps, consecutive-turn
  edges, clustered unit vectors) written straight through ``Store`` in the database bound to the real
  embedder, so the server searches 10k vectors without embedding 10k turns on this CPU. The real turns
  are the newest; the queries ask about them.
* **start**: spawning ``python -m hela_cli mcp --db DB`` until ``initialize`` returns (no model yet).
* **first recall**: the first ``recall`` call, end to end at the client: database open, embedder load,
  the space's vectors loaded into the in-process index, retrieval, Hebbian update (``learn`` on, the
  tool's default).
* **recall p50 / p95**: the following ``--queries`` recalls (distinct questions, learning on), and how
  often the fact asked about is among the first three memories (a sanity check, not a quality figure).
* **remember p50**: ``--remember`` single-turn ``remember`` calls after that (embedding + one write
  transaction).

Nothing is written into the repository: the database goes to a temporary directory (``--dir`` to choose).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from hela_cli.config import load_config  # noqa: E402
from hela_cli.memory import Memory  # noqa: E402
from hela_cli.store import Store  # noqa: E402
from scale import Synthetic  # noqa: E402

SPACE = "bench"
NAMES = ["Alice", "Bruno", "Chen", "Dara", "Emeka", "Fatima", "Goran", "Hana", "Ivo", "Jun"]
FACTS = [
    ("adopted a grey cat called {x}", "What is the name of {n}'s cat?", ["Miso", "Pixel", "Tofu", "Biscuit", "Nori"]),
    ("is learning to play the {x}", "Which instrument is {n} learning?", ["cello", "banjo", "harp", "oboe", "sitar"]),
    ("moved to {x} for a new job", "Where did {n} move for work?", ["Lisbon", "Oslo", "Nairobi", "Osaka", "Quito"]),
    ("is training for a marathon in {x}", "Where is {n}'s marathon?", ["Berlin", "Boston", "Chicago", "Tokyo",
                                                                      "Sydney"]),
    ("started a pottery class on {x}", "Which day is {n}'s pottery class?", ["Monday", "Tuesday", "Thursday",
                                                                            "Saturday", "Sunday"]),
    ("is reading a novel about {x}", "What is the novel {n} is reading about?", ["lighthouses", "glaciers",
                                                                                "beekeeping", "submarines",
                                                                                "volcanoes"]),
    ("planted {x} in the back garden", "What did {n} plant in the garden?", ["tomatoes", "tulips", "basil",
                                                                             "sunflowers", "raspberries"]),
    ("fixed an old {x} over the weekend", "What did {n} repair over the weekend?", ["bicycle", "radio",
                                                                                    "typewriter", "clock",
                                                                                    "sewing machine"]),
    ("booked a trip to see the {x}", "What trip did {n} book?", ["northern lights", "pyramids", "fjords",
                                                                 "cherry blossoms", "great reef"]),
    ("is allergic to {x}", "What is {n} allergic to?", ["peanuts", "cats", "pollen", "shellfish", "penicillin"]),
]


def real_turns(n: int, t_start: float) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """``n`` distinct facts as turns (newest memories of the space) and one question per fact with the
    fact's source id."""
    turns, questions = [], []
    for i in range(n):
        name = NAMES[i % len(NAMES)]
        fact, question, values = FACTS[(i // len(NAMES)) % len(FACTS)]
        value = values[(i // (len(NAMES) * len(FACTS))) % len(values)]
        turns.append({"speaker": name, "text": f"I {fact.format(x=value)}.", "time": t_start + 60 * i,
                      "id": f"fact-{i}"})
        questions.append((question.format(n=name), f"fact-{i}"))
    return turns, questions


def build(db: Path, nodes: int, real: int, log) -> tuple[list[tuple[str, str]], dict[str, float]]:
    cfg = load_config(overrides={"db": str(db)})
    t0 = time.perf_counter()
    mem = Memory(cfg)
    embedder = mem.embedder
    data = Synthetic(nodes - real)
    with Store(db) as store:
        store.bind_embedder(embedder.model_id, embedder.dim)
        sp = store.ensure_space(SPACE)
        for lo in range(0, data.n, 5000):
            hi = min(data.n, lo + 5000)
            rows = [data.row(i) for i in range(lo, hi)]
            with store.transaction():
                ids = store.insert_nodes(sp.id, rows, data.vectors(lo, hi))
                links = {(ids[j - 1], ids[j]): cfg.ingest.initial_weight
                         for j in range(1, len(ids)) if rows[j]["session"] == rows[j - 1]["session"]}
                store.set_edges(store.refresh_space(sp), links, cfg.hebbian.decay)
    t_synth = time.perf_counter() - t0
    log(f"  {data.n:,} synthetic memories in {t_synth:.1f}s")
    turns, questions = real_turns(real, data.t0 + data.span + 86400)
    t1 = time.perf_counter()
    with mem:
        mem.add_many(SPACE, turns)
        count = mem.store.count_nodes(mem.store.require_space(SPACE).id)
    assert count == nodes, count
    log(f"  {real} real turns through Memory.add_many in {time.perf_counter() - t1:.1f}s")
    return questions, {"synthetic_s": round(t_synth, 1), "real_add_s": round(time.perf_counter() - t1, 1)}


def pct(values: list[float], p: float) -> float:
    return round(float(np.percentile(np.asarray(values), p)), 1)


async def drive(db: Path, questions: list[tuple[str, str]], queries: int, remember: int, log) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_") or k in ("HELA_MODELS_DIR", "HELA_HOME")}
    env["PYTHONPATH"] = str(REPO)
    params = StdioServerParameters(command=sys.executable, args=["-m", "hela_cli", "mcp", "--db", str(db)],
                                   env=env, cwd=str(REPO))
    t0 = time.perf_counter()
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        start_ms = (time.perf_counter() - t0) * 1000

        async def call(name: str, args: dict[str, Any]) -> tuple[float, dict[str, Any]]:
            t = time.perf_counter()
            res = await s.call_tool(name, args)
            ms = (time.perf_counter() - t) * 1000
            if res.is_error:
                raise SystemExit(f"{name} failed: {res.content[0].text}")
            return ms, res.structured_content

        first_ms, _ = await call("recall", {"space": SPACE, "query": questions[0][0]})
        log(f"  first recall {first_ms:.0f} ms")
        times, top3 = [], 0
        for q, sid in questions[1:queries + 1]:
            ms, out = await call("recall", {"space": SPACE, "query": q})
            times.append(ms)
            top3 += sid in [m["source_id"] for m in out["memories"][:3]]
        log(f"  {len(times)} recalls: p50 {pct(times, 50)} ms")
        rem = []
        for i in range(remember):
            ms, _ = await call("remember", {"space": SPACE, "turns": [
                {"speaker": "Alice", "text": f"Reminder {i}: water the basil and call the plumber"}]})
            rem.append(ms)
    return {"start_ms": round(start_ms, 1), "first_recall_ms": round(first_ms, 1), "recalls": len(times),
            "recall_p50_ms": pct(times, 50), "recall_p95_ms": pct(times, 95),
            "recall_fact_in_top3": f"{top3}/{len(times)}",
            "remember_calls": len(rem), "remember_p50_ms": pct(rem, 50) if rem else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--real", type=int, default=60, help="real turns (embedded) among the nodes; >= queries + 1")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--remember", type=int, default=20)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    if a.real < a.queries + 1 or a.real >= a.nodes:
        ap.error("need queries + 1 <= real < nodes")
    tmp = Path(a.dir) if a.dir else Path(tempfile.mkdtemp(prefix="hela-mcp-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    db = tmp / f"mcp-{a.nodes}.db"
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        p.unlink(missing_ok=True)

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    try:
        log(f"building a {a.nodes:,}-memory space in {db}")
        questions, build_s = build(db, a.nodes, a.real, log)
        log("driving `hela mcp` with the SDK stdio client")
        res = anyio.run(drive, db, questions, a.queries, a.remember, log)
    finally:
        if not a.dir:
            shutil.rmtree(tmp, ignore_errors=True)
    out = {"nodes": a.nodes, "real_turns": a.real, "build": build_s, **res,
           "machine": {"cpus": os.cpu_count(), "load_avg": [round(x, 2) for x in os.getloadavg()],
                       "python": platform.python_version()}}
    text = json.dumps(out, indent=2)
    print(text)
    if a.json:
        a.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
