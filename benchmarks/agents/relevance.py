"""Silence and usefulness of the prompt hook (issue 52; not a test): does ``hela hook UserPromptSubmit`` stay
silent on prompts that have nothing to do with the project, and inject the gold evidence of the project's own
questions?

    python benchmarks/agents/relevance.py --dir /tmp/rel --half test --json relevance-test.json
    python benchmarks/agents/relevance.py --dir /tmp/rel --half dev          # the half rules are tuned on

1. The project: the nine real BookMinder Claude Code sessions (``coding_memory/data/bookminder``) captured
   through hela's own ``SessionEnd`` hook, in this process (``hooks_replay.py``). With ``--dir`` the captured
   database is kept as ``DIR/captured.db`` and reused by later runs (its capture takes 2-3 minutes); every run
   works on a fresh copy of it, so the learning of one run never reaches the next.
2. The prompts, each in a NEW agent session (nothing is left out as already shown), sent as Claude Code sends
   them: ``relevance/unrelated.json`` (180 prompts in five kinds: far from software, coding on other stacks,
   generic shell and git, small talk, chores; each kind's even positions dev, odd test, fixed when written and
   before any rule changed), then the coding-memory questions (``coding_memory/questions.json``; the same
   position rule per kind: even dev, odd test).
3. Per kind: the share of prompts with any injection, the memory lines and tokens injected (characters / 4, as
   the hooks count); for the project's questions the share whose gold evidence is injected and the tokens per
   useful injection (all tokens injected into the project's questions / questions whose gold was injected).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
from hooks_replay import CWD, DATA, environment, hook, hook_env, session_files  # noqa: E402 (the line above)

UNRELATED = HERE / "relevance" / "unrelated.json"
QUESTIONS = HERE / "coding_memory" / "questions.json"
_MEMORY_ID = re.compile(r"^- \[#(\d+)\b", re.M)


def halves(items: list[dict[str, Any]], key: str) -> None:
    """Give each item without a ``half`` one by its position within its ``key`` (even dev, odd test)."""
    seen: dict[str, int] = {}
    for it in items:
        i = seen.get(it[key], 0)
        seen[it[key]] = i + 1
        it.setdefault("half", "dev" if i % 2 == 0 else "test")


def captured(work: Path) -> Path:
    """``work/captured.db``: the BookMinder sessions captured by hela's hooks (made once)."""
    db = work / "captured.db"
    if db.exists():
        return db
    from coding_memory import replay

    tmp = work / "capture"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with environment(hook_env(tmp)):
        rep = replay(session_files(DATA))
    print(f"captured: {rep}", file=sys.stderr)
    shutil.copyfile(tmp / "hela.db", db)
    shutil.rmtree(tmp, ignore_errors=True)
    return db


def source_ids(db: Path, ids: list[int]) -> set[str]:
    from hela_cli.store import Store

    if not ids:
        return set()
    with Store.open(str(db), must_exist=True) as store:
        nodes = store.get_nodes(ids)
    return {n["source_id"] for n in nodes.values() if n.get("source_id")}


def run(work: Path, half: str, extra_env: dict[str, str] | None = None) -> dict[str, Any]:
    from hela_cli.hooks.context import approx_tokens

    base = captured(work)
    run_dir = work / f"run-{half}"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    shutil.copyfile(base, run_dir / "hela.db")
    prompts = json.loads(UNRELATED.read_text(encoding="utf-8"))["prompts"]
    qs = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    halves(qs, "kind")
    items = [{**p, "project": False} for p in prompts] + \
        [{"id": q["id"], "kind": "project:" + q["kind"], "half": q["half"], "prompt": q["prompt"],
          "evidence": q["evidence"], "project": True} for q in qs]
    items = [it for it in items if half in ("all", it["half"])]
    rows = []
    with environment(hook_env(run_dir, **(extra_env or {}))):
        for it in items:
            t0 = time.process_time()
            ctx, log = hook("UserPromptSubmit", {"session_id": f"rel-{it['id']}", "cwd": CWD,
                                                 "prompt": it["prompt"], "hook_event_name": "UserPromptSubmit"})
            cpu = time.process_time() - t0
            ids = [int(x) for x in _MEMORY_ID.findall(ctx)]
            row = {"id": it["id"], "kind": it["kind"], "half": it["half"], "injected": bool(ctx),
                   "lines": len(ids), "tokens": approx_tokens(ctx) if ctx else 0, "cpu_ms": round(cpu * 1000, 1),
                   "result": log.get("result"), "detail": log.get("detail")}
            if it["project"]:
                got = source_ids(run_dir / "hela.db", ids)
                row["gold"] = bool(got & set(it["evidence"]))
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    return {"half": half, "items": len(rows), "summary": summarize(rows), "rows": rows}


def summarize(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    kinds = sorted({r["kind"] for r in rows}, key=lambda k: (k.startswith("project"), k))
    groups = [(k, [r for r in rows if r["kind"] == k]) for k in kinds]
    groups.append(("unrelated (all)", [r for r in rows if not r["kind"].startswith("project")]))
    groups.append(("project (all)", [r for r in rows if r["kind"].startswith("project")]))
    for name, rs in groups:
        if not rs:
            continue
        inj = [r for r in rs if r["injected"]]
        s = {"n": len(rs), "injected": round(len(inj) / len(rs), 3), "lines": sum(r["lines"] for r in rs),
             "tokens": sum(r["tokens"] for r in rs), "cpu_ms_mean": round(sum(r["cpu_ms"] for r in rs) / len(rs), 1)}
        if name.startswith("project"):
            gold = sum(1 for r in rs if r.get("gold"))
            s["gold_injected"] = round(gold / len(rs), 3)
            s["gold_n"] = gold
            s["tokens_per_useful"] = round(s["tokens"] / gold, 1) if gold else None
        out[name] = s
    return out


def table(summary: dict[str, dict[str, Any]]) -> str:
    lines = ["| kind | prompts | any injection | lines | tokens | gold injected | tokens per useful |",
             "|---|---|---|---|---|---|---|"]
    for k, s in summary.items():
        gold = f"{s['gold_n']} ({100 * s['gold_injected']:.1f} %)" if "gold_injected" in s else ""
        useful = s.get("tokens_per_useful")
        lines.append(f"| {k} | {s['n']} | {100 * s['injected']:.1f} % | {s['lines']} | {s['tokens']} | {gold} | "
                     f"{useful if useful is not None else ''} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=("dev", "test", "all"), default="dev")
    ap.add_argument("--dir", type=Path, default=None, help="keep the captured database here for later runs")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a HELA_* setting for the hooks of this run, e.g. HELA_HOOKS_PROMPT_MIN_SCORE=0.5")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    extra = dict(s.split("=", 1) for s in args.set)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.dir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        res = run(work, args.half, extra)
    print(table(res["summary"]))
    print(json.dumps(res["summary"]))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
