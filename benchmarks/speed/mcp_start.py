"""``hela mcp`` start-up (performance, not a test): process start to the ``initialize`` answer over stdio.

    python benchmarks/speed/mcp_start.py --runs 10                                  # this checkout
    python benchmarks/speed/mcp_start.py --runs 10 --variant base=/tmp/base-src --variant new=.   # A/B, alternated
    python benchmarks/speed/mcp_start.py --importtime                               # where the start goes
    python benchmarks/speed/mcp_start.py --imports                                  # each layer alone (CPU)

What it measures, on this machine, with a raw JSON-RPC client on the server's pipes (no client library in
the timed path): ``python -m hela_cli mcp --db TMP.db`` (what the ``hela`` console script runs) is spawned;
``initialize`` is written at once, as an MCP client does, and then ``notifications/initialized`` and
``tools/list``. Per run:

* **initialize**: spawn to the ``initialize`` answer (the client's ``MCP_TIMEOUT`` clock);
* **tools/list**: spawn to the ``tools/list`` answer (when an agent can first see hela's tools);
* **cpu**: user + system CPU of the server process over its whole life (start, the two answers, exit on
  closed stdin): less sensitive to other jobs on a shared machine than the wall times.

Variants (``NAME=SOURCE_DIR``: the directory holding the ``hela_cli`` package to run, put first on
``PYTHONPATH``) run in turn, one run of each per round, so a change in the machine's load hits all of them
alike; the medians are reported. ``--imports`` times ``python -c IMPORT`` for each layer (python alone,
pydantic, the SDK's protocol models, the SDK package, ``MCPServer``, hela's CLI, hela's tools module, the
memory stack, all of the stdio server) in turn, wall and CPU. ``--importtime`` runs ``python -X importtime``
on the server's imports (the CLI, ``hela_cli.mcp_server.tools`` and the SDK's ``MCPServer`` and stdio
transport) and sums each top-level package's own import time: hela vs the SDK (``mcp``, ``mcp_types``) vs
pydantic, starlette, uvicorn, httpx, numpy and the rest.

Nothing is written into the repository (the database path is in a temporary directory and is never created:
``initialize`` and ``tools/list`` do not open it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "mcp-start-bench", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
#: the modules the stdio server imports (for --importtime)
SERVER_IMPORTS = ("from hela_cli.cli import main; from hela_cli.mcp_server.tools import build_server, serve; "
                  "import mcp.server.mcpserver, mcp.server.stdio")
GROUPS = {"hela": ("hela_cli",), "mcp SDK": ("mcp", "mcp_types"), "pydantic": ("pydantic", "pydantic_core",
          "annotated_types", "typing_inspection"), "starlette / uvicorn / sse": ("starlette", "uvicorn",
          "sse_starlette"), "httpx / httpcore": ("httpx2", "httpcore2", "httpx", "httpcore", "h11"),
          "numpy": ("numpy",), "typer / click / rich": ("typer", "click", "rich", "shellingham")}


def env_for(src: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_") or k == "HELA_MODELS_DIR"}
    env["PYTHONPATH"] = str(src)
    env["HELA_HOME"] = str(home)
    return env


def one_start(src: Path, tmp: Path, timeout: float = 120.0) -> dict[str, float]:
    """Spawn the server, time the two answers, close stdin, reap it with its CPU time."""
    db = tmp / "never-created.db"
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "hela_cli", "mcp", "--db", str(db)], env=env_for(src, tmp / "home"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(tmp))
    timer = threading.Timer(timeout, proc.kill)  # a hang guard, not a measurement
    timer.start()
    out: dict[str, float] = {}
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        for line in proc.stdout:
            msg = json.loads(line)
            if msg.get("id") == 1:
                out["initialize_ms"] = (time.perf_counter() - t0) * 1000
                if "result" not in msg:
                    raise SystemExit(f"initialize failed: {msg}")
                proc.stdin.write((json.dumps(INITIALIZED) + "\n" + json.dumps(TOOLS_LIST) + "\n").encode())
                proc.stdin.flush()
            elif msg.get("id") == 2:
                out["tools_list_ms"] = (time.perf_counter() - t0) * 1000
                out["tools"] = len(msg["result"]["tools"])
                break
        proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        timer.cancel()
        if proc.returncode is None:
            proc.kill()
            proc.wait()
    if "tools_list_ms" not in out:
        raise SystemExit(f"the server did not answer:\n{proc.stderr.read().decode(errors='replace')[-2000:]}")
    out["cpu_ms"] = (usage.ru_utime + usage.ru_stime) * 1000
    return out


def importtime(src: Path, tmp: Path, repeat: int) -> dict[str, Any]:
    """Own import time per top-level package, summed, median of ``repeat`` runs."""
    runs: list[Counter] = []
    for _ in range(repeat):
        res = subprocess.run([sys.executable, "-X", "importtime", "-c", SERVER_IMPORTS], env=env_for(src, tmp / "home"),
                             capture_output=True, text=True, cwd=str(tmp), check=True)
        own: Counter = Counter()
        for line in res.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _, name = (x.strip() for x in line[len("import time:"):].split("|"))
            own[name.split(".")[0]] += int(self_us)
        runs.append(own)
    names = set().union(*runs)
    med = {n: statistics.median(r[n] for r in runs) / 1000 for n in names}
    grouped = {g: round(sum(med.get(p, 0.0) for p in pkgs), 1) for g, pkgs in GROUPS.items()}
    listed = {p for pkgs in GROUPS.values() for p in pkgs}
    grouped["other (stdlib, anyio, yaml, ...)"] = round(sum(v for n, v in med.items() if n not in listed), 1)
    top_other = sorted(((v, n) for n, v in med.items() if n not in listed), reverse=True)[:8]
    return {"total_ms": round(sum(med.values()), 1), "by_group_ms": grouped,
            "largest_other_ms": {n: round(v, 1) for v, n in top_other}}


#: ``--imports``: what each layer of the start costs alone, as ``python -c STATEMENT`` (each includes the one
#: before it where it imports it)
IMPORT_STEPS = {
    "python": "pass",
    "pydantic": "import pydantic",
    "mcp_types (the SDK's protocol models)": "import mcp_types",
    "mcp (the SDK package: client, server, types)": "import mcp",
    "mcp + MCPServer + stdio": "import mcp.server.mcpserver, mcp.server.stdio",
    "hela CLI (typer, click, rich, commands)": "from hela_cli.cli.root import app",
    "hela mcp_server.tools": "from hela_cli.mcp_server.tools import build_server",
    "hela memory stack": "import hela_cli.memory",
    "the whole stdio server": SERVER_IMPORTS,
}


def one_import(src: Path, tmp: Path, statement: str) -> dict[str, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", statement], env=env_for(src, tmp / "home"), cwd=str(tmp))
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"python -c {statement!r} failed ({proc.returncode})")
    return {"wall_ms": wall, "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=SOURCE_DIR",
                    help="a hela_cli source tree to time (repeatable; default: this checkout)")
    ap.add_argument("--runs", type=int, default=10, help="rounds (each variant once per round)")
    ap.add_argument("--importtime", action="store_true", help="attribute the import time instead")
    ap.add_argument("--imports", action="store_true", help="time `python -c IMPORT` for each layer instead "
                    "(the first variant's tree; rounds alternate the statements)")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    variants = {}
    for v in a.variant or [f"this={REPO}"]:
        name, _, src = v.partition("=")
        if not src or not (Path(src) / "hela_cli" / "__init__.py").exists():
            ap.error(f"--variant {v!r}: give NAME=DIR with DIR/hela_cli/__init__.py")
        variants[name] = Path(src).resolve()

    out: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count(), "runs": a.runs}
    with tempfile.TemporaryDirectory(prefix="hela-mcp-start-") as tmp:
        tmp_path = Path(tmp)
        load_before = os.getloadavg()[0]
        if a.importtime:
            out["importtime"] = {name: importtime(src, tmp_path, a.runs) for name, src in variants.items()}
        elif a.imports:
            src = next(iter(variants.values()))
            steps: dict[str, list[dict[str, float]]] = {name: [] for name in IMPORT_STEPS}
            for i in range(a.runs):
                for name, statement in IMPORT_STEPS.items():
                    steps[name].append(one_import(src, tmp_path, statement))
                print(f"round {i + 1} done", file=sys.stderr, flush=True)
            out["imports_median_ms"] = {name: {k: round(statistics.median(r[k] for r in rs), 1)
                                               for k in ("wall_ms", "cpu_ms")} for name, rs in steps.items()}
        else:
            results: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
            for i in range(a.runs):
                for name, src in variants.items():
                    r = one_start(src, tmp_path)
                    results[name].append(r)
                    print(f"round {i + 1} {name}: initialize {r['initialize_ms']:.0f} ms, tools/list "
                          f"{r['tools_list_ms']:.0f} ms, cpu {r['cpu_ms']:.0f} ms", file=sys.stderr, flush=True)
            out["median_ms"] = {name: {k: round(statistics.median(r[k] for r in rs), 1)
                                       for k in ("initialize_ms", "tools_list_ms", "cpu_ms")}
                                for name, rs in results.items()}
            out["tools"] = {name: rs[0]["tools"] for name, rs in results.items()}
        out["load_avg_1min"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    text = json.dumps(out, indent=2)
    print(text)
    if a.json:
        a.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
