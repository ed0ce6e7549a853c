"""Recall by file benchmark (performance and tokens, not a test): what the ``PreToolUse`` hook costs and
brings on a project's history.

    python benchmarks/agents/path_recall.py --sessions 300 --hooks 20

A project of ``--sessions`` synthetic Claude Code sessions (written as real transcripts, captured with
``hela_cli.hooks.capture.capture_file``, the hooks' own capture; vectors from the test ``HashEmbedder``: the
recall by file reads no vector). Each session works on 3 of 200 files, one prompt per file: it reads the
file, runs its test (which fails with an error naming the file's module), edits it, runs the test again
(passes), states a decision with a reason unique to the session and the file, without naming the file,
and commits. Then, for files drawn at random:

* in process: ``path_context`` milliseconds (p50 / p95), the tokens it injects (p50 / p95), and whether the
  newest reason stated for the file is in the injected text (the evidence an edit needs);
* whole process: ``--hooks`` real ``hela hook PreToolUse`` processes (wall and CPU milliseconds, p50).

Prints one JSON object (``--json F`` too). The database goes to a temporary directory (``--dir`` keeps it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from hela_cli.config import load_config  # noqa: E402
from hela_cli.hooks.capture import capture_file  # noqa: E402
from hela_cli.hooks.context import path_context  # noqa: E402
from hela_cli.memory import Memory  # noqa: E402
from hela_cli.testing import HashEmbedder  # noqa: E402
from hooks_bench import _timed  # noqa: E402  (benchmarks/agents/, this script's folder)

ROOT = "/home/dev/shop"
FILES = [f"pkg{i % 20}/mod{i}.py" for i in range(200)]
PY = sys.executable


def session_records(s: int, rng: random.Random) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """One session's transcript records and the reason it stated per file."""
    recs: list[dict[str, Any]] = []
    reasons: dict[str, str] = {}
    n = 0
    day = 1 + s // 24

    def rec(kind: str, content: Any) -> None:
        nonlocal n
        n += 1
        recs.append({"type": kind, "sessionId": f"s{s}", "uuid": f"s{s}-{n}", "cwd": ROOT,
                     "timestamp": f"2026-{1 + (day // 28) % 12:02d}-{1 + day % 28:02d}T{s % 24:02d}:{n % 60:02d}:00Z",
                     "message": {"role": kind, "content": content}})

    def call(tid: str, name: str, inp: dict[str, Any], out: str, err: bool = False) -> None:
        rec("assistant", [{"type": "tool_use", "id": tid, "name": name, "input": inp}])
        rec("user", [{"type": "tool_result", "tool_use_id": tid, "content": out, "is_error": err}])

    for j, f in enumerate(rng.sample(FILES, 3)):
        mod = Path(f).stem
        reason = f"reason-{s}-{mod}"
        reasons[f] = reason
        rec("user", f"The {mod} handler breaks on empty input, please fix it.")
        call(f"t{s}{j}r", "Read", {"file_path": f"{ROOT}/{f}"}, "1\tdef handle(x): ...")
        call(f"t{s}{j}a", "Bash", {"command": f"pytest -x tests/test_{mod}.py"},
             f"Exit code 1\nE   AssertionError: {mod} returned None", err=True)
        call(f"t{s}{j}e", "Edit", {"file_path": f"{ROOT}/{f}", "old_string": "a", "new_string": "b"}, "updated")
        call(f"t{s}{j}b", "Bash", {"command": f"pytest -x tests/test_{mod}.py"}, "1 passed")
        rec("assistant", [{"type": "text", "text": f"Going with an early return instead of a default value "
                                                   f"because of {reason}."}])
        call(f"t{s}{j}c", "Bash", {"command": f'git commit -am "Fix {mod} on empty input"'},
             f"[main {s:03x}{j}abc] Fix {mod} on empty input\n 1 file changed")
    rec("assistant", [{"type": "text", "text": "Done."}])
    return recs, reasons


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))], 1) if xs else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--probes", type=int, default=200)
    ap.add_argument("--hooks", type=int, default=20)
    ap.add_argument("--dir")
    ap.add_argument("--json")
    args = ap.parse_args()
    work = Path(args.dir or tempfile.mkdtemp(prefix="hela-path-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ["HELA_HOME"] = str(work / "home")
    db = work / "path.db"
    rng = random.Random(7)
    cfg = load_config(None, overrides={"db": str(db)})
    mem = Memory(cfg, embedder=HashEmbedder())
    latest: dict[str, str] = {}
    t0 = time.perf_counter()
    turns = 0
    for s in range(args.sessions):
        recs, reasons = session_records(s, rng)
        path = work / f"s{s}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
        turns += capture_file(mem, "claude-code", path, "shop")["added"]
        latest.update(reasons)
    build_s = time.perf_counter() - t0
    memories = len(mem.memories("shop", limit=None))

    probes = [f for f in rng.choices(FILES, k=args.probes)]
    ms, tokens, hits, known, empty = [], [], 0, 0, 0
    for i, f in enumerate(probes):
        t1 = time.perf_counter()
        text, facts = path_context(mem, "shop", [f"{ROOT}/{f}"], ROOT, f"probe-{i}")
        ms.append((time.perf_counter() - t1) * 1000)
        tokens.append(-(-len(text) // 4))
        if f in latest:
            known += 1
            hits += latest[f] in text
        empty += not text
    mem.close()

    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_")}
    env.update({"HELA_DB": str(db), "HELA_HOME": str(work / "home-hooks"), "PYTHONPATH": str(REPO),
                "HELA_HOOKS_SERVER": "off"})   # each hook in its own process, as measured before the managed server
    walls, cpus = [], []
    for i, f in enumerate(rng.sample(sorted(latest), min(args.hooks, len(latest)))):
        payload = {"session_id": f"hook-{i}", "cwd": ROOT, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                   "tool_input": {"file_path": f"{ROOT}/{f}", "old_string": "a", "new_string": "b"}}
        wall, cpu, out = _timed([PY, "-m", "hela_cli", "hook", "PreToolUse", "--space", "shop"],
                                json.dumps(payload).encode(), env)
        walls.append(wall)
        cpus.append(cpu)
        assert out, "the hook printed nothing for a file with a history"
    result = {"sessions": args.sessions, "turns": turns, "memories": memories, "build_s": round(build_s, 1),
              "probes": len(probes), "files_with_history": known, "empty": empty,
              "newest_reason_injected": round(hits / max(known, 1), 3),
              "path_context_ms": {"p50": pct(ms, 50), "p95": pct(ms, 95)},
              "tokens": {"p50": pct(tokens, 50), "p95": pct(tokens, 95), "budget": cfg.hooks.path_tokens},
              "hook_process_ms": {"wall_p50": pct(walls, 50), "cpu_p50": pct(cpus, 50), "runs": len(walls)},
              "loadavg": os.getloadavg()}
    print(json.dumps(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
