"""Shared MCP server latency (performance, not a test): ``recall`` through ``hela mcp --http`` with one and
with two clients at once, next to the stdio server, on the same space.

    nice -n 5 python benchmarks/speed/mcp_http_latency.py --json mcp_http.json     # 10k memories, 50 recalls a client
    nice -n 5 python benchmarks/speed/mcp_http_latency.py --nodes 10000 --queries 50 --rounds 2

The space is built once as in ``benchmarks/speed/mcp_latency.py`` (``--nodes`` memories: ``--real`` real sentences
embedded with the real embedder, the rest synthetic clustered memories written through ``Store``), then
each mode runs on its own copy of that database file, so every mode starts from the same state
(learning is on, the tool's default: each recall is one write transaction):

* **stdio**: ``hela mcp`` (one process per client) driven by the SDK's stdio client;
* **http, 1 client**: ``hela mcp --http 127.0.0.1:PORT`` driven by one SDK streamable HTTP client session;
* **http, 2 clients**: the same server, two client sessions sending their recalls at the same time.

For each: the first ``recall`` (database open, embedder load, index load) apart, then p50 / p95 of the next
``--queries`` recalls per client (end to end at the client), the wall time of that phase and the CPU time
per recall of the server process (``/proc/PID/stat``, utime + stime) and of the clients (this process,
``getrusage``): steadier than wall times on a shared machine. The modes are run ``--rounds`` times in turn (stdio, http 1, http 2, stdio, ...) so that
changes in machine load fall on all of them. Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from mcp_latency import SPACE, build, pct  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def self_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def child_pid(marker: str) -> int:
    """The pid of this process's child whose command line contains ``marker`` (the stdio server)."""
    me = str(os.getpid())
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = (d / "stat").read_text().rsplit(")", 1)[1].split()[1]
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if ppid == me and marker in cmd:
            return int(d.name)
    raise SystemExit(f"no child process running {marker!r}")


def server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_") or k in ("HELA_MODELS_DIR", "HELA_HOME")}
    env["PYTHONPATH"] = str(REPO)
    return env


async def timed_recalls(s: ClientSession, questions: list[str]) -> list[float]:
    times = []
    for q in questions:
        t = time.perf_counter()
        res = await s.call_tool("recall", {"space": SPACE, "query": q})
        times.append((time.perf_counter() - t) * 1000)
        if res.is_error:
            raise SystemExit(f"recall failed: {res.content[0].text}")
    return times


async def run_stdio(db: Path, first: str, questions: list[str]) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "hela_cli", "mcp", "--db", str(db)],
                                   env=server_env(), cwd=str(REPO))
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        pid = child_pid(str(db))
        t = time.perf_counter()
        await timed_recalls(s, [first])
        first_ms = (time.perf_counter() - t) * 1000
        c0, s0, t0 = cpu_s(pid), self_cpu_s(), time.perf_counter()
        times = await timed_recalls(s, questions)
        wall, cpu, own = time.perf_counter() - t0, cpu_s(pid) - c0, self_cpu_s() - s0
    return summary("stdio, 1 client", first_ms, [times], wall, cpu, own)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def run_http(db: Path, first: str, questions: list[str], clients: int, log) -> dict[str, Any]:
    token = secrets.token_urlsafe(32)
    port = free_port()
    err = db.with_suffix(".server.log")
    with err.open("w") as f:
        proc = subprocess.Popen([sys.executable, "-m", "hela_cli", "mcp", "--http", f"127.0.0.1:{port}",
                                 "--db", str(db)], env={**server_env(), "HELA_MCP_TOKEN": token},
                                stdout=f, stderr=subprocess.STDOUT, cwd=str(REPO))
    try:
        while "serving the hela tools" not in err.read_text():
            if proc.poll() is not None:
                raise SystemExit(f"the HTTP server exited:\n{err.read_text()}")
            await anyio.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp"
        headers = {"Authorization": f"Bearer {token}"}
        results: list[list[float]] = [[] for _ in range(clients)]
        async with anyio.create_task_group() as tg:
            ready = anyio.Event()
            connected = [0]
            go = anyio.Event()

            async def client(i: int) -> None:
                async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(300)) as c, \
                        streamable_http_client(url, http_client=c) as (r, w), ClientSession(r, w) as s:
                    await s.initialize()
                    if i == 0:  # the first recall (model and index load) before the timed phase
                        t = time.perf_counter()
                        await timed_recalls(s, [first])
                        results_first.append((time.perf_counter() - t) * 1000)
                    connected[0] += 1
                    if connected[0] == clients:
                        ready.set()
                    await go.wait()
                    # the clients ask the same questions in different orders
                    qs = questions[i * len(questions) // clients:] + questions[:i * len(questions) // clients]
                    results[i] = await timed_recalls(s, qs)

            results_first: list[float] = []
            for i in range(clients):
                tg.start_soon(client, i)
            await ready.wait()
            c0, s0, t0 = cpu_s(proc.pid), self_cpu_s(), time.perf_counter()
            go.set()
        wall, cpu, own = time.perf_counter() - t0, cpu_s(proc.pid) - c0, self_cpu_s() - s0
        out = err.read_text()
        if token in out:
            raise SystemExit("the token appeared in the server's output")
    finally:
        proc.terminate()
        proc.wait(60)
    return summary(f"http, {clients} client{'s' if clients > 1 else ''}", results_first[0], results, wall, cpu, own)


def summary(mode: str, first_ms: float, per_client: list[list[float]], wall_s: float, server_cpu: float,
            client_cpu: float) -> dict[str, Any]:
    allt = [t for ts in per_client for t in ts]
    return {"mode": mode, "first_recall_ms": round(first_ms, 1), "recalls": len(allt),
            "p50_ms": pct(allt, 50), "p95_ms": pct(allt, 95), "phase_wall_s": round(wall_s, 2),
            "recalls_per_s": round(len(allt) / wall_s, 1),
            "server_cpu_ms_per_recall": round(1000 * server_cpu / len(allt), 1),
            "client_cpu_ms_per_recall": round(1000 * client_cpu / len(allt), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--real", type=int, default=60, help="real turns (embedded) among the nodes; >= queries + 1")
    ap.add_argument("--queries", type=int, default=50, help="timed recalls per client")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    if a.real < a.queries + 1 or a.real >= a.nodes:
        ap.error("need queries + 1 <= real < nodes")
    tmp = Path(a.dir) if a.dir else Path(tempfile.mkdtemp(prefix="hela-mcp-http-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    base = tmp / f"base-{a.nodes}.db"
    for p in (base, Path(f"{base}-wal"), Path(f"{base}-shm")):
        p.unlink(missing_ok=True)

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    runs = []
    try:
        log(f"building a {a.nodes:,}-memory space in {base}")
        qa, build_s = build(base, a.nodes, a.real, log)
        questions = [q for q, _ in qa]
        first, timed = questions[0], questions[1:a.queries + 1]
        for rnd in range(a.rounds):
            for mode in ("stdio", "http1", "http2"):
                db = tmp / f"r{rnd}-{mode}.db"
                shutil.copyfile(base, db)
                if mode == "stdio":
                    res = anyio.run(run_stdio, db, first, timed)
                else:
                    res = anyio.run(run_http, db, first, timed, 1 if mode == "http1" else 2, log)
                res["round"] = rnd + 1
                runs.append(res)
                log(f"  round {rnd + 1} {res['mode']}: first {res['first_recall_ms']:.0f} ms, p50 {res['p50_ms']} "
                    f"p95 {res['p95_ms']} ms, {res['recalls_per_s']}/s, server CPU {res['server_cpu_ms_per_recall']} "
                    f"ms/recall, client CPU {res['client_cpu_ms_per_recall']} ms/recall")
    finally:
        if not a.dir:
            shutil.rmtree(tmp, ignore_errors=True)
    out = {"nodes": a.nodes, "real_turns": a.real, "queries_per_client": a.queries, "build": build_s,
           "runs": runs,
           "machine": {"cpus": os.cpu_count(), "load_avg": [round(x, 2) for x in os.getloadavg()],
                       "python": platform.python_version()}}
    text = json.dumps(out, indent=2)
    print(text)
    if a.json:
        a.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
