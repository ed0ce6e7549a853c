"""The fast path's client: a hook asks a running ``hela mcp --http`` server instead of loading models itself.

``hooks.server`` (``HELA_HOOKS_SERVER=http://127.0.0.1:8765``, or ``hela hook ... --server URL``) names the
server. The hook POSTs its event to ``URL/hook`` with the server's bearer token; the server runs the same
handler the hook would run in-process (:func:`hela_cli.hooks.endpoint.serve_event`) on its warm
:class:`~hela_cli.memory.Memory`, one call at a time with the MCP tools, and answers the text and the facts
the hook logs. The hook's ``hooks`` settings travel with the request and are the ones the handler reads
(``prompt_k``, ``prompt_tokens``, ``start_tokens``, ``path_k``, ``redact``, ...); the server's own config
applies to everything else (models, retrieval, ingest, supersession).

* **Bounded wait**: a hook waits for the server at most :data:`SERVER_SHARE` of its budget
  (``hooks.budget_s``, ``hooks.capture_budget_s`` for a capture: 0.8 s of the default 2 s), the whole
  exchange counted, then runs in-process with the rest and logs ``"server": "slow"``. The request says how
  long the hook waits (``wait_s``, from ``sent``): a server that gets to it later (queued behind other calls)
  answers 408 without running it, so that a recall the agent never saw is not recorded as shown.

* **Dispatch** (:func:`dispatch_or_ask`): the hook's handler, through the server when one is configured and
  answers, else in-process.
* **Client** (:func:`ask`): the standard library only (a socket), no numpy, no model, no store:
  a hook on this path costs an interpreter start, the config and one loopback request. A connection that is
  refused, times out (``CONNECT_TIMEOUT_S``), or breaks, and an answer that is not 200, raise
  :class:`Unavailable`: the hook runs in-process at once and logs why (``"server": "unreachable"``, ...).
* **Token**: read where the server keeps it, never from a settings file: ``$HELA_MCP_TOKEN`` when set (the
  server reads it too), else the server's generated ``<hela home>/mcp-token``, used only when the file
  belongs to this user and nobody else can read it (0600, as the server writes it).
* **Same database**: the request carries :func:`~hela_cli.paths.db_identity` of the hook's database; a server
  on another one answers 409 and the hook runs in-process.
* **Server**: ``POST /hook`` in ``mcp_server/http.py`` checks the token and calls
  :func:`hela_cli.hooks.endpoint.serve_event`.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any
from urllib.parse import urlsplit

from hela_cli.hooks.log import Fail
from hela_cli.paths import db_identity

PATH = "/hook"
CONNECT_TIMEOUT_S = 0.25   # loopback answers in well under a millisecond; a blackholed address must not cost more
SERVER_SHARE = 0.4   # of the hook's budget, at most, waiting for the server: the fast path answers a prompt in
# ~90 ms (BENCHMARKS.md), the in-process hook needs ~0.5 s of the 2 s default, so 0.8 s of waiting leaves it 1.2 s


class Unavailable(Exception):
    """The server cannot answer this hook; ``reason`` is the short word for the hook log."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}{f' ({detail})' if detail else ''}")
        self.reason = reason


class Failed(Exception):
    """The server ran the handler and it failed (the same failure the hook would log in-process)."""


def dispatch_or_ask(job: Any, cfg: Any) -> tuple[str, dict[str, Any]]:
    """The hook's handler (``job``: the ``Job`` of :mod:`hela_cli.hooks.process`), in the configured server
    (a detached child never asks one) or in this process."""
    from hela_cli.hooks.handlers import dispatch

    url = str(cfg.hooks.server or "").strip()
    managed = None
    if url.lower() == "auto":   # the managed server (hooks/managed.py): a capture uses it when it runs; a
        from hela_cli.hooks import fast   # prompt got here because it did not answer (hooks/fast.py)

        a = job.args
        managed = fast.live(fast.key(a.db, a.config, getattr(a, "chat", None))) if job.role == "capture" and \
            fast.wanted(a.server, a.detached) else None
        if managed is None:
            return dispatch(job.args, job.role, job.payload, cfg, job.raw)
    if not url or url.lower() == "off" or job.args.detached:
        return dispatch(job.args, job.role, job.payload, cfg, job.raw)
    t = time.perf_counter()
    try:
        budget = cfg.hooks.capture_budget_s if job.role == "capture" else cfg.hooks.budget_s
        wait = SERVER_SHARE * budget
        body = request_body(job.args, job.payload, cfg, wait)
        if managed is not None:
            body.pop("hooks")   # the managed server runs this very configuration
            answer = ask(f"http://127.0.0.1:{managed['port']}", body, wait, managed["token"])
        else:
            answer = ask(url, body, wait)
    except Failed as e:
        raise Fail(str(e)) from None
    except Unavailable as e:
        text, facts = dispatch(job.args, job.role, job.payload, cfg, job.raw)
        return text, {**facts, "server": e.reason}
    ms = round((time.perf_counter() - t) * 1000, 1)
    mine = {"server": "managed" if managed is not None else "ok", "server_ms": ms, "cpu_ms": {"total": round(time.process_time() * 1000, 1)}}
    if answer.get("handoff"):   # the server found a capture too big to do inline: a child of ours does it
        from hela_cli.hooks.capture_runs import NO_SLOT, detach

        pid = detach(job.args, job.raw, cfg, job)
        return "", {"result": "detached" if pid else "busy", "child": pid, **mine,
                    **({} if pid else {"detail": NO_SLOT})}
    facts = answer.get("facts") if isinstance(answer.get("facts"), dict) else {}
    text = answer.get("text") if isinstance(answer.get("text"), str) else ""
    return text, {**facts, **mine}


def token() -> str | None:
    """The server's bearer token for this user, or None (see the module's docstring)."""
    value = os.environ.get("HELA_MCP_TOKEN", "").strip()
    if value:
        return value
    from hela_cli.paths import data_dir

    path = data_dir() / "mcp-token"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (hasattr(os, "getuid") and st.st_uid != os.getuid()) or st.st_mode & 0o077:
            raise Unavailable("token file not user-only", str(path))
        text = os.read(fd, 4096).decode("utf-8", "replace")
    finally:
        os.close(fd)
    first = text.strip().split("\n")[0].strip() if text.strip() else ""
    return first or None


def _loopback(host: str) -> bool:
    """``localhost`` or a loopback address (the bearer token crosses no network in clear)."""
    if host.lower() in ("localhost", "127.0.0.1", "::1"):   # the usual ones without importing ipaddress
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ask(url: str, body: dict[str, Any], timeout: float, secret: str | None = None) -> dict[str, Any]:
    """POST ``body`` to the server's hook endpoint; its JSON answer within ``timeout`` seconds (the whole
    exchange: a server that trickles its answer gets no more). Raises :class:`Unavailable` (fall back
    in-process; ``slow`` past the timeout) or :class:`Failed` (the handler failed there). ``secret``: the
    bearer token (default: :func:`token`)."""
    out = exchange(url, PATH, body, timeout, secret)
    if not isinstance(out, dict):
        raise Unavailable("bad answer")
    if out.get("error"):
        raise Failed(str(out["error"]))
    return out


def exchange(url: str, route: str, body: dict[str, Any] | None, timeout: float,
             secret: str | None = None, method: str = "POST") -> Any:
    """One request to ``url`` + ``route`` with the bearer ``secret`` (default: :func:`token`); the decoded
    JSON of a 200 answer within ``timeout`` seconds. Plain HTTP/1.1 over a socket (``http.client`` imports the
    email package: a fifth of this path's start-up); ``https`` through ``http.client``. Raises
    :class:`Unavailable`."""
    import socket

    end = time.perf_counter() + max(timeout, 0.01)

    u = urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise Unavailable("bad url", url[:80])
    if u.scheme == "http" and not _loopback(u.hostname):
        raise Unavailable("not loopback", "the token goes over plain http to loopback only; use https")
    secret = secret if secret is not None else token()
    if not secret:
        raise Unavailable("no token")
    data = json.dumps(body, ensure_ascii=False).encode("utf-8") if body is not None else b""
    path = u.path.rstrip("/") + route
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    if u.scheme == "https":
        status, raw = _https(u, path, data, headers, end, method)
    else:
        host = f"[{u.hostname}]" if ":" in u.hostname else u.hostname
        head = "".join(f"{k}: {v}\r\n" for k, v in {"Host": f"{host}:{u.port or 80}", **headers,
                                                      "Content-Length": str(len(data)),
                                                      "Connection": "close"}.items())
        try:
            # an ASCII host as bytes: a str goes through the idna codec (an import of its own)
            name = u.hostname.encode("ascii") if u.hostname.isascii() else u.hostname
            sock = socket.create_connection((name, u.port or 80), timeout=min(CONNECT_TIMEOUT_S, max(timeout, 0.01)))
        except OSError as e:
            raise Unavailable("unreachable", e.__class__.__name__) from None
        try:
            sock.settimeout(_left(end))
            sock.sendall(f"{method} {path} HTTP/1.1\r\n{head}\r\n".encode("latin-1") + data)
            chunks = []
            while True:
                sock.settimeout(_left(end))
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        except TimeoutError:
            raise Unavailable("slow", f"no answer within {timeout:.3g} s") from None
        except OSError as e:
            raise Unavailable("broke", e.__class__.__name__) from None
        finally:
            sock.close()
        status, raw = _response(b"".join(chunks))
    if status == 409:
        raise Unavailable("other database")
    if status != 200:
        raise Unavailable("refused", str(status))
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise Unavailable("bad answer") from None


def _response(raw: bytes) -> tuple[int, bytes]:
    """Status and body of an HTTP/1.1 response read to the end (``Connection: close``; no chunking: the
    server answers JSON with a Content-Length)."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1]) if sep else 0
    except (IndexError, ValueError):
        status = 0
    if not status:
        raise Unavailable("bad answer")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            if len(body) < int(value):
                raise Unavailable("broke", "short answer")
            body = body[: int(value)]
    return status, body


def _left(end: float) -> float:
    """Seconds left until ``end`` (a ``perf_counter``); a socket timeout, so never 0 (that would not block)."""
    left = end - time.perf_counter()
    if left <= 0:
        raise TimeoutError
    return left


def _https(u: Any, path: str, data: bytes, headers: dict[str, str], end: float,
           method: str = "POST") -> tuple[int, bytes]:
    import http.client

    conn = http.client.HTTPSConnection(u.hostname, u.port or 443, timeout=min(CONNECT_TIMEOUT_S, _left(end)))
    try:
        try:
            conn.connect()
        except OSError as e:
            raise Unavailable("unreachable", e.__class__.__name__) from None
        assert conn.sock is not None
        try:
            conn.sock.settimeout(_left(end))
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read()   # the answer is one small JSON object
        except TimeoutError:
            raise Unavailable("slow", "no answer in time") from None
        except (OSError, http.client.HTTPException) as e:
            raise Unavailable("broke", e.__class__.__name__) from None
    finally:
        conn.close()


def request_body(args: Any, payload: dict[str, Any], cfg: Any, wait_s: float) -> dict[str, Any]:
    """What a hook sends: its event, agent, space, payload, ``hooks`` settings, database identity, when it
    sent it and how long it waits for the answer."""
    import dataclasses

    from hela_cli.hooks.space import project_space

    hooks = {k: v for k, v in dataclasses.asdict(cfg.hooks).items() if k != "server"}
    space = args.space or project_space(payload.get("cwd") or os.getcwd())   # this machine's view of the project
    return {"event": args.event, "agent": args.agent, "space": space, "payload": payload, "hooks": hooks,
            "db": db_identity(cfg.db), "sent": time.time(), "wait_s": wait_s}
