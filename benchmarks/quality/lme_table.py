"""Markdown tables from ``hela bench longmemeval --out`` summaries (how the LongMemEval-S tables in
BENCHMARKS.md are made). Several summaries give one row per (summary, variant).

    python benchmarks/quality/lme_table.py default.json paper.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

TYPES = ["single-session-user", "single-session-assistant", "single-session-preference", "multi-session",
         "knowledge-update", "temporal-reasoning"]
SHORT = {"single-session-user": "ss-user", "single-session-assistant": "ss-assistant",
         "single-session-preference": "ss-preference", "multi-session": "multi-session",
         "knowledge-update": "knowledge-update", "temporal-reasoning": "temporal"}


def pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def recall_table(summaries: list[tuple[str, dict]], key: str) -> str:
    """One row per variant: ``key`` (a recall metric) per question type and overall."""
    head = ["config", "variant", "budget", *[SHORT[t] for t in TYPES], "overall", "n scored", "tokens"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, s in summaries:
        for v in s["variants"].values():
            cells = [label, v["variant"], str(v["budget"])]
            for t in TYPES:
                g = v["per_type"].get(t)
                cells.append(f"{pct(g[key])} ({g[key + '_n']})" if g and g[key + "_n"] else "-")
            o = v["overall"]
            cells += [f"**{pct(o[key])}**", str(o[key + "_n"]), f"{o['context_tokens']:.0f}"]
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("summaries", nargs="+", type=Path, help="--out files of hela bench longmemeval")
    args = ap.parse_args()
    summaries = [(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in args.summaries]
    for key, title in (("session_recall_any", "session recall_any"), ("session_recall_all", "session recall_all"),
                       ("turn_recall", "turn recall")):
        print(f"{title} (%; in parentheses: items scored)\n")
        print(recall_table(summaries, key))
        print()
    for label, s in summaries:
        ing = s["ingest"]
        print(f"{label}: items {len(s['items'])}, ingested {ing['ingested']} ({ing['turns']} turns, "
              f"{ing['seconds']} s, {ing['turns_per_s']} turns/s, {ing['tokens_per_s']} tokens/s), "
              f"cached {ing['cached']}")


if __name__ == "__main__":
    main()
