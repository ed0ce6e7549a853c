"""The managed local server of ``hooks.server: auto`` (:mod:`hela_cli.hooks.managed` starts and finds it):
``python -m hela_cli.hooks.server --key KEY --cwd DIR [--db D] [--config C] [--chat REF]``.

One process per configuration: it takes the exclusive ``flock`` of ``run/hooks-KEY.lock`` or exits at once
(another one has it), loads the configuration as the hook that started it would (in that hook's working
directory), opens the database and loads the embedder, then listens on a loopback port with a random token
of its own and only then writes ``run/hooks-KEY.json`` (0600: pid, port, token, budget): a hook never meets a
server that is still loading. Routes: ``POST /hook`` (the hook's event, run by
:func:`hela_cli.hooks.endpoint.serve_event` on the warm Memory, one at a time), ``GET /status`` (pid, uptime,
requests, memory), ``POST /stop``. It is built on the bounds of ``hela mcp --http``
(:mod:`hela_cli.mcp_server.bounds`: connections capped, idle and slow clients timed out, one plain line per
logged event, to ``run/hooks-KEY.err``).

It exits, removing its file, after ``hooks.server_idle`` minutes without a request, when its SQLite file is
deleted or replaced, when its config file changes, when another hela is installed over this one, when its
file in ``run/`` is removed or rewritten by another, on ``POST /stop``, SIGTERM or SIGINT (Ctrl-C, at any
moment: no traceback). A SIGKILL leaves the file; its lock is free, so no hook uses it and the next hook
starts a new server.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hela_cli.hooks import fast, managed

WATCH_S = 1.0   # how often the exit conditions are looked at


def _parse(argv: list[str]) -> dict[str, str]:
    opts: dict[str, str] = {}
    words = list(argv)
    while words:
        name = words.pop(0)
        if name not in ("--key", "--cwd", "--db", "--config", "--chat") or not words:
            raise SystemExit(f"hela hooks server: bad arguments: {' '.join(argv)[:200]}")
        opts[name[2:]] = words.pop(0)
    if not opts.get("key") or not opts.get("cwd"):
        raise SystemExit("hela hooks server: --key and --cwd are required")
    return opts


def _stat(path: str | None) -> tuple[int, int, int, int] | None:
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _rss_mib() -> float | None:
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


class State:
    """What the routes and the watcher share."""

    def __init__(self, key: str, cfg: Any, token: str, db_id: Any = None):
        self.key, self.cfg, self.token, self.db_id = key, cfg, token, db_id
        self.started = time.time()
        self.last = time.monotonic()
        self.requests = 0
        self.stop_reason: str | None = None
        self.db_identity = ""

    def db_moved(self) -> bool:
        """Whether the SQLite file at the configured path is no longer the one this server opened (deleted,
        replaced): the server then serves nothing more and exits (its store refuses writes through such a
        file and closes it without SQLite's checkpoint: store/sqlite/files.py)."""
        if self.db_id is None:
            return False
        if _file_id(self.cfg.db) != self.db_id:
            self.stop_reason = self.stop_reason or "its database file was deleted or replaced"
            return True
        return False

    def authorized(self, request: Any) -> bool:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), self.token.encode())


def _app(state: State, host: Any, server: list[Any]) -> Any:
    import anyio
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from hela_cli.hooks.endpoint import serve_event
    from hela_cli.mcp_server.http import MAX_BODY, BodyLimit
    from hela_cli.paths import db_identity

    db = state.db_identity = db_identity(state.cfg.db)

    def stop_now() -> None:
        if server:
            server[0].should_exit = True

    async def hook(request: Any) -> Any:
        if not state.authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        if state.db_moved():
            stop_now()
            return JSONResponse({"error": "this server's database file was deleted or replaced"}, status_code=409)
        state.last = time.monotonic()
        raw = await request.body()   # BodyLimit bounds it by its Content-Length
        if len(raw) > MAX_BODY:
            return JSONResponse({"error": "request body too large"}, status_code=413)
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            return JSONResponse({"error": "not JSON (or nested too deeply)"}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
        body["db"] = db   # the client's configuration is this server's (the key says so)
        body.pop("hooks", None)
        status, answer = await anyio.to_thread.run_sync(
            lambda: serve_event(body, host.memory, state.cfg), limiter=host.limiter)
        state.requests += 1
        state.last = time.monotonic()
        return JSONResponse(answer, status_code=status)

    async def status(request: Any) -> Any:
        if not state.authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return JSONResponse({"pid": os.getpid(), "key": state.key, "started": state.started,
                             "uptime_s": round(time.time() - state.started, 1), "requests": state.requests,
                             "idle_s": round(time.monotonic() - state.last, 1), "rss_mib": _rss_mib(),
                             "db": _shown_db(state.cfg.db), "version": fast.install_identity()})

    async def stop(request: Any) -> Any:
        if not state.authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        state.stop_reason = "stopped (hela hooks stop)"
        if server:
            server[0].should_exit = True
        return JSONResponse({"stopping": True, "pid": os.getpid()})

    async def event(request: Any) -> Any:
        if not state.authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        if state.db_moved():   # the hook runs in-process on the new file (and starts a server for it)
            stop_now()
            return JSONResponse({"error": "this server's database file was deleted or replaced"}, status_code=409)
        t = time.perf_counter()
        state.last = time.monotonic()
        raw = await request.body()
        try:
            h = request.headers
            got = {"event": _unhex(h["x-hela-event"]), "agent": _unhex(h["x-hela-agent"]),
                   "cwd": _unhex(h["x-hela-cwd"]), "space": _unhex(h.get("x-hela-space", "")) or None,
                   "sent": float(h["x-hela-sent"]), "wait": float(h["x-hela-wait"]),
                   "elapsed": float(h["x-hela-elapsed"]), "plugin": h.get("x-hela-via-plugin") == "1"}
        except (KeyError, ValueError):
            return JSONResponse({"error": "expected the X-Hela-* headers of hooks/fast.py"}, status_code=400)
        status, out = await anyio.to_thread.run_sync(lambda: _run_event(state, host, raw, got, t),
                                                     limiter=host.limiter)
        state.requests += 1
        state.last = time.monotonic()
        return Response(out, status_code=status, media_type="application/json")

    app = Starlette(routes=[Route("/event", event, methods=["POST"]), Route("/hook", hook, methods=["POST"]), Route("/status", status, methods=["GET"]),
                            Route("/stop", stop, methods=["POST"])])
    return BodyLimit(app)


def _unhex(value: str) -> str:
    return bytes.fromhex(value).decode("utf-8", "surrogateescape")


def _run_event(state: State, host: Any, raw: bytes, got: dict[str, Any], t: float) -> tuple[int, bytes]:
    """A hook's event from :mod:`hela_cli.hooks.fast`: its log line written here, its stdout answered as is
    (200), or a status that sends the hook in-process (a capture: 421; too late: 408; a failure: 502, logged by
    the hook itself)."""
    from hela_cli.hooks import log
    from hela_cli.hooks.agents import AGENTS
    from hela_cli.hooks.endpoint import serve_event
    from hela_cli.hooks.process import context_output, parse_payload, settings_hooks
    from hela_cli.hooks.space import project_space

    agent = AGENTS.get(got["agent"])
    role = agent.role(got["event"]) if agent else None
    if role is None or role == "capture":
        return 421, b""   # unknown (the hook logs it) or a capture (under its session's lock, in the hook)
    try:
        payload = parse_payload(raw)
    except Exception:  # noqa: BLE001 - the hook reports it in its own words
        return 422, b""
    entry: dict[str, Any] = {"agent": agent.name, "event": got["event"], "role": role}
    if payload.get("session_id"):
        entry["session"] = str(payload["session_id"])[:80]
    ms = lambda: round(got["elapsed"] + (time.perf_counter() - t) * 1000, 1)   # noqa: E731
    if got["plugin"] and settings_hooks(agent.name, {**payload, "cwd": payload.get("cwd") or got["cwd"]}):
        log.append({**entry, "result": "skipped", "server": "managed",
                    "detail": "hela's hooks are in a settings file too: the plugin's steps aside", "ms": ms()})
        return 200, b""
    space = got["space"] or project_space(payload.get("cwd") or got["cwd"])
    body = {"event": got["event"], "agent": agent.name, "space": space, "payload": payload,
            "db": state.db_identity, "sent": got["sent"], "wait_s": got["wait"]}
    status, answer = serve_event(body, host.memory, state.cfg)
    if status != 200 or answer.get("error") or answer.get("handoff"):
        return (status if status != 200 else 502), b""
    text = answer.get("text") or ""
    facts = answer.get("facts") if isinstance(answer.get("facts"), dict) else {}
    out = context_output(got["event"], text).encode("utf-8") if text else b""
    server_ms = round((time.perf_counter() - t) * 1000, 1)
    log.append({**entry, **facts, "result": facts.get("result", "ok"), "server": "managed",
                "server_ms": server_ms, "ms": ms()})
    return 200, out


def _shown_db(db: str) -> str:
    from hela_cli.hooks.install import db_without_password

    return db_without_password(db)[0] or db


def _watch(state: State, server: Any, info_path: Path, db_id: Any, config: str | None, cfg_stat: Any,
           install: str, stop: threading.Event) -> None:
    """Sets ``server.should_exit`` (and why) once an exit condition holds."""
    idle_s = max(float(state.cfg.hooks.server_idle), 0.05) * 60
    sqlite = not state.cfg.db.startswith(("postgres://", "postgresql://"))
    while not stop.wait(WATCH_S):
        why = None
        if time.monotonic() - state.last > idle_s:
            why = f"idle for {state.cfg.hooks.server_idle:g} min"
        elif sqlite and state.db_moved():
            why = "its database file was deleted or replaced"
        elif config and _stat(config) != cfg_stat:
            why = "its config file changed"
        elif fast.install_identity() != install:
            why = "another hela was installed"
        else:
            info = fast.read_info(str(info_path))
            if info is None or info.get("token") != state.token:
                why = "its file in run/ was removed"
        if why:
            state.stop_reason = why
            server.should_exit = True
            return


def main(argv: list[str]) -> int:
    import fcntl

    opts = _parse(argv)
    key = opts["key"]
    p = managed.paths(key)
    from hela_cli.paths import ensure_private_dir

    ensure_private_dir(p["lock"].parent)
    lock = os.open(p["lock"], os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0   # another server of this configuration holds it
    stopping: list[int] = []

    def early(signum: int, frame: Any) -> None:   # a stop before uvicorn runs: leave quietly
        stopping.append(signum)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, early)
    signal.signal(signal.SIGINT, early)
    try:
        return _serve(opts, key, p, stopping)
    except SystemExit:
        return 0
    except KeyboardInterrupt:
        return 0


def _serve(opts: dict[str, str], key: str, p: dict[str, Path], stopping: list[int]) -> int:
    from hela_cli.config import load_config
    os.chdir(opts["cwd"])
    overrides: dict[str, Any] = {"db": opts.get("db")}
    if opts.get("chat"):
        overrides["models.chat"] = opts["chat"]
    cfg = load_config(opts.get("config"), overrides=overrides)
    if str(cfg.hooks.server).strip().lower() != "auto":
        return 0   # the config says otherwise: no managed server for it
    if cfg.db and not cfg.db.startswith(("postgres://", "postgresql://")):
        cfg = cfg.replace(db=os.path.abspath(os.path.expanduser(cfg.db)))
    elif not cfg.db:
        from hela_cli.paths import default_db_path

        cfg = cfg.replace(db=str(default_db_path()))
    config = os.path.abspath(os.path.expanduser(opts["config"])) if opts.get("config") else \
        (os.path.abspath(os.environ["HELA_CONFIG"]) if os.environ.get("HELA_CONFIG") else None)
    cfg_stat = _stat(config)
    install = fast.install_identity()
    os.chdir(str(p["lock"].parent))
    from hela_cli.mcp_server.http import HookHost

    host = HookHost(cfg)
    mem = host.memory   # warm: the database, the embedder, what a prompt's recall imports
    mem.store
    mem.embedder
    import hela_cli.hooks.context  # noqa: F401
    import hela_cli.hooks.handlers  # noqa: F401
    import hela_cli.mechanics.relevance as relevance
    import hela_cli.mechanics.retrieval  # noqa: F401

    try:
        relevance.background_vectors(mem.embedder)
    except Exception:  # noqa: BLE001 - the first prompt computes it then
        pass
    db_id = _file_id(cfg.db) if not cfg.db.startswith(("postgres://", "postgresql://")) else None
    token = secrets.token_urlsafe(32)
    state = State(key, cfg, token, db_id)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(256)
    port = sock.getsockname()[1]
    import uvicorn

    from hela_cli.mcp_server.bounds import uvicorn_config

    holder: list[Any] = []
    app = _app(state, host, holder)

    class Server(uvicorn.Server):
        def install_signal_handlers(self) -> None:   # ours: any stop is a clean exit 0
            def handle(signum: int, frame: Any) -> None:
                state.stop_reason = state.stop_reason or f"signal {signum}"
                self.should_exit = True
            signal.signal(signal.SIGTERM, handle)
            signal.signal(signal.SIGINT, handle)

    server = Server(uvicorn_config(app, log_level="warning", access_log=False, lifespan="off",
                                   timeout_graceful_shutdown=2))
    holder.append(server)
    line = f"{os.getpid()} {port} {token} {float(cfg.hooks.budget_s)!r}\n"   # what hooks/fast.py reads
    tmp = p["info"].with_name(p["info"].name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(line)
    if stopping:
        tmp.unlink(missing_ok=True)
        return 0
    os.replace(tmp, p["info"])
    p["started"].unlink(missing_ok=True)   # up: the next start after this one ends is not a failed one
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(state, server, p["info"], db_id, config, cfg_stat, install,
                                                    stop), name="hela-watch", daemon=True)
    watcher.start()
    import asyncio

    try:
        server.run(sockets=[sock])
    except (asyncio.CancelledError, KeyboardInterrupt):   # a stop while uvicorn was starting: a stop
        state.stop_reason = state.stop_reason or "interrupted"
    finally:
        stop.set()
        current = fast.read_info(str(p["info"]))
        if current is not None and current.get("token") == token:
            p["info"].unlink(missing_ok=True)
        sock.close()
        state.db_moved()   # the reason, when it is that (the store closes a moved file without a checkpoint)
        print(f"hela hooks server {os.getpid()}: exit ({state.stop_reason or 'stopped'}; "
              f"{state.requests} requests)", file=sys.stderr, flush=True)
        try:
            host.close()
        except Exception:  # noqa: BLE001 - exiting anyway
            pass
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.exit(main(sys.argv[1:]))
