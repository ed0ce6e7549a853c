"""``hela hook EVENT --agent NAME``: the one entry point the agents' settings call.

It reads the agent's JSON on stdin and, for a start or prompt event, prints what the agent reads as
additional context (``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": TEXT}}``), or
nothing. It fails open, always: any failure (bad or empty stdin, unknown event or agent, database locked or
missing, model missing, transcript missing or unreadable, the time budget spent) exits 0 with nothing on
stdout, writes one line to the hook log (:mod:`hela_cli.hooks.log`) and leaves the database as it was (a
write is one transaction; a process stopped at its budget never committed). Never exit 2 (Claude Code reads
it as "block"), never a traceback on stdout.

A capture with more new turns than ``hooks.capture_inline``, or one that ran past its budget, hands the work
to a detached child process (``--detached``: its own session, no stdin / stdout / stderr of the agent's, no
budget), so the agent never waits for embedding and a session's last turns are not lost.

This module imports nothing heavy until the event is known to need it: the start-up of ``hela hook`` is the
whole latency budget of a prompt (docs/agents.md, BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from hela_cli.hooks import log
from hela_cli.hooks.agents import AGENTS

MAX_STDIN = 16 * 1024 * 1024
_SAFE_IN = 100_000   # a log message is redacted from at most this many characters (then cut to 300)
_T_START = time.perf_counter()   # this module's import: the hook's own start (interpreter start-up not counted)


class _Fail(Exception):
    """A failure to log as one line (the message names no prompt or memory text)."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hela hook", add_help=False, exit_on_error=False)
    p.add_argument("event")
    p.add_argument("--agent", default="claude-code")
    p.add_argument("--space", default=None)
    p.add_argument("--db", default=None)
    p.add_argument("--config", default=None)
    p.add_argument("--detached", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv: list[str], stdin: Any = None, stdout: Any = None) -> int:
    """Run one hook; always returns 0. ``argv``: the words after ``hook``."""
    t0 = time.perf_counter()
    stdin = sys.stdin.buffer if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    entry: dict[str, Any] = {"agent": None, "event": None, "role": None}
    try:
        try:
            args, rest = _parser().parse_known_args(argv)
        except (argparse.ArgumentError, SystemExit) as e:
            raise _Fail(f"bad arguments: {' '.join(argv)} ({e})") from None   # _safe cuts, after redacting
        entry.update(agent=args.agent, event=args.event)
        if rest:
            raise _Fail(f"unknown arguments: {' '.join(rest)}")
        agent = AGENTS.get(args.agent)
        if agent is None:
            raise _Fail(f"unknown agent '{args.agent}' (known: {', '.join(AGENTS)})")
        role = agent.role(args.event)
        entry["role"] = role
        if role is None:
            raise _Fail(f"unknown event '{args.event}' for {agent.name} (known: {', '.join(agent.events)})")
        raw = stdin.read(MAX_STDIN + 1)
        payload = _payload(raw)
        if payload.get("session_id"):
            entry["session"] = str(payload["session_id"])[:80]
        cfg = _config(args)
        budget = cfg.hooks.capture_budget_s if role == "capture" else cfg.hooks.budget_s
        if args.detached:
            budget = max(budget, 3600.0)
        out, facts = _within(budget, lambda: _HANDLERS[role](args, payload, cfg, raw))
        entry.update(facts)
        if out:
            stdout.write(json.dumps({"hookSpecificOutput": {"hookEventName": args.event,
                                                            "additionalContext": out}}, ensure_ascii=False))
            stdout.write("\n")
            stdout.flush()
    except _Timeout as e:
        entry.update(result="timeout", detail=str(e))
        if entry.get("role") == "capture" and not args.detached:
            # the transcript's turns would wait for a later capture of the same session, which may never
            # come: a detached child (no budget) does the work again from the start
            try:
                entry["child"] = _detach(args, raw)
                entry["detail"] = f"{e}; handed to a detached child"
            except Exception:  # noqa: BLE001 - still fail open
                pass
        _log(entry, t0)
        os._exit(0)   # the worker may be inside llama.cpp or SQLite: stop here; nothing was committed
    except _Fail as e:
        entry.update(result="error", detail=_safe(str(e)))
    except Exception as e:  # noqa: BLE001 - fail open: one log line, never a traceback
        from hela_cli.errors import HelaError

        msg = e.message if isinstance(e, HelaError) else f"{e.__class__.__name__}: {e}"
        entry.update(result="error", detail=_safe(msg))
    except BaseException as e:  # KeyboardInterrupt, SystemExit from a library: still exit 0
        entry.update(result="error", detail=_safe(f"{e.__class__.__name__}"))
    entry.setdefault("result", "ok")
    _log(entry, t0)
    return 0


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


def _config(args: argparse.Namespace) -> Any:
    from hela_cli.config import load_config

    return load_config(args.config, overrides={"db": args.db} if args.db else None)


class _Timeout(Exception):
    pass


def _within(budget: float, work: Callable[[], tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    """Run ``work`` in a worker thread for at most ``budget`` seconds."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    worker = threading.Thread(target=target, name="hela-hook", daemon=True)
    worker.start()
    worker.join(budget)
    if worker.is_alive():
        raise _Timeout(f"time budget of {budget:g} s spent; nothing printed, nothing stored")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _space(args: argparse.Namespace, payload: dict[str, Any]) -> tuple[str, Path]:
    from hela_cli.hooks.space import project_root, project_space

    cwd = Path(payload.get("cwd") or os.getcwd())
    return (args.space or project_space(cwd)), project_root(cwd)


_EMBEDDERS: dict[tuple[str, str], Any] = {}   # one per process: a caller running many hooks in-process


def _memory(cfg: Any) -> Any:
    """A Memory over the configured database; the embedder is loaded once per process and model."""
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
def _start(args: argparse.Namespace, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
    from hela_cli.hooks.context import start_context

    space, root = _space(args, payload)
    with _memory(cfg) as mem:
        if not _has_space(mem, space):
            return "", {"result": "empty", "space": space}
        text, facts = start_context(mem, space, root, payload.get("session_id"))
    return text, {"result": "ok" if text else "empty", "space": space, **facts}


def _prompt(args: argparse.Namespace, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
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


def _capture(args: argparse.Namespace, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
    from hela_cli.hooks.capture import new_turns, store_turns, transcript_turns

    path = payload.get("transcript_path")
    if not path:
        raise _Fail("stdin has no 'transcript_path'")
    space, _ = _space(args, payload)
    turns = transcript_turns(args.agent, path, payload.get("session_id"), cfg)
    with _memory(cfg) as mem:
        todo = new_turns(mem, space, turns)
        if not todo:
            return "", {"result": "empty", "space": space, "turns": len(turns)}
        if len(todo) > cfg.hooks.capture_inline and not args.detached:
            pid = _detach(args, raw)
            return "", {"result": "detached", "space": space, "turns": len(turns), "new": len(todo), "child": pid}
        rep = store_turns(mem, space, todo)
        if cfg.hooks.feedback:
            from hela_cli.hooks.feedback import reinforce_echoed

            message = payload.get("last_assistant_message") or payload.get("prompt_response")
            fb = reinforce_echoed(mem, payload.get("session_id"), message if isinstance(message, str) else None)
            if fb is not None:
                rep["feedback"] = fb
    return "", {"result": "ok", "space": space, "turns": len(turns), **rep}


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


_HANDLERS = {"start": _start, "prompt": _prompt, "capture": _capture}


def _detach(args: argparse.Namespace, raw: bytes) -> int:
    """Start ``hela hook EVENT --detached`` in its own session with the payload on its stdin; do not wait."""
    import subprocess

    cmd = [sys.executable, "-m", "hela_cli", "hook", args.event, "--agent", args.agent, "--detached"]
    for flag, value in (("--space", args.space), ("--db", args.db), ("--config", args.config)):
        if value:
            cmd += [flag, value]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, close_fds=True)
    assert proc.stdin is not None
    proc.stdin.write(raw)
    proc.stdin.close()
    return proc.pid
