"""``hela mcp`` over stdio answers ``initialize`` and ``tools/list`` before it imports the memory stack.

An agent sends its first request when the MCP servers it started have answered, or when it stops waiting
for them: the server's start is what it must not miss. The server here is a real process (``hela mcp``
under a wrapper that writes the names of the modules the process imported when it exits); a raw JSON-RPC
client on its pipes initializes, lists the tools, and closes stdin. Before any tool call the process has
imported neither numpy, llama.cpp, the SQLite extension nor hela's memory, store, models or HTTP module,
and has not created the database; the first call that needs them imports them (which shows the check can
fail). Start-up times are figures, not assertions: ``benchmarks/speed/mcp_start.py``, BENCHMARKS.md.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from hela_cli.cli import _mcp_stdio_options
from tests.reliability import PY, REPO, hela, hela_env

MODULES_AT_EXIT = """import atexit, sys
OUT = sys.argv[1]
atexit.register(lambda: open(OUT, "w").write("\\n".join(sorted(sys.modules))))
sys.argv = ["hela", *sys.argv[2:]]
from hela_cli.cli import main
main()
"""

#: what a start must not import (a package counts with its submodules)
NOT_BEFORE_A_CALL = ("numpy", "llama_cpp", "sqlean", "sqlite_vec", "snowballstemmer", "hela_cli.memory",
                     "hela_cli.store", "hela_cli.models", "hela_cli.mechanics", "hela_cli.ingest",
                     "hela_cli.mcp_server.http")


def imported(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(p for p in prefixes if any(m == p or m.startswith(p + ".") for m in modules))


def session(tmp: Path, db: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], set[str]]:
    """Initialize, list the tools, make ``calls`` (each answer awaited), close stdin; the answers and the
    modules the server had imported when it exited."""
    out = tmp / "modules.txt"
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "test", "version": "0"}}},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}]
    requests += [{"jsonrpc": "2.0", "id": 3 + i, "method": "tools/call", "params": {"name": name, "arguments": args}}
                 for i, (name, args) in enumerate(calls)]
    proc = subprocess.Popen([PY, "-c", MODULES_AT_EXIT, str(out), "mcp", "--db", str(db)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=hela_env(tmp, None),
                            cwd=str(REPO))
    guard = threading.Timer(300, proc.kill)  # a hang guard for a busy machine, not a timing assertion
    guard.start()
    answers = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
            if request["id"] == 1:
                proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
            proc.stdin.flush()
            answers.append(json.loads(proc.stdout.readline()))  # closed stdin cancels a call in flight: wait
        proc.stdin.close()
        code = proc.wait()
    finally:
        guard.cancel()
        proc.kill()
    assert code == 0, proc.stderr.read() if proc.stderr else code
    assert [m["id"] for m in answers] == [r["id"] for r in requests]
    return answers, set(out.read_text().split("\n"))


def test_initialize_and_tools_list_import_no_memory_stack(tmp_path):
    db = tmp_path / "start.db"
    answers, modules = session(tmp_path, db, [])
    assert answers[0]["result"]["serverInfo"]["name"] == "hela"
    assert len(answers[1]["result"]["tools"]) == 10
    assert imported(modules, NOT_BEFORE_A_CALL) == []
    assert "hela_cli.mcp_server.tools" in modules
    assert imported(modules, ("typer", "hela_cli.cli.root", "hela_cli.cli.commands")) == []  # not through Typer
    assert not db.exists()


def test_the_first_call_imports_what_it_needs(tmp_path):
    db = tmp_path / "start.db"
    answers, modules = session(tmp_path, db, [("spaces", {})])
    assert answers[2]["result"]["structuredContent"] == {"spaces": []}
    assert {"hela_cli.memory", "hela_cli.store", "numpy"} <= set(imported(modules, NOT_BEFORE_A_CALL))
    assert "hela_cli.mcp_server.http" not in modules  # the stdio server never needs the HTTP module


@pytest.mark.parametrize("args, options", [
    ([], {}),
    (["--db", "a.db"], {"--db": "a.db"}),
    (["--db=a.db", "--config", "c.yaml"], {"--db": "a.db", "--config": "c.yaml"}),
    (["--http", "127.0.0.1:1"], None),  # the HTTP server, --help, other or repeated options: the Typer app
    (["--help"], None),
    (["--db", "a.db", "--db", "b.db"], None),
    (["--db"], None),
    (["--token-file", "t"], None),
])
def test_which_mcp_command_lines_skip_typer(args, options):
    assert _mcp_stdio_options(args) == options


def test_a_bad_config_is_one_line_from_the_cli(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("retrieval: [1\n")
    done = hela(["mcp", "--config", str(bad), "--db", str(tmp_path / "x.db")], hela_env(tmp_path, None))
    assert done.returncode == 1 and done.stdout == ""  # stdout is the protocol's: nothing on it
    assert done.stderr.startswith(f"error: {bad}: line 2") and done.stderr.count("\n") == 1
    assert not (tmp_path / "x.db").exists()
