"""What the tests of a real ``hela mcp --http`` share (tests/test_mcp_http.py, tests/test_tokens.py): the server
as a process on 127.0.0.1 and a free port, an SDK streamable HTTP client session with a token of the test's
choosing, and a session that must be refused."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.reliability import PY, REPO, hela_env

READY = "hela mcp: serving the hela tools at "


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    db: Any
    err: Path
    home: Path

    def output(self) -> str:
        return self.err.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _preexec(sigint: str, nofile: int | None) -> Any:
    """The child's SIGINT disposition and, with ``nofile``, its descriptor limit (``ulimit -n``)."""
    def run() -> None:
        (_ignore_sigint if sigint == "ignored" else _default_sigint)()
        if nofile is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    return run


def start(tmp: Path, *args: str, sigint: str = "default", db: str | None = None, nofile: int | None = None,
          **env: str) -> Server:
    """``hela mcp --http 127.0.0.1:PORT`` as a real process; returns once it listens (or fails the test
    with its stderr if it exits first). stdout and stderr go to one file. ``sigint``: the disposition the
    process inherits: "default", or "ignored" (what `cmd &` in a script, or a CI runner, hands down);
    "default" is set explicitly so that a test run started in the background behaves as one in a terminal.
    ``db``: the database (a file path or a Postgres URL; default ``tmp/shared.db``). ``nofile``: the server's
    ``ulimit -n``."""
    tmp.mkdir(parents=True, exist_ok=True)
    db, err = (db or tmp / "shared.db"), tmp / "server.out"
    port = free_port()
    with err.open("w") as f:
        proc = subprocess.Popen([PY, "-m", "hela_cli", "mcp", "--http", f"127.0.0.1:{port}", "--db", str(db), *args],
                                env=hela_env(tmp, None, **env), stdout=f, stderr=subprocess.STDOUT, cwd=str(REPO),
                                preexec_fn=_preexec(sigint, nofile))
    server = Server(proc, f"http://127.0.0.1:{port}/mcp", db, err, tmp / "home")
    deadline = time.monotonic() + 180  # a hang guard for a busy machine, not a timing assertion
    while READY not in server.output():
        if proc.poll() is not None or time.monotonic() > deadline:
            server.stop()
            pytest.fail(f"the server did not start:\n{server.output()}")
        time.sleep(0.1)
    return server


def http_client(token: str | None, statuses: list[int] | None = None, scheme: str = "Bearer") -> httpx2.AsyncClient:
    async def record(response: httpx2.Response) -> None:
        if statuses is not None:
            statuses.append(response.status_code)

    headers = {"Authorization": f"{scheme} {token}"} if token is not None else {}
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(300), event_hooks={"response": [record]})


class Session:
    """An SDK client session over streamable HTTP with its own HTTP client (its headers can be changed)."""

    def __init__(self, url: str, token: str | None, statuses: list[int] | None = None):
        self.url, self.http = url, http_client(token, statuses)

    async def __aenter__(self) -> "Session":
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(self.http)
            r, w = await stack.enter_async_context(streamable_http_client(self.url, http_client=self.http))
            self.s = await stack.enter_async_context(ClientSession(r, w))
            await self.s.initialize()
            self._stack = stack.pop_all()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stack.__aexit__(*exc)

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        res = await self.s.call_tool(name, args)
        assert not res.is_error, res.content[0].text
        assert res.structured_content == json.loads(res.content[0].text)
        return res.structured_content


def refused(url: str, token: str | None, scheme: str = "Bearer") -> list[int]:
    """Open an SDK session with ``token``: it must fail; returns the HTTP statuses it got."""
    statuses: list[int] = []

    async def main() -> None:
        with pytest.raises((MCPError, ExceptionGroup)):
            async with http_client(token, statuses, scheme) as c, \
                    streamable_http_client(url, http_client=c) as (r, w), ClientSession(r, w) as s:
                await s.initialize()

    anyio.run(main)
    return statuses
