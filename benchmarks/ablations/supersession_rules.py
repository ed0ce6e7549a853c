"""Facts that change (issue 38): what the Eq.1 and Eq.4 rules for superseded memories do, measured.

    python benchmarks/ablations/supersession_rules.py                 # 20 learning recalls, the default embedder
    python benchmarks/ablations/supersession_rules.py --recalls 50 --json

A small project space (12 turns over three weeks; one fact changes: the model server moves from vLLM to
SGLang, marked with ``Memory.supersede``) is built twice in temporary databases, then the same learning
recalls about the project's serving stack run on each:

* ``hela``: the code as it is: a memory superseded for certain takes no part in Eq.1 and gets no Eq.4 bonus;
* ``paper``: the same recalls (same retrieved sets: the successor is brought in either way), but Eq.1 applied
  to every pair of the set as the paper does (``learn_from`` without ``superseded``).

Printed per rule: the learned link weight (sum over its edges of the part Eq.1 added) of the old and of the
new memory, and in a final read-only recall without marks (the marks removed) the ranks of both: what the
graph learned, with the marks' help to recall taken away. Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

DAY = 86_400.0
T0 = 1_714_521_600.0   # 2024-05-01

TURNS = [
    "Context for later: our model server is vLLM 0.6 behind nginx, and the GPU box is called orca.",
    "The CI runs on GitHub Actions with a self-hosted runner on the box called heron.",
    "We pinned torch to 2.3 because of a CUDA 12.1 driver on orca.",
    "The API gateway in front of the model server rate-limits at 50 requests per second.",
    "Grafana dashboards for the inference latency live in the ops folder.",
    "Our embeddings come from bge-small served next to the model server on orca.",
    "The staging cluster uses the same nginx config as production.",
    "Update: we replaced vLLM with SGLang last week because of the prefix cache; orca still hosts it.",
    "The nightly eval job reads prompts from the evals bucket.",
    "Alerts for the model server go to the #inference channel.",
    "We raised the model server's max batch size to 64 after the move.",
    "The on-call rotation for inference changes every Monday.",
]
QUESTIONS = [
    "Which inference server does our model run on?",
    "What sits behind nginx on orca?",
    "How is the model served, and on which box?",
    "What changed in our model serving stack?",
]


def _learned(store, sp, nid: int) -> float:
    return sum(learned for _, _, learned in store.node_edges(store.refresh_space(sp), nid))


def run(rule: str, recalls: int) -> dict:
    from hela_cli.config import Config
    from hela_cli.mechanics.retrieval import learn_from
    from hela_cli.memory import Memory

    with tempfile.TemporaryDirectory() as tmp:
        cfg = Config()
        cfg.db = str(Path(tmp) / "rules.db")
        with Memory(cfg) as mem:
            ids = mem.add_many("proj", [{"text": t, "speaker": "user", "time": T0 + i * 2 * DAY}
                                        for i, t in enumerate(TURNS)])
            old, new = ids[0], ids[7]
            mem.supersede(old, new)
            sp = mem.space("proj")
            both = 0
            for i in range(recalls):
                q = QUESTIONS[i % len(QUESTIONS)]
                if rule == "hela":
                    res = mem.retrieve(q, "proj", learn=True, log=False)
                else:   # the paper's Eq.1: every pair of the same retrieved set
                    res = mem.retrieve(q, "proj", learn=False)
                    ms = res.memories
                    learn_from(mem.store, sp, [m["id"] for m in ms], mem.config, when=T0 + 30 * DAY,
                               scores={m["id"]: m["base_score"] for m in ms},
                               spread_in=[m["id"] for m in ms if m["path"] == "hebbian"])
                got = [m["id"] for m in res.memories]
                both += old in got and new in got
            out = {"rule": rule, "recalls": recalls, "recalls_with_both": both,
                   "learned_old": round(_learned(mem.store, sp, old), 4),
                   "learned_new": round(_learned(mem.store, sp, new), 4)}
            mem.supersede(old, new, undo=True)   # what the graph alone ranks, the marks' help removed
            ranks = []
            for q in QUESTIONS:
                got = [m["id"] for m in mem.retrieve(q, "proj", learn=False).memories]
                ranks.append((got.index(old) + 1 if old in got else None, got.index(new) + 1 if new in got else None))
            out["ranks_old_new_unmarked"] = ranks
            return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recalls", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [run(rule, args.recalls) for rule in ("paper", "hela")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        print(f"{r['rule']:>6}: {r['recalls']} recalls ({r['recalls_with_both']} with both), learned weight "
              f"old {r['learned_old']:.4f} new {r['learned_new']:.4f}; unmarked ranks (old, new) "
              f"{r['ranks_old_new_unmarked']}")


if __name__ == "__main__":
    main()
