"""Floods against a real ``hela mcp --http`` (issue 57; a benchmark, not a test): idle connections past the
descriptor limit, then one token's ``initialize`` flood, while another token's client keeps working.

    python benchmarks/speed/server_flood.py --idle 5000 --inits 10000 --nofile 1024 --ui --json flood.json

1. The server starts with ``ulimit -n NOFILE`` on 127.0.0.1 (a free port, a temporary database).
2. ``--idle`` connections that send nothing are opened and held for ``--hold`` seconds; the server's RSS and
   whether it is alive are read; they are closed, and the time until a real client's ``initialize`` and
   ``tools/list`` succeed is measured.
3. ``--inits`` ``initialize`` requests from one read-only client token (a flood), 20 at a time; meanwhile the
   server token's ``initialize`` is timed every 0.25 s. Reported: the flood's status codes, the other
   client's p50 / p95 and failures, the server's RSS before and after.
4. ``--aborted`` authenticated POSTs that announce a 100 kB body, send one byte and close; then the time a
   real request takes.
5. With ``--ui``: the idle flood of 2. against ``hela ui`` under the same limit, and the time until the page
   (the address with its token) is served after it.
Loopback only; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TOKEN = "flood-bench-token-0123456789abcdef0123"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}
HDR = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def main() -> None:
    import httpx2 as httpx

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle", type=int, default=5000)
    ap.add_argument("--hold", type=float, default=5.0)
    ap.add_argument("--inits", type=int, default=10000)
    ap.add_argument("--nofile", type=int, default=1024)
    ap.add_argument("--aborted", type=int, default=200, help="aborted authenticated uploads after the floods")
    ap.add_argument("--ui", action="store_true", help="the idle flood against hela ui too")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, a.idle + 1000), hard))
    out: dict = {"idle": a.idle, "inits": a.inits, "nofile": a.nofile}
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_")}
        env.update({"HELA_HOME": f"{tmp}/home", "HELA_MCP_TOKEN": TOKEN})
        db = f"{tmp}/flood.db"
        r = subprocess.run([sys.executable, "-m", "hela_cli", "--db", db, "tokens", "add", "flood", "--space", "s",
                            "--read-only"], env=env, capture_output=True, text=True, check=True)
        flood = r.stdout.strip()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        err = open(f"{tmp}/server.out", "w")

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (a.nofile, a.nofile))
        proc = subprocess.Popen([sys.executable, "-m", "hela_cli", "mcp", "--http", f"127.0.0.1:{port}", "--db", db],
                                env=env, stdout=err, stderr=subprocess.STDOUT, preexec_fn=limit)
        url = f"http://127.0.0.1:{port}/mcp"
        end = time.monotonic() + 120
        while "serving the hela tools" not in Path(f"{tmp}/server.out").read_text() and time.monotonic() < end:
            time.sleep(0.1)
        out["rss_start_mib"] = rss_mib(proc.pid)
        try:
            socks = []
            for _ in range(a.idle):
                s = socket.socket()
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", port))
                socks.append(s)
            time.sleep(a.hold)
            out["alive_during_idle"] = proc.poll() is None
            out["rss_idle_mib"] = rss_mib(proc.pid) if proc.poll() is None else None
            for s in socks:
                s.close()
            t0 = time.perf_counter()
            ok = False
            while time.perf_counter() - t0 < 30 and not ok:
                try:
                    rr = httpx.post(url, json=INIT, headers={**HDR, "Authorization": f"Bearer {TOKEN}"}, timeout=5)
                    ok = rr.status_code == 200
                except httpx.HTTPError:
                    time.sleep(0.05)
            out["served_after_idle_s"] = round(time.perf_counter() - t0, 3) if ok else None

            async def flood_and_probe() -> None:
                codes: dict[int, int] = {}
                lat: list[float] = []
                fails = 0
                done = asyncio.Event()
                async with httpx.AsyncClient(timeout=30) as c:
                    async def flooder(n: int) -> None:
                        for _ in range(n):
                            try:
                                rr = await c.post(url, json=INIT, headers={**HDR, "Authorization": f"Bearer {flood}"})
                                codes[rr.status_code] = codes.get(rr.status_code, 0) + 1
                            except httpx.HTTPError:
                                codes[0] = codes.get(0, 0) + 1

                    async def prober() -> None:
                        nonlocal fails
                        while not done.is_set():
                            t = time.perf_counter()
                            try:
                                rr = await c.post(url, json=INIT, headers={**HDR, "Authorization": f"Bearer {TOKEN}"})
                                if rr.status_code == 200:
                                    lat.append((time.perf_counter() - t) * 1000)
                                    sid = rr.headers.get("mcp-session-id")
                                    if sid:
                                        await c.delete(url, headers={"Authorization": f"Bearer {TOKEN}",
                                                                     "mcp-session-id": sid})
                                else:
                                    fails += 1
                            except httpx.HTTPError:
                                fails += 1
                            await asyncio.sleep(0.25)
                    probe = asyncio.create_task(prober())
                    t0 = time.perf_counter()
                    await asyncio.gather(*(flooder(a.inits // 20) for _ in range(20)))
                    out["flood_s"] = round(time.perf_counter() - t0, 1)
                    done.set()
                    await probe
                lat.sort()
                out["flood_codes"] = codes
                out["other_client"] = {"ok": len(lat), "failed": fails,
                                       "p50_ms": round(statistics.median(lat), 1) if lat else None,
                                       "p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 1) if lat else None}
            asyncio.run(flood_and_probe())
            # aborted uploads: a POST that announces a body, sends a byte of it and closes (with the token)
            for _ in range(a.aborted):
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(f"POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                          f"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{".encode())
                s.close()
            t0 = time.perf_counter()
            rr = httpx.post(url, json=INIT, headers={**HDR, "Authorization": f"Bearer {TOKEN}"}, timeout=60)
            out["aborted_uploads"] = {"n": a.aborted, "next_request_ms": round((time.perf_counter() - t0) * 1000, 1),
                                      "status": rr.status_code}
            out["rss_end_mib"] = rss_mib(proc.pid) if proc.poll() is None else None
            out["alive_at_end"] = proc.poll() is None
            text = Path(f"{tmp}/server.out").read_text(errors="replace")
            out["log_lines"] = len(text.splitlines())
            out["tracebacks"] = text.count("Traceback")
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        if a.ui:
            out["ui"] = ui_flood(a, tmp, env, db, limit)
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))


def ui_flood(a: argparse.Namespace, tmp: str, env: dict, db: str, limit: Any) -> dict:
    """The same idle flood against ``hela ui`` (under the same descriptor limit): alive, its memory, and the
    time until a real browser request (the address with its token) is answered once the flood ends."""
    import httpx2 as httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**env, "HELA_MODELS_DIR": os.environ.get("HELA_MODELS_DIR") or
           str(Path.home() / ".local" / "share" / "hela" / "models")}   # `hela add` embeds with the real model
    subprocess.run([sys.executable, "-m", "hela_cli", "--db", db, "add", "--space", "s", "a memory to show"],
                   env=env, capture_output=True, check=True)
    err = open(f"{tmp}/ui.out", "w")
    proc = subprocess.Popen([sys.executable, "-m", "hela_cli", "--db", db, "ui", "--no-browser", "--port", str(port)],
                            env=env, stdout=err, stderr=subprocess.STDOUT, preexec_fn=limit)
    out: dict = {}
    try:
        end = time.monotonic() + 120
        files: list = []
        while not files and time.monotonic() < end:
            files = list(Path(f"{tmp}/home/ui").glob("ui-*.json")) if Path(f"{tmp}/home/ui").exists() else []
            time.sleep(0.1)
        full = json.loads(files[0].read_text())["url"]
        out["rss_start_mib"] = rss_mib(proc.pid)
        socks = []
        for _ in range(a.idle):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            socks.append(s)
        time.sleep(a.hold)
        out["alive_during_idle"] = proc.poll() is None
        out["rss_idle_mib"] = rss_mib(proc.pid) if proc.poll() is None else None
        for s in socks:
            s.close()
        t0 = time.perf_counter()
        ok = False
        while time.perf_counter() - t0 < 30 and not ok:
            try:
                with httpx.Client(timeout=5, follow_redirects=True) as c:   # the token for a session cookie
                    rr = c.get(full)
                ok = rr.status_code == 200 and "hela" in rr.text
                out.setdefault("first_status", rr.status_code)
            except httpx.HTTPError:
                time.sleep(0.05)
        out["served_after_idle_s"] = round(time.perf_counter() - t0, 3) if ok else None
        text = Path(f"{tmp}/ui.out").read_text(errors="replace")
        out["log_lines"] = len(text.splitlines())
        out["tracebacks"] = text.count("Traceback")
        out["alive_at_end"] = proc.poll() is None
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return out


if __name__ == "__main__":
    main()
