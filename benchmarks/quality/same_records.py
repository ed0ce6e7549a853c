"""Are two benchmark runs the same, timings aside? (a check for refactors, not a test)

    python benchmarks/quality/same_records.py BEFORE.records.jsonl AFTER.records.jsonl [BEFORE.json AFTER.json]

The records files are what ``hela bench locomo|longmemeval --records`` wrote. Per question (sample,
question index, variant, pass): the retrieved memories (source id, path, score, base score, in order), the
prediction, the scores and every other field must be equal; fields that measure time (``*_ms``) are left
out. With the two summaries (``--out``), their figures (per category / question type, overall) must be
equal too, ``timing`` and the run's timings aside. Prints what differs; exit status 1 if anything does.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _key(rec: dict[str, Any]) -> tuple[Any, ...]:
    return rec["sample"], int(rec["qa_index"]), rec.get("variant"), int(rec.get("pass", 1))


def _records(path: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return {_key(r): {k: v for k, v in r.items() if not k.endswith("_ms")} for r in rows}


def _untimed(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _untimed(v) for k, v in obj.items() if k not in ("timing", "seconds") and not k.endswith("_ms")
                and not k.endswith("_s") and not k.endswith("_median") and k not in ("turns_per_s", "tokens_per_s")}
    if isinstance(obj, list):
        return [_untimed(v) for v in obj]
    return obj


def main() -> int:
    if len(sys.argv) not in (3, 5):
        print(__doc__)
        return 2
    a, b = _records(sys.argv[1]), _records(sys.argv[2])
    diffs = [f"only in {sys.argv[1]}: {k}" for k in a.keys() - b.keys()]
    diffs += [f"only in {sys.argv[2]}: {k}" for k in b.keys() - a.keys()]
    for k in sorted(a.keys() & b.keys(), key=str):
        for field in sorted(a[k].keys() | b[k].keys()):
            if a[k].get(field) != b[k].get(field):
                diffs.append(f"{k} {field}: {a[k].get(field)!r} != {b[k].get(field)!r}")
    if len(sys.argv) == 5:
        with open(sys.argv[3], encoding="utf-8") as f1, open(sys.argv[4], encoding="utf-8") as f2:
            s1, s2 = _untimed(json.load(f1)), _untimed(json.load(f2))
        for field in sorted(s1.keys() | s2.keys()):
            if s1.get(field) != s2.get(field):
                diffs.append(f"summary {field} differs")
    for d in diffs[:50]:
        print(d)
    print(f"{len(a)} and {len(b)} records: " + ("identical (timings aside)" if not diffs else f"{len(diffs)} differences"))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
