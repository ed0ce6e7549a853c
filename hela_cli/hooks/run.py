"""``hela hook EVENT --agent NAME``: the one entry point the agents' settings call.

It reads the agent's JSON on stdin and, for a start or prompt event, prints what the agent reads as
additional context (``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": TEXT}}``), or
nothing. It fails open, always: any failure (bad, empty or never-closed stdin, unknown event or agent, a
config file that does not load or loads too slowly, database locked or missing, model missing, transcript
missing or unreadable, the time budget spent) exits 0 with nothing on stdout, writes one line to the hook log
(:mod:`hela_cli.hooks.log`) and leaves the database as it was (a write is one transaction; a process stopped
at its budget never committed). Never exit 2 (Claude Code reads it as "block"), never a traceback on stdout.

Time. The budget (``hooks.budget_s``; ``hooks.capture_budget_s`` for a capture) counts from the hook's start
and covers reading stdin (:data:`STDIN_WAIT_S` at most), loading the config and the handler. Whatever the
config says, the hook stops before the agent would kill it (:meth:`~hela_cli.hooks.agents.Agent.limit`, less
a margin, counted from the process's start), so every run leaves its log line; a ``SIGTERM`` from the agent
is logged too.

Captures. At most one capture of a session runs at a time (:mod:`hela_cli.hooks.children`): a capture that
finds one running marks the session pending and returns; the running one captures again when it is done.
A capture with more new turns than ``hooks.capture_inline``, one that ran past its budget, and every capture
of an event the agent cuts short (``SessionEnd``) go to a detached child process (``--detached``: its own
session, no stdin / stdout / stderr of the agent's) that holds the session's lock and one of
``hooks.max_detached`` child slots, commits every :data:`CHILD_CHUNK` turns and stops after
``hooks.detached_budget_s`` (keeping the chunks it committed); with every slot taken, no child starts and
the session's next capture takes the turns. So a locked database never piles up
children: one per session, a bounded number in all, each for a bounded time.

The fast path (:mod:`hela_cli.hooks.server`): with ``hooks.server`` set, the handler runs in that
``hela mcp --http`` server on its warm models; when it cannot answer, the hook runs in-process at once.

This module imports nothing heavy until the event is known to need it: the start-up of ``hela hook`` is the
whole latency budget of a prompt (docs/agents.md, BENCHMARKS.md). :func:`process_main` is the process entry
(it always exits 0); :func:`main` may be called in-process and always returns.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, NoReturn

from hela_cli.hooks import log
from hela_cli.hooks.agents import AGENTS

MAX_STDIN = 16 * 1024 * 1024
_SAFE_IN = 100_000   # a log message is redacted from at most this many characters (then cut to 300)
STDIN_WAIT_S = 2.0      # the agents write their JSON at once; a stdin never closed is given up after this
CHILD_CHUNK = 64        # a detached capture child commits this many turns at a time
MARGIN_S = 0.3          # the hook stops at least this long (and 20 % of the limit) before the agent kills it
_T_START = time.perf_counter()   # this module's import: the hook's own start (interpreter start-up not counted)
_ENTRY: dict[str, Any] = {}      # the log line of the process's hook so far (a SIGTERM logs it)


class _Fail(Exception):
    """A failure to log as one line (the message names no prompt or memory text)."""


class _Timeout(Exception):
    pass


class _HandOff(Exception):
    """Raised by :func:`_detach` inside a server: the hook process starts the child itself."""


_OPTIONS = {"--agent": "agent", "--space": "space", "--db": "db", "--config": "config", "--server": "server",
            "--lock-fd": "lock_fd", "--chat": "chat"}   # --chat REF: models.chat for this install (agent: route)   # --lock-fd N: the session lock a parent hook passed to its detached child


def _parse(argv: list[str]) -> tuple[SimpleNamespace, list[str]]:
    """``EVENT [--agent A] [--space S] [--db D] [--config C] [--server URL] [--detached]`` (``--opt=value``
    too) -> the arguments and the words not understood. Hand-made: argparse and what it imports are a tenth
    of the fast path's start-up."""
    args = SimpleNamespace(event=None, agent="claude-code", space=None, db=None, config=None, server=None,
                           detached=False, lock_fd=None, chat=None)
    rest: list[str] = []
    words = list(argv)
    while words:
        word = words.pop(0)
        name, eq, value = word.partition("=")
        if name in _OPTIONS:
            if not eq:
                if not words:
                    raise _Fail(f"bad arguments: {' '.join(argv)} ({name} needs a value)")
                value = words.pop(0)
            setattr(args, _OPTIONS[name], value)
        elif word == "--detached":
            args.detached = True
        elif args.event is None and not word.startswith("-"):
            args.event = word
        else:
            rest.append(word)
    if args.event is None:
        raise _Fail(f"bad arguments: {' '.join(argv)} (no EVENT)")
    if args.lock_fd is not None:
        if not str(args.lock_fd).isdigit():
            raise _Fail(f"bad arguments: --lock-fd {str(args.lock_fd)[:20]}")
        args.lock_fd = int(args.lock_fd)
    return args, rest


def process_main(argv: list[str]) -> NoReturn:
    """``hela hook``: :func:`main`, then exit 0 whatever happened (a stdout the agent closed, a worker thread
    still inside llama.cpp or SQLite: nothing it did was committed)."""
    if os.environ.get("HELA_NESTED"):   # a session hela started for its own model call: no hook at all
        os._exit(0)
    import signal

    def terminated(signum: int, frame: Any) -> None:   # the agent's own timeout: still one log line
        _log({**_ENTRY, "result": "timeout", "detail": f"stopped by the agent (signal {signum})"}, _T_START)
        _stop_agents()
        os._exit(0)

    try:
        signal.signal(signal.SIGTERM, terminated)
        main(argv, process=True)
    except BaseException:  # noqa: BLE001 - nothing may change the exit code
        pass
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a reader that went away
        pass
    _stop_agents()
    os._exit(0)


def _stop_agents() -> None:
    """Kill the agent CLIs a model call of this process still runs (a child stopped at its budget)."""
    agent = sys.modules.get("hela_cli.models.agent")
    if agent is not None:
        try:
            agent.stop_all()
        except BaseException:  # noqa: BLE001 - exiting anyway
            pass


def main(argv: list[str], stdin: Any = None, stdout: Any = None, *, process: bool = False) -> int:
    """Run one hook; always returns 0. ``argv``: the words after ``hook``. In-process (``process`` false) a
    handler still running at the budget is left to finish in its thread and no child is started for it."""
    t0 = time.perf_counter()
    stdin = sys.stdin.buffer if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    entry: dict[str, Any] = {"agent": None, "event": None, "role": None}
    if process:
        _ENTRY.clear()
        entry = _ENTRY
        entry.update(agent=None, event=None, role=None)
    job = _Job()
    try:
        args, rest = _parse(argv)
        entry.update(agent=args.agent, event=args.event)
        if args.detached:
            entry.update(detached=True, pid=os.getpid())
        if rest:
            raise _Fail(f"unknown arguments: {' '.join(rest)}")
        agent = AGENTS.get(args.agent)
        if agent is None:
            raise _Fail(f"unknown agent '{args.agent}' (known: {', '.join(AGENTS)})")
        role = agent.role(args.event)
        entry["role"] = role
        if role is None:
            raise _Fail(f"unknown event '{args.event}' for {agent.name} (known: {', '.join(agent.events)})")
        limit = agent.limit(args.event)
        hard = t0 - _process_age() + limit - max(MARGIN_S, 0.2 * limit)
        if args.detached or not process:   # no agent waits for a child or an in-process caller: the budget
            hard = t0 + 600.0              # bounds them (and this, a config that never loads)
        raw = _read_stdin(stdin, min(STDIN_WAIT_S, hard - time.perf_counter()))
        payload = _payload(raw)
        if payload.get("session_id"):
            entry["session"] = str(payload["session_id"])[:80]
        job.args, job.role, job.payload, job.raw, job.process, job.limit = args, role, payload, raw, process, limit
        # an event the agent cuts short (SessionEnd): in a process, a child captures and the agent never waits
        job.child_now = role == "capture" and process and not args.detached and limit < 5.0
        out, facts = _within(job, t0, hard)
        entry.update(facts)
        if out:
            stdout.write(json.dumps({"hookSpecificOutput": {"hookEventName": args.event,
                                                            "additionalContext": out}}, ensure_ascii=False))
            stdout.write("\n")
            stdout.flush()
    except _Timeout as e:
        entry.update(result="timeout", detail=str(e))
        if job.role == "capture" and process and not job.args.detached:
            # the transcript's turns would wait for a later capture of the same session, which may never
            # come: a detached child does the work again from the start (this process exits at once)
            try:
                job.handed = True   # the worker must not release the session's lock: the child holds it
                pid = _detach(job.args, job.raw, job)
                entry["child"] = pid
                entry["detail"] = f"{e}; " + ("handed to a detached child" if pid else _NO_SLOT)
            except Exception:  # noqa: BLE001 - still fail open
                pass
    except _Fail as e:
        entry.update(result="error", detail=_safe(str(e)))
    except Exception as e:  # noqa: BLE001 - fail open: one log line, never a traceback
        from hela_cli.errors import HelaError

        msg = e.message if isinstance(e, HelaError) else f"{e.__class__.__name__}: {e}"
        entry.update(result="error", detail=_safe(msg))
    except BaseException as e:  # KeyboardInterrupt, SystemExit from a library: still exit 0
        entry.update(result="error", detail=_safe(f"{e.__class__.__name__}"))
    entry.setdefault("result", "ok")
    _log(dict(entry), t0)
    return 0


_NO_SLOT = "every detached-child slot is taken (hooks.max_detached): the session's next capture takes these turns"


def _process_age() -> float:
    """Seconds since this process started (the agent's timeout counts from the spawn, not from our first
    line); 0 where the kernel does not say (then only the interpreter's start-up is not counted)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK") - (time.perf_counter() - _T_START))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def _log(entry: dict[str, Any], t0: float) -> None:
    log.append({**entry, "ms": round((time.perf_counter() - t0) * 1000, 1)})


def _safe(msg: str) -> str:
    """One line, secrets redacted, then cut to at most 300 characters: redacting first, so that a key the cut
    would split is still whole (and found) when it is replaced. When the redaction itself fails, nothing of
    the message is written."""
    line = " ".join(str(msg)[:_SAFE_IN].split())
    try:
        from hela_cli.text.redact import redact

        return redact(line)[:300]
    except Exception as e:  # noqa: BLE001 - the log line must still be written, without the message
        return f"(detail withheld: redaction failed with {e.__class__.__name__})"


def _read_stdin(stdin: Any, wait_s: float) -> bytes:
    """The agent's JSON: everything up to end of file, or a complete JSON object (an agent that writes its
    payload and never closes stdin), within ``wait_s`` seconds."""
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):   # in-process: a file object
        return stdin.read(MAX_STDIN + 1)
    import select

    chunks: list[bytes] = []
    size = 0
    end = time.perf_counter() + max(wait_s, 0.0)
    while size <= MAX_STDIN:
        left = end - time.perf_counter()
        try:   # at least one look, even with no time left: what the agent wrote is there
            ready = select.select([fd], [], [], max(left, 0.0))[0]
        except (OSError, ValueError):   # pragma: no cover - no select on this kind of stdin (Windows pipes)
            return stdin.read(MAX_STDIN + 1)
        if not ready:
            got = "nothing" if not size else f"{size} bytes, not a whole JSON object"
            raise _Fail(f"stdin not closed within {max(wait_s, 0.0):.3g} s ({got} read)")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.rstrip().endswith(b"}") and _whole_json(b"".join(chunks)):
            break
    return b"".join(chunks)


def _whole_json(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data.decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError):
        return False


def _payload(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_STDIN:
        raise _Fail(f"stdin is larger than {MAX_STDIN} bytes")
    if not raw.strip():
        raise _Fail("empty stdin (expected the agent's JSON)")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _Fail(f"stdin is not JSON ({e.__class__.__name__}: {str(e)[:80]})") from None
    if not isinstance(data, dict):
        raise _Fail(f"stdin is JSON {type(data).__name__}, not an object")
    for key in ("session_id", "transcript_path", "cwd", "prompt"):
        if key in data and data[key] is not None and not isinstance(data[key], str):
            raise _Fail(f"stdin: '{key}' is {type(data[key]).__name__}, not a string")
    return data


def _config(args: Any) -> Any:
    from hela_cli.config import load_config

    overrides = {"db": args.db} if args.db else {}
    if args.server is not None:
        overrides["hooks.server"] = args.server
    if getattr(args, "chat", None):
        overrides["models.chat"] = args.chat
    return load_config(args.config, overrides=overrides or None)


class _Job:
    """One hook's work, shared by the main thread and the worker (the capture lock travels with it)."""

    args: Any = None
    role: str | None = None
    payload: dict[str, Any] = {}
    raw: bytes = b""
    process: bool = False
    child_now: bool = False      # the agent cuts this capture short: hand it to a child at once
    limit: float = 0.0           # what the agent allows this event, seconds
    cfg: Any = None
    lock: int | None = None      # the session's capture lock, while this hook holds it
    handed: bool = False         # the main thread gave the lock to a child (the worker only closes its copy)


_JOB: contextvars.ContextVar[_Job | None] = contextvars.ContextVar("hela_hook_job", default=None)


def _within(job: _Job, t0: float, hard: float) -> tuple[str, dict[str, Any]]:
    """Load the config and run the handler in a worker thread; wait at most until the budget (counted from
    ``t0``) or ``hard`` (before the agent's own limit), whichever comes first."""
    box: dict[str, Any] = {}
    ready = threading.Event()

    def target() -> None:
        try:
            cfg = _config(job.args)
            box["cfg"] = cfg
            ready.set()
            box["value"] = _work(job, cfg)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e
        finally:
            ready.set()

    worker = threading.Thread(target=target, name="hela-hook", daemon=True)
    worker.start()
    if not ready.wait(max(hard - time.perf_counter(), 0.0)):
        raise _Timeout(f"the config did not load within {hard - t0:.3g} s; nothing printed, nothing stored")
    if "cfg" in box:
        hooks = box["cfg"].hooks
        budget = hooks.capture_budget_s if job.role == "capture" else hooks.budget_s
        if job.args.detached:
            budget = hooks.detached_budget_s
        agent_waits = job.process and not job.args.detached
        deadline = min(hard, t0 + budget) if agent_waits else t0 + budget
        worker.join(max(deadline - time.perf_counter(), 0.0))
        if worker.is_alive():
            spent = f"time budget of {budget:g} s" if deadline < hard or not agent_waits else \
                f"the agent's limit for {job.args.event} ({hard - t0:.3g} s here)"
            raise _Timeout(f"{spent} spent; " + ("the chunks of turns committed are kept, the next capture "
                                                 "stores the rest" if job.args.detached else
                                                 "nothing printed, nothing stored"))
    if "error" in box:
        raise box["error"]
    return box["value"]


def _work(job: _Job, cfg: Any) -> tuple[str, dict[str, Any]]:
    """The handler of the job's role, through the server when one is configured; a capture under its
    session's lock (see the module's docstring)."""
    job.cfg = cfg
    _JOB.set(job)
    if job.role != "capture":
        return _dispatch_or_ask(job, cfg)
    from hela_cli.hooks import children

    key = children.session_key(job.args.agent, job.payload.get("session_id"), job.payload.get("transcript_path"),
                               job.args.space)
    if job.args.lock_fd is not None:
        job.lock = job.args.lock_fd   # inherited from the parent, already held
    else:
        job.lock = children.lock_session(key)
        if job.lock is None:
            children.mark_pending(key)   # then once more: the holder may have let go meanwhile
            job.lock = children.lock_session(key)
        if job.lock is None:
            return "", {"result": "busy", "detail": "a capture of this session is running; it takes these "
                                                     "turns too when it is done"}
    text, facts = "", {}
    try:
        for _ in range(3 if job.args.detached else 1):   # a child captures again what came while it ran
            children.take_pending(key)
            if job.child_now:
                _check_transcript(job.payload)   # what the child would fail on is logged here
                pid = _detach(job.args, job.raw)
                text, facts = "", ({"result": "detached", "child": pid, "detail": f"{job.args.event}: the agent "
                                    f"allows {job.limit:g} s; a detached child captures"} if pid else
                                   {"result": "busy", "detail": _NO_SLOT})
            else:
                text, facts = _dispatch_or_ask(job, cfg)
            if facts.get("result") in ("detached", "busy") or not children.take_pending(key):
                break
            children.mark_pending(key)   # keep the mark for the check after the release
    finally:
        lock, job.lock = job.lock, None
        if facts.get("result") == "detached" or job.handed or lock is None:
            if lock is not None:
                os.close(lock)   # the child holds the lock now
        else:
            children.unlock(lock)
    if facts.get("result") not in ("detached", "busy") and job.process and children.take_pending(key):
        # a capture came while this one ran and found the lock taken: a child takes its turns
        job.lock = children.lock_session(key)
        if job.lock is not None:
            try:
                facts["pending_child"] = _detach(job.args, job.raw)
            finally:
                os.close(job.lock)
                job.lock = None
    return text, facts


def _check_transcript(payload: dict[str, Any]) -> None:
    path = payload.get("transcript_path")
    if not path:
        raise _Fail("stdin has no 'transcript_path'")
    if not Path(path).is_file():
        raise _Fail(f"{path}: transcript not found")


def _dispatch_or_ask(job: _Job, cfg: Any) -> tuple[str, dict[str, Any]]:
    """The handler, in the configured server (a detached child never asks one) or in this process."""
    url = cfg.hooks.server
    if not url or job.args.detached:
        return _dispatch(job.args, job.role, job.payload, cfg, job.raw)
    from hela_cli.hooks import server

    t = time.perf_counter()
    try:
        budget = cfg.hooks.capture_budget_s if job.role == "capture" else cfg.hooks.budget_s
        answer = server.ask(url, server.request_body(job.args, job.payload, cfg), budget)
    except server.Failed as e:
        raise _Fail(str(e)) from None
    except server.Unavailable as e:
        text, facts = _dispatch(job.args, job.role, job.payload, cfg, job.raw)
        return text, {**facts, "server": e.reason}
    ms = round((time.perf_counter() - t) * 1000, 1)
    mine = {"server": "ok", "server_ms": ms, "cpu_ms": {"total": round(time.process_time() * 1000, 1)}}
    if answer.get("handoff"):   # the server found a capture too big to do inline: a child of ours does it
        pid = _detach(job.args, job.raw)
        return "", {"result": "detached" if pid else "busy", "child": pid, **mine,
                    **({} if pid else {"detail": _NO_SLOT})}
    facts = answer.get("facts") if isinstance(answer.get("facts"), dict) else {}
    text = answer.get("text") if isinstance(answer.get("text"), str) else ""
    return text, {**facts, **mine}


def _dispatch(args: Any, role: str, payload: dict[str, Any], cfg: Any, raw: bytes,
              ) -> tuple[str, dict[str, Any]]:
    """The one dispatch of an event to its handler (in this process, or in a server: :func:`hosted`)."""
    return _HANDLERS[role](args, payload, cfg, raw)


_HOSTED: contextvars.ContextVar[Any] = contextvars.ContextVar("hela_hook_memory", default=None)


def serve_event(body: Any, memory: Any, config: Any) -> tuple[int, dict[str, Any]]:
    """A server's side of the fast path (``POST /hook``, token already checked): run a client's hook event
    with ``memory`` (the server's) through :func:`_dispatch`, the hook's ``hooks`` settings over the server's
    ``config``. Returns ``(HTTP status, JSON answer)``: ``{"text", "facts"}``, ``{"handoff": true}`` (a
    capture for a child of the hook), ``{"error"}`` (the handler failed: the hook logs it)."""
    from hela_cli.hooks.server import db_identity

    if not isinstance(body, dict) or not isinstance(body.get("payload"), dict):
        return 400, {"error": "expected {event, agent, space, payload, hooks, db}"}
    if body.get("db") != db_identity(config.db):
        return 409, {"error": "this server serves another database"}
    agent = AGENTS.get(str(body.get("agent")))
    event = str(body.get("event"))
    role = agent.role(event) if agent else None
    if agent is None or role is None:
        return 400, {"error": _safe(f"unknown agent or event: {body.get('agent')!r} {event!r}")}
    try:
        hooks = body.get("hooks") if isinstance(body.get("hooks"), dict) else {}
        cfg = config.replace(**{f"hooks.{k}": v for k, v in hooks.items() if v is not None and k != "server"})
    except Exception as e:  # noqa: BLE001 - a bad setting is the client's error
        return 400, {"error": _safe(str(getattr(e, "message", e)))}
    space = body.get("space")
    args = SimpleNamespace(event=event, agent=agent.name, space=space if isinstance(space, str) else None,
                              db=None, config=None, server=None, detached=False, lock_fd=None)
    payload = body["payload"]
    try:   # no raw stdin here: a handler uses it only to start a child, which in a server is a _HandOff
        text, facts = hosted(memory, lambda: _dispatch(args, role, payload, cfg, b""))
    except _HandOff:
        return 200, {"handoff": True}
    except Exception as e:  # noqa: BLE001 - one line back to the hook, which logs it
        from hela_cli.errors import HelaError

        return 200, {"error": _safe(e.message if isinstance(e, HelaError) else f"{e.__class__.__name__}: {e}")}
    facts.pop("cpu_ms", None)   # the server process's own counters: the hook logs its own
    if isinstance(facts.get("timings_ms"), dict):
        facts["timings_ms"].pop("start_to_handler", None)
    return 200, {"text": text, "facts": facts}


def hosted(memory: Any, work: Callable[[], Any]) -> Any:
    """Run ``work`` with the handlers' :func:`_memory` giving ``memory`` (a server's, kept open)."""
    token = _HOSTED.set(memory)
    try:
        return work()
    finally:
        _HOSTED.reset(token)


def _space(args: Any, payload: dict[str, Any]) -> tuple[str, Path]:
    from hela_cli.hooks.space import project_root, project_space

    cwd = Path(payload.get("cwd") or os.getcwd())
    return (args.space or project_space(cwd)), project_root(cwd)


_EMBEDDERS: dict[tuple[str, str], Any] = {}   # one per process: a caller running many hooks in-process


def _memory(cfg: Any) -> Any:
    """A Memory over the configured database; the embedder is loaded once per process and model. In a
    server (:func:`hosted`): the server's Memory, left open."""
    mem = _HOSTED.get()
    if mem is not None:
        return contextlib.nullcontext(mem)
    from hela_cli.memory import Memory

    key = (cfg.models.embedder, cfg.models.dir)
    return _CachingMemory(Memory(cfg, embedder=_EMBEDDERS.get(key)), key)


class _CachingMemory:
    """``with`` support around a Memory that keeps its embedder for the next hook of this process."""

    def __init__(self, mem: Any, key: tuple[str, str]):
        self.mem, self.key = mem, key

    def __enter__(self) -> Any:
        return self.mem

    def __exit__(self, *exc: Any) -> None:
        loaded = self.mem._embedder   # None unless this hook needed the model: never load one to keep it
        if loaded is not None:
            _EMBEDDERS[self.key] = loaded
        self.mem.close()


def _has_space(mem: Any, space: str) -> bool:
    """Does the database exist and hold ``space``? (No file is created to find out.)"""
    from hela_cli.hooks.capture import has_database

    return has_database(mem) and mem.store.get_space(space) is not None


# ------------------------------------------------------------------------------------------ the three roles
def _start(args: Any, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
    from hela_cli.hooks.context import start_context

    space, root = _space(args, payload)
    if payload.get("source") in ("compact", "clear"):   # what the session was shown is no longer in its context
        from hela_cli.hooks import injected

        injected.forget(payload.get("session_id"))
    with _memory(cfg) as mem:
        if not _has_space(mem, space):
            return "", {"result": "empty", "space": space}
        text, facts = start_context(mem, space, root, payload.get("session_id"))
    return text, {"result": "ok" if text else "empty", "space": space, **facts}


def _prompt(args: Any, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
    from hela_cli.hooks.context import is_trivial, prompt_context, user_prompt

    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise _Fail("stdin has no 'prompt'")
    prompt = user_prompt(prompt)
    space, _ = _space(args, payload)
    if is_trivial(prompt, cfg):
        return "", {"result": "empty", "space": space, "detail": "trivial prompt"}
    # the prompt is redacted (detect-secrets' import is a third of the hook's start-up) while the embedder
    # loads (llama.cpp releases the GIL); nothing of it is embedded or written before the redaction is done
    redacted = _background(_redact, prompt) if cfg.hooks.redact else None
    with _memory(cfg) as mem:
        if not _has_space(mem, space):
            return "", {"result": "empty", "space": space}
        t0, c0 = time.perf_counter(), time.process_time()
        mem.embedder  # noqa: B018 - loads meanwhile
        t1, c1 = time.perf_counter(), time.process_time()
        if redacted is not None:
            prompt = redacted()
        t2 = time.perf_counter()
        text, facts = prompt_context(mem, space, prompt, payload.get("session_id"), now=_event_time(payload))
        c3 = time.process_time()
        if cfg.hooks.feedback and facts.get("injected"):
            from hela_cli.hooks.feedback import remember_injected

            remember_injected(payload.get("session_id"), space, facts.get("recall_id"), facts["injected"], prompt)
        facts.pop("injected", None)
        facts["timings_ms"] = {"start_to_handler": round((t0 - _T_START) * 1000, 1),
                               "embedder_load": round((t1 - t0) * 1000, 1),
                               "redact_wait": round((t2 - t1) * 1000, 1), **facts.get("timings_ms", {})}
        # CPU seconds of the process (all threads), which a busy machine does not inflate: interpreter start
        # and imports up to the handler, the model load (with the redaction beside it), the rest
        facts["cpu_ms"] = {"to_handler": round(c0 * 1000, 1), "embedder_load": round((c1 - c0) * 1000, 1),
                           "recall": round((c3 - c1) * 1000, 1), "total": round(c3 * 1000, 1)}
    return text, {"result": "ok" if text else "empty", "space": space, **facts}


def _capture(args: Any, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
    from hela_cli.hooks.capture import new_turns, store_turns, transcript_turns

    path = payload.get("transcript_path")
    if not path:
        raise _Fail("stdin has no 'transcript_path'")
    space, _ = _space(args, payload)
    turns = transcript_turns(args.agent, path, payload.get("session_id"), cfg)
    with _memory(cfg) as mem:
        todo = new_turns(mem, space, turns)
        if not todo:
            return "", {"result": "empty", "space": space, "turns": len(turns),
                        **_model_work(args, raw, mem, space, cfg, payload.get("session_id"))}
        if len(todo) > cfg.hooks.capture_inline and not args.detached:
            pid = _detach(args, raw)
            return "", {"result": "detached" if pid else "busy", "space": space, "turns": len(turns), "new": len(todo), "child": pid}
        rep = {"added": 0, "skipped": 0}
        # a detached child commits every CHILD_CHUNK turns (each written as a live add, with its session's
        # context from the database): stopped at its budget, it keeps what it stored and the next capture
        # goes on from there (all or nothing, a first capture of a long session could never finish)
        for i in range(0, len(todo), CHILD_CHUNK if args.detached else len(todo)):
            part = store_turns(mem, space, todo[i:i + CHILD_CHUNK] if args.detached else todo)
            rep = {k: rep[k] + part[k] for k in rep}
        if cfg.hooks.feedback:
            from hela_cli.hooks.feedback import reinforce_echoed

            message = payload.get("last_assistant_message") or payload.get("prompt_response")
            fb = reinforce_echoed(mem, payload.get("session_id"), message if isinstance(message, str) else None)
            if fb is not None:
                rep["feedback"] = fb
        rep.update(_model_work(args, raw, mem, space, cfg, payload.get("session_id")))
    return "", {"result": "ok", "space": space, "turns": len(turns), **rep}


def _model_work(args: Any, raw: bytes, mem: Any, space: str, cfg: Any, session: Any) -> dict[str, Any]:
    """The chat model's one batched call (hooks/modelwork.py), never on the agent's path: a detached child
    makes it; an inline capture starts such a child (handing it the session) when something earns a call."""
    from hela_cli.hooks import modelwork

    if not modelwork.wanted(cfg):
        return {}
    if args.detached:
        return modelwork.run(mem, space, cfg, args.agent, session, args.event)
    if not modelwork.has_work(mem, space, cfg, args.agent, args.event, session):
        return {}
    job = _JOB.get()
    pid = _detach(args, raw)
    if pid and job is not None:
        job.handed = True   # the child holds the session's lock now
    return {"model_child": pid}


def _event_time(payload: dict[str, Any]) -> float:
    """When the event happened: the payload's ``timestamp`` (Gemini CLI sends one, ISO 8601), else now. A
    prompt's "yesterday" counts from it, not from the space's newest memory (the last session may be days
    old)."""
    stamp = payload.get("timestamp")
    if isinstance(stamp, str) and stamp.strip():
        from hela_cli.text.dates import parse_date

        try:
            return parse_date(stamp)
        except ValueError:
            pass
    return time.time()


def _redact(text: str) -> str:
    from hela_cli.text.redact import redact

    return redact(text)


def _background(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """Start ``fn(*args)`` in a thread; the returned function waits for its result (or raises its error)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    t = threading.Thread(target=target, name="hela-hook-redact", daemon=True)
    t.start()

    def result() -> Any:
        t.join()
        if "error" in box:
            raise box["error"]
        return box["value"]

    return result


def _path(args: Any, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
    """Before an edit or write (Claude Code / Codex ``PreToolUse``; Gemini CLI ``AfterTool`` of a read or an
    edit): what earlier sessions left about the file. SQL only: no model is loaded."""
    from hela_cli.hooks.context import path_context, tool_paths

    tool = payload.get("tool_name")
    paths = tool_paths(tool, payload.get("tool_input")) if isinstance(tool, str) else []
    space, root = _space(args, payload)
    if not paths:
        return "", {"result": "empty", "space": space, "detail": "no file in the tool call"}
    with _memory(cfg) as mem:
        if not _has_space(mem, space):
            return "", {"result": "empty", "space": space}
        text, facts = path_context(mem, space, paths, [root, payload.get("cwd")], payload.get("session_id"))
    return text, {"result": "ok" if text else "empty", "space": space, "tool": tool, **facts}


def _counted(handler: Callable[..., tuple[str, dict[str, Any]]]) -> Callable[..., tuple[str, dict[str, Any]]]:
    """The handler, with the tokens of what it injects in its facts (``"tokens"`` of the hook log line,
    estimated as the context hooks' budgets are: characters / 4)."""

    def run(args: Any, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
        from hela_cli.hooks.context import approx_tokens

        text, facts = handler(args, payload, cfg, raw)
        return text, {**facts, "tokens": approx_tokens(text) if text else 0}

    return run


_HANDLERS = {"start": _counted(_start), "prompt": _counted(_prompt), "capture": _capture, "path": _counted(_path)}


def _detach(args: Any, raw: bytes, job: _Job | None = None) -> int | None:
    """Start ``hela hook EVENT --detached`` in its own session with the payload on its stdin; do not wait.
    The child gets this hook's session lock (when it holds one) and one of ``hooks.max_detached`` child slots;
    with every slot taken nothing starts (None). In a server (:func:`hosted`): :class:`_HandOff`."""
    if _HOSTED.get() is not None:
        raise _HandOff()
    import subprocess

    from hela_cli.hooks import children

    job = job or _JOB.get()
    lock = job.lock if job is not None else None
    slots = job.cfg.hooks.max_detached if job is not None and job.cfg is not None else 2
    slot = children.slot(slots)
    if slot is None:
        return None
    cmd = [sys.executable, "-m", "hela_cli", "hook", args.event, "--agent", args.agent, "--detached"]
    for flag, value in (("--space", args.space), ("--db", args.db), ("--config", args.config),
                        ("--chat", getattr(args, "chat", None))):
        if value:
            cmd += [flag, value]
    if lock is not None:
        cmd += ["--lock-fd", str(lock)]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, close_fds=True,
                                pass_fds=(slot,) if lock is None else (slot, lock))
    finally:
        os.close(slot)   # the child holds the slot now (or nobody does)
    assert proc.stdin is not None
    proc.stdin.write(raw)
    proc.stdin.close()
    return proc.pid
