"""What a client can hold of a hela server (``hela mcp --http``, ``hela ui``; issue 57): bounded, boring, and
never the reason the server dies.

* **connections**: at most :data:`MAX_CONNECTIONS` open at once (a new one past that is closed at once); a
  connection that has sent no complete request head within :data:`HEAD_TIMEOUT_S`, that is idle between
  requests for as long, or whose request body stalls for :data:`BODY_TIMEOUT_S`, is closed. A response in
  flight (an MCP event stream) is never cut. uvicorn times out only the keep-alive after a response: a
  connection that never sends a byte stayed open for ever, and 1,100 of them under ``ulimit -n 1024`` made
  ``accept`` fail (EMFILE);
* **EMFILE**: asyncio's accept loop backs off for a second and accepts again; nothing on that path may
  raise or open a file, so logging is plain (:func:`plain_logging`): one line per event to stderr, no Rich
  handler (the MCP SDK installs one whose tracebacks read source files, and that read failed with EMFILE
  too), no traceback rendering on the event loop;
* **MCP sessions per token** (:class:`SessionCap`): a token holds at most ``per_token`` stateful sessions
  (its oldest idle ones expire after ``idle_s``); the next ``initialize`` gets 429, and other tokens'
  clients never notice. The SDK's own limit (10,000 for the whole server, 30 minutes idle) let one
  read-only token lock every client out.

Pure asyncio / ASGI; uvicorn is imported only by :func:`uvicorn_config`."""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import time
from typing import Any

MAX_CONNECTIONS = 512
HEAD_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 15.0
SESSIONS_PER_TOKEN = 64
SESSION_IDLE_S = 600.0
REPEAT_S = 5.0   # a repeated warning is logged at most this often


def plain_logging(level: int = logging.INFO) -> None:
    """Root and uvicorn loggers to one plain stderr handler (no Rich, no traceback rendering); a logging
    error is dropped, never raised (``logging.raiseExceptions`` off)."""
    logging.raiseExceptions = False
    handler = _OneLine(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(name)s: %(message)s"))
    for name in ("", "uvicorn", "uvicorn.error", "uvicorn.access", "asyncio", "mcp"):
        log = logging.getLogger(name)
        log.handlers[:] = [handler] if name == "" else []
        log.propagate = name != ""
    logging.getLogger().setLevel(level)


class _OneLine(logging.StreamHandler):
    """A stream handler that writes one line per record: an exception as its type and message only (a
    rendered traceback reads source files, which fails when the process is out of descriptors). A warning
    or error repeated (the same logger and message template, e.g. asyncio's EMFILE back-off) is written at
    most once every :data:`REPEAT_S` seconds, with the number left out since."""

    def __init__(self, stream: Any):
        super().__init__(stream)
        self._seen: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:  # type: ignore[override]
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, str(record.msg)[:200])
        now = time.monotonic()
        last, skipped = self._seen.get(key, (-REPEAT_S, 0))
        if now - last < REPEAT_S:
            self._seen[key] = (last, skipped + 1)
            return False
        if len(self._seen) > 1000:
            self._seen.clear()
        self._seen[key] = (now, 0)
        if skipped:
            record.msg = f"{record.msg} ({skipped} more like it not logged)"
        return True

    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        line = super().format(record)
        if exc and exc[1] is not None:
            line += f" ({type(exc[1]).__name__}: {exc[1]})"
        return " ".join(line.split())[:2000]


def bounded_protocol() -> type:
    """uvicorn's h11 protocol with the connection bounds above (imported lazily: uvicorn is an optional
    import of the library)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Bounded(H11Protocol):
        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._last_data = time.monotonic()
            if len(self.connections) > MAX_CONNECTIONS:
                transport.close()
                return
            self._watch = self.loop.call_later(HEAD_TIMEOUT_S, self._check)

        def data_received(self, data: bytes) -> None:
            self._last_data = time.monotonic()
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            watch = getattr(self, "_watch", None)
            if watch is not None:
                watch.cancel()
            super().connection_lost(exc)

        def _check(self) -> None:
            if self.transport.is_closing():
                return
            idle = time.monotonic() - self._last_data
            cycle = self.cycle
            waiting_head = cycle is None or cycle.response_complete
            stalled_body = cycle is not None and not cycle.response_started and cycle.more_body
            limit = HEAD_TIMEOUT_S if waiting_head else BODY_TIMEOUT_S
            if (waiting_head or stalled_body) and idle >= limit:
                self.transport.close()
                return
            self._watch = self.loop.call_later(max(0.5, limit - idle if idle < limit else limit), self._check)

    return Bounded


def uvicorn_config(app: Any, **kw: Any) -> Any:
    """A ``uvicorn.Config`` with hela's bounds: the bounded protocol, at most ``MAX_CONNECTIONS`` requests in
    flight (503 past that), a 5 s keep-alive, plain logging (no log config of uvicorn's own)."""
    import uvicorn

    plain_logging(logging.WARNING if kw.get("log_level") == "warning" else logging.INFO)
    kw.setdefault("timeout_keep_alive", 5)
    return uvicorn.Config(app, http=bounded_protocol(), limit_concurrency=MAX_CONNECTIONS, log_config=None, **kw)


def _token_key(scope: Any) -> str:
    for k, v in scope.get("headers") or []:
        if k == b"authorization":
            return hashlib.sha256(v).hexdigest()[:32]
    return ""


class SessionCap:
    """ASGI middleware in front of the MCP app: at most ``per_token`` live stateful sessions per bearer
    token. A session is counted from the response that gives its ``mcp-session-id``, touched by each request
    that names it, and forgotten after a ``DELETE`` or ``idle_s`` without a request (the SDK's manager is
    given the same idle timeout, so both forget it together)."""

    def __init__(self, app: Any, per_token: int = SESSIONS_PER_TOKEN, idle_s: float = SESSION_IDLE_S,
                 path: str = "/mcp"):
        self.app, self.per_token, self.idle_s, self.path = app, per_token, idle_s, path
        self.sessions: dict[str, dict[str, float]] = {}   # token key -> session id -> last use
        self.pending: dict[str, int] = {}                 # token key -> requests without a session in flight

    def _live(self, key: str) -> dict[str, float]:
        now = time.monotonic()
        held = self.sessions.setdefault(key, {})
        for sid in [s for s, t in held.items() if now - t > self.idle_s]:
            del held[sid]
        return held

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path", "").rstrip("/") != self.path:   # /hook: no sessions
            await self.app(scope, receive, send)
            return
        key = _token_key(scope)
        sid = next((v.decode("latin-1") for k, v in scope.get("headers") or [] if k == b"mcp-session-id"), None)
        held = self._live(key)
        if sid is not None:
            if sid in held:
                if scope.get("method") == "DELETE":
                    held.pop(sid, None)
                else:
                    held[sid] = time.monotonic()
            await self.app(scope, receive, send)
            return
        if scope.get("method") == "POST" and len(held) + self.pending.get(key, 0) >= self.per_token:
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32000, "message": f"too many open sessions for this token ({self.per_token}); "
                                           "close one (DELETE) or wait for one to expire"}}).encode()
            await send({"type": "http.response.start", "status": 429,
                        "headers": [(b"content-type", b"application/json"), (b"retry-after", b"60"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return

        counted = [True]   # this request is in ``pending`` until its response starts

        def settle() -> None:
            if counted[0]:
                counted[0] = False
                self.pending[key] -= 1

        async def counting(message: Any) -> None:
            if message["type"] == "http.response.start":
                for k, v in message.get("headers") or []:
                    if k.lower() == b"mcp-session-id":
                        self._live(key)[v.decode("latin-1")] = time.monotonic()
                settle()   # counted as a session now, or opened none
            await send(message)

        self.pending[key] = self.pending.get(key, 0) + 1   # a request in flight may open a session: counted now
        try:
            await self.app(scope, receive, counting)
        finally:
            settle()


def run_server(server: Any, sock: Any) -> None:
    """``server.run`` on ``sock``; a Ctrl-C that lands while uvicorn is still starting (before its own signal
    handlers are in place) surfaces from asyncio as ``CancelledError``, which is no ``Exception``: it printed a
    traceback and exited 1. It is the Ctrl-C it came from."""
    import asyncio

    try:
        server.run(sockets=[sock])
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None
