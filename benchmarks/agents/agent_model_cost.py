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
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
DATA = HERE / "coding_memory" / "data" / "bookminder"
CWD = "/Users/palimondo/Developer/BookMinder"
SPACE = "bookminder"


def counting_api(counter: Any) -> Any:
    """A fake Messages API (hela_cli.testing.agents) whose ``usage`` is counted: input tokens = the BPE count of
    every string the request carries, output tokens = the count of the scripted answer."""
    from hela_cli.testing import agents as fake

    stats: list[dict[str, Any]] = []
    lock = threading.Lock()

    def strings(o: Any) -> list[str]:
        if isinstance(o, str):
            return [o]
        if isinstance(o, dict):
            return [s for v in o.values() for s in strings(v)]
        if isinstance(o, list):
            return [s for v in o for s in strings(v)]
        return []

    def handle(path: str, body: Any, n: int) -> tuple[int, str, bytes]:
        path = path.split("?")[0]
        if path.endswith("/count_tokens"):
            return 200, "application/json", b'{"input_tokens": 100}'
        if path != "/v1/messages" or not isinstance(body, dict):
            return 404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"fake"}}'
        text = "\n".join(strings(body))
        answer = scripted_answer(text)
        tin, tout = counter.count_tokens(text), counter.count_tokens(answer)
        with lock:
            stats.append({"input": tin, "output": tout, "clusters": text.count("Cluster hub="),
                          "pairs": len(re.findall(r"^Pair \d+>\d+:", text, re.M)), "bytes": len(text)})
        msg = {"id": "msg_fake", "type": "message", "role": "assistant", "model": str(body.get("model")),
               "content": [{"type": "text", "text": answer}], "stop_reason": "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": tin, "output_tokens": tout}}
        if body.get("stream"):
            blocks, stop = fake._claude_blocks(answer, n)
            sse = fake._claude_sse(blocks, stop, str(body.get("model")))
            sse = sse.replace(b'"input_tokens": 12', f'"input_tokens": {tin}'.encode()).replace(
                b'"output_tokens": 5', f'"output_tokens": {tout}'.encode())
            return 200, "text/event-stream", sse
        return 200, "application/json", json.dumps(msg).encode("utf-8")

    return fake._serve("claude", handle), stats


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


def hook(event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """``hela hook EVENT`` in this process; the hook log's line for the run."""
    from hela_cli.hooks.log import log_path
    from hela_cli.hooks.process import main

    main([event, "--agent", "claude-code", "--space", SPACE], stdin=io.BytesIO(json.dumps(payload).encode()),
         stdout=io.StringIO())
    lines = log_path().read_text(encoding="utf-8").splitlines()
    return json.loads(lines[-1]) if lines else {}


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


def session_files(sessions: int | None) -> list[Path]:
    def first(p: Path) -> str:
        with p.open(encoding="utf-8") as f:
            return json.loads(f.readline())["timestamp"]
    files = sorted(DATA.glob("*.jsonl"), key=first)
    return files[:sessions] if sessions else files


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def replay(route: str, files: list[Path], work: Path, api: Any, stats: list[dict[str, Any]], budget: str
           ) -> dict[str, Any]:
    from hela_cli.models.agent import Ledger
    from hela_cli.paths import model_dir
    from hela_cli.testing.agents import claude_env

    base = work / route.replace(":", "_")
    base.mkdir()
    env = claude_env(base / "claude-home", api)
    env.update({"HELA_DB": str(base / "hela.db"), "HELA_HOME": str(base / "home"),
                "HELA_MODELS_DIR": os.environ.get("HELA_MODELS_DIR") or str(model_dir()),
                "HELA_MODELS_CHAT": route, "HELA_MODELS_AGENT_BUDGET": budget,
                "HELA_HOOKS_CAPTURE_INLINE": "1000000", "HELA_HOOKS_CAPTURE_BUDGET_S": "100000",
                "HELA_HOOKS_BUDGET_S": "600", "HELA_HOOKS_DETACHED_BUDGET_S": "600",
                "PATH": f"{REPO / '.agents' / 'node_modules' / '.bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                "PYTHONPATH": str(REPO)})
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
                row = hook("UserPromptSubmit", {"session_id": sid, "cwd": CWD, "transcript_path": str(live),
                                                "prompt": records[i]["message"]["content"]})
                prompt_ms.append(row.get("ms", 0.0))
                prompt_cpu.append(((row.get("cpu_ms") or {}).get("recall", 0.0)))
                live.write_text("".join(json.dumps(r) + "\n" for r in records[:j]), encoding="utf-8")
                row = hook("Stop", {"session_id": sid, "cwd": CWD, "transcript_path": str(live)})
                if row.get("result") not in ("ok", "empty"):
                    raise RuntimeError(f"capture of {path.name}: {row.get('result')} {row.get('detail', '')}")
                if row.get("model_child"):
                    child = wait_child(row["model_child"])
                    children.append((child or {}).get("model") or {"error": "no log line"})
            row = hook("SessionEnd", {"session_id": sid, "cwd": CWD, "transcript_path": str(live)})
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
    files = session_files(args.sessions)
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
