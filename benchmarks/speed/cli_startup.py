"""``hela --version`` and ``hela --help``: wall and CPU time of a fresh process (performance, not a test).

    python benchmarks/speed/cli_startup.py [--roots OLD_CHECKOUT,.] [--runs 10]

Each run starts ``python -m hela_cli`` from a checkout root (``--roots``: several checkouts run interleaved,
for a before / after in one run), output to a pipe. Reported per root and command: median wall seconds and
median CPU seconds (user + system of the child, from ``getrusage``; less sensitive than wall time to other
processes on a shared machine). ``--help`` builds every command's click object, so it pays for importing
every command module; ``--version`` stops in the root callback. The first round is a warm-up (page cache,
bytecode) and is not counted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

COMMANDS = (["--version"], ["--help"])


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
    ap.add_argument("--roots", default=".", help="comma-separated checkout roots to compare [.]")
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args()
    roots = [os.path.abspath(r) for r in a.roots.split(",")]
    res: dict[tuple[str, str], list[tuple[float, float]]] = {(r, " ".join(c)): [] for r in roots for c in COMMANDS}
    for i in range(a.runs + 1):
        for cmd in COMMANDS:
            for r in roots:
                m = run(r, cmd)
                if i:
                    res[(r, " ".join(cmd))].append(m)
    for (r, cmd), ms in res.items():
        print(f"{r}: hela {cmd}: wall {statistics.median(w for w, _ in ms):.3f} s, "
              f"cpu {statistics.median(c for _, c in ms):.3f} s (median of {a.runs})")


if __name__ == "__main__":
    main()
