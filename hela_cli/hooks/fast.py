"""The thinnest ``hela hook``: hand the agent's event to this configuration's managed server and print its
answer, before anything else of hela is imported (``hooks.server: auto``, :mod:`hela_cli.hooks.managed`).

What a hook costs on this path is an interpreter's start plus this module: the standard library's C modules
(``_socket``, ``fcntl``, ``select``, ``_sha256``), no ``json``, ``pathlib``, ``dataclasses``, config, numpy
or model. The server parses the payload, runs the handler, writes the hook log line and answers the exact
bytes to print. Anything else (no server for this configuration, its lock free, a refusal, a timeout, a
capture, which runs under its session's lock in the hook) and the hook goes on in-process with the stdin
already read (:func:`hela_cli.hooks.process.process_main`), which starts a server for the next hook. The
entry (``hela hook``) is ``hela_cli.cli._hook``: this module imports nothing of hela's but the package.

The names here (:func:`data_dir`, :func:`key`, :func:`paths`, :func:`held`, :func:`read_info`) are the
managed server's too: one definition of where a server's files are and when it lives."""

import os
import sys
import time

STDIN_WAIT_S = 2.0      # as hooks/process.py: the agents write their JSON at once
MAX_STDIN = 16 * 1024 * 1024
CONNECT_TIMEOUT_S = 0.25
SERVER_SHARE = 0.4      # of the hook's budget (the server's hooks.budget_s), at most, waiting for the answer
_OPTIONS = {"--agent": "agent", "--space": "space", "--db": "db", "--config": "config", "--chat": "chat"}
_NOT_KEYED = frozenset({"HELA_VIA_PLUGIN", "HELA_NESTED", "HELA_HOOKS_SERVER", "HELA_MCP_TOKEN"})
T0 = time.perf_counter()


def data_dir() -> str:
    """:func:`hela_cli.paths.data_dir` as a string, without pathlib (a test holds the two equal)."""
    if os.environ.get("HELA_HOME"):
        return os.path.expanduser(os.environ["HELA_HOME"])
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(os.path.expanduser(base), "hela")


def run_dir() -> str:
    return os.path.join(data_dir(), "run")


def install_identity() -> str:
    """This hela's version and the identity of its installed files: another install changes it."""
    import hela_cli

    try:
        st = os.stat(hela_cli.__file__ or "")
        return f"{hela_cli.__version__}:{st.st_ino}:{st.st_mtime_ns}"
    except OSError:
        return hela_cli.__version__


def _relative(path: object) -> bool:
    return bool(path) and not str(path).startswith(("postgres://", "postgresql://")) and \
        not os.path.isabs(os.path.expanduser(str(path)))


def key(db: object = None, config: object = None, chat: object = None) -> str:
    """The digest naming the managed server of a hook's configuration: hela's install, the interpreter, every
    ``HELA_*`` variable, ``--db`` / ``--config`` / ``--chat``, the config file's identity, and the working
    directory when one of those paths is relative. Another setting, another server."""
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("HELA_") and k not in _NOT_KEYED))
    config = config or os.environ.get("HELA_CONFIG") or None
    stat = None
    if config:
        try:
            st = os.stat(os.path.expanduser(str(config)))
            stat = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            pass
    cwd = os.getcwd() if config or _relative(db) or _relative(os.environ.get("HELA_DB")) or \
        _relative(os.environ.get("HELA_HOME")) else None
    parts = repr((install_identity(), sys.executable, env, db, config, stat, chat, cwd))
    try:
        from _sha256 import sha256   # the C module itself: hashlib loads OpenSSL first (3 ms)
    except ImportError:   # pragma: no cover - a Python built without it
        from hashlib import sha256
    return sha256(parts.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def paths(k: str) -> dict:
    run = run_dir()
    return {name: os.path.join(run, f"hooks-{k}.{name}") for name in ("lock", "info", "err", "started")}


def held(lock: str) -> bool:
    """True while a process holds ``lock`` exclusively (the server, for its whole life; the kernel frees it
    when the process dies, however it dies)."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def read_info(path: str) -> dict | None:
    """A server's file, ``pid port token budget_s`` on one line: only when it belongs to this user and nobody
    else can read it (else it is never trusted, nor its token sent anywhere)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (hasattr(os, "getuid") and st.st_uid != os.getuid()) or st.st_mode & 0o077:
            return None
        words = os.read(fd, 4096).decode("ascii").split()
        return {"pid": int(words[0]), "port": int(words[1]), "token": words[2], "budget_s": float(words[3])}
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


def live(k: str) -> dict | None:
    """The running server of key ``k`` (pid, port, token, budget), or None: no file, or its lock free (the
    server died: its port may be another program's now)."""
    p = paths(k)
    info = read_info(p["info"])
    return info if info is not None and held(p["lock"]) else None


def _parse(argv: list) -> dict | None:
    """The hook's arguments, or None for anything this path leaves to the full hook (``--server``,
    ``--detached``, ``--lock-fd``, a word it does not know)."""
    args = {"event": None, "agent": "claude-code", "space": None, "db": None, "config": None, "chat": None}
    words = list(argv)
    while words:
        word = words.pop(0)
        name, eq, value = word.partition("=")
        if name in _OPTIONS:
            if not eq:
                if not words:
                    return None
                value = words.pop(0)
            args[_OPTIONS[name]] = value
        elif args["event"] is None and not word.startswith("-"):
            args["event"] = word
        else:
            return None
    return args if args["event"] else None


def read_stdin(fd: int, wait_s: float = STDIN_WAIT_S) -> tuple:
    """The agent's JSON on ``fd``: ``(bytes, True)`` to end of file, or a whole JSON object from an agent that
    never closes it; ``(what came, False)`` when neither came within ``wait_s`` (at least one look: what the
    agent wrote is there). ``select`` failing on this kind of stdin raises (the caller reads it plainly).
    The one reader of a hook's stdin: :func:`hela_cli.hooks.process.main` uses it too."""
    import select

    chunks: list = []
    size = 0
    end = time.perf_counter() + max(wait_s, 0.0)
    while size <= MAX_STDIN:
        if not select.select([fd], [], [], max(end - time.perf_counter(), 0.0))[0]:
            return b"".join(chunks), False
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.rstrip().endswith(b"}"):
            import json

            try:
                if isinstance(json.loads(b"".join(chunks)), dict):
                    break
            except ValueError:
                pass
    return b"".join(chunks), True


def _header(value: str) -> str:
    """A header value any path survives in: its UTF-8 (surrogate-escaped) bytes in hex."""
    return value.encode("utf-8", "surrogateescape").hex()


def wanted(server: object = None, detached: bool = False) -> bool:
    """Whether a hook may use (and start) the managed server as far as the environment and its arguments say
    (a config file can still say ``off``: then no server is ever started for it)."""
    if server is not None or detached:
        return False
    return os.environ.get("HELA_HOOKS_SERVER", "auto").strip().lower() == "auto"


def ask(argv: list) -> tuple:
    """``(True, stdout bytes)`` when the managed server answered this hook, else ``(False, (stdin or None,
    why))``: the full hook takes over with what was read."""
    if not wanted():
        return False, (None, None)
    args = _parse(argv)
    if args is None:
        return False, (None, None)
    k = key(args["db"], args["config"], args["chat"])
    info = live(k)
    if info is None:
        return False, (None, "none")
    try:
        raw, whole = read_stdin(sys.stdin.fileno())
    except (OSError, ValueError):   # no select on this stdin: the full hook reads it
        return False, (None, None)
    if not whole or len(raw) > MAX_STDIN:
        return False, (raw if whole else (raw, "stdin"), None)
    wait = max(0.05, SERVER_SHARE * info["budget_s"])
    headers = {"Host": "127.0.0.1", "Authorization": f"Bearer {info['token']}",
               "Content-Type": "application/json", "Content-Length": str(len(raw)), "Connection": "close",
               "X-Hela-Event": _header(args["event"]), "X-Hela-Agent": _header(args["agent"]),
               "X-Hela-Cwd": _header(os.getcwd()), "X-Hela-Sent": repr(time.time()), "X-Hela-Wait": repr(wait),
               "X-Hela-Elapsed": repr((time.perf_counter() - T0) * 1000)}
    if args["space"]:
        headers["X-Hela-Space"] = _header(args["space"])
    if os.environ.get("HELA_VIA_PLUGIN"):
        headers["X-Hela-Via-Plugin"] = "1"
    head = "".join(f"{n}: {v}\r\n" for n, v in headers.items())
    import _socket

    end = time.perf_counter() + wait
    try:
        sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    except OSError:
        return False, (raw, "unreachable")
    try:
        sock.settimeout(min(CONNECT_TIMEOUT_S, wait))
        sock.connect(("127.0.0.1", info["port"]))
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        sock.settimeout(max(end - time.perf_counter(), 0.001))
        sock.sendall(f"POST /event HTTP/1.1\r\n{head}\r\n".encode("latin-1") + raw)
        chunks = []
        while True:
            left = end - time.perf_counter()
            if left <= 0:
                return False, (raw, "slow")
            sock.settimeout(left)
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except TimeoutError:
        return False, (raw, "slow")
    except OSError as e:
        return False, (raw, "unreachable" if _refused(e) else "broke")
    finally:
        sock.close()
    data = b"".join(chunks)
    head_b, sep, body = data.partition(b"\r\n\r\n")
    try:
        status = int(head_b.split(b" ", 2)[1]) if sep else 0
    except (IndexError, ValueError):
        status = 0
    if status != 200:
        return False, (raw, f"refused ({status})" if status else "bad answer")
    for line in head_b.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            if len(body) < int(value):
                return False, (raw, "broke")
            body = body[: int(value)]
    return True, body


def _refused(e: OSError) -> bool:
    """Whether ``e`` came from connecting (nobody listens) rather than from a connection that broke."""
    import errno

    return e.errno in (errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL)
