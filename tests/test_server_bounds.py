"""What a client can hold of ``hela mcp --http`` and ``hela ui`` (issue 57; hela_cli/mcp_server/bounds.py): idle
connections past the descriptor limit do not take the server down, a connection that never sends a request is
closed, one token's session flood does not lock another token out, and the server logs plain lines."""

from __future__ import annotations

import json
import socket
import time

import anyio
import pytest
import httpx2

from hela_cli.mcp_server import bounds
from tests.http_support import Session, start
from tests.reliability import hela, hela_env


def add_token(db: str, env: dict[str, str], name: str, *args: str) -> str:
    r = hela(["--db", db, "tokens", "add", name, *args], env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()

TOKEN = "bounds-test-token-0123456789abcdef"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}}


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def _works(url: str, token: str) -> None:
    async def main() -> None:
        async with Session(url, token) as c:
            assert "recall" in {t.name for t in (await c.s.list_tools()).tools}
    anyio.run(main)


def test_idle_connections_past_the_descriptor_limit(tmp_path):
    """1,500 connections that send nothing, against a server whose ``ulimit -n`` is 1024: it keeps running,
    says so in plain lines (no traceback), and serves a real client once they are gone."""
    server = start(tmp_path, nofile=1024, HELA_MCP_TOKEN=TOKEN)
    socks = []
    try:
        port = _port(server.url)
        for _ in range(1500):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect_ex(("127.0.0.1", port))
            except OSError:
                pass
            socks.append(s)
        time.sleep(3)
        assert server.proc.poll() is None, server.output()
        for s in socks:
            s.close()
        socks = []
        _works(server.url, TOKEN)
        assert server.proc.poll() is None
        out = server.output()
        assert "Traceback" not in out and len(out.splitlines()) < 2000, out[-3000:]
    finally:
        for s in socks:
            s.close()
        server.stop()


def test_a_connection_that_sends_nothing_is_closed(tmp_path):
    server = start(tmp_path, HELA_MCP_TOKEN=TOKEN)
    try:
        port = _port(server.url)
        quiet = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
        half = socket.create_connection(("127.0.0.1", port))
        half.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nx")   # a body that stalls
        for s in [*quiet, half]:
            s.settimeout(bounds.HEAD_TIMEOUT_S + bounds.BODY_TIMEOUT_S + 30)   # a hang guard, not a timing
            while s.recv(65536):   # the server closes it: recv returns b'' (a timeout here fails the test)
                pass
            s.close()
        assert server.proc.poll() is None
        _works(server.url, TOKEN)
    finally:
        server.stop()


def test_one_token_cannot_lock_another_out(tmp_path):
    env = hela_env(tmp_path, tmp_path / "shared.db")
    flood = add_token(str(tmp_path / "shared.db"), env, "flood", "--space", "s", "--read-only")
    server = start(tmp_path, HELA_MCP_TOKEN=TOKEN)
    try:
        codes = []
        with httpx2.Client(timeout=60, headers={"Authorization": f"Bearer {flood}",
                                                "Accept": "application/json, text/event-stream"}) as c:
            for _ in range(bounds.SESSIONS_PER_TOKEN + 20):
                codes.append(c.post(server.url, content=json.dumps(INIT),
                                    headers={"Content-Type": "application/json"}).status_code)
        assert codes[:bounds.SESSIONS_PER_TOKEN] == [200] * bounds.SESSIONS_PER_TOKEN, codes
        assert set(codes[bounds.SESSIONS_PER_TOKEN:]) == {429}
        _works(server.url, TOKEN)   # the owner's client, and anyone else's, still gets in
    finally:
        server.stop()


def test_plain_logging_never_renders_a_traceback(capsys):
    import logging

    bounds.plain_logging()
    try:
        raise OSError(24, "Too many open files")
    except OSError:
        logging.getLogger("asyncio").exception("socket.accept() out of system resource")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "OSError: [Errno 24] Too many open files" in err


def test_deeply_nested_hook_body_is_one_clear_refusal(tmp_path):
    """issue 57: a deeply nested JSON body to POST /hook was a 500 with a traceback."""
    server = start(tmp_path, HELA_MCP_TOKEN=TOKEN)
    try:
        hook_url = server.url[: -len("/mcp")] + "/hook"
        with httpx2.Client(timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
            r = c.post(hook_url, content=b"[" * 100_000 + b"]" * 100_000)
            assert r.status_code == 400 and r.json() == {"error": "JSON nested too deeply"}
            r = c.post(hook_url, content=b"[1, 2]")
            assert r.status_code == 400 and "object" in r.json()["error"]
        assert "Traceback" not in server.output()
    finally:
        server.stop()


def test_the_session_cap_counts_mcp_sessions_only():
    """A token at its cap still reaches POST /hook (a hook request opens no session)."""
    import asyncio

    seen = []

    async def app(scope, receive, send):
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"mcp-session-id", str(len(seen)).encode())] if scope["path"] == "/mcp" else []})
        await send({"type": "http.response.body", "body": b"{}"})

    cap = bounds.SessionCap(app, per_token=2, path="/mcp")
    statuses = []

    async def send(m):
        if m["type"] == "http.response.start":
            statuses.append(m["status"])

    def req(path):
        return {"type": "http", "method": "POST", "path": path, "headers": [(b"authorization", b"Bearer x")]}
    for path in ("/mcp", "/mcp", "/mcp", "/hook", "/hook"):
        asyncio.run(cap(req(path), None, send))
    assert statuses == [200, 200, 429, 200, 200]


def test_a_ctrl_c_while_uvicorn_starts_is_a_ctrl_c():
    """A Ctrl-C landing before uvicorn's own signal handlers are in place surfaced from asyncio as
    CancelledError (no Exception): `hela ui` printed a traceback and exited 1 (tests/test_ui_token.py once,
    under load). run_server turns it into the KeyboardInterrupt the commands treat as a normal stop."""
    import asyncio

    from hela_cli.mcp_server.bounds import run_server

    class Starting:
        def run(self, sockets):
            raise asyncio.CancelledError()

    with pytest.raises(KeyboardInterrupt):
        run_server(Starting(), None)
