"""Facts that change, read from the records of ``hela bench locomo`` / ``hela bench longmemeval`` (issues 44, 45).

    python benchmarks/quality/recall_budget.py --locomo RECORDS.jsonl
    python benchmarks/quality/recall_budget.py --lme RECORDS.jsonl --data longmemeval_s_dev30.json

``--locomo``: how many recalls returned more memories than Eq.5's budget (k + m, from the records' run), and
the evidence recall of the records as they are and with every recall cut to the budget (what the same
ranking scores once successors take places within the budget instead of past it).

``--lme``: for the knowledge-update items, the rank of the newest answer session's evidence turn and of the
older one's (sessions ordered by date, evidence = ``has_answer`` turns, as ``benchmarks/quality/changed_facts.py``
reads them): is the new value recalled, ranked above the old one, or only the old one recalled?
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any


def _records(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def _evidence(rec: dict[str, Any]) -> set[str]:
    return {e.strip() for ev in rec.get("evidence") or [] for e in re.split(r"[;,]", ev) if e.strip()}


def _recall(evidence: set[str], retrieved: list[str]) -> float | None:
    return len(evidence & set(retrieved)) / len(evidence) if evidence else None


def locomo(path: str) -> dict[str, Any]:
    recs = _records(path)
    budget = recs[0]["run"]["k"] + recs[0]["run"]["m"]
    over = [r for r in recs if len(r["retrieved"]) > budget]
    rows = []
    for r in recs:
        ids = [m["source_id"] for m in r["retrieved"]]
        ev = _evidence(r)
        rows.append((r.get("category"), _recall(ev, ids), _recall(ev, ids[:budget]), r.get("recall")))
    scored = [x for x in rows if x[1] is not None]

    def mean(vals: list[float]) -> float:
        return round(100.0 * sum(vals) / len(vals), 2) if vals else 0.0

    return {"records": len(recs), "budget": budget, "over_budget": len(over),
            "largest": max((len(r["retrieved"]) for r in recs), default=0),
            "recall_as_recorded": mean([x[1] for x in scored]),
            "recall_cut_to_budget": mean([x[2] for x in scored]),
            "recall_1_4_as_recorded": mean([x[1] for x in scored if x[0] != 5]),
            "recall_1_4_cut_to_budget": mean([x[2] for x in scored if x[0] != 5]),
            "matches_the_records_recall": all(abs(x[1] - x[3]) < 1e-9 for x in scored if x[3] is not None)}


def lme(path: str, data: str) -> dict[str, Any]:
    from hela_cli.text.dates import parse_date

    raw = {it["question_id"]: it for it in json.loads(Path(data).read_text(encoding="utf-8"))}
    out: dict[str, Any] = {"items": 0, "new_recalled": 0, "new_above_old": 0, "old_only": 0, "per_item": {}}
    for rec in _records(path):
        it = raw[rec["sample"]]
        if it["question_type"] != "knowledge-update":
            continue
        sess = {sid: (d, [f"{sid}:{ti}" for ti, t in enumerate(s) if t.get("has_answer")])
                for sid, s, d in zip(it["haystack_session_ids"], it["haystack_sessions"], it["haystack_dates"])
                if sid in it["answer_session_ids"]}
        ordered = [v[1] for _, v in sorted(sess.items(), key=lambda kv: parse_date(kv[1][0]))]
        if len(ordered) != 2:
            out["per_item"][rec["sample"]] = f"{len(ordered)} answer sessions: not scored"
            continue
        ranks = {m["source_id"]: i for i, m in enumerate(rec["retrieved"])}
        old_t, new_t = ordered
        ro = min((ranks[t] for t in old_t if t in ranks), default=None)
        rn = min((ranks[t] for t in new_t if t in ranks), default=None)
        out["items"] += 1
        out["new_recalled"] += rn is not None
        out["new_above_old"] += rn is not None and (ro is None or rn < ro)
        out["old_only"] += ro is not None and rn is None
        out["per_item"][rec["sample"]] = {"old_rank": ro, "new_rank": rn, "old_turns": old_t, "new_turns": new_t}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locomo", help="records of hela bench locomo")
    ap.add_argument("--lme", help="records of hela bench longmemeval")
    ap.add_argument("--data", help="the LongMemEval file the records are of (with --lme)")
    a = ap.parse_args()
    if a.locomo:
        print(json.dumps({"locomo": locomo(a.locomo)}, indent=1))
    if a.lme:
        if not a.data:
            ap.error("--lme needs --data")
        print(json.dumps({"lme": lme(a.lme, a.data)}, indent=1))


if __name__ == "__main__":
    main()
