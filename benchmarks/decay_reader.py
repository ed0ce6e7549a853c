"""Issue 41's reproduction: a space learned under one ``hebbian.decay`` and read by processes configured with
another (a measurement, not a test; tests/test_space_decay.py holds the behaviour).

    python benchmarks/decay_reader.py [--postgres] [--steps 300] [--learn 0.9] [--read 0.9 0.995 0.5]

Ingests ``sample_data/conversation.json`` into space ``demo`` (default models), runs ``--steps`` learning
retrievals (the sample questions in turn) with ``hebbian.decay`` = ``--learn``, then reads the space with
the real CLI, once per ``--read`` decay (``HELA_HEBBIAN_DECAY``): ``hela export --format json`` (largest
edge weight) and ``hela inspect --json`` (hubs, memories); then once more after one learning ``hela ask
--no-llm`` under each decay (what it printed on stderr). Before issue 41 every reader scaled the stored
amplitudes with its own decay; since, the space's recorded decay governs every read. ``--postgres``: the same
on a private Postgres (``hela_cli.testing.local_postgres``). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HELA = [sys.executable, "-m", "hela_cli"]


def learn(db: str, decay: float, steps: int) -> float:
    """Ingest the sample conversation and run ``steps`` learning retrievals under ``decay``; seconds taken."""
    from hela_cli.config import load_config
    from hela_cli.memory import Memory

    cfg = load_config(overrides={"hebbian.decay": decay})
    cfg.db = db
    questions = [q["question"] for q in json.loads((ROOT / "sample_data" / "questions.json").read_text())]
    t0 = time.perf_counter()
    with Memory(cfg) as mem:
        mem.ingest([ROOT / "sample_data" / "conversation.json"], space="demo")
        for i in range(steps):
            mem.retrieve(questions[i % len(questions)], "demo", learn=True)
    return time.perf_counter() - t0


def read(db: str, decay: float, ask: str | None = None) -> dict[str, Any]:
    """What a CLI process configured with ``decay`` reads: the export's largest weight, the hub count; with
    ``ask``, after one learning ``hela ask --no-llm`` under ``decay`` (what that process printed on stderr)."""
    env = {**os.environ, "HELA_HEBBIAN_DECAY": str(decay), "HELA_DB": db}

    def run(*args: str) -> dict[str, Any]:
        out = subprocess.run([*HELA, *args], env=env, capture_output=True, text=True, check=True)
        return {"json": json.loads(out.stdout), "stderr": out.stderr.strip()}

    asked = run("ask", "--no-llm", "--json", "--space", "demo", ask) if ask else None

    exp = run("export", "--format", "json", "--space", "demo")
    ov = run("inspect", "--json", "--space", "demo")
    weights = [e["weight"] for e in exp["json"]["edges"]]
    return {"read_decay": decay, "largest_weight": max(weights), "edges": len(weights),
            "export_decay": exp["json"]["hebbian"]["decay"],
            "hubs": ov["json"]["hubs"]["count"], "memories": ov["json"]["nodes"],
            "stderr": [s for s in (exp["stderr"], ov["stderr"]) if s],
            **({"learning_ask_stderr": asked["stderr"]} if asked else {})}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--learn", type=float, default=0.9)
    ap.add_argument("--read", type=float, nargs="+", default=[0.9, 0.995, 0.5])
    a = ap.parse_args()
    with ExitStack() as stack:
        if a.postgres:
            from hela_cli.testing import local_postgres, new_database

            db = new_database(stack.enter_context(local_postgres()))
        else:
            db = str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "decay.db")
        seconds = learn(db, a.learn, a.steps)
        reads = [read(db, d) for d in a.read]
        # then one learning ask under each read decay in turn: the space is rebased to it, once, saying so
        reads += [read(db, d, ask="Who looked after Tofu?") for d in a.read]
    print(json.dumps({"backend": "postgres" if a.postgres else "sqlite", "learn_decay": a.learn,
                      "steps": a.steps, "learn_s": round(seconds, 1), "reads": reads}, indent=1))


if __name__ == "__main__":
    main()
