"""hela's MCP server under the real Claude Code binary, offline (``tests/agents_support.py``).

The fake Messages API plays the model: when hela's ``recall`` is among the tools it was sent, it answers
with a ``tool_use`` of ``mcp__hela__recall`` (the name Claude Code gives an MCP tool); once that tool's
result came back, with a final text. The test then reads what Claude Code sent in that request: the tool
result must carry the memory stored beforehand with ``hela add``.

* HTTP: a long-lived ``hela mcp --http 127.0.0.1:PORT --token-file FILE``, registered with ``claude mcp add
  --transport http hela URL --header "Authorization: Bearer TOKEN"`` (the transport docs/mcp.md gives for
  headless and busy machines): the server is up before the agent starts, so the first request has the tools.
* stdio: ``claude mcp add hela -- python -m hela_cli mcp --db DB``, Claude Code starting the server itself,
  with ``MCP_CONNECTION_NONBLOCKING=false`` (Claude Code then waits for its MCP servers before the first
  request; by default ``claude -p`` does not, and on a busy machine it sends the request before hela
  answers: docs/benchmarks/agents.md, "MCP start-up"). Even so a session on a very busy machine sometimes started
  without hela's tools (3 of 16 measured), so while they are not offered the fake model takes a turn with
  ``sleep 2`` (Bash, allowed for that command only) instead of failing: the test is about the server
  working under Claude Code, the timing is the benchmark's.

Tool search is off (``ENABLE_TOOL_SEARCH=false``) so that MCP tools are in the request's ``tools`` and can
be called directly.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.agents_support import ToolUse, claude_env, fake_messages_api, require_claude, run_claude
from tests.reliability import PY, REPO, hela, hela_env

TOKEN = "claude-test-token-" + "Lm3q8" * 5
MEMORY = "I adopted a grey cat called Miso"
RECALL = "mcp__hela__recall"
ANSWER = "Your cat is called Miso."


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body.get("messages") or [] if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


RECALL_ID = "toolu_hela_recall"
WAIT = "sleep 2"  # a turn of the fake model while hela's tools are not offered yet (stdio: see the module)


def agent(body: dict[str, Any]) -> str | ToolUse:
    """The fake model: call hela's recall when offered, answer once its result is back; while it is not
    offered, wait a turn with a ``sleep`` (at most 30)."""
    results = tool_results(body)
    if any(r.get("tool_use_id") == RECALL_ID for r in results):
        return ANSWER
    if RECALL in [t.get("name") for t in body.get("tools") or []]:
        return ToolUse(RECALL, {"space": "pets", "query": "What is my cat called?"}, id=RECALL_ID)
    if len(results) < 30:
        return ToolUse("Bash", {"command": WAIT, "description": "Wait"}, id=f"toolu_wait_{len(results)}")
    return "hela's tools were not offered."


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return str(content)


def remember(tmp: Path, db: Path) -> None:
    done = hela(["add", "-s", "pets", "--speaker", "Alice", MEMORY], hela_env(tmp, db))
    assert done.returncode == 0, done.stderr


def ask_claude(claude: Path, tmp: Path, api: Any, add_args: list[str], **env: str) -> subprocess.CompletedProcess:
    project = tmp / "project"
    project.mkdir()
    cenv = claude_env(tmp / "claude-home", api, ENABLE_TOOL_SEARCH="false", **env)
    added = subprocess.run([str(claude), "mcp", "add", *add_args], cwd=str(project), env=cenv, capture_output=True,
                           text=True, timeout=120)
    assert added.returncode == 0, added.stderr or added.stdout
    return run_claude(claude, "What is my cat called?", project, cenv, 300, "--allowedTools", RECALL,
                      f"Bash({WAIT})", "--debug")


def mcp_log(tmp: Path) -> str:
    """Claude Code's debug log lines about hela's server and the API requests (for a failure message)."""
    logs = sorted((tmp / "claude-home" / ".claude" / "debug").glob("*.txt"))
    lines = logs[-1].read_text(errors="replace").splitlines() if logs else []
    return "\n".join(line for line in lines if '"hela"' in line or "API REQUEST" in line or "nonblocking" in line)


def check_recall_came_back(res: subprocess.CompletedProcess, api: Any, tmp: Path) -> None:
    assert res.returncode == 0, res.stderr
    assert ANSWER in res.stdout, mcp_log(tmp)
    results = {b["tool_use_id"]: b for body in api.messages() for b in tool_results(body)}
    assert not results[RECALL_ID].get("is_error"), results[RECALL_ID]
    out = json.loads(result_text(results[RECALL_ID]))
    assert out["space"] == "pets" and MEMORY in [m["text"] for m in out["memories"]]


@contextlib.contextmanager
def http_server(tmp: Path, db: Path, token_file: Path) -> Iterator[tuple[str, Path]]:
    """A long-lived ``hela mcp --http 127.0.0.1:PORT``: (its URL, its output file), stopped with Ctrl-C."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp / "server.out"
    with log.open("w") as out:
        proc = subprocess.Popen([PY, "-m", "hela_cli", "mcp", "--http", f"127.0.0.1:{port}", "--db", str(db),
                                 "--token-file", str(token_file)], env=hela_env(tmp, None), stdout=out,
                                stderr=subprocess.STDOUT, cwd=str(REPO))
    try:
        deadline = time.monotonic() + 180  # a hang guard for a busy machine, not a timing assertion
        while "serving the hela tools" not in log.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"hela mcp --http did not start:\n{log.read_text()}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_claude_code_recalls_through_the_http_server(tmp_path):
    claude = require_claude()
    db, token_file = tmp_path / "shared.db", tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    remember(tmp_path, db)
    with http_server(tmp_path, db, token_file) as (url, log), fake_messages_api(agent) as api:
        res = ask_claude(claude, tmp_path, api, ["--transport", "http", "hela", url,
                                                  "--header", f"Authorization: Bearer {TOKEN}"])
        check_recall_came_back(res, api, tmp_path)
        assert RECALL in [t.get("name") for t in api.messages()[0].get("tools") or []]  # from the first request
    assert TOKEN not in log.read_text()
    assert TOKEN not in res.stdout + res.stderr


def test_claude_code_starts_the_stdio_server_and_waits_for_it(tmp_path):
    claude = require_claude()
    db = tmp_path / "stdio.db"
    remember(tmp_path, db)
    env = hela_env(tmp_path, None)
    server_env = [f"{k}={env[k]}" for k in ("PYTHONPATH", "HELA_HOME", "HELA_MODELS_DIR", "HELA_MODELS_N_THREADS")]
    with fake_messages_api(agent) as api:
        res = ask_claude(claude, tmp_path, api, ["hela", *[x for e in server_env for x in ("-e", e)], "--",
                                                  sys.executable, "-m", "hela_cli", "mcp", "--db", str(db)],
                         MCP_CONNECTION_NONBLOCKING="false")
        check_recall_came_back(res, api, tmp_path)


# ------------------------------------------------------------------------------------------ facts that change
CHANGED_OLD = "Context for later: our model server is vLLM 0.6 behind nginx, and the GPU box is called orca."
CHANGED_NEW = "Update: we replaced vLLM with SGLang last week because of the prefix cache; orca still hosts it."
CHANGED_QUESTION = "Which inference server does our model run on now?"
CHANGED_RECALL_ID = "toolu_hela_recall_facts"


def _changed_agent(body: dict[str, Any]) -> str | ToolUse:
    if any(r.get("tool_use_id") == CHANGED_RECALL_ID for r in tool_results(body)):
        return "SGLang."
    if RECALL in [t.get("name") for t in body.get("tools") or []]:
        return ToolUse(RECALL, {"space": "proj", "query": CHANGED_QUESTION}, id=CHANGED_RECALL_ID)
    return "hela's tools were not offered."


def test_mcp_recall_returns_the_marks_as_fields(tmp_path):
    """Facts that change (issue 38): two facts written with `hela add` / `hela add --supersedes`; Claude Code
    calls recall over HTTP: the new fact comes above the old one, which carries the marks as fields."""
    claude = require_claude()
    db, token_file = tmp_path / "shared.db", tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    env = hela_env(tmp_path, db)
    first = hela(["add", "-s", "proj", "--time", "2024-05-01", CHANGED_OLD], env)
    assert first.returncode == 0, first.stderr
    old = int(first.stdout.strip())
    second = hela(["add", "-s", "proj", "--time", "2024-06-01", "--supersedes", str(old), CHANGED_NEW], env)
    assert second.returncode == 0, second.stderr
    new = int(second.stdout.strip())
    with http_server(tmp_path, db, token_file) as (url, _), fake_messages_api(_changed_agent) as api:
        res = ask_claude(claude, tmp_path, api, ["--transport", "http", "hela", url,
                                                  "--header", f"Authorization: Bearer {TOKEN}"])
        assert res.returncode == 0, res.stderr
        results = {b["tool_use_id"]: b for body in api.messages() for b in tool_results(body)}
    out = json.loads(result_text(results[CHANGED_RECALL_ID]))
    got = {m["id"]: m for m in out["memories"]}
    ids = [m["id"] for m in out["memories"]]
    assert new in got and ids.index(new) < ids.index(old), ids
    assert (got[old]["superseded_by"], got[old]["supersession_status"], got[old]["mark"]) == \
        (new, "superseded", f"(superseded by #{new}, 2024-06-01)")
    assert got[old]["invalid_at"].startswith("2024-06-01") and got[new]["supersedes"] == [old]
    assert got[new]["superseded_by"] is None and got[new]["mark"] is None
