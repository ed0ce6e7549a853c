"""The prompt hook, whole process, A against B in one run (not a test): ``hela hook UserPromptSubmit`` as
Claude Code starts it, on a copy of one captured database, alternating two checkouts run by run.

    python benchmarks/agents/hook_ab.py --db CAPTURED.db --variant base=/path/to/old/checkout --variant new=. --runs 12

Each run is a new process (``python -m hela_cli hook UserPromptSubmit --agent claude-code``) with the
checkout first on ``PYTHONPATH`` and as its working directory, a new agent session and one prompt of a fixed
list (half of them about the project, half not); the database is copied once per variant. Prints, per
variant, the median and p90 of wall time and of the process's CPU time (user + system), and the median of
the paired differences (new - base, same prompt, adjacent runs).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROMPTS = ["Why did we remove requirements.txt?", "Write a haiku about the first snow of winter.",
           "How do we run the specs to get the living documentation output?", "How do I squash two commits?",
           "Is the uv environment still in .uvenv?", "Draft an email to my landlord about the heating."]
CWD = "/Users/palimondo/Developer/BookMinder"


def one(checkout: Path, db: Path, home: Path, prompt: str, session: str) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_")}
    env.update({"HELA_DB": str(db), "HELA_HOME": str(home), "PYTHONPATH": str(checkout), "HELA_HOOKS_SERVER": "off",
                "HELA_MODELS_DIR": os.environ.get("HELA_MODELS_DIR", str(Path.home() / ".local/share/hela/models")),
                "HELA_HOOKS_BUDGET_S": "60"})
    payload = json.dumps({"session_id": session, "cwd": CWD, "prompt": prompt, "hook_event_name": "UserPromptSubmit"})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hela_cli", "hook", "UserPromptSubmit", "--agent", "claude-code",
                    "--space", "bookminder"], input=payload.encode(), capture_output=True, env=env, cwd=str(checkout),
                   check=True, timeout=120)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--variant", action="append", required=True, metavar="NAME=CHECKOUT")
    ap.add_argument("--runs", type=int, default=12)
    args = ap.parse_args()
    variants = [(n, Path(p).resolve()) for n, p in (v.split("=", 1) for v in args.variant)]
    res: dict[str, list[tuple[float, float]]] = {n: [] for n, _ in variants}
    with tempfile.TemporaryDirectory() as tmp:
        dbs, homes = {}, {}
        for n, _ in variants:
            dbs[n] = Path(tmp) / f"{n}.db"
            shutil.copyfile(args.db, dbs[n])
            homes[n] = Path(tmp) / f"home-{n}"
        for n, c in variants:   # a first run each (models read once from disk into the page cache, caches made)
            one(c, dbs[n], homes[n], PROMPTS[0], f"warm-{n}")
        for i in range(args.runs):
            order = variants if i % 2 == 0 else variants[::-1]
            for n, c in order:
                res[n].append(one(c, dbs[n], homes[n], PROMPTS[i % len(PROMPTS)], f"ab-{n}-{i}"))
    out = {}
    for n, rows in res.items():
        walls, cpus = sorted(r[0] for r in rows), sorted(r[1] for r in rows)
        out[n] = {"runs": len(rows), "wall_p50": round(statistics.median(walls), 1),
                  "wall_p90": round(walls[int(0.9 * (len(walls) - 1))], 1),
                  "cpu_p50": round(statistics.median(cpus), 1), "cpu_p90": round(cpus[int(0.9 * (len(cpus) - 1))], 1)}
    if len(variants) == 2:
        a, b = (n for n, _ in variants)
        out["paired_cpu_diff_p50"] = round(statistics.median(y[1] - x[1] for x, y in zip(res[a], res[b])), 1)
        out["paired_wall_diff_p50"] = round(statistics.median(y[0] - x[0] for x, y in zip(res[a], res[b])), 1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
