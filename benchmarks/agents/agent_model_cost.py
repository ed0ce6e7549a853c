"""What the agent route costs (issue 46): the real BookMinder Claude Code sessions replayed through hela's hooks
with ``models.chat: agent:claude-code``, the real ``claude`` binary (``make agents``) answering through a fake
Messages API that counts tokens. Not a test; figures in BENCHMARKS.md.

    python benchmarks/agents/agent_model_cost.py --json agent-cost.json            # both routes, ~15 min on 2 busy cores
    python benchmarks/agents/agent_model_cost.py --sessions 2 --routes agent:claude-code   # a slice

Replay, per session of ``benchmarks/agents/coding_memory/data/bookminder/`` (oldest first; a day of use = the
sessions of one calendar date, each day with a fresh hela home, so the agent's daily ledger starts at zero as
it does on a new day): ``SessionStart``; then per user prompt of the transcript ``UserPromptSubmit`` with that
prompt (the transcript written up to it), the transcript written up to the next prompt and ``Stop`` (a
capture, as Claude Code fires it after each answer); at the end ``SessionEnd``. Hooks run in this process
(``hela_cli.hooks.process.main``, capture inline); a detached child that a capture starts for the model work is
waited for before the next prompt (so its CPU never overlaps a prompt hook's timing).

The fake API counts each request's tokens with a real BPE tokenizer (SmolLM2's, from the default chat model's
GGUF: Claude's own tokenizer is not public, so the counts are an estimate of the same order) over everything
the request carries (system prompt, messages, tools), and its answers are SCRIPTED (simulated: a fact per
hub from the hub's own line, ``unsure`` with one sentence of reasoning per change pair, a two-line summary
per session), so the output token
counts stand for a terse model; ``max_output`` is the bound (calls x the batch's ``max_tokens``).

``--routes smollm2,agent:claude-code`` (the default) replays twice, on two databases: the default GGUF (no
model work from the hooks) and the agent route, and reports the prompt hook's time (``ms`` of the hook log,
and the CPU of its recall part, ``cpu_ms.recall``) of both: the agent route adds nothing on the agent's path.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))
from hooks_replay import CWD, environment, hook, hook_env, session_files  # noqa: E402 (the lines above)


def _strings(o: Any) -> list[str]:
    if isinstance(o, str):
        return [o]
    if isinstance(o, dict):
        return [s for v in o.values() for s in _strings(v)]
    if isinstance(o, list):
        return [s for v in o for s in _strings(v)]
    return []


def counting_api(counter: Any) -> Any:
    """The fake Messages API (hela_cli.testing.agents) answering with :func:`scripted_answer` and reporting
    counted ``usage``: input tokens = the BPE count of every string the request carries, output tokens =
    the count of the scripted answer. Returns the server (a context manager) and the per-call stats."""
    from hela_cli.testing.agents import fake_messages_api

    stats: list[dict[str, Any]] = []
    lock = threading.Lock()

    def usage(body: dict[str, Any], answer: Any) -> tuple[int, int]:
        text = "\n".join(_strings(body))
        tin, tout = counter.count_tokens(text), counter.count_tokens(str(answer))
        with lock:
            stats.append({"input": tin, "output": tout, "clusters": text.count("Cluster hub="),
                          "pairs": len(re.findall(r"^Pair \d+>\d+:", text, re.M)), "bytes": len(text)})
        return tin, tout

    return fake_messages_api(lambda body: scripted_answer("\n".join(_strings(body))), usage=usage), stats


def scripted_answer(text: str) -> str:
    """A terse model's answer to the batch prompt (simulated, see the module docstring)."""
    clusters = []
    for hub in dict.fromkeys(int(h) for h in re.findall(r"Cluster hub=(\d+):", text)):
        line = re.search(rf"^\[{hub}\] \([^)]*\) [^:]+: (.+)$", text, re.M)
        words = (line.group(1) if line else "").split()[:14]
        clusters.append({"hub": hub, "reasoning": "The memories record a decision about the project's setup.",
                         "facts": [{"subject": "BookMinder", "text": " ".join(words), "date": "", "evidence": [hub]}],
                         "traits": [], "knowledge": []})
    changes = [{"pair": f"{a}>{b}", "reasoning": "The memories do not say whether the later one replaces it.",
                "verdict": "unsure", "evidence": [int(a), int(b)]}
               for a, b in dict.fromkeys(re.findall(r"^Pair (\d+)>(\d+):", text, re.M))]
    sessions = []
    for name, notes in re.findall(r"^Session (\S+):\n((?:.+\n?)+)", text, re.M):
        ids = [int(i) for i in re.findall(r"\[#(\d+)\]", notes)][:3]
        sessions.append({"session": name, "summary": "Asked to work on the project as the first note says.\n"
                         "Changed the files the notes list; the failing commands were fixed where they passed.",
                         "evidence": ids})
    return json.dumps({"clusters": clusters, "changes": changes, "sessions": sessions})


def wait_child(pid: int, timeout: float = 600) -> dict[str, Any] | None:
    from hela_cli.hooks.log import entries

    end = time.time() + timeout
    while time.time() < end:
        for row in entries():
            if row.get("detached") and row.get("pid") == pid:
                return row
        time.sleep(0.3)
    return None


def prompts_of(records: list[dict[str, Any]]) -> list[int]:
    """Indices of the user's typed prompts (not tool results)."""
    return [i for i, r in enumerate(records) if r.get("type") == "user" and isinstance(r["message"].get("content"), str)]


def replay(route: str, files: list[Path], work: Path, api: Any, stats: list[dict[str, Any]], budget: str
           ) -> dict[str, Any]:
    from hela_cli.models.agent import Ledger
    from hela_cli.testing.agents import claude_env

    base = work / route.replace(":", "_")
    base.mkdir()
    env = claude_env(base / "claude-home", api)
    env.update(hook_env(base, HELA_MODELS_CHAT=route, HELA_MODELS_AGENT_BUDGET=budget,
                        HELA_HOOKS_DETACHED_BUDGET_S="600", PYTHONPATH=str(REPO),
                        PATH=f"{REPO / '.agents' / 'node_modules' / '.bin'}{os.pathsep}{os.environ.get('PATH', '')}"))
    sessions, prompt_ms, prompt_cpu = [], [], []
    with environment(env):
        for path in files:
            records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            day = records[0]["timestamp"][:10]
            os.environ["HELA_HOME"] = str(base / "home" / day)   # a fresh ledger each day of use
            sid = path.stem
            live = base / "transcripts" / path.name
            live.parent.mkdir(parents=True, exist_ok=True)
            n0 = len(stats)
            children: list[dict[str, Any]] = []
            hook("SessionStart", {"session_id": sid, "cwd": CWD, "source": "startup"})
            marks = prompts_of(records) + [len(records)]
            for i, j in zip(marks, marks[1:]):
                live.write_text("".join(json.dumps(r) + "\n" for r in records[:i]), encoding="utf-8")
                _, row = hook("UserPromptSubmit", {"session_id": sid, "cwd": CWD, "transcript_path": str(live),
                                                   "prompt": records[i]["message"]["content"]})
                prompt_ms.append(row.get("ms", 0.0))
                prompt_cpu.append(((row.get("cpu_ms") or {}).get("recall", 0.0)))
                live.write_text("".join(json.dumps(r) + "\n" for r in records[:j]), encoding="utf-8")
                _, row = hook("Stop", {"session_id": sid, "cwd": CWD, "transcript_path": str(live)})
                if row.get("result") not in ("ok", "empty"):
                    raise RuntimeError(f"capture of {path.name}: {row.get('result')} {row.get('detail', '')}")
                if row.get("model_child"):
                    child = wait_child(row["model_child"])
                    children.append((child or {}).get("model") or {"error": "no log line"})
            _, row = hook("SessionEnd", {"session_id": sid, "cwd": CWD, "transcript_path": str(live)})
            if row.get("model_child"):
                child = wait_child(row["model_child"])
                children.append((child or {}).get("model") or {"error": "no log line"})
            mine = stats[n0:]
            ledger = Ledger(Path(os.environ["HELA_HOME"]) / "agent").spent("claude-code")
            sessions.append({"session": sid, "day": day, "prompts": len(marks) - 1, "records": len(records),
                             "calls": len(mine), "input_tokens": sum(s["input"] for s in mine),
                             "output_tokens": sum(s["output"] for s in mine),
                             "clusters": sum(s["clusters"] for s in mine), "pairs": sum(s["pairs"] for s in mine),
                             "children": len(children), "errors": [c["error"] for c in children if c.get("error")],
                             "ledger_day_after": ledger})
    return {"route": route, "sessions": sessions, "prompt_ms": prompt_ms, "prompt_cpu_ms": prompt_cpu}


def quantile(v: list[float], q: float) -> float:
    v = sorted(v)
    if not v:
        return 0.0
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return round(v[lo] + (v[hi] - v[lo]) * (pos - lo), 1)


def summarize(run: dict[str, Any]) -> dict[str, Any]:
    from hela_cli.mechanics.judge import MAX_TOKENS

    days: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for s in run["sessions"]:
        d = days[s["day"]]
        for k in ("sessions", "prompts", "calls", "input_tokens", "output_tokens"):
            d[k] += 1 if k == "sessions" else s[k]
        d["stopped"] = max(d["stopped"], s["ledger_day_after"]["stopped"])
    per_day = {k: dict(v) for k, v in sorted(days.items())}
    calls = [s["calls"] for s in run["sessions"]]
    toks = [s["input_tokens"] + s["output_tokens"] for s in run["sessions"]]
    day_toks = [d["input_tokens"] + d["output_tokens"] for d in per_day.values()]
    return {"route": run["route"], "sessions": len(run["sessions"]), "prompts": len(run["prompt_ms"]),
            "calls": sum(calls), "tokens": sum(toks),
            "per_session": {"calls_mean": round(sum(calls) / max(len(calls), 1), 2), "calls_max": max(calls, default=0),
                            "tokens_mean": round(sum(toks) / max(len(toks), 1)), "tokens_max": max(toks, default=0)},
            "per_day": {"days": len(per_day), "calls_max": max((d["calls"] for d in per_day.values()), default=0),
                        "tokens_max": max(day_toks, default=0),
                        "tokens_mean": round(sum(day_toks) / max(len(day_toks), 1))},
            "max_output_bound_per_call": MAX_TOKENS,
            "prompt_hook_ms": {"p50": quantile(run["prompt_ms"], 0.5), "p95": quantile(run["prompt_ms"], 0.95)},
            # CPU of the recall part of the hook (the hook log's cpu_ms.recall): what a busy machine inflates least
            "prompt_hook_recall_cpu_ms": {"p50": quantile(run["prompt_cpu_ms"], 0.5),
                                          "p95": quantile(run["prompt_cpu_ms"], 0.95)},
            "days": per_day}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=None, help="only the first N sessions")
    ap.add_argument("--routes", default="smollm2,agent:claude-code")
    ap.add_argument("--budget", default="24 calls, 150000 tokens", help="models.agent_budget for the replay")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    from hela_cli.models.tokencount import bpe_token_counter
    from hela_cli.paths import model_dir
    from hela_cli.models import DEFAULT_MODELS

    os.environ["HELA_MODELS_DIR"] = os.environ.get("HELA_MODELS_DIR") or str(model_dir())   # before any HELA_HOME
    counter = bpe_token_counter(Path(os.environ["HELA_MODELS_DIR"]) / DEFAULT_MODELS["smollm2"].filename)
    if counter is None:
        raise SystemExit("no BPE tokenizer in the default chat model: run `make models`")
    files = session_files(sessions=args.sessions)
    out: dict[str, Any] = {"budget": args.budget, "sessions": [p.stem for p in files], "runs": []}
    with tempfile.TemporaryDirectory(prefix="hela-agent-cost-") as tmp:
        server, stats = counting_api(counter)
        with server as api:
            for route in args.routes.split(","):
                t0 = time.perf_counter()
                run = replay(route.strip(), files, Path(tmp), api, stats, args.budget)
                summary = summarize(run)
                summary["wall_s"] = round(time.perf_counter() - t0, 1)
                out["runs"].append({"summary": summary, "sessions": run["sessions"]})
                print(json.dumps(summary, indent=1), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
