"""Semantic records in the answer context, with and without (a controlled ablation on LoCoMo).

Replays `hela bench locomo --variant full` for each conversation (questions in dataset order, learning,
automatic consolidation after each ask, forgetting every 50 questions), and for every question of
categories 1-4 whose retrieval brought semantic records answers twice from the *same* retrieval: once with
the records in prompt A.2 (the default) and once without them. Only the prompt differs.

    python benchmarks/ablations/semantic_ablation.py ../shared/data/locomo_dev.json --samples conv-26 --records sem.jsonl
    python benchmarks/ablations/semantic_ablation.py --table sem.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path


from hela_cli.config import load_config  # noqa: E402
from hela_cli.bench.metrics import amem_f1, gold_answer, locomo_f1  # noqa: E402
from hela_cli.answering.prompts import answer_messages  # noqa: E402
from hela_cli.answering.answer import answer  # noqa: E402

NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def run(args: argparse.Namespace) -> None:
    from hela_cli.formats import parse_file
    from hela_cli.mechanics.forget import forget
    from hela_cli.ingest import ingest_conversations
    from hela_cli.memory import Memory
    from hela_cli.mechanics.retrieval import learn_from_memories
    from hela_cli.store import Store

    cfg = load_config(None)
    convs = [c for c in parse_file(args.file, "locomo") if not args.samples or c.name in args.samples.split(",")]
    out = open(args.records, "a")
    embedder = chat = None
    for conv in convs:
        with tempfile.TemporaryDirectory(prefix="hela-sem-") as tmp:
            store = Store(Path(tmp) / "s.db")
            mem = Memory(cfg, store=store, embedder=embedder, chat=chat)
            embedder, chat = mem.embedder, mem.chat
            ingest_conversations(store, embedder, [conv], cfg, space=conv.name)
            for i, qa in enumerate(conv.qa):
                q = str(qa["question"])
                res = mem.retrieve(q, conv.name, learn=False)
                cat = qa.get("category")
                if cat in NAMES and res.semantic:
                    rec = {"sample": conv.name, "qa_index": i, "category": cat, "question": q,
                           "gold": gold_answer(qa), "records": [s["text"] for s in res.semantic]}
                    for name, sem in (("with", res.semantic), ("without", [])):
                        t = time.perf_counter()
                        pred = answer(chat, answer_messages(q, res.memories, sem), res.memories, cfg.answer)
                        rec[name] = {"prediction": pred, "locomo_f1": locomo_f1(pred, rec["gold"], cat),
                                     "amem_f1": amem_f1(pred, rec["gold"]), "s": round(time.perf_counter() - t, 2)}
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                    print(conv.name, i, cat, rec["with"]["locomo_f1"], rec["without"]["locomo_f1"], flush=True)
                if res.memories:   # as `hela bench`: learn, then a due auto-consolidation, forgetting every 50
                    learn_from_memories(store, store.require_space(conv.name), res.memories, cfg, when=time.time())
                    mem.consolidate_if_due(conv.name)
                if (i + 1) % 50 == 0:
                    forget(store, store.require_space(conv.name), cfg, apply=True)
            store.close()
    out.close()


def table(path: str) -> None:
    recs = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    print("| category | n | LoCoMo F1 with records | without | paired d (with - without) +- s.e. |")
    print("|---|---|---|---|---|")
    for label, g in [(f"{c} {n}", [r for r in recs if r["category"] == c]) for c, n in NAMES.items()] + \
            [("overall 1-4", recs)]:
        if not g:
            continue
        d = [r["with"]["locomo_f1"] - r["without"]["locomo_f1"] for r in g]
        m = sum(d) / len(d)
        se = math.sqrt(sum((x - m) ** 2 for x in d) / (len(d) - 1) / len(d)) if len(d) > 1 else 0.0
        w = sum(r["with"]["locomo_f1"] for r in g) / len(g)
        wo = sum(r["without"]["locomo_f1"] for r in g) / len(g)
        print(f"| {label} | {len(g)} | {100 * w:.1f} | {100 * wo:.1f} | {100 * m:+.1f} +- {100 * se:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?")
    ap.add_argument("--samples")
    ap.add_argument("--records", required=False)
    ap.add_argument("--table")
    args = ap.parse_args()
    if args.table:
        table(args.table)
    elif args.file and args.records:
        run(args)
    else:
        ap.error("give FILE --records R, or --table R")


if __name__ == "__main__":
    main()
