"""Chat-export importers: parse speed on large synthetic exports, and what one Conversation per session
costs at ingest.

* parse: a ChatGPT ``conversations.json`` (CONVS chats of MSGS messages, each with a regenerated answer
  left off the current branch, a hidden system message and a tool call) and a WhatsApp chat (LINES
  message lines over DAYS days, every 10th message two lines long); median of 3 ``parse_file`` runs.
* ingest A/B: a WhatsApp chat of INGEST_LINES messages over INGEST_DAYS days ingested into fresh
  file databases (A) as parsed, one Conversation per day, and (B) the same turns in one Conversation
  (same sessions, so the same links and embedding texts); the B/A time ratio is the price of the
  per-session Conversations that keep re-imports idempotent. Runs A, B, B, A and reports each.

    python benchmarks/speed/exports.py [--skip-ingest] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path


from hela_cli.config import Config  # noqa: E402
from hela_cli.formats import Conversation, parse_file  # noqa: E402

WORDS = ("garden tomato balcony train ticket Lisbon sister birthday dinner vet cat pills book club bike chain "
         "derailleur sourdough starter yoghurt meeting Tuesday project deadline report coffee").split()


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def chatgpt_export(path: Path, convs: int, msgs: int, rng: random.Random) -> int:
    out, kept = [], 0
    t0 = 1_680_000_000.0
    for c in range(convs):
        cid = f"{c:08x}-0000-4000-8000-{c:012x}"
        mapping = {"root": {"id": "root", "message": None, "parent": None, "children": ["sys"]}}

        def add(nid, parent, role, text, t, **extra):
            msg = {"id": nid, "author": {"role": role}, "create_time": t,
                   "content": {"content_type": extra.pop("ctype", "text"), "parts": [text]},
                   "metadata": extra.pop("metadata", {}), "recipient": extra.pop("recipient", "all")}
            mapping[nid] = {"id": nid, "message": msg, "parent": parent, "children": []}
            mapping[parent]["children"].append(nid)

        t = t0 + c * 86_400
        add("sys", "root", "system", "", None, metadata={"is_visually_hidden_from_conversation": True})
        prev = "sys"
        for m in range(msgs):
            role = "user" if m % 2 == 0 else "assistant"
            if m == 3:  # a regenerated answer, off the current branch
                add(f"old{m}", prev, role, sentence(rng), t + m * 30)
            if m == 5:  # a tool call and its result, skipped
                add(f"call{m}", prev, "assistant", "search()", t + m * 30, ctype="code", recipient="browser")
                add(f"tool{m}", f"call{m}", "tool", sentence(rng), t + m * 30)
                prev = f"tool{m}"
            add(f"m{m}", prev, role, sentence(rng), t + m * 30 + 1)
            prev = f"m{m}"
            kept += 1
        out.append({"id": cid, "title": f"chat {c}", "create_time": t, "mapping": mapping, "current_node": prev})
    path.write_text(json.dumps(out[::-1]), encoding="utf-8")
    return kept


def whatsapp_export(path: Path, lines: int, days: int, rng: random.Random) -> int:
    start = datetime(2023, 1, 1, 8, tzinfo=timezone.utc)
    per_day = max(1, lines // days)
    rows = []
    for i in range(lines):
        when = start + timedelta(days=i // per_day, minutes=5 * (i % per_day))
        who = rng.choice(["Ann Smith", "Bob", "+44 7700 900123"])
        text = sentence(rng) + (f"\n{sentence(rng, 6)}" if i % 10 == 9 else "")
        rows.append(f"[{when:%d/%m/%Y, %H:%M:%S}] {who}: {text}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return lines


def median_parse(path: Path, runs: int = 3) -> tuple[float, list[Conversation]]:
    times, convs = [], []
    for _ in range(runs):
        t = time.perf_counter()
        convs = parse_file(path)
        times.append(time.perf_counter() - t)
    return statistics.median(times), convs


def ingest_seconds(convs: list[Conversation], db: Path, embedder, cfg: Config) -> float:
    from hela_cli.ingest import ingest_conversations
    from hela_cli.store import Store

    for p in db.parent.glob(db.name + "*"):
        p.unlink()
    store = Store(db)
    t = time.perf_counter()
    summary = ingest_conversations(store, embedder, convs, cfg, space="bench")
    secs = time.perf_counter() - t
    store.close()
    assert summary["nodes_added"] == sum(len(c.turns) for c in convs), summary
    return secs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--convs", type=int, default=2000)
    ap.add_argument("--msgs", type=int, default=20)
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--days", type=int, default=1000)
    ap.add_argument("--ingest-lines", type=int, default=400)
    ap.add_argument("--ingest-days", type=int, default=40)
    ap.add_argument("--skip-ingest", action="store_true", help="parse figures only (no model)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rng = random.Random(0)
    report: dict = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        gpt = tmp / "conversations.json"
        kept = chatgpt_export(gpt, args.convs, args.msgs, rng)
        secs, convs = median_parse(gpt)
        assert sum(len(c.turns) for c in convs) == kept
        report["chatgpt_parse"] = {"conversations": args.convs, "turns": kept, "mb": round(gpt.stat().st_size / 1e6, 1),
                                   "median_s": round(secs, 3), "turns_per_s": round(kept / secs)}
        wa = tmp / "_chat.txt"
        n = whatsapp_export(wa, args.lines, args.days, rng)
        secs, convs = median_parse(wa)
        assert sum(len(c.turns) for c in convs) == n
        report["whatsapp_parse"] = {"lines": n, "days": len(convs), "mb": round(wa.stat().st_size / 1e6, 1),
                                    "median_s": round(secs, 3), "turns_per_s": round(n / secs)}
        print(json.dumps(report), flush=True)
        if args.skip_ingest:
            if args.json:
                args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
            return

        from hela_cli.memory import Memory

        cfg = Config()
        small = tmp / "small.txt"
        whatsapp_export(small, args.ingest_lines, args.ingest_days, rng)
        per_day = parse_file(small)
        one = [Conversation(None, [t for c in per_day for t in c.turns], str(small), [])]
        with Memory(cfg) as mem:
            embedder = mem.embedder
            runs = []
            for label, convs in (("A", per_day), ("B", one), ("B", one), ("A", per_day)):
                runs.append((label, round(ingest_seconds(convs, tmp / "ab.db", embedder, cfg), 2)))
        a = [s for lab, s in runs if lab == "A"]
        b = [s for lab, s in runs if lab == "B"]
        report["ingest_ab"] = {"turns": args.ingest_lines, "sessions": len(per_day), "runs_s": runs,
                               "per_day_median_s": round(statistics.median(a), 2),
                               "one_conversation_median_s": round(statistics.median(b), 2),
                               "ratio_per_day_over_one": round(statistics.median(a) / statistics.median(b), 3)}
    print(json.dumps(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
