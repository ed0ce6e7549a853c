"""The hooks' fast path: ``hela hook`` asks a running ``hela mcp --http`` on the same database (real server,
real hook processes). It answers what the hook would answer in-process; a dead, foreign or refusing server
is logged and the hook runs in-process; the token is never read from or written into a settings file."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from typing import Any, Iterator

import pytest

from tests.hooks_support import PROMPT, TRANSCRIPT, base, context_of, hook, project  # noqa: F401 - the fixture
from tests.reliability import PY, db_state, hela


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def served(project, tmp_path) -> Iterator[dict[str, Any]]:
    """``hela mcp --http`` on the project's database (its generated token saved user-only in the home), and a
    copy of the database as it was, for the same hooks in-process."""
    twin = tmp_path / "twin.db"
    shutil.copy(project["db"], twin)
    port = free_port()
    proc = subprocess.Popen([PY, "-m", "hela_cli", "mcp", "--http", f"127.0.0.1:{port}"], env=project["env"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:   # the server says where it serves once it listens
            if "serving the hela tools" in line:
                break
        else:
            raise AssertionError("hela mcp --http did not start")
        threading.Thread(target=proc.stderr.read, daemon=True).start()   # its access log: never a full pipe
        url = f"http://127.0.0.1:{port}"
        yield {"url": url, "proc": proc, "twin": twin,
               "env": {**project["env"], "HELA_HOOKS_SERVER": url},
               "twin_env": {**project["env"], "HELA_DB": str(twin)}}
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_fast_path_answers_what_the_hook_answers_in_process(project, served):
    # each path its own agent session (a memory is injected once per session: the second would get less)
    for event, fields in (("SessionStart", {"source": "startup"}), ("UserPromptSubmit", {"prompt": PROMPT})):
        payload = base(project, event, **fields, session_id=f"sess-fast-{event}")
        res, lines = hook(project, event, payload, env=served["env"])
        fast = context_of(res, event)
        assert lines[-1]["server"] == "ok" and lines[-1]["result"] == "ok", lines
        payload = {**payload, "session_id": f"sess-twin-{event}"}
        res, lines = hook(project, event, payload, env=served["twin_env"])   # the same database, in-process
        assert "server" not in lines[-1]
        assert context_of(res, event) == fast
    assert "port 6543" in fast
    # the server learnt from the recall as the hook would have (a recall in the asks log of its database)
    assert len(db_state(project["db"])["asks"]) == len(db_state(served["twin"])["asks"]) == 1


def test_capture_through_the_server_and_a_handoff_to_a_child(project, served, tmp_path):
    transcript = tmp_path / "t" / "session.jsonl"
    transcript.parent.mkdir()
    shutil.copy(TRANSCRIPT, transcript)
    payload = base(project, "Stop", session_id="sess-s", transcript_path=str(transcript))
    res, lines = hook(project, "Stop", payload, env=served["env"])
    assert res.returncode == 0 and lines[-1]["server"] == "ok" and lines[-1]["result"] == "ok", lines
    assert lines[-1]["added"] > 0
    # a capture too big to do inline: the server hands it back, a detached child of the hook does it
    payload = base(project, "Stop", session_id="sess-t", transcript_path=str(transcript))
    res, lines = hook(project, "Stop", payload, "claude-code", "--space", "elsewhere",   # new turns there
                      env={**served["env"], "HELA_HOOKS_CAPTURE_INLINE": "0"})
    assert lines[-1]["result"] == "detached" and lines[-1]["server"] == "ok" and lines[-1]["child"], lines
    end = time.monotonic() + 120
    while time.monotonic() < end:
        rows = [json.loads(x) for x in (project["home"] / "hooks.log").read_text().splitlines()]
        child = [r for r in rows if r.get("pid") == lines[-1]["child"]]
        if child:
            break
        time.sleep(0.2)
    assert child and child[0]["result"] == "ok" and child[0]["added"] > 0 and "server" not in child[0], child


def test_dead_server_falls_back_at_once_and_says_so(project, served):
    payload = base(project, "UserPromptSubmit", prompt=PROMPT)
    closed = f"http://127.0.0.1:{free_port()}"
    res, lines = hook(project, "UserPromptSubmit", payload, env={**served["twin_env"], "HELA_HOOKS_SERVER": closed})
    assert "port 6543" in context_of(res, "UserPromptSubmit")
    assert lines[-1]["server"] == "unreachable" and lines[-1]["result"] == "ok", lines
    served["proc"].kill()   # a server that died
    served["proc"].wait(timeout=30)
    payload = {**payload, "session_id": "sess-after"}   # a new session (the first was shown the memory)
    res, lines = hook(project, "UserPromptSubmit", payload, env=served["env"])
    assert "port 6543" in context_of(res, "UserPromptSubmit")
    assert lines[-1]["server"] == "unreachable", lines


def test_server_on_another_database_is_not_used(project, served):
    payload = base(project, "UserPromptSubmit", prompt=PROMPT)
    env = {**served["twin_env"], "HELA_HOOKS_SERVER": served["url"]}
    res, lines = hook(project, "UserPromptSubmit", payload, env=env)
    assert "port 6543" in context_of(res, "UserPromptSubmit")
    assert lines[-1]["server"] == "other database", lines
    assert len(db_state(served["twin"])["asks"]) == 1 and not db_state(project["db"])["asks"]


def test_token_only_from_the_servers_user_only_file(project, served):
    payload = base(project, "UserPromptSubmit", prompt=PROMPT)
    token_file = project["home"] / "mcp-token"
    os.chmod(token_file, 0o644)   # readable by others: not trusted
    try:
        res, lines = hook(project, "UserPromptSubmit", payload, env=served["env"])
        assert "port 6543" in context_of(res, "UserPromptSubmit")
        assert lines[-1]["server"] == "token file not user-only", lines
    finally:
        os.chmod(token_file, 0o600)
    payload = {**payload, "session_id": "sess-after"}   # a new session (the first was shown the memory)
    res, lines = hook(project, "UserPromptSubmit", payload, env={**served["env"], "HELA_MCP_TOKEN": "x" * 32})
    assert lines[-1]["server"] == "refused" and "port 6543" in context_of(res, "UserPromptSubmit"), lines


def test_install_writes_the_url_never_the_token(project, served, tmp_path):
    env = {**project["env"], "HOME": str(tmp_path / "user")}
    res = hela(["hooks", "install", "claude-code", "--server", served["url"]], env=env, cwd=project["dir"])
    assert res.returncode == 0, res.stderr
    settings = tmp_path / "user" / ".claude" / "settings.json"
    text = settings.read_text()
    token = (project["home"] / "mcp-token").read_text().strip()
    assert f"--server {served['url']}" in text and token not in text
    status = hela(["hooks", "status"], env=env, cwd=project["dir"])
    assert token not in status.stdout + status.stderr
    # the installed command runs the fast path
    command = json.loads(text)["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert re.search(r" --server http://127\.0\.0\.1:\d+$", command)
    res = subprocess.run(command, shell=True, input=json.dumps(base(project, "UserPromptSubmit", prompt=PROMPT)).encode(),
                         capture_output=True, env=env, cwd=str(project["dir"]), timeout=120)
    assert "port 6543" in context_of(res, "UserPromptSubmit")
    assert json.loads((project["home"] / "hooks.log").read_text().splitlines()[-1])["server"] == "ok"


@pytest.mark.parametrize("url", ["http://user:secret@127.0.0.1:8765", "ftp://127.0.0.1:8765", "127.0.0.1:8765"])
def test_install_refuses_a_bad_server_url(project, tmp_path, url):
    env = {**project["env"], "HOME": str(tmp_path / "user")}
    res = hela(["hooks", "install", "claude-code", "--server", url], env=env, cwd=project["dir"])
    assert res.returncode != 0 and len(res.stderr.strip().splitlines()) == 1 and "secret" not in res.stderr
    assert not (tmp_path / "user" / ".claude" / "settings.json").exists()


def test_hook_process_on_the_fast_path_imports_no_model_stack(project, served):
    """What keeps the fast path fast: the hook process never imports numpy, llama.cpp or the store."""
    code = ("import sys, runpy; sys.argv = ['hela', 'hook', 'UserPromptSubmit']; "
            "import hela_cli.hooks.process as r; "
            "r.os._exit = lambda code: (print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'llama_cpp', 'yaml') or m.startswith('hela_cli.store') or m == 'hela_cli.memory')), "
            "sys.stdout.flush(), __import__('os')._exit(code)); r.process_main(sys.argv[2:])")
    res = subprocess.run([PY, "-c", code], input=json.dumps(base(project, "UserPromptSubmit", prompt=PROMPT)).encode(),
                         capture_output=True, env=served["env"], cwd=str(project["dir"]), timeout=120)
    out = res.stdout.decode().strip().splitlines()
    assert out[-1] == "[]", out
    assert json.loads((project["home"] / "hooks.log").read_text().splitlines()[-1])["server"] == "ok"


@pytest.mark.parametrize("url", ["http://10.20.30.40:8765", "http://hela.example.com:8765"])
def test_plain_http_carries_the_token_to_loopback_only(url, monkeypatch):
    """The bearer token never crosses a network in clear: plain http is for loopback; elsewhere https."""
    from hela_cli.hooks import client as server

    monkeypatch.setenv("HELA_MCP_TOKEN", "t" * 32)
    opened = []
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: opened.append(a))
    with pytest.raises(server.Unavailable, match="not loopback"):
        server.ask(url, {"event": "UserPromptSubmit"}, 1.0)
    assert opened == []
    assert server._loopback("127.0.0.1") and server._loopback("::1") and server._loopback("localhost")


def test_file_hook_through_the_server(project, served, embedder):
    """The recall by file (issue 39) through the fast path: the same text as in-process."""
    from hela_cli.config import Config
    from hela_cli.memory import Memory

    said = "We keep the staging port in deploy/ports.yaml because the ingress reads it from there."
    for db in (project["db"], served["twin"]):
        with Memory(Config(db=str(db)), embedder=embedder) as mem:
            mem.add_many(project["space"], [{"speaker": "user", "text": said, "session": "earlier-session",
                                             "id": "p1", "time": "2026-11-05 10:00"}])
    payload = base(project, "PreToolUse", session_id="sess-path-fast", tool_name="Edit",
                   tool_input={"file_path": str(project["dir"] / "deploy" / "ports.yaml")})
    res, lines = hook(project, "PreToolUse", payload, env=served["env"])
    fast = context_of(res, "PreToolUse")
    assert lines[-1]["server"] == "ok" and lines[-1]["tokens"] > 0 and said in fast, lines
    res, lines = hook(project, "PreToolUse", {**payload, "session_id": "sess-path-twin"}, env=served["twin_env"])
    assert "server" not in lines[-1] and context_of(res, "PreToolUse") == fast


def test_the_hooks_own_settings_apply_on_the_fast_path(project, served):
    """The server runs with its own ``hooks`` settings (the default ``prompt_k`` 8 and floor 0.5); a hook's
    own, sent with its request, are the ones its event is run with: each client gets what it would get
    in-process with its settings (issue 44: ``prompt_k`` 1 and 3 both got the server's 8)."""
    for k in (1, 3):
        # the relevance decision off in the client's settings too (a setting the server does not have)
        mine = {"HELA_HOOKS_PROMPT_K": str(k), "HELA_HOOKS_PROMPT_MIN_SCORE": "0", "HELA_HOOKS_RELEVANCE": "false"}
        payload = base(project, "UserPromptSubmit", prompt=PROMPT, session_id=f"sess-k{k}")
        res, lines = hook(project, "UserPromptSubmit", payload, env={**served["env"], **mine})
        fast = context_of(res, "UserPromptSubmit")
        assert lines[-1]["server"] == "ok" and len(lines[-1]["memories"]) == k, lines
        payload = {**payload, "session_id": f"sess-twin-k{k}"}
        res, lines = hook(project, "UserPromptSubmit", payload, env={**served["twin_env"], **mine})
        assert "server" not in lines[-1] and len(lines[-1]["memories"]) == k
        assert context_of(res, "UserPromptSubmit") == fast


@contextlib.contextmanager
def answering_after(delay: float) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A stand-in for a server that answers every hook request after ``delay`` seconds (its text says so):
    the URL and the request bodies it got."""
    seen: list[dict[str, Any]] = []

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            seen.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            time.sleep(delay)
            data = json.dumps({"text": "FROM THE STAND-IN SERVER", "facts": {"result": "ok"}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except OSError:   # the hook stopped waiting
                pass

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_slow_server_costs_a_bounded_share_of_the_budget(project):
    """A server that answers after 3 s: a hook with a 7 s budget waits 40 % of it (2.8 s), then answers
    in-process with the rest, and says so (``"server": "slow"``); the same server answering at once is used."""
    from hela_cli.hooks.client import SERVER_SHARE

    env = {**project["env"], "HELA_HOOKS_BUDGET_S": "7", "HELA_MCP_TOKEN": "t" * 32}
    with answering_after(3.0) as (url, seen):
        payload = base(project, "UserPromptSubmit", prompt=PROMPT, session_id="sess-slow")
        res, lines = hook(project, "UserPromptSubmit", payload, env={**env, "HELA_HOOKS_SERVER": url})
        text = context_of(res, "UserPromptSubmit")
    assert "port 6543" in text and "STAND-IN" not in text
    assert lines[-1]["server"] == "slow" and lines[-1]["result"] == "ok", lines
    assert len(seen) == 1 and seen[0]["wait_s"] == pytest.approx(SERVER_SHARE * 7) and SERVER_SHARE * 7 < 3.0
    with answering_after(0.0) as (url, seen):
        payload = {**payload, "session_id": "sess-quick"}
        res, lines = hook(project, "UserPromptSubmit", payload, env={**env, "HELA_HOOKS_SERVER": url})
        assert context_of(res, "UserPromptSubmit") == "FROM THE STAND-IN SERVER" and lines[-1]["server"] == "ok"


def test_a_request_the_hook_no_longer_waits_for_is_not_run(project, embedder, monkeypatch):
    """The endpoint does not run a request that reaches it after the hook stopped waiting (queued behind
    other calls): the hook answered in-process, and the recall would be recorded as shown though the agent
    never got it."""
    from hela_cli.config import Config
    from hela_cli.paths import db_identity
    from hela_cli.hooks.endpoint import serve_event
    from hela_cli.memory import Memory

    monkeypatch.setenv("HELA_HOME", str(project["home"]))
    body = {"event": "UserPromptSubmit", "agent": "claude-code", "space": project["space"], "hooks": {},
            "payload": base(project, "UserPromptSubmit", prompt=PROMPT), "db": db_identity(str(project["db"])),
            "sent": time.time() - 5.0, "wait_s": 0.8}
    with Memory(Config(db=str(project["db"])), embedder=embedder) as mem:
        status, answer = serve_event(body, mem, mem.config)
        assert status == 408 and "not run" in answer["error"]
        # the space it acts on is named (what a caller's rights are checked against), never left to the server
        assert serve_event({k: v for k, v in body.items() if k != "space"}, mem, mem.config)[0] == 400
        assert not db_state(project["db"])["asks"]
        status, answer = serve_event({**body, "sent": time.time()}, mem, mem.config)
        assert status == 200 and "port 6543" in answer["text"]
    assert len(db_state(project["db"])["asks"]) == 1
