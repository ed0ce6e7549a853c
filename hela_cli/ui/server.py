"""Start-up of ``hela ui``: check the database, make the token, bind, write the URL file, open the browser,
serve until Ctrl-C. Client tokens of ``hela tokens add`` open it too, for their own spaces
(:mod:`hela_cli.ui.app`), so a team can share one ``hela ui --host``.

The token is never logged (uvicorn's access log is off; the app strips it from the address bar with a
redirect). The full address is written to a user-only file in hela's data dir (``ui/ui-<pid>.json``,
removed on exit, for tools), and the browser is opened on a user-only HTML file that redirects to it, as
Jupyter does, so the token is not on any command line either. Without a browser (``--no-browser``) the CLI
prints the address with its token on the terminal, as Jupyter does, since the person must open it.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import signal
import socket
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from hela_cli.config import Config
from hela_cli.errors import InputError
from hela_cli.paths import data_dir, default_db_path, ensure_private_dir

DEFAULT_HOST = "127.0.0.1"


@dataclass
class Started:
    url: str             # without the token
    token_url: str       # with it (``?token=...``)
    url_file: Path       # JSON {"url": with token, "pid", "db"}, user-only
    host: str
    port: int
    db: str
    loopback: bool


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_database(cfg: Config) -> Path | str:
    """The database path (a Postgres URL as given), or an :class:`InputError` (exit 2) in one line when it is
    missing or not hela's. Checked read-only before anything opens the file for writing (a foreign SQLite
    file is never migrated; a Postgres database without hela's tables is refused before any write)."""
    from hela_cli.store import database_kind
    from hela_cli.store.target import describe, is_postgres

    if cfg.db and is_postgres(cfg.db):
        reason = database_kind(str(cfg.db))
        if reason is not None:
            raise InputError(f"{describe(cfg.db)}: {reason}")
        return str(cfg.db)

    path = Path(cfg.db).expanduser() if cfg.db else default_db_path()
    if not path.exists():
        raise InputError(f"{path}: no database yet (run `hela ingest` or `hela add` first)")
    reason = database_kind(path)
    if reason is not None:
        raise InputError(f"{path}: {reason}")
    return path


def _write_private(path: Path, text: str) -> None:
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def serve(cfg: Config, *, host: str | None = None, port: int = 0, open_browser: bool = True,
          learn: bool = False, on_ready: Callable[[Started], None] | None = None,
          store_progress: Callable[[str], None] | None = None) -> None:
    """Serve the UI for ``cfg.db`` until interrupted. ``host``: None binds 127.0.0.1 (a non-loopback
    address only when given explicitly; the token is still required). ``port`` 0: a free port.
    ``learn``: recall learns by default (the page can still choose). ``on_ready`` gets the address.
    ``store_progress``: where the database reports long steps (a first index build); None: silent."""
    import uvicorn

    from hela_cli.mcp_server.access import Verifier
    from hela_cli.memory import Memory
    from hela_cli.store import BrowseStore
    from hela_cli.ui.app import create_app

    path = check_database(cfg)
    cfg = cfg.replace(db=str(path))
    default_sigint()
    bind = host or DEFAULT_HOST
    try:
        infos = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise InputError(f"--host {bind}: cannot resolve it ({e.strerror})") from None
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as e:
        sock.close()
        raise InputError(f"cannot listen on {bind}:{port} ({e.strerror})") from None
    sock.listen(128)
    sock.set_inheritable(True)
    real_port = sock.getsockname()[1]

    r = cfg.retrieval
    # vector_cache_auto off: a space above 20k memories is searched through the sign bits persisted in the
    # file on every recall, instead of loading the whole space into memory on its second recall (a pause
    # of several seconds at 100k memories on a busy machine, in the middle of browsing; BENCHMARKS.md).
    # retrieval.vector_cache: true still loads it (once, on the first recall).
    store = BrowseStore.open(path, must_exist=True, vector_cache=r.vector_cache, sign_index_min=r.sign_index_min,
                             sign_rescore=r.sign_rescore, vector_cache_auto=0, progress=store_progress)
    mem = Memory(cfg, store=store)
    token = secrets.token_urlsafe(32)
    clients = Verifier(None, str(path))   # client tokens of `hela tokens add`: their own spaces only
    app = create_app(mem, token, cookie=f"hela-ui-{real_port}", learn_default=learn, clients=clients)

    shown = f"[{bind}]" if ":" in bind else bind
    url = f"http://{shown}:{real_port}/"
    run_dir = data_dir() / "ui"
    url_file = run_dir / f"ui-{os.getpid()}.json"
    open_file = run_dir / f"ui-{os.getpid()}-open.html"
    full = f"{url}?token={token}"
    _write_private(url_file, json.dumps({"url": full, "pid": os.getpid(), "db": str(path), "port": real_port}))
    try:
        if open_browser:
            _write_private(open_file, f'<!doctype html><meta http-equiv="refresh" content="0;url={full}">'
                                      f'<p><a href="{full}">Open hela ui</a></p>')
        if on_ready is not None:
            on_ready(Started(url, full, url_file, bind, real_port, str(path), is_loopback(bind)))
        if open_browser:
            webbrowser.open(open_file.as_uri())
        from hela_cli.mcp_server.bounds import uvicorn_config

        config = uvicorn_config(app, log_level="warning", access_log=False, lifespan="off", server_header=False)
        # uvicorn shuts down on SIGINT / SIGTERM, restores the previous handlers and raises the signal again:
        # SIGTERM's default action would end the process before the cleanup below removes the URL file
        previous = signal.signal(signal.SIGTERM, _terminated)
        from hela_cli.mcp_server.bounds import run_server

        try:
            run_server(uvicorn.Server(config), sock)
        finally:
            signal.signal(signal.SIGTERM, previous)
    finally:
        for p in (url_file, open_file):
            try:
                p.unlink()
            except OSError:
                pass
        sock.close()
        try:
            mem.close()
        finally:
            clients.close()


def default_sigint() -> None:
    """Ctrl-C stops the server at any moment of its life: a process started in the background of a script
    (``cmd &``) inherits SIGINT ignored, which uvicorn overrides once it runs, but not before (a Ctrl-C while
    starting was lost there)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _terminated(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def read_url_file(path: str | Path) -> dict[str, Any]:
    """The JSON a running ``hela ui`` wrote (``url`` with its token, ``pid``, ``db``, ``port``)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
