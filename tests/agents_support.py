"""Running real coding agents offline in tests: the Claude Code binary and a fake Anthropic Messages API.

* :func:`claude_binary` finds the ``claude`` executable that ``make agents`` installs (npm, into the
  git-ignored ``.agents/`` folder of the repository); :func:`require_claude` skips a test without it when
  the environment variable ``CI`` is unset, and fails it in CI (a missing binary there is a broken build).
* :func:`fake_messages_api` serves ``POST /v1/messages`` on 127.0.0.1 (server-sent events when the request
  streams, plain JSON otherwise; ``/v1/messages/count_tokens`` too) and records every request it received,
  so a test can check what reached the model (a hook's ``additionalContext``, a recalled memory).
* :func:`claude_env` is the environment of an offline session: ``ANTHROPIC_BASE_URL`` at the fake API, a
  dummy key, non-essential traffic off, ``HOME`` in a temporary directory.

Used by the hook tests (tests/test_hooks_claude.py) and the MCP tests with the real binary.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

REPO = Path(__file__).resolve().parents[1]
AGENTS_DIR = REPO / ".agents"
DUMMY_KEY = "sk-ant-test-dummy-key-not-a-secret"


def claude_binary() -> tuple[Path | None, str]:
    """``(path, "")`` of the Claude Code binary, or ``(None, why not)``. ``HELA_TEST_CLAUDE`` overrides."""
    given = os.environ.get("HELA_TEST_CLAUDE")
    path = Path(given) if given else AGENTS_DIR / "node_modules" / ".bin" / "claude"
    if path.exists() and os.access(path, os.X_OK):
        return path, ""
    return None, f"{path} missing: run `make agents` (npm install of @anthropic-ai/claude-code)"


def require_claude() -> Path:
    """The binary, or skip (no ``CI`` in the environment) / fail (in CI) with the reason."""
    path, why = claude_binary()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return path


@dataclass
class FakeAPI:
    """The running fake Messages API: ``url`` for ANTHROPIC_BASE_URL, ``requests`` as received."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)

    def messages(self) -> list[dict[str, Any]]:
        """The JSON bodies of the ``/v1/messages`` requests, in order."""
        return [r["body"] for r in self.requests if r["path"].split("?")[0] == "/v1/messages"]

    def texts(self) -> list[str]:
        """Each /v1/messages request as one string (system prompt and messages), for ``in`` checks."""
        return [json.dumps(b, ensure_ascii=False) for b in self.messages()]


@dataclass(frozen=True)
class ToolUse:
    """A reply that calls a tool (``tool_use`` block, stop reason ``tool_use``): the agent runs the tool and
    sends its result in the next request."""

    name: str
    input: dict[str, Any]
    id: str = "toolu_fake_0001"


def _block(reply: str | ToolUse) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
    """(the complete content block, the block as streaming starts it, its one delta, the stop reason)."""
    if isinstance(reply, ToolUse):
        block = {"type": "tool_use", "id": reply.id, "name": reply.name, "input": reply.input}
        return (block, {**block, "input": {}}, {"type": "input_json_delta", "partial_json": json.dumps(reply.input)},
                "tool_use")
    return ({"type": "text", "text": reply}, {"type": "text", "text": ""}, {"type": "text_delta", "text": reply},
            "end_turn")


def _sse(reply: str | ToolUse, model: str) -> bytes:
    _, start, delta, stop = _block(reply)
    events = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode("utf-8")


@contextlib.contextmanager
def fake_messages_api(reply: str | Callable[[dict[str, Any]], str | ToolUse] = "Done.") -> Iterator[FakeAPI]:
    """A fake Anthropic Messages API on 127.0.0.1 (a free port) answering every request with ``reply``
    (a string, or a function of the request body returning a string or a :class:`ToolUse`). Yields a
    :class:`FakeAPI` recording the requests."""
    api = FakeAPI(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _body(self) -> Any:
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n) if n else b""
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return raw.decode("utf-8", "replace")

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802
            body = self._body()
            with lock:
                api.requests.append({"method": "POST", "path": self.path, "body": body})
            path = self.path.split("?")[0]
            if path.endswith("/count_tokens"):
                self._send(200, b'{"input_tokens": 100}', "application/json")
                return
            if path != "/v1/messages" or not isinstance(body, dict):
                self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"fake"}}',
                           "application/json")
                return
            text = reply(body) if callable(reply) else reply
            model = str(body.get("model") or "claude-fake")
            if body.get("stream"):
                self._send(200, _sse(text, model), "text/event-stream")
            else:
                block, _, _, stop = _block(text)
                msg = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                       "content": [block], "stop_reason": stop,
                       "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 3}}
                self._send(200, json.dumps(msg).encode("utf-8"), "application/json")

        def do_GET(self) -> None:  # noqa: N802
            with lock:
                api.requests.append({"method": "GET", "path": self.path, "body": None})
            self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"fake"}}',
                       "application/json")

        do_HEAD = do_GET

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()


def claude_env(home: Path, api: FakeAPI, **extra: str) -> dict[str, str]:
    """The environment of an offline Claude Code session: the fake API, a dummy key, ``HOME`` = ``home``,
    no non-essential traffic (no update check, no telemetry)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "HELA_"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update({
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    })
    env.update(extra)
    return env


def run_claude(binary: Path, prompt: str, cwd: Path, env: dict[str, str], timeout: float = 120,
               *args: str) -> subprocess.CompletedProcess:
    """``claude -p PROMPT`` in ``cwd``; the completed process (stdout, stderr, returncode)."""
    return subprocess.run([str(binary), "-p", prompt, *args], cwd=str(cwd), env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
