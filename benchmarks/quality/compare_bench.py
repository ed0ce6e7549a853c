"""Diff two ``hela bench locomo`` runs: the summary figures and, per question, the retrieved memories.

    python benchmarks/quality/compare_bench.py BEFORE.json AFTER.json [--records BEFORE.jsonl AFTER.jsonl]

Compares every number of the summaries' ``per_category``, ``overall``, ``overall_all``, ``by_overlap`` and
``per_sample`` exactly (as written to the JSON, every decimal), and with ``--records`` each question's
retrieved ``(source_id, path, score, base_score)`` list in order, plus its recall figures. Timings
(``timing``, the ``*_s`` seconds), model paths and notes are left out (they differ between any two runs). Prints the differences (at most
20 of each kind) and exits 1 when there is any, 0 when the two runs retrieved the same.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Iterator

FIGURES = ("questions", "per_category", "overall", "overall_all", "by_overlap", "per_sample")
RECORD_FIELDS = ("recall", "recall_base", "context_tokens", "semantic")


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k in sorted(value):
            yield from _leaves(value[k], f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _figures(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary's figures by path, without the timings (``*_s``: seconds differ between any two runs)."""
    return {k: v for k, v in _leaves({k: summary.get(k) for k in FIGURES}) if not k.endswith("_s")}


def summary_diffs(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    a, b = _figures(before), _figures(after)
    return [f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _records(path: str) -> dict[tuple[str, int], dict[str, Any]]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                out[(r["sample"], r["qa_index"])] = r
    return out


def record_diffs(before_path: str, after_path: str) -> tuple[int, list[str]]:
    a, b = _records(before_path), _records(after_path)
    diffs = [f"{key}: only in {'before' if key in a else 'after'}" for key in sorted(set(a) ^ set(b))]
    for key in sorted(set(a) & set(b)):
        ra, rb = a[key], b[key]
        ret_a = [(m["source_id"], m["path"], m["score"], m["base_score"]) for m in ra["retrieved"]]
        ret_b = [(m["source_id"], m["path"], m["score"], m["base_score"]) for m in rb["retrieved"]]
        if ret_a != ret_b:
            first = next(i for i, (x, y) in enumerate(zip(ret_a + [None] * 99, ret_b + [None] * 99)) if x != y)
            diffs.append(f"{key}: retrieved differs at rank {first}: "
                         f"{ret_a[first] if first < len(ret_a) else None} -> {ret_b[first] if first < len(ret_b) else None}")
        for f in RECORD_FIELDS:
            if ra.get(f) != rb.get(f):
                diffs.append(f"{key}: {f} {ra.get(f)!r} -> {rb.get(f)!r}")
    return len(set(a) & set(b)), diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--records", nargs=2, metavar=("BEFORE_JSONL", "AFTER_JSONL"))
    args = ap.parse_args(argv)
    with open(args.before, encoding="utf-8") as fa, open(args.after, encoding="utf-8") as fb:
        before, after = json.load(fa), json.load(fb)
    diffs = summary_diffs(before, after)
    n_figures = len(_figures(before))
    print(f"summary: {n_figures} figures compared, {len(diffs)} differ")
    for d in diffs[:20]:
        print("  " + d)
    bad = bool(diffs)
    if args.records:
        n, rdiffs = record_diffs(*args.records)
        print(f"records: {n} questions compared (retrieved ids, paths, scores, recall), {len(rdiffs)} differ")
        for d in rdiffs[:20]:
            print("  " + d)
        bad = bad or bool(rdiffs)
    print("identical" if not bad else "DIFFERENT")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
