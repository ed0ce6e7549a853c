"""``hela mcp --http HOST:PORT``: the MCP tools of :mod:`hela_cli.mcp_server.tools` shared over HTTP.

One process serves many MCP clients (agents on this or other machines) over the official SDK's
streamable HTTP transport at ``/mcp``. It holds one :class:`~hela_cli.memory.Memory`: the database is
opened and the models are loaded once, on the first call that needs them, for every client. Tool calls
from all sessions run one at a time on it (the limiter in :func:`~hela_cli.mcp_server.tools.build_server`):
one SQLite connection and one llama.cpp context are not safe to share between threads.

Access needs a bearer token, checked by the SDK's own auth hooks (:class:`~hela_cli.mcp_server.access.Verifier`
given to ``MCPServer`` with ``AuthSettings``: its ``RequireAuthMiddleware`` answers 401 before any MCP
message is read). Two kinds are accepted (:mod:`hela_cli.mcp_server.access`): the server token (every
space) and the client tokens of ``hela tokens add`` (their spaces, read-only or not), looked up by digest
in the database on every request. Where the server token comes from, first found wins:

1. ``--token-file PATH`` (the first line of the file);
2. the environment variable ``HELA_MCP_TOKEN``;
3. on a loopback address only: the token saved in ``<data dir>/mcp-token``, generated
   (``secrets.token_urlsafe``) and written user-only (0600) on the first start, when it is printed once
   on stderr with the client configuration. Binding any other address without 1. or 2. is refused unless
   the database holds client tokens (then only they are accepted).

Tokens are compared in constant time (digests of equal length) and never written to any output or log
(the access log shows the request line, which carries no token, and the status).

``POST /hook`` (the same tokens, checked here: the SDK's custom routes carry no auth) is the hooks' fast
path (:mod:`hela_cli.hooks.client`): a coding agent's ``hela hook`` hands its event to this process, which
runs the hook's own handler on a Memory of its own (:class:`HookHost`: its own connection and embedder, one
hook at a time), so a hook never waits behind a tool call (an ``ask`` can take a minute). A client token
may send events only for its own spaces, and a read-only one none (the hooks write: captures, learning).

Bodies: a request body over :data:`MAX_BODY` (its ``Content-Length``), or one sent without a length
(``Transfer-Encoding: chunked``), is refused with 413 before it is read (:class:`BodyLimit`, in front of
every route).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import secrets
import signal
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from hela_cli.config import Config
from hela_cli.errors import HelaError, InputError
from hela_cli.mcp_server.access import ALL, Verifier
from hela_cli.paths import data_dir, ensure_private_dir

TOKEN_ENV = "HELA_MCP_TOKEN"
MCP_PATH = "/mcp"
MIN_TOKEN_CHARS = 16
_TOKEN_CHARS = re.compile(r"[!-~]+")  # printable ASCII without spaces: what an HTTP header carries as is


@dataclass(frozen=True)
class Token:
    """The bearer token and where it came from (``value`` is left out of reprs and tracebacks)."""

    value: str = field(repr=False)
    source: str
    generated: bool = False


def token_path() -> Path:
    """Where the generated token is kept: ``<data dir>/mcp-token``."""
    return data_dir() / "mcp-token"


def parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> ``(host, port)``."""
    host, sep, port = value.strip().rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise InputError(f"--http {value!r}: give HOST:PORT, e.g. 127.0.0.1:8765")
    return host, int(port)


def resolve_host(host: str, port: int) -> tuple[int, str]:
    """The address family and numeric address that ``host`` binds to (first of ``getaddrinfo``)."""
    try:
        family, _, _, _, sockaddr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                       flags=socket.AI_PASSIVE)[0]
    except OSError as e:
        raise InputError(f"--http {host}:{port}: cannot resolve {host!r} ({e.strerror or e})") from None
    return family, str(sockaddr[0])


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


def _check_token(value: str, where: str) -> str:
    if not value:
        raise InputError(f"{where}: the token is empty")
    if not _TOKEN_CHARS.fullmatch(value):
        raise InputError(f"{where}: the token must be printable ASCII without spaces")
    if len(value) < MIN_TOKEN_CHARS:
        raise InputError(f"{where}: the token is shorter than {MIN_TOKEN_CHARS} characters")
    return value


def _read_token(path: Path, where: str) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or e.__class__.__name__
        raise InputError(f"{where}: cannot read the token ({reason})") from None
    return _check_token(text.strip().split("\n")[0].strip() if text.strip() else "", where)


def resolve_token(token_file: str | None, loopback: bool, where: str,
                  env: Mapping[str, str] | None = None, clients: Callable[[], bool] | None = None) -> Token | None:
    """The server token: ``--token-file``, else ``$HELA_MCP_TOKEN``, else (loopback only) the saved or a
    newly generated one. On another address without either: None (client tokens only) when ``clients()``
    says the database holds client tokens, else refused. ``where`` names the address in the refusal."""
    env = os.environ if env is None else env
    if token_file:
        path = Path(token_file).expanduser()
        return Token(_read_token(path, f"--token-file {path}"), f"from --token-file {path}")
    if env.get(TOKEN_ENV):
        return Token(_check_token(env[TOKEN_ENV].strip(), f"environment {TOKEN_ENV}"), f"from ${TOKEN_ENV}")
    if not loopback:
        if clients is not None and clients():
            return None
        raise InputError(f"refusing to serve on {where} (not a loopback address) without a token: give "
                         f"--token-file PATH, set {TOKEN_ENV}, or make client tokens with `hela tokens add`")
    path = token_path()
    if path.exists():
        return Token(_read_token(path, str(path)), f"saved in {path}")
    value = secrets.token_urlsafe(32)
    ensure_private_dir(path.parent)
    try:  # O_EXCL: never through a planted link; 0600 from the start
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        raise InputError(f"{path}: cannot save the generated token ({e.strerror or e})") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(value + "\n")
    return Token(value, f"saved in {path}", generated=True)


MAX_BODY = 17 * 1024 * 1024   # a hook's stdin is at most 16 MiB (hela_cli.hooks.process.MAX_STDIN); a tool call far less


class BodyLimit:
    """ASGI middleware in front of every route: a request body over ``limit`` bytes (by its
    ``Content-Length``) or without a length (``Transfer-Encoding: chunked``: its size is known only once
    read) gets 413 before a byte of it is read; a body longer than its ``Content-Length`` says is cut off
    there by the HTTP server (h11 and httptools deliver exactly that many bytes)."""

    def __init__(self, app: Any, limit: int = MAX_BODY):
        self.app, self.limit = app, limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.lower(): v for k, v in scope.get("headers", [])}
            length = headers.get(b"content-length", b"").strip()
            why = None
            if headers.get(b"transfer-encoding") is not None:
                why = "a body without Content-Length (chunked) is refused: send its length"
            elif length and (not length.isdigit() or int(length) > self.limit):
                why = f"request body over {self.limit} bytes"
            if why is not None:
                from starlette.responses import JSONResponse

                await JSONResponse({"error": why}, status_code=413, headers={"Connection": "close"})(
                    scope, receive, send)
                return
        await self.app(scope, receive, send)


class HookHost:
    """The Memory the hooks' fast path runs on: the server's configuration, a connection and an embedder
    of its own, made on the first hook (two connections of one process share the database as two processes
    do). One hook at a time (``limiter``), beside the tool calls, never behind them."""

    def __init__(self, config: Config):
        self.config = config
        self._memory: Any = None
        import anyio

        self.limiter = anyio.CapacityLimiter(1)

    @property
    def memory(self) -> Any:
        if self._memory is None:
            from hela_cli.memory import Memory

            self._memory = Memory(self.config)
        return self._memory

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()


def _bearer(request: Any) -> str:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


def _client_hook_refusal(grant: Any, body: Any) -> str | None:
    """Why a client token may not send this hook event (None: it may). The event's space must be one of the
    token's (the request names it; the handler uses that one), the token must write (the hooks capture and
    learn), and a capture is refused: the server would read the transcript at the request's path on its own
    disk, which a client must not choose (the hook then captures in-process, on the client's side)."""
    from hela_cli.hooks.agents import AGENTS

    if not isinstance(body, dict):
        return "expected a JSON object"
    try:
        grant.check_space(body.get("space"))
        grant.check_write("the hooks (they capture turns and learn)")
    except HelaError as e:
        return e.message
    agent = AGENTS.get(str(body.get("agent")))
    if agent is not None and agent.role(str(body.get("event"))) == "capture":
        return f"token '{grant.name}': captures run in the hook's own process (the server does not read " \
               f"a client's transcript path on its disk)"
    return None


def add_hook_route(server: Any, verifier: Verifier, host: HookHost) -> None:
    """``POST /hook``: one hook event run by :func:`hela_cli.hooks.endpoint.serve_event` on ``host``'s Memory,
    for a token whose grant holds the event's space and may write."""
    import anyio
    from starlette.responses import JSONResponse

    from hela_cli.hooks.endpoint import serve_event

    @server.custom_route("/hook", methods=["POST"], include_in_schema=False)
    async def hook(request: Any) -> Any:
        token = _bearer(request)
        grant = await anyio.to_thread.run_sync(verifier.grant, token) if token else None
        if grant is None:
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        chunks, size = [], 0
        async for chunk in request.stream():   # BodyLimit checked the length; this keeps the bound whatever
            size += len(chunk)
            if size > MAX_BODY:
                return JSONResponse({"error": f"request body over {MAX_BODY} bytes"}, status_code=413)
            chunks.append(chunk)
        try:
            body = json.loads(b"".join(chunks))
        except ValueError:
            return JSONResponse({"error": "not JSON"}, status_code=400)
        except RecursionError:   # deep nesting: one clear answer, not a 500 with a traceback (issue 57)
            return JSONResponse({"error": "JSON nested too deeply"}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
        if grant is not ALL:
            refusal = _client_hook_refusal(grant, body)
            if refusal is not None:
                return JSONResponse({"error": refusal}, status_code=403)
        status, answer = await anyio.to_thread.run_sync(
            lambda: serve_event(body, host.memory, host.config), limiter=host.limiter)
        return JSONResponse(answer, status_code=status)


def url_for(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{MCP_PATH}"


def client_config(url: str, token: str) -> dict[str, Any]:
    """The ``mcpServers`` entry MCP clients (Claude Code, Cursor, ...) take for a streamable HTTP server."""
    return {"mcpServers": {"hela": {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}}}


def _listen(family: int, address: str, port: int, where: str) -> socket.socket:
    """The listening socket, made here so that a busy port or a bad address is one line. Its protocol is
    set to TCP explicitly: asyncio turns TCP_NODELAY on for accepted sockets only when ``sock.proto`` says
    TCP, and ``socket.create_server`` leaves it 0. Without it the response body waits for the client's
    delayed ACK: a request for a missing path took 44 ms (keep-alive client, median of 40, busy machine)
    against 4-7 ms from a bare uvicorn app."""
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((address, port))
        sock.listen(2048)
    except OSError as e:
        sock.close()
        raise InputError(f"--http {where}: cannot listen there ({e.strerror or e})") from None
    return sock


def serve_http(config: Config, address: str, token_file: str | None = None,
               announce: Callable[[str], None] | None = None, env: Mapping[str, str] | None = None) -> None:
    """Serve the hela MCP tools at ``http://ADDRESS/mcp`` until interrupted (SIGINT: KeyboardInterrupt
    after a graceful shutdown; SIGTERM: exit 143 after one)."""
    import uvicorn
    from mcp.server.auth.settings import AuthSettings

    from hela_cli.mcp_server.tools import build_server

    say = announce or (lambda line: print(line, file=sys.stderr, flush=True))
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:   # inherited from a `cmd &`: Ctrl-C stops it throughout
        signal.signal(signal.SIGINT, signal.default_int_handler)
    host, port = parse_address(address)
    family, numeric = resolve_host(host, port)
    where = f"{host}:{port}"
    probe = Verifier(None, config.db)
    try:
        token = resolve_token(token_file, is_loopback(numeric), where, env, clients=probe.has_client_tokens)
    finally:
        probe.close()
    try:
        sock = _listen(family, numeric, port, where)
    except InputError:
        if token is not None and token.generated:  # never shown: the next start generates (and prints) a new one
            token_path().unlink(missing_ok=True)
        raise
    url = url_for(host, port)

    base = url[: -len(MCP_PATH)]
    verifier = Verifier(token.value if token is not None else None, config.db)
    server = build_server(config, token_verifier=verifier,
                          auth=AuthSettings(issuer_url=base, resource_server_url=None))
    hooks = HookHost(config)
    add_hook_route(server, verifier, hooks)
    from hela_cli.mcp_server.bounds import SESSION_IDLE_S, SessionCap, uvicorn_config

    app = SessionCap(BodyLimit(server.streamable_http_app(streamable_http_path=MCP_PATH, host=host,
                                                          session_idle_timeout=SESSION_IDLE_S)), path=MCP_PATH)
    if token is not None and token.generated:
        say(f"hela mcp: generated an access token, saved user-only in {token_path()}; an MCP client connects "
            f"with (shown this once):")
        say(json.dumps(client_config(url, token.value)))
    tokens = f"bearer token {token.source}, and client tokens" if token is not None else "client tokens only"
    say(f"hela mcp: serving the hela tools at {url} ({tokens}: hela tokens list); Ctrl-C stops")

    class Server(uvicorn.Server):
        """uvicorn's server, remembering the first signal that stopped it (``stopped_by``)."""

        stopped_by: int | None = None

        def handle_exit(self, sig: int, frame: Any) -> None:
            if self.stopped_by is None:
                self.stopped_by = sig
            super().handle_exit(sig, frame)

    # bounded connections and sessions, plain one-line logging to stderr (the access log holds no token)
    uv = Server(uvicorn_config(app, log_level="info", access_log=True, timeout_graceful_shutdown=5, lifespan="on"))

    def terminated(signum: int, frame: Any) -> None:  # uvicorn re-raises the signal after its shutdown
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminated)
    from hela_cli.mcp_server.bounds import run_server

    try:
        run_server(uv, sock)
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        try:
            server.hela.close()
            hooks.close()
        finally:
            verifier.close()
    # uvicorn re-raises the signal it stopped on, into the handler that was there before it: when the parent
    # started hela with SIGINT ignored (any `cmd &` of a non-interactive shell, a CI job), that raise does
    # nothing and the stop would exit 0. The stop is a Ctrl-C (130) or a SIGTERM (143) whatever was inherited.
    if uv.stopped_by == signal.SIGINT:
        raise KeyboardInterrupt
    if uv.stopped_by is not None:
        raise SystemExit(128 + uv.stopped_by)
