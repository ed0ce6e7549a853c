"""What checking a client token costs a shared server (performance, not a test).

    nice -n 10 python benchmarks/speed/token_check.py --json token_check.json
    nice -n 10 python benchmarks/speed/token_check.py --tokens 1000 --calls 300 --pg   # also on a private Postgres

1. **In process**: :meth:`hela_cli.mcp_server.access.Verifier.grant` ``--checks`` times for the server token
   (a digest compared, no database), a client token (its SHA-256, one indexed read of ``tokens``) and an
   unknown token of the client shape (the same read, no row), with ``--tokens`` client tokens in the
   database. p50 / p95 per check.
2. **End to end**: a real ``hela mcp --http`` on 127.0.0.1 and one SDK streamable HTTP session per token,
   ``--calls`` ``spaces`` tool calls each (no model is loaded for them), alternating the two sessions call by
   call so machine load falls on both: p50 / p95 at the client, with the server token and with a client
   token (every request of the latter reads the database).

Nothing is written into the repository; the databases live in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SERVER_TOKEN = "bench-server-token-" + "x" * 24


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def in_process(db: str, n_tokens: int, checks: int) -> dict[str, Any]:
    from hela_cli.mcp_server import access
    from hela_cli.store import Store

    with Store.open(db, must_exist=False) as s:
        made = [access.add(s, f"client-{i}", [f"space-{i % 20}"])[0] for i in range(n_tokens)]
    v = access.Verifier(SERVER_TOKEN, db)
    out: dict[str, Any] = {}
    try:
        v.grant(made[0])   # the connection opened once, as a running server has it
        for label, token in (("server token", SERVER_TOKEN), ("client token", made[len(made) // 2]),
                             ("unknown token", "hela_" + "Q" * 43)):
            times = []
            for _ in range(checks):
                t = time.perf_counter()
                v.grant(token)
                times.append((time.perf_counter() - t) * 1e6)
            out[label] = {"p50_us": round(pct(times, 50), 1), "p95_us": round(pct(times, 95), 1)}
    finally:
        v.close()
    return {"tokens": n_tokens, "checks": checks, **out, "client_token": made[0]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def end_to_end(db: str, client_token: str, calls: int, home: Path) -> dict[str, Any]:
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_")}
    env.update(HELA_HOME=str(home), HELA_MCP_TOKEN=SERVER_TOKEN, PYTHONPATH=str(REPO))
    log = home / "server.out"
    home.mkdir(parents=True, exist_ok=True)
    with log.open("w") as f:
        proc = subprocess.Popen([sys.executable, "-m", "hela_cli", "mcp", "--http", f"127.0.0.1:{port}", "--db", db],
                                env=env, stdout=f, stderr=subprocess.STDOUT)
    try:
        while "serving the hela tools" not in log.read_text():
            if proc.poll() is not None:
                raise SystemExit(log.read_text())
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"
        times: dict[str, list[float]] = {"server token": [], "client token": []}

        async def main() -> None:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {SERVER_TOKEN}"}, timeout=60) as h1, \
                    httpx2.AsyncClient(headers={"Authorization": f"Bearer {client_token}"}, timeout=60) as h2, \
                    streamable_http_client(url, http_client=h1) as (r1, w1), \
                    streamable_http_client(url, http_client=h2) as (r2, w2), \
                    ClientSession(r1, w1) as s1, ClientSession(r2, w2) as s2:
                await s1.initialize()
                await s2.initialize()
                await s1.call_tool("spaces", {})   # the database opened once
                await s2.call_tool("spaces", {})
                for _ in range(calls):
                    for label, s in (("server token", s1), ("client token", s2)):
                        t = time.perf_counter()
                        res = await s.call_tool("spaces", {})
                        times[label].append((time.perf_counter() - t) * 1000)
                        assert not res.is_error

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(60)
    return {label: {"p50_ms": round(pct(t, 50), 2), "p95_ms": round(pct(t, 95), 2),
                    "mean_ms": round(statistics.fmean(t), 2)} for label, t in times.items()} | {"calls": calls}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=1000, help="client tokens in the database")
    ap.add_argument("--checks", type=int, default=2000, help="in-process checks per kind of token")
    ap.add_argument("--calls", type=int, default=300, help="end-to-end `spaces` calls per token")
    ap.add_argument("--pg", action="store_true", help="also on a private embedded Postgres")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    results: dict[str, Any] = {"machine": platform.platform(), "cpus": os.cpu_count(),
                               "load": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="hela-token-bench-") as tmp:
        targets = [("sqlite", str(Path(tmp) / "bench.db"))]
        stack = None
        if args.pg:
            from contextlib import ExitStack

            from hela_cli.testing import local_postgres, new_database

            stack = ExitStack()
            admin = stack.enter_context(local_postgres(Path(tmp) / "pg"))
            targets.append(("postgres", new_database(admin)))
        try:
            for engine, db in targets:
                inproc = in_process(db, args.tokens, args.checks)
                token = inproc.pop("client_token")
                e2e = end_to_end(db, token, args.calls, Path(tmp) / f"home-{engine}")
                results[engine] = {"in_process": inproc, "end_to_end": e2e}
                print(engine, json.dumps(results[engine]), flush=True)
        finally:
            if stack is not None:
                stack.close()
    results["load_after"] = os.getloadavg()[0]
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
