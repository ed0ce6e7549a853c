"""``hela hook EVENT --agent NAME``: the process the agents' settings run, from its arguments to its exit.

It reads the agent's JSON on stdin and, for a start, prompt or file event, prints what the agent reads as
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
is logged too. A capture that ran past its budget is handed to a detached child.

What runs where: the handlers (:mod:`hela_cli.hooks.handlers`), in this process or, with ``hooks.server``
set, in a running ``hela mcp --http`` (:mod:`hela_cli.hooks.client`); a capture under its session's lock,
a long one in a detached child (:mod:`hela_cli.hooks.capture_runs`).

This module imports nothing heavy until the event is known to need it: the start-up of ``hela hook`` is the
whole latency budget of a prompt (docs/agents.md, BENCHMARKS.md). :func:`process_main` is the process entry
(it always exits 0); :func:`main` may be called in-process and always returns.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import sys
import threading
import time
from types import SimpleNamespace
from typing import Any, NoReturn

from hela_cli.hooks import log
from hela_cli.hooks.agents import AGENTS
from hela_cli.hooks.log import T_START as _T_START
from hela_cli.hooks.log import Fail as _Fail

MAX_STDIN = 16 * 1024 * 1024
STDIN_WAIT_S = 2.0      # the agents write their JSON at once; a stdin never closed is given up after this
MARGIN_S = 0.3          # the hook stops at least this long (and 20 % of the limit) before the agent kills it
_ENTRY: dict[str, Any] = {}      # the log line of the process's hook so far (a SIGTERM logs it)


class _Timeout(Exception):
    pass


_OPTIONS = {"--agent": "agent", "--space": "space", "--db": "db", "--config": "config", "--server": "server",
            "--lock-fd": "lock_fd", "--chat": "chat"}
# --lock-fd N: the session lock a parent hook passed to its detached child; --chat REF: models.chat for this
# install (the agent: route), handed on to the detached child that makes the model call


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


def process_main(argv: list[str], preread: Any = None, server_note: str | None = None) -> NoReturn:
    """``hela hook``: :func:`main`, then exit 0 whatever happened (a stdout the agent closed, a worker thread
    still inside llama.cpp or SQLite: nothing it did was committed). A session hela itself started for a
    model call (``HELA_NESTED`` set, models/agent.py) runs no hook at all."""
    if os.environ.get("HELA_NESTED"):
        os._exit(0)
    import signal

    def terminated(signum: int, frame: Any) -> None:   # the agent's own timeout: still one log line
        log.write({**_ENTRY, "result": "timeout", "detail": f"stopped by the agent (signal {signum})"}, _T_START)
        _stop_agents()
        os._exit(0)

    try:
        signal.signal(signal.SIGTERM, terminated)
        main(argv, process=True, preread=preread, server_note=server_note)
    except BaseException:  # noqa: BLE001 - nothing may change the exit code
        pass
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a reader that went away
        pass
    _stop_agents()
    os._exit(0)


def settings_hooks(agent: str, payload: dict[str, Any]) -> bool:
    try:
        from hela_cli.hooks.install import settings_hooks_installed

        return settings_hooks_installed(agent, Path(payload.get("cwd") or os.getcwd()))
    except Exception:  # noqa: BLE001 - unsure: run the hook (a duplicate injection is dropped as already shown)
        return False


def _stop_agents() -> None:
    """Kill the agent CLIs a model call of this process still runs (a child stopped at its budget)."""
    agent = sys.modules.get("hela_cli.models.agent")
    if agent is not None:
        try:
            agent.stop_all()
        except BaseException:  # noqa: BLE001 - exiting anyway
            pass


def main(argv: list[str], stdin: Any = None, stdout: Any = None, *, process: bool = False,
         preread: Any = None, server_note: str | None = None) -> int:
    """Run one hook; always returns 0. ``argv``: the words after ``hook``. In-process (``process`` false) a
    handler still running at the budget is left to finish in its thread and no child is started for it.
    ``preread``: the stdin :mod:`hela_cli.hooks.fast` already read (``(bytes, "stdin")``: it did not end in
    time); ``server_note``: why the managed server did not answer (``"none"``: none runs)."""
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
        if isinstance(preread, tuple):
            raise _Fail(_not_closed(STDIN_WAIT_S, len(preread[0])))
        raw = preread if preread is not None else _read_stdin(stdin, min(STDIN_WAIT_S, hard - time.perf_counter()))
        payload = parse_payload(raw)
        if payload.get("session_id"):
            entry["session"] = str(payload["session_id"])[:80]
        if os.environ.get("HELA_VIA_PLUGIN") and not args.detached and settings_hooks(args.agent, payload):
            # hela's plugin and its settings-file hooks both installed: the settings' hook runs, this one not
            entry.update(result="skipped", detail="hela's hooks are in a settings file too: the plugin's steps aside")
            log.write(dict(entry), t0)
            return 0
        job.args, job.role, job.payload, job.raw, job.process, job.limit = args, role, payload, raw, process, limit
        # asked of the managed server before (hooks/fast.py) and not answered: why, and a server to start
        fast = server_note if process and role != "capture" and not args.detached else None
        # an event the agent cuts short (SessionEnd): in a process, a child captures and the agent never waits
        job.child_now = role == "capture" and process and not args.detached and limit < 5.0
        out, facts = _within(job, t0, hard)
        entry.update(facts)
        _print(stdout, args.event, out)
        if fast is not None and process:   # in-process because no managed server answered: start one
            started = _start_server(job)
            if started is not None:
                entry["server"] = started if fast == "none" else f"{fast}; {started}"
            elif fast != "none":
                entry["server"] = fast
    except _Timeout as e:
        entry.update(result="timeout", detail=str(e))
        if job.role == "capture" and process and not job.args.detached:
            # the transcript's turns would wait for a later capture of the same session, which may never
            # come: a detached child does the work again from the start (this process exits at once)
            try:
                job.handed = True   # the worker must not release the session's lock: the child holds it
                from hela_cli.hooks.capture_runs import NO_SLOT, detach

                pid = detach(job.args, job.raw, job.cfg, job)
                entry["child"] = pid
                entry["detail"] = f"{e}; " + ("handed to a detached child" if pid else NO_SLOT)
            except Exception:  # noqa: BLE001 - still fail open
                pass
    except _Fail as e:
        entry.update(result="error", detail=log.safe(str(e)))
    except Exception as e:  # noqa: BLE001 - fail open: one log line, never a traceback
        from hela_cli.errors import HelaError

        msg = e.message if isinstance(e, HelaError) else f"{e.__class__.__name__}: {e}"
        entry.update(result="error", detail=log.safe(msg))
    except BaseException as e:  # KeyboardInterrupt, SystemExit from a library: still exit 0
        entry.update(result="error", detail=log.safe(f"{e.__class__.__name__}"))
    entry.setdefault("result", "ok")
    log.write(dict(entry), t0)
    return 0



def context_output(event: str, text: str) -> str:
    """What the agents read as additional context: one JSON line (the event name always the event's)."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}},
                      ensure_ascii=False) + "\n"


def _print(stdout: Any, event: str, out: str) -> None:
    if out:
        stdout.write(context_output(event, out))
        stdout.flush()


def _start_server(job: "_Job") -> str | None:
    """After an in-process answer with ``hooks.server: auto``: the managed server started (never waited for)."""
    if job.cfg is None:
        return None
    try:
        from hela_cli.hooks import managed

        return managed.ensure(job.args, job.cfg)
    except Exception as e:  # noqa: BLE001 - the hook answered; the next one tries again
        return f"not started ({e.__class__.__name__})"


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



def _read_stdin(stdin: Any, wait_s: float) -> bytes:
    """The agent's JSON: everything up to end of file, or a complete JSON object (an agent that writes its
    payload and never closes stdin), within ``wait_s`` seconds (:func:`hela_cli.hooks.fast.read_stdin`)."""
    from hela_cli.hooks.fast import read_stdin

    try:
        data, whole = read_stdin(stdin.fileno(), wait_s)
    except (AttributeError, OSError, ValueError):   # in-process: a file object (or no select on this stdin)
        return stdin.read(MAX_STDIN + 1)
    if not whole:
        raise _Fail(_not_closed(wait_s, len(data)))
    return data


def _not_closed(wait_s: float, size: int) -> str:
    got = "nothing" if not size else f"{size} bytes, not a whole JSON object"
    return f"stdin not closed within {max(wait_s, 0.0):.3g} s ({got} read)"


def parse_payload(raw: bytes) -> dict[str, Any]:
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
    session's lock (:func:`hela_cli.hooks.capture_runs.locked`)."""
    from hela_cli.hooks.client import dispatch_or_ask

    job.cfg = cfg
    if job.role != "capture":
        return dispatch_or_ask(job, cfg)
    from hela_cli.hooks.capture_runs import locked

    return locked(job, lambda: dispatch_or_ask(job, cfg))
