"""Hook benchmark (performance and recall, not a test): hela inside a coding agent, through ``hela hook``.

    python benchmarks/agents/hooks_bench.py latency --lme ../shared/data/longmemeval_s_dev30.json --sizes 1000,10000
    python benchmarks/agents/hooks_bench.py lme --lme ../shared/data/longmemeval_s_dev30.json [--items N]
    python benchmarks/agents/hooks_bench.py server --lme ../shared/data/longmemeval_s_dev30.json --sizes 10000

``latency``: a database per size holding the first N turns of the LongMemEval-S haystacks, written through
the capture hook (each haystack session replayed as a Claude Code transcript; in this process, through
``hela_cli.hooks.process.main``, the code path of ``hela hook SessionEnd``). Then:

* capture throughput: ``--capture-runs`` sessions captured by real ``hela hook SessionEnd`` processes
  (inline, ``hooks.capture_inline`` raised), turns per second of wall time, the process start included;
* prompt-hook latency: ``--queries`` real ``hela hook UserPromptSubmit`` processes with LongMemEval
  questions, wall time from spawn to exit (p50 / p95), CPU seconds of the process, and the medians of the
  phases the hook logs (``timings_ms``: start to handler = imports, config; the embedder load; the wait for
  the redaction; retrieval; learning). The machine's load average is printed with the figures.

``lme``: LongMemEval through the hooks. Per item a fresh database; each haystack session is written as a
Claude Code transcript (``uuid`` = the turn's source id, ``sessionId`` = its session, ``timestamp`` = its
time) and captured by the capture hook; then the question goes through the prompt hook (``--space``
pinned; the question's date as the payload's ``timestamp``, the event time a prompt's relative dates count
from). The memories in the injected context (their ids parsed from the ``[#ID ...]`` lines) are scored
as ``hela bench longmemeval`` scores its retrieved set (session recall any / all, turn recall). Compare with
``hela bench longmemeval --retrieval-only --k K`` at the same number of memories (k + m = prompt_k).

``server``: the fast path (``hooks.server``). One database of N synthetic memories (as ``latency``), one
``hela mcp --http`` on it (models loaded by a first call), then per question three real prompt-hook
processes in turn, in a rotating order: through the server, without one (in-process), and with a dead server
configured (a closed port: the hook falls back at once). Wall time spawn to exit (p50 / p95), CPU seconds of
the hook process (the server's CPU is not in it: it is reported apart, from ``/proc``), the load average,
and ``python -c pass`` as the floor of any process.

Databases go to a temporary directory (``--dir`` to keep them). Prints one JSON object (``--json F`` too).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

from hela_cli.bench.longmemeval import load_items, score_item
from hela_cli.text.dates import format_iso

PY = sys.executable


def transcript_lines(turns: list[Any], session: str) -> list[str]:
    """A Claude Code transcript of ``turns`` (one session), one JSON record per turn."""
    out, parent = [], None
    for i, t in enumerate(turns):
        role = "user" if (t.role or t.speaker) == "user" else "assistant"
        content = t.text if role == "user" else [{"type": "text", "text": t.text}]
        rec = {"parentUuid": parent, "isSidechain": False, "type": role, "uuid": t.source_id,
               "sessionId": session, "timestamp": format_iso(t.timestamp + i).replace("Z", ".000Z"),
               "message": {"role": role, "content": content}}
        out.append(json.dumps(rec, ensure_ascii=False))
        parent = t.source_id
    return out


def sessions_of(item: Any) -> list[tuple[str, list[Any]]]:
    out: dict[str, list[Any]] = {}
    for t in item.conv.turns:
        out.setdefault(t.session, []).append(t)
    return list(out.items())


def hook_inprocess(event: str, payload: dict[str, Any], space: str) -> str:
    from hela_cli.hooks.process import main

    out = io.StringIO()
    main([event, "--agent", "claude-code", "--space", space], stdin=io.BytesIO(json.dumps(payload).encode()),
         stdout=out)
    return out.getvalue()


def capture_session(work: Path, space: str, session: str, turns: list[Any]) -> Path:
    path = work / "transcripts" / f"{abs(hash(session))}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(transcript_lines(turns, session)) + "\n", encoding="utf-8")
    return path


def env_for(db: Path, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_")}
    env.update({"HELA_DB": str(db), "HELA_HOME": str(home), "PYTHONPATH": str(REPO), "HELA_HOOKS_SERVER": "off",
                **extra})   # in-process unless a variant asks for a server
    # the hooks' own homes hold no models: they use the caller's (HELA_MODELS_DIR, else the caller's home)
    from hela_cli.paths import model_dir

    env["HELA_MODELS_DIR"] = os.environ.get("HELA_MODELS_DIR") or str(model_dir())
    return env


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def last_log(home: Path) -> dict[str, Any]:
    return json.loads((home / "hooks.log").read_text().splitlines()[-1])


# ------------------------------------------------------------------------------------------ latency
def build_synthetic(db: Path, n: int) -> float:
    """``n`` synthetic memories (benchmarks/speed/scale.py's clustered vectors and keyword texts) bound to the real
    default embedder, so the hook embeds its query with the real model and searches a space of this size."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "speed"))   # benchmarks/speed/scale.py
    import scale

    from hela_cli.config import Config, load_config
    from hela_cli.memory import Memory

    emb = Memory(load_config()).embedder
    scale.FAKE_EMBEDDER = emb.model_id   # the binding the hook checks
    t0 = time.perf_counter()
    scale.build(db, scale.Synthetic(n), Config(), lambda msg: None)
    return time.perf_counter() - t0


def latency(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    items = load_items(args.lme)
    sessions = [(f"{it.qid}/{sid}", turns) for it in items for sid, turns in sessions_of(it)]
    questions = [it.question for it in items]
    results: dict[str, Any] = {}
    # capture throughput: real `hela hook Stop` processes on LongMemEval sessions, into a fresh database
    # (`Stop`: the inline capture; a `SessionEnd` capture always moves to a detached child, issue 40)
    db, home = work / "capture.db", work / "home-capture"
    cap_env = env_for(db, home, HELA_HOOKS_CAPTURE_INLINE="100000", HELA_HOOKS_CAPTURE_BUDGET_S="100000")
    cap_turns, cap_wall, cap_cpu = 0, 0.0, 0.0
    for sid, turns in sessions[:args.capture_runs]:
        path = capture_session(work, "bench", sid, turns)
        payload = {"session_id": sid, "transcript_path": str(path), "cwd": str(work), "hook_event_name": "Stop"}
        wall, cpu, _ = _timed([PY, "-m", "hela_cli", "hook", "Stop", "--space", "bench"],
                              json.dumps(payload).encode(), cap_env)
        cap_wall += wall / 1000
        cap_cpu += cpu / 1000
        row = last_log(home)
        assert row["result"] == "ok", row
        cap_turns += row["added"]
    results["capture"] = {"sessions": args.capture_runs, "turns": cap_turns, "wall_s": round(cap_wall, 2),
                          "cpu_s": round(cap_cpu, 2), "turns_per_s": round(cap_turns / cap_wall, 1),
                          "turns_per_cpu_s": round(cap_turns / cap_cpu, 1), "loadavg": os.getloadavg()}
    print(json.dumps(results), file=sys.stderr, flush=True)
    for size in [int(s) for s in args.sizes.split(",")]:
        db, home = work / f"synthetic-{size}.db", work / f"home-{size}"
        build_s = build_synthetic(db, size) if not db.exists() else 0.0
        # every query injects prompt_k memories and learns from them: the floor off (worst case)
        q_env = env_for(db, home, HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_PROMPT_MIN_SCORE="0")
        walls, cpus, phases, injected = [], [], [], []
        for i, q in enumerate((questions * 10)[:args.queries]):
            # one agent session per query: a memory is injected once per session (issue 39)
            payload = {"session_id": f"bench-q{i}", "transcript_path": "", "cwd": str(work), "prompt": q,
                       "hook_event_name": "UserPromptSubmit"}
            wall, cpu, out = _timed([PY, "-m", "hela_cli", "hook", "UserPromptSubmit", "--space", "scale"],
                                    json.dumps(payload).encode(), q_env)
            walls.append(wall)
            cpus.append(cpu)
            row = last_log(home)
            assert row["result"] == "ok" and out, row
            phases.append({**row.get("timings_ms", {}), **{f"cpu_{k}": v for k, v in row.get("cpu_ms", {}).items()}})
            injected.append(len(row.get("memories", [])))
        keys = sorted({k for p in phases for k in p})
        results[str(size)] = {
            "memories": size, "build_s": round(build_s, 1),
            "prompt_hook": {"queries": len(walls), "p50_ms": round(pct(walls, 50)), "p95_ms": round(pct(walls, 95)),
                            "cpu_p50_ms": round(pct(cpus, 50)), "cpu_p95_ms": round(pct(cpus, 95)),
                            "phases_median_ms": {k: round(statistics.median(p.get(k, 0.0) for p in phases), 1)
                                                 for k in keys},
                            "injected_median": statistics.median(injected)},
            "loadavg": os.getloadavg(),
        }
        print(json.dumps({size: results[str(size)]}), file=sys.stderr, flush=True)
    return results


# ------------------------------------------------------------------------------------------ server (fast path)
def _cpu_of(pid: int) -> float:
    """CPU seconds of a running process (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed(cmd: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float, bytes]:
    before = os.times()
    t1 = time.perf_counter()
    out = subprocess.run(cmd, input=data, env=env, capture_output=True, check=True).stdout
    wall = (time.perf_counter() - t1) * 1000
    after = os.times()
    cpu = (after.children_user - before.children_user + after.children_system - before.children_system) * 1000
    return wall, cpu, out


def server(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    import socket

    questions = [it.question for it in load_items(args.lme)]
    results: dict[str, Any] = {}
    for size in [int(s) for s in args.sizes.split(",")]:
        db, home = work / f"synthetic-{size}.db", work / f"home-server-{size}"
        build_s = build_synthetic(db, size) if not db.exists() else 0.0
        env = env_for(db, home, HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_PROMPT_MIN_SCORE="0")
        ports = []
        for _ in range(2):
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                ports.append(sock.getsockname()[1])
        live, dead = f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}"   # nothing listens on the 2nd
        proc = subprocess.Popen([PY, "-m", "hela_cli", "mcp", "--http", f"127.0.0.1:{ports[0]}"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            for line in proc.stderr:
                if "serving the hela tools" in line:
                    break
            import threading

            threading.Thread(target=proc.stderr.read, daemon=True).start()
            variants = {"server": {**env, "HELA_HOOKS_SERVER": live}, "no_server": env,
                        "dead_server": {**env, "HELA_HOOKS_SERVER": dead}}
            expect = {"server": "ok", "no_server": None, "dead_server": "unreachable"}
            hook = [PY, "-m", "hela_cli", "hook", "UserPromptSubmit", "--space", "scale"]

            sessions = iter(range(10 ** 9))   # one agent session per query: a memory is injected once per session

            def payload(q: str) -> bytes:
                return json.dumps({"session_id": f"bench-q{next(sessions)}", "transcript_path": "", "cwd": str(work),
                                   "prompt": q, "hook_event_name": "UserPromptSubmit"}).encode()

            _timed(hook, payload(questions[0]), variants["server"])   # the server loads its models
            floor = [_timed([PY, "-c", "pass"], b"", env)[0] for _ in range(5)]
            rows: dict[str, dict[str, list[float]]] = {v: {"wall": [], "cpu": []} for v in variants}
            server_cpu0 = _cpu_of(proc.pid)
            load0 = os.getloadavg()
            names = list(variants)
            for i, q in enumerate((questions * 10)[:args.queries]):
                for v in names[i % 3:] + names[:i % 3]:   # a rotating order: none always first
                    wall, cpu, out = _timed(hook, payload(q), variants[v])
                    row = last_log(home)
                    assert row["result"] == "ok" and out and row.get("server") == expect[v], (v, row)
                    rows[v]["wall"].append(wall)
                    rows[v]["cpu"].append(cpu)
            server_cpu = _cpu_of(proc.pid) - server_cpu0
            # what a dead server adds to a hook, measured alone: the client's attempt (token read, connect
            # refused) in this process, 50 times
            from hela_cli.hooks import client

            os.environ["HELA_MCP_TOKEN"] = "x" * 32   # a token to send: the attempt reaches the connect
            tries = []
            for _ in range(50):
                t1 = time.perf_counter()
                try:
                    client.ask(dead, {"payload": {}}, 2.0)
                except client.Unavailable:
                    pass
                tries.append((time.perf_counter() - t1) * 1000)
            del os.environ["HELA_MCP_TOKEN"]
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        out_size: dict[str, Any] = {"memories": size, "build_s": round(build_s, 1), "queries": args.queries,
                                    "python_c_pass_p50_ms": round(statistics.median(floor)),
                                    "server_cpu_per_query_ms": round(server_cpu * 1000 / args.queries),
                                    "dead_server_attempt_p50_ms": round(statistics.median(tries), 3),
                                    "dead_server_attempt_max_ms": round(max(tries), 3),
                                    "loadavg_before": load0, "loadavg_after": os.getloadavg()}
        for v, r in rows.items():
            out_size[v] = {"p50_ms": round(pct(r["wall"], 50)), "p95_ms": round(pct(r["wall"], 95)),
                           "cpu_p50_ms": round(pct(r["cpu"], 50)), "cpu_p95_ms": round(pct(r["cpu"], 95))}
        out_size["dead_minus_none_p50_ms"] = out_size["dead_server"]["p50_ms"] - out_size["no_server"]["p50_ms"]
        results[str(size)] = out_size
        print(json.dumps({size: out_size}), file=sys.stderr, flush=True)
    return results


def managed(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """hooks.server auto (issue 53): the prompt hook, whole process, through hela's own managed server, through
    a running ``hela mcp --http`` and in its own process, interleaved in a rotating order in one run; then the
    first prompt of a session with no server running (auto: answered in-process, the server started after),
    alternating with ``off``. ``python -c pass`` as the floor."""
    import socket

    questions = [it.question for it in load_items(args.lme)]
    results: dict[str, Any] = {}
    for size in [int(s) for s in args.sizes.split(",")]:
        db, home = work / f"synthetic-{size}.db", work / f"home-managed-{size}"
        build_s = build_synthetic(db, size) if not db.exists() else 0.0
        # synthetic memories have no topic a prompt can be about: the relevance decision off, so that every
        # variant injects (the same work in each)
        env = env_for(db, home, HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_PROMPT_MIN_SCORE="0", HELA_HOOKS_RELEVANCE="false")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        proc = subprocess.Popen([PY, "-m", "hela_cli", "mcp", "--http", f"127.0.0.1:{port}"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        stop = [PY, "-m", "hela_cli", "hooks", "stop"]
        try:
            for line in proc.stderr:
                if "serving the hela tools" in line:
                    break
            import threading

            threading.Thread(target=proc.stderr.read, daemon=True).start()
            variants = {"managed": {**env, "HELA_HOOKS_SERVER": "auto"},
                        "mcp_http": {**env, "HELA_HOOKS_SERVER": f"http://127.0.0.1:{port}"},
                        "in_process": {**env, "HELA_HOOKS_SERVER": "off"}}
            expect = {"managed": "managed", "mcp_http": "ok", "in_process": None}
            hook = [PY, "-m", "hela_cli", "hook", "UserPromptSubmit", "--space", "scale"]
            sessions = iter(range(10 ** 9))

            def payload(q: str) -> bytes:
                return json.dumps({"session_id": f"bench-q{next(sessions)}", "transcript_path": "", "cwd": str(work),
                                   "prompt": q, "hook_event_name": "UserPromptSubmit"}).encode()

            _timed(hook, payload(questions[0]), variants["mcp_http"])   # the MCP server loads its models
            _timed(hook, payload(questions[0]), variants["managed"])     # starts the managed server
            end = time.monotonic() + 120
            while time.monotonic() < end:
                _timed(hook, payload(questions[0]), variants["managed"])
                if last_log(home).get("server") == "managed":
                    break
                time.sleep(0.5)
            floor = [_timed([PY, "-c", "pass"], b"", env)[0] for _ in range(9)]
            rows: dict[str, dict[str, list[float]]] = {v: {"wall": [], "cpu": []} for v in variants}
            load0 = os.getloadavg()
            names = list(variants)
            for i, q in enumerate((questions * 10)[:args.queries]):
                for v in names[i % 3:] + names[:i % 3]:
                    wall, cpu, out = _timed(hook, payload(q), variants[v])
                    row = last_log(home)
                    assert row["result"] == "ok" and out and row.get("server") == expect[v], (v, row)
                    rows[v]["wall"].append(wall)
                    rows[v]["cpu"].append(cpu)
            first: dict[str, list[float]] = {"auto_no_server": [], "off": []}
            for i, q in enumerate((questions * 10)[:max(4, args.queries // 4)]):
                for v in (["auto_no_server", "off"] if i % 2 == 0 else ["off", "auto_no_server"]):
                    if v == "auto_no_server":
                        subprocess.run(stop, env=env, capture_output=True, check=True)
                        # a server the previous start left loading would be "starting": none may hold the lock
                        time.sleep(0.2)
                    e = variants["managed"] if v == "auto_no_server" else variants["in_process"]
                    wall, cpu, out = _timed(hook, payload(q), e)
                    row = last_log(home)
                    assert row["result"] == "ok" and out, (v, row)
                    assert v == "off" or row.get("server") == "started", (v, row)
                    first[v].append(wall)
                    if v == "auto_no_server":   # let the server it started come up and be stopped in peace
                        time.sleep(3)
                        subprocess.run(stop, env=env, capture_output=True, check=True)
        finally:
            subprocess.run(stop, env=env, capture_output=True)
            proc.terminate()
            proc.wait(timeout=60)
        out_size: dict[str, Any] = {"memories": size, "build_s": round(build_s, 1), "queries": args.queries,
                                    "python_c_pass_p50_ms": round(statistics.median(floor), 1),
                                    "loadavg_before": load0, "loadavg_after": os.getloadavg()}
        for v, r in rows.items():
            out_size[v] = {"p50_ms": round(pct(r["wall"], 50), 1), "p95_ms": round(pct(r["wall"], 95), 1),
                           "cpu_p50_ms": round(pct(r["cpu"], 50), 1), "cpu_p95_ms": round(pct(r["cpu"], 95), 1)}
        for v, w in first.items():
            out_size[f"first_prompt_{v}"] = {"runs": len(w), "p50_ms": round(pct(w, 50), 1),
                                             "p95_ms": round(pct(w, 95), 1)}
        results[str(size)] = out_size
        print(json.dumps({size: out_size}), file=sys.stderr, flush=True)
    return results


# ------------------------------------------------------------------------------------------ LongMemEval
def lme(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from hela_cli.config import load_config
    from hela_cli.store import Store

    items = load_items(args.lme)
    if args.item_ids:
        by_id = {it.qid: it for it in items}
        items = [by_id[q] for q in args.item_ids.split(",")]
    if args.items:
        items = items[:args.items]
    rows = []
    models = env_for(work / "unused.db", work / "home")["HELA_MODELS_DIR"]   # the caller's, before HELA_HOME moves
    for it in items:
        db, home = work / f"lme-{it.qid}.db", work / "home"
        os.environ.update({"HELA_DB": str(db), "HELA_HOME": str(home), "HELA_MODELS_DIR": models,
                           "HELA_HOOKS_CAPTURE_INLINE": "100000",
                           "HELA_HOOKS_CAPTURE_BUDGET_S": "100000", "HELA_HOOKS_BUDGET_S": "600"})
        space = "lme"
        t0 = time.perf_counter()
        stored = 0
        for sid, turns in sessions_of(it):
            path = capture_session(work, space, sid, turns)
            hook_inprocess("SessionEnd", {"session_id": sid, "transcript_path": str(path), "cwd": str(work),
                                          "hook_event_name": "SessionEnd"}, space)
            row = last_log(home)
            assert row["result"] in ("ok", "empty"), row
            stored += row.get("added", 0)
        capture_s = time.perf_counter() - t0
        # the question's date as the event's time (the `timestamp` Gemini CLI sends; live hooks use the clock)
        stamp = format_iso(it.now) if it.now is not None else None
        # its own agent session per item: ids restart in each item's database, and a memory is injected once
        # per session (issue 39)
        out = hook_inprocess("UserPromptSubmit", {"session_id": f"question-{it.qid}", "cwd": str(work),
                                                  "prompt": it.question,
                                                  "transcript_path": "", "hook_event_name": "UserPromptSubmit",
                                                  **({"timestamp": stamp} if stamp else {})}, space)
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
        ids = [int(x) for x in re.findall(r"^- \[#(\d+) ", context, re.M)]
        with Store.open(str(db), must_exist=True) as store:
            nodes = store.get_nodes(ids)
            stored = store.count_nodes(store.require_space(space).id)   # every turn there (a rerun reuses the db)
        memories = [{"session": nodes[i]["session"], "source_id": nodes[i]["source_id"]} for i in ids if i in nodes]
        score = score_item(it, memories, None, True)
        rows.append({"qid": it.qid, "qtype": it.qtype, "turns": len(it.conv.turns), "stored": stored,
                     "capture_s": round(capture_s, 1), "injected": len(ids), "context_chars": len(context),
                     **{k: score[k] for k in ("session_recall_any", "session_recall_all", "turn_recall")}})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    cfg = load_config()
    scored = [r for r in rows if r["session_recall_any"] is not None]

    def mean(key: str) -> float | None:
        vals = [r[key] for r in rows if r[key] is not None]
        return round(sum(vals) / len(vals), 4) if vals else None

    return {"items": len(rows), "scored": len(scored), "lost_turns": sum(r["turns"] - r["stored"] for r in rows),
            "prompt_k": cfg.hooks.prompt_k, "prompt_tokens": cfg.hooks.prompt_tokens,
            "prompt_min_score": cfg.hooks.prompt_min_score,
            "session_recall_any": mean("session_recall_any"), "session_recall_all": mean("session_recall_all"),
            "turn_recall": mean("turn_recall"), "injected_mean": mean("injected"), "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["latency", "lme", "server", "managed"])
    ap.add_argument("--lme", required=True)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--capture-runs", type=int, default=5)
    ap.add_argument("--items", type=int, default=0)
    ap.add_argument("--item-ids", default="", help="comma-separated question ids (as hela bench longmemeval --items)")
    ap.add_argument("--dir")
    ap.add_argument("--json")
    args = ap.parse_args()
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="hela-hooks-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()   # the code this run started with
    res = {"latency": latency, "lme": lme, "server": server, "managed": managed}[args.what](args, work)
    res = {"what": args.what, "commit": commit, **res}
    text = json.dumps(res, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
