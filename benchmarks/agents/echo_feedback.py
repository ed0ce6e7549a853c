"""Echo as feedback (issue 32): how often :func:`hela_cli.mechanics.feedback.echoed_memories` names the memories
an answer used, on LoCoMo questions whose gold evidence says which retrieved memories those are.

    hela bench locomo locomo_dev.json --retrieval-only --records rec.jsonl      # what each question retrieved
    python benchmarks/agents/echo_feedback.py locomo_dev.json rec.jsonl [--min-terms 1,2,3]

For every question of categories 1-4 in the records, the memories it retrieved (the injected set) are the
candidates, the question is the prompt, and a retrieved memory is *used* when it is gold evidence. The
assistant's final message is

* ``gold``: the gold answer. A **simulation** of an assistant that answers right and tersely (LoCoMo answers
  are a few words: "7 May 2023", "Adoption agencies"), the hardest case for echo;
* ``prediction``: the reader's own answer, when the records come from a QA run (``hela bench locomo`` without
  ``--retrieval-only``): not a simulation, but the default 135M reader answers badly.

Prints, per message kind and ``min_terms``, micro precision and recall of the echoed memories against the
used ones, and the precision of reporting every injected memory as used (the base rate). Reads the data file
by path; writes nothing.
"""

from __future__ import annotations

import argparse
import json

from hela_cli.mechanics.feedback import echoed_memories


def _turns(path: str) -> dict[tuple[str, str], str]:
    out = {}
    for sample in json.load(open(path, encoding="utf-8")):
        conv = sample["conversation"]
        for key, turns in conv.items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    text = t.get("text", "")
                    if t.get("blip_caption"):
                        text += f" [shares an image: {t['blip_caption']}]"
                    out[(sample["sample_id"], t["dia_id"])] = text
    return out


def _evidence(ev: list) -> set[str]:
    return {e.strip() for x in ev for e in str(x).replace(";", ",").split(",") if e.strip()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("records")
    ap.add_argument("--min-terms", default="1,2,3")
    args = ap.parse_args()
    texts = _turns(args.data)
    rows = [json.loads(line) for line in open(args.records, encoding="utf-8") if line.strip()]
    rows = [r for r in rows if "sample" in r and r.get("category") in (1, 2, 3, 4)]
    kinds = ["gold"] + (["prediction"] if any(r.get("prediction") for r in rows) else [])
    print(f"{args.records}: {len(rows)} questions (categories 1-4)")
    for kind in kinds:
        for n in [int(x) for x in args.min_terms.split(",")]:
            tp = fp = fn = injected = used_total = 0
            for r in rows:
                message = str(r.get("gold") if kind == "gold" else r.get("prediction") or "")
                mems = [{"id": i, "text": texts.get((r["sample"], m["source_id"]), "")}
                        for i, m in enumerate(r["retrieved"])]
                evidence = _evidence(r.get("evidence") or [])
                used = {i for i, m in enumerate(r["retrieved"]) if m["source_id"] in evidence}
                echoed = set(echoed_memories(mems, message, prompt=r["question"], min_terms=n))
                tp += len(echoed & used)
                fp += len(echoed - used)
                fn += len(used - echoed)
                injected += len(mems)
                used_total += len(used)
            p = tp / (tp + fp) if tp + fp else float("nan")
            rc = tp / (tp + fn) if tp + fn else float("nan")
            print(f"  {kind:10s} min_terms={n}: precision {100 * p:.1f} % ({tp}/{tp + fp}), recall {100 * rc:.1f} % "
                  f"({tp}/{tp + fn}); every injected memory as used: precision {100 * used_total / injected:.1f} %")


if __name__ == "__main__":
    main()
