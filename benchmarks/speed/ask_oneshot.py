"""One-shot ``hela ask --no-llm --no-learn --json`` wall and CPU time, a fresh process each time (performance,
not a test).

    python benchmarks/speed/ask_oneshot.py --db DB --space SPACE [--roots OLD_CHECKOUT,.] [--runs 7]

Each run starts ``python -m hela_cli`` from a checkout root (``--roots``: several checkouts are run
interleaved, for a before/after in one run), output to a pipe. Reported per root: median wall seconds and
median CPU seconds (user + system of the child, from ``getrusage``; less sensitive than wall time to other
processes on a shared machine), plus ``hela --version`` as the floor of a Python process with the CLI.
The first round is a warm-up (page cache, bytecode) and is not counted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

QUESTIONS = ["What did Melanie paint recently?", "When did Caroline go to the LGBTQ support group?",
             "What is Caroline's identity?", "Where did Melanie camp?", "What books has Caroline read?"]


def run(root: str, args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hela_cli", *args], cwd=root, check=True, stdout=subprocess.PIPE,
                   stderr=subprocess.DEVNULL, env={k: v for k, v in os.environ.items()
                                                   if k != "PYTHONDONTWRITEBYTECODE"})
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="database; comma-separated: one per root (a checkout whose "
                                                 "schema is older needs its own copy)")
    ap.add_argument("--space", required=True)
    ap.add_argument("--roots", default=".", help="comma-separated checkout roots to compare [.]")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    roots = [os.path.abspath(r) for r in a.roots.split(",")]
    dbs = a.db.split(",")
    db_of = dict(zip(roots, dbs if len(dbs) == len(roots) else [a.db] * len(roots)))
    res: dict[str, list[tuple[float, float]]] = {r: [] for r in roots}
    ver: dict[str, list[tuple[float, float]]] = {r: [] for r in roots}
    for i in range(a.runs + 1):
        for r in roots:
            q = QUESTIONS[i % len(QUESTIONS)]
            m = run(r, ["--db", db_of[r], "ask", q, "--space", a.space, "--no-llm", "--no-learn", "--json"])
            v = run(r, ["--version"])
            if i:
                res[r].append(m)
                ver[r].append(v)
    for r in roots:
        print(f"{r}: ask --no-llm wall {statistics.median(w for w, _ in res[r]):.2f} s, "
              f"cpu {statistics.median(c for _, c in res[r]):.2f} s; --version wall "
              f"{statistics.median(w for w, _ in ver[r]):.2f} s, cpu {statistics.median(c for _, c in ver[r]):.2f} s "
              f"(median of {a.runs})")


if __name__ == "__main__":
    main()
