"""``hooks.server: auto`` (the default): the hooks' own local server, started by the first hook that finds
none, used by the next ones, gone when nothing needs it.

A hook process costs an interpreter, the config machinery, numpy, the store and the embedder before it can
answer a prompt (about 0.7 s of a 2 s budget, BENCHMARKS.md). The managed server keeps all of that warm; a
hook that finds it only reads stdin, sends one loopback request and prints (before the
config is loaded: :mod:`hela_cli.hooks.fast`, the standard library's C modules only).

* **Which server**: one per configuration, named by :func:`key`: a digest of what decides the hook's
  configuration and database without loading it (``hela``'s version and install, the interpreter, every
  ``HELA_*`` variable, ``--db`` / ``--config`` / ``--chat``, the config file's identity, the working directory
  when a path in them is relative). A different setting is a different server; an edited config file too (its
  old server idles out).
* **Alive, decided by the kernel**: the server holds an exclusive ``flock`` on ``run/hooks-KEY.lock`` for its
  whole life; a crash or a SIGKILL releases it. No PID file can go stale: a client uses a server only while
  its lock is held (:func:`live`), so a port left in ``run/hooks-KEY.info`` by a dead server is never asked,
  and a starting server is never waited for.
* **Private**: ``run/`` is user-only (0700), the server's file ``run/hooks-KEY.info`` (pid, port, a random
  token of its own) is 0600 and read only when it belongs to this user; the server listens on loopback and
  answers only that token.
* **Started** (:func:`ensure`): by a hook that answered in-process after finding no live server: detached
  (its own session, no inherited descriptor, stdin/stdout on ``/dev/null``, stderr to ``run/hooks-KEY.err``),
  after the hook printed its answer; a start that never came up is not retried for :data:`RESTART_S` (a
  server that cannot start is not restarted by every prompt). The hook never waits for it.
* **Gone**: the server (:mod:`hela_cli.hooks.server`) exits after ``hooks.server_idle`` minutes without a
  request, when its database file is deleted or replaced, when its config file changes, when another hela is
  installed over this one, when its file in ``run/`` is removed, and on ``hela hooks stop``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from hela_cli.hooks import fast

RESTART_S = 30.0      # a key's server is started at most this often (one that dies at start is not a storm)


def run_dir() -> Path:
    return Path(fast.run_dir())


def wanted(args: Any) -> bool:
    """Whether this hook may use (and start) the managed server as far as the environment and the arguments
    say (the config file can still say ``off``: then no server is ever started for it)."""
    return fast.wanted(getattr(args, "server", None), getattr(args, "detached", False))


def key(args: Any) -> str:
    """The managed server's key for a hook's arguments (:func:`hela_cli.hooks.fast.key`)."""
    return fast.key(getattr(args, "db", None), getattr(args, "config", None), getattr(args, "chat", None))


def paths(k: str) -> dict[str, Path]:
    return {name: Path(value) for name, value in fast.paths(k).items()}


live = fast.live   # the running server of a key, or None (its lock free)


def servers() -> list[dict[str, Any]]:
    """Every live managed server of this user (``hela hooks status`` / ``stop``), each with its ``key``."""
    try:
        names = sorted(p.name for p in run_dir().glob("hooks-*.info"))
    except OSError:
        return []
    out = []
    for name in names:
        k = name[len("hooks-"):-len(".info")]
        info = live(k)
        if info is not None:
            out.append({**info, "key": k})
    return out


def request(info: dict[str, Any], method: str, path: str, timeout: float = 2.0) -> Any:
    """One request to a managed server with its token (``GET /status``, ``POST /stop``); the JSON answer.
    Raises :class:`hela_cli.hooks.client.Unavailable`."""
    from hela_cli.hooks.client import exchange

    return exchange(f"http://127.0.0.1:{info['port']}", path, None, timeout, info["token"], method=method)


def server_status() -> list[dict[str, Any]]:
    """Each live server's own report (``GET /status``: pid, uptime, requests, idle, memory, database); one
    that does not answer is listed with ``"answering": false``."""
    out = []
    for info in servers():
        try:
            rep = request(info, "GET", "/status")
            out.append({**rep, "answering": True} if isinstance(rep, dict) else
                       {"pid": info["pid"], "key": info["key"], "answering": False})
        except Exception:  # noqa: BLE001 - listed as not answering
            out.append({"pid": info["pid"], "key": info["key"], "answering": False})
    return out


def stop_all(wait_s: float = 5.0) -> list[dict[str, Any]]:
    """``hela hooks stop``: ask every live server to stop; wait until its lock is free (SIGTERM past
    ``wait_s``). What was stopped: ``{"pid", "key", "how"}``."""
    import signal

    done = []
    for info in servers():
        how = "asked"
        try:
            request(info, "POST", "/stop")
        except Exception:  # noqa: BLE001 - not answering: the signal
            how = "signalled"
            _kill(info["pid"], signal.SIGTERM)
        end = time.monotonic() + wait_s
        lock = fast.paths(info["key"])["lock"]
        while fast.held(lock) and time.monotonic() < end:
            time.sleep(0.05)
        if fast.held(lock):
            _kill(info["pid"], signal.SIGKILL)
            how = "killed"
        done.append({"pid": info["pid"], "key": info["key"], "how": how})
    return done


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def ensure(args: Any, cfg: Any) -> str | None:
    """Start this configuration's server when none lives and ``hooks.server`` is ``auto`` (after the hook
    answered in-process); what happened, for the hook log: ``"started"``, ``"starting"`` (a server holds the
    lock and is still loading), ``"running"``, ``"backoff"`` (one was started less than :data:`RESTART_S`
    ago and is not up), or None (not wanted)."""
    if str(cfg.hooks.server).strip().lower() != "auto" or not wanted(args):
        return None
    from hela_cli.paths import ensure_private_dir

    k = key(args)
    p = paths(k)
    if fast.held(str(p["lock"])):
        return "starting" if live(k) is None else "running"
    ensure_private_dir(run_dir())
    try:   # the mark of a start is removed by the server once it is up: one still there is a start that
        # never came up, not retried for RESTART_S; a server that came up and ended later (killed, stopped,
        # idle) is replaced by the next hook at once
        if time.time() - p["started"].stat().st_mtime < RESTART_S:
            return "backoff"
    except OSError:
        pass
    import subprocess

    os.close(os.open(p["started"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    os.utime(p["started"])
    cmd = [sys.executable, "-m", "hela_cli.hooks.server", "--key", k, "--cwd", os.getcwd()]
    for flag, value in (("--db", args.db), ("--config", args.config), ("--chat", getattr(args, "chat", None))):
        if value:
            cmd += [flag, str(value)]
    err = os.open(p["err"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        if os.fstat(err).st_size > 1_000_000:
            os.ftruncate(err, 0)
        env = {name: v for name, v in os.environ.items() if name != "HELA_VIA_PLUGIN"}
        subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, close_fds=True,
                         start_new_session=True, cwd=str(run_dir()), env=env)
    finally:
        os.close(err)
    return "started"
