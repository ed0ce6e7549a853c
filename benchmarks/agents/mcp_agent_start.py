"""Does a headless coding agent see hela's tools in its first request? (measurement, not a test)

    python benchmarks/agents/mcp_agent_start.py --sessions 6                       # stdio and HTTP, this checkout
    python benchmarks/agents/mcp_agent_start.py --sessions 6 --variant base=/tmp/base-src --variant new=. --wait

The real Claude Code binary (``make agents``), offline: ``claude -p`` with ``ANTHROPIC_BASE_URL`` at a fake
Messages API on 127.0.0.1 that records each request and answers with text (``hela_cli/testing/agents.py``).
Modes, one session of each per round, in turn:

* ``stdio:NAME``: ``claude mcp add hela -- python -m hela_cli mcp --db DB`` with ``NAME``'s source tree on
  ``PYTHONPATH``; Claude Code starts the server itself for every session;
* ``stdio-wait:NAME`` (``--wait``): the same with ``MCP_CONNECTION_NONBLOCKING=false`` in Claude Code's
  environment;
* ``http`` (unless ``--no-http``): ``claude mcp add --transport http hela http://127.0.0.1:PORT/mcp --header
  "Authorization: Bearer ..."`` to one ``hela mcp --http`` started before the first round (this checkout).

Per session: whether hela's tools (``mcp__hela__recall``) appear anywhere in the first request the agent
sent to the model (in its ``tools``, or in the system prompt's list of deferred tools when tool search is
on), and the session's wall time. The machine's load average is reported: the point is a busy machine.
Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hela_cli.testing.agents import agent_binary, claude_env, fake_messages_api, run_claude

REPO = Path(__file__).resolve().parents[2]

TOKEN = "bench-token-" + "Qx7v2" * 6
TOOL = "mcp__hela__recall"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(src: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_") or k == "HELA_MODELS_DIR"}
    env.update({"PYTHONPATH": str(src), "HELA_HOME": str(home)})
    return env


def add_server(claude: Path, project: Path, env: dict[str, str], *args: str) -> None:
    res = subprocess.run([str(claude), "mcp", "add", *args], cwd=str(project), env=env, capture_output=True,
                         text=True, timeout=120)
    if res.returncode:
        raise SystemExit(f"claude mcp add failed: {res.stderr or res.stdout}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=SOURCE_DIR",
                    help="a hela_cli source tree for the stdio server (repeatable; default: this checkout)")
    ap.add_argument("--sessions", type=int, default=6, help="rounds (one session of each mode per round)")
    ap.add_argument("--wait", action="store_true", help="add stdio-wait modes (MCP_CONNECTION_NONBLOCKING=false)")
    ap.add_argument("--no-http", action="store_true", help="leave out the HTTP mode")
    ap.add_argument("--debug", action="store_true", help="run claude with --debug and print its log lines about "
                    "hela's server for each session that missed the tools")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    claude, why = agent_binary("claude", REPO / ".agents")
    if claude is None:
        raise SystemExit(why)
    variants = {}
    for v in a.variant or [f"this={REPO}"]:
        name, _, src = v.partition("=")
        if not src or not (Path(src) / "hela_cli" / "__init__.py").exists():
            ap.error(f"--variant {v!r}: give NAME=DIR with DIR/hela_cli/__init__.py")
        variants[name] = Path(src).resolve()

    tmp = Path(tempfile.mkdtemp(prefix="hela-agent-start-"))
    db = tmp / "agent.db"
    http_proc = None
    try:
        modes: dict[str, dict[str, Any]] = {}
        with fake_messages_api("Done.") as api:
            for name, src in variants.items():
                for wait in ([False, True] if a.wait else [False]):
                    mode = f"{'stdio-wait' if wait else 'stdio'}:{name}"
                    home, project = tmp / mode.replace(":", "-") / "home", tmp / mode.replace(":", "-") / "project"
                    project.mkdir(parents=True)
                    extra = {"MCP_CONNECTION_NONBLOCKING": "false"} if wait else {}
                    env = claude_env(home, api, **extra)
                    add_server(claude, project, env, "hela", "-e", f"PYTHONPATH={src}", "-e",
                               f"HELA_HOME={tmp / 'hela-home'}", "--", sys.executable, "-m", "hela_cli", "mcp",
                               "--db", str(db))
                    modes[mode] = {"env": env, "project": project}
            if not a.no_http:
                port = free_port()
                log = tmp / "http-server.log"
                with log.open("w") as f:
                    cmd = [sys.executable, "-m", "hela_cli", "mcp", "--http", f"127.0.0.1:{port}", "--db", str(db)]
                    env = {**server_env(REPO, tmp / "hela-home"), "HELA_MCP_TOKEN": TOKEN}
                    http_proc = subprocess.Popen(cmd, env=env, stdout=f, stderr=subprocess.STDOUT)
                deadline = time.monotonic() + 120
                while "serving the hela tools" not in log.read_text():
                    if http_proc.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit(f"hela mcp --http did not start:\n{log.read_text()}")
                    time.sleep(0.1)
                home, project = tmp / "http" / "home", tmp / "http" / "project"
                project.mkdir(parents=True)
                env = claude_env(home, api)
                add_server(claude, project, env, "--transport", "http", "hela", f"http://127.0.0.1:{port}/mcp",
                           "--header", f"Authorization: Bearer {TOKEN}")
                modes["http"] = {"env": env, "project": project}

            results: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
            loads = [os.getloadavg()[0]]
            for i in range(a.sessions):
                for mode, m in modes.items():
                    before = len(api.requests)
                    t0 = time.perf_counter()
                    debug = ["--debug"] if a.debug else []
                    res = run_claude(claude, "Say done.", m["project"], m["env"], 300, *debug)
                    wall = time.perf_counter() - t0
                    bodies = [r["body"] for r in api.requests[before:] if r["path"].split("?")[0] == "/v1/messages"]
                    seen = bool(bodies) and TOOL in json.dumps(bodies[0])
                    results[mode].append({"seen": seen, "wall_s": round(wall, 2), "rc": res.returncode,
                                          "requests": len(bodies)})
                    print(f"round {i + 1} {mode}: hela tools in the first request: {seen}, {wall:.1f} s, "
                          f"rc {res.returncode}", file=sys.stderr, flush=True)
                    if a.debug and not seen:  # Claude Code's own account of the connection
                        logs = sorted((Path(m["env"]["HOME"]) / ".claude" / "debug").glob("*.txt"),
                                      key=lambda f: f.stat().st_mtime)
                        for line in logs[-1].read_text(errors="replace").splitlines() if logs else []:
                            if '"hela"' in line or "API REQUEST" in line or "nonblocking" in line:
                                print("    " + line[:240], file=sys.stderr)
                loads.append(os.getloadavg()[0])
        out = {"claude": subprocess.run([str(claude), "--version"], capture_output=True, text=True).stdout.strip(),
               "sessions": a.sessions, "cpus": os.cpu_count(),
               "load_avg_1min": {"min": round(min(loads), 2), "max": round(max(loads), 2)},
               "modes": {mode: {"tools_in_first_request": f"{sum(r['seen'] for r in rs)}/{len(rs)}",
                                "session_wall_s_median": round(statistics.median(r["wall_s"] for r in rs), 2),
                                "failed_sessions": sum(r["rc"] != 0 for r in rs)}
                         for mode, rs in results.items()}}
    finally:
        if http_proc is not None and http_proc.poll() is None:
            http_proc.send_signal(signal.SIGINT)
            try:
                http_proc.wait(30)
            except subprocess.TimeoutExpired:
                http_proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    text = json.dumps(out, indent=2)
    print(text)
    if a.json:
        a.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
