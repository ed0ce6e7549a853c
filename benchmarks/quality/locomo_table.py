"""Markdown tables from ``hela bench locomo --out`` summaries (how the tables in BENCHMARKS.md are made).

    python benchmarks/quality/locomo_table.py full.json no-spreading.json cosine.json bm25.json
    python benchmarks/quality/locomo_table.py --qa qa_conv26.json
    python benchmarks/quality/locomo_table.py --by-semantic qa_conv26.jsonl   # from a --records file
    python benchmarks/quality/locomo_table.py --paired full.jsonl cosine.jsonl  # two --records files, same questions
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CATS = ["1", "2", "3", "4", "5"]
NAMES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}


def pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def recall_table(summaries: list[dict]) -> str:
    head = ["variant", *[f"{c} {NAMES[c]}" for c in CATS], "overall 1-4", "all 1-5", "flipped share 1-4",
            "tokens"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in summaries:
        cells = [s["variant"]]
        for c in CATS:
            g = s["per_category"].get(c)
            cells.append(f"{pct(g['recall'])} (n={g['count']})" if g else "-")
        cells += [pct(s["overall"]["recall"]), pct(s["overall_all"]["recall"]), pct(s["overall"]["flipped_share"]),
                  f"{s['overall']['context_tokens']:.0f}"]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def qa_table(s: dict) -> str:
    head = ["category", "n", "A-Mem F1", "BLEU-1", "LoCoMo F1", "recall", "tokens"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows = [(f"{c} {NAMES[c]}", s["per_category"].get(c)) for c in CATS]
    rows += [("overall 1-4", s["overall"]), ("all 1-5", s["overall_all"])]
    for label, g in rows:
        if g:
            out.append(f"| {label} | {g['count']} | {pct(g['amem_f1'])} | {pct(g['amem_bleu1'])} | "
                       f"{pct(g['locomo_f1'])} | {pct(g['recall'])} | {g['context_tokens']:.0f} |")
    return "\n".join(out)


def _mean(records: list[dict], key: str) -> float | None:
    vals = [r[key] for r in records if r.get(key) is not None]  # recall is None without gold evidence
    return sum(vals) / len(vals) if vals else None


def semantic_split_table(records: list[dict]) -> str:
    """Answer scores (categories 1-4) of questions answered with and without semantic records in context."""
    head = ["semantic records in context", "n", "A-Mem F1", "BLEU-1", "LoCoMo F1", "recall", "median answer s"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    qa = [r for r in records if r.get("category") in (1, 2, 3, 4) and r.get("prediction") is not None]
    for label, group in (("none", [r for r in qa if not r.get("semantic")]),
                         ("1 or more", [r for r in qa if r.get("semantic")])):
        if not group:
            continue
        gen = sorted(r["generate_ms"] for r in group if r.get("generate_ms") is not None)
        med = f"{gen[len(gen) // 2] / 1000:.1f}" if gen else "-"
        out.append(f"| {label} | {len(group)} | {pct(_mean(group, 'amem_f1'))} | {pct(_mean(group, 'amem_bleu1'))} | "
                   f"{pct(_mean(group, 'locomo_f1'))} | {pct(_mean(group, 'recall'))} | {med} |")
    return "\n".join(out)


def paired_table(a: list[dict], b: list[dict], names: tuple[str, str]) -> str:
    """Answer scores of two runs on the same questions (categories 1-4), per category, with the mean
    per-question LoCoMo F1 difference (first minus second) and its standard error."""
    key = lambda r: (r["sample"], int(r["qa_index"]), int(r.get("pass", 1)))  # noqa: E731
    bi = {key(r): r for r in b if r.get("prediction") is not None}
    pairs = [(r, bi[key(r)]) for r in a if r.get("prediction") is not None and key(r) in bi
             and r.get("category") in (1, 2, 3, 4)]
    x, y = names
    head = ["category", "n", f"{x} LF1", f"{y} LF1", f"{x} F1", f"{y} F1", f"{x} recall", f"{y} recall",
            f"paired dLF1 ({x} - {y}) +- s.e."]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    groups = [(f"{c} {NAMES[c]}", [p for p in pairs if str(p[0]["category"]) == c]) for c in CATS[:4]]
    for label, g in groups + [("overall 1-4", pairs)]:
        if not g:
            continue
        ra, rb = [p[0] for p in g], [p[1] for p in g]
        d = [p[0]["locomo_f1"] - p[1]["locomo_f1"] for p in g]
        m = sum(d) / len(d)
        se = (sum((v - m) ** 2 for v in d) / (len(d) - 1) / len(d)) ** 0.5 if len(d) > 1 else 0.0
        out.append(f"| {label} | {len(g)} | {pct(_mean(ra, 'locomo_f1'))} | {pct(_mean(rb, 'locomo_f1'))} | "
                   f"{pct(_mean(ra, 'amem_f1'))} | {pct(_mean(rb, 'amem_f1'))} | {pct(_mean(ra, 'recall'))} | "
                   f"{pct(_mean(rb, 'recall'))} | {100 * m:+.1f} +- {100 * se:.1f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="summary JSON files written by --out")
    ap.add_argument("--qa", action="store_true", help="answer-quality table (one file)")
    ap.add_argument("--paired", action="store_true",
                    help="FILES are two --records files of the same questions: per-category answer scores and "
                         "the paired LoCoMo F1 difference")
    ap.add_argument("--by-semantic", action="store_true",
                    help="FILES are --records files: scores with / without semantic records in context")
    args = ap.parse_args()
    if args.paired:
        if len(args.files) != 2:
            ap.error("--paired takes exactly two --records files")
        runs = [[json.loads(line) for line in Path(f).read_text().splitlines() if line.strip()] for f in args.files]
        names = tuple((r[0]["run"]["variant"] if r else Path(f).stem) for r, f in zip(runs, args.files))
        print(paired_table(runs[0], runs[1], names))
        return
    if args.by_semantic:
        records = [json.loads(line) for f in args.files for line in Path(f).read_text().splitlines() if line.strip()]
        print(semantic_split_table(records))
        return
    summaries = [json.loads(Path(f).read_text()) for f in args.files]
    print(qa_table(summaries[0]) if args.qa else recall_table(summaries))


if __name__ == "__main__":
    main()
