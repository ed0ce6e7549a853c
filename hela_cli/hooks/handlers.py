"""What hela does for each kind of hook event (the role :meth:`hela_cli.hooks.agents.Agent.role` gives it):
the four handlers, run by :func:`dispatch` in the hook's own process (:mod:`hela_cli.hooks.process`) or in a
``hela mcp --http`` server (:mod:`hela_cli.hooks.endpoint`, inside :func:`hosted`).

* ``start``: the start brief of the project's space;
* ``prompt``: the memories relevant to the prompt (redacted first);
* ``capture``: the transcript's turns not stored yet become memories (a long one in a detached child:
  :mod:`hela_cli.hooks.capture_runs`);
* ``path``: what earlier sessions left about the file a tool is about to touch.

A handler takes ``(args, payload, cfg, raw)``: the hook's arguments, the agent's JSON, the config, the raw
stdin (to start a child with), and returns ``(text to inject, facts for the hook log)``. It raises
:class:`~hela_cli.hooks.log.Fail` for a payload it cannot use. Nothing heavy is imported at module level."""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from hela_cli.hooks.log import T_START, Fail

_HOSTED: contextvars.ContextVar[Any] = contextvars.ContextVar("hela_hook_memory", default=None)


class HandOff(Exception):
    """Raised by the capture handler inside a server (:func:`hosted`) for a capture too long to do inline:
    the hook process starts the detached child itself."""


def dispatch(args: Any, role: str, payload: dict[str, Any], cfg: Any, raw: bytes,
             ) -> tuple[str, dict[str, Any]]:
    """The one dispatch of an event to its handler (in this process, or in a server: :func:`hosted`)."""
    return HANDLERS[role](args, payload, cfg, raw)


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
        loaded = self.mem.loaded_embedder   # None unless this hook needed the model: never load one to keep it
        if loaded is not None:
            _EMBEDDERS[self.key] = loaded
        self.mem.close()


def _has_space(mem: Any, space: str) -> bool:
    """Does the database exist and hold ``space``? (No file is created to find out.)"""
    from hela_cli.hooks.space import has_database

    return has_database(mem) and mem.store.get_space(space) is not None


# ------------------------------------------------------------------------------------------ the four handlers
def _start(args: Any, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
    from hela_cli.hooks import injected
    from hela_cli.hooks.context import start_context

    space, root = _space(args, payload)
    session = payload.get("session_id")
    if payload.get("source") in ("compact", "clear"):   # what the session was shown is no longer in its context
        injected.forget(cfg.db, space, session)
    with _memory(cfg) as mem:
        if not _has_space(mem, space):
            return "", {"result": "empty", "space": space}
        with injected.held(mem.config.db, space, session):   # what was shown, then what is shown: at once
            text, facts = start_context(mem, space, root, session, cfg)
    return text, {"result": "ok" if text else "empty", "space": space, **facts}


def _prompt(args: Any, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
    from hela_cli.hooks import injected
    from hela_cli.hooks.context import is_trivial, prompt_context, user_prompt

    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise Fail("stdin has no 'prompt'")
    from hela_cli.text.private import strip_private

    prompt = strip_private(user_prompt(prompt), cfg.ingest.private_tag)   # before the log, redaction, query
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
        with injected.held(mem.config.db, space, payload.get("session_id")):
            text, facts = prompt_context(mem, space, prompt, payload.get("session_id"), now=_event_time(payload),
                                         cfg=cfg)
        c3 = time.process_time()
        if cfg.hooks.feedback and facts.get("injected"):
            from hela_cli.hooks.feedback import remember_injected

            remember_injected(payload.get("session_id"), space, facts.get("recall_id"), facts["injected"], prompt)
        facts.pop("injected", None)
        facts["timings_ms"] = {"start_to_handler": round((t0 - T_START) * 1000, 1),
                               "embedder_load": round((t1 - t0) * 1000, 1),
                               "redact_wait": round((t2 - t1) * 1000, 1), **facts.get("timings_ms", {})}
        # CPU seconds of the process (all threads), which a busy machine does not inflate: interpreter start
        # and imports up to the handler, the model load (with the redaction beside it), the rest
        facts["cpu_ms"] = {"to_handler": round(c0 * 1000, 1), "embedder_load": round((c1 - c0) * 1000, 1),
                           "recall": round((c3 - c1) * 1000, 1), "total": round(c3 * 1000, 1)}
    return text, {"result": "ok" if text else "empty", "space": space, **facts}


def _capture(args: Any, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
    from hela_cli.hooks.capture import new_turns, transcript_turns
    from hela_cli.hooks.capture_runs import detach, store_in_chunks

    path = payload.get("transcript_path")
    if not path:
        raise Fail("stdin has no 'transcript_path'")
    space, _ = _space(args, payload)
    turns = transcript_turns(args.agent, path, payload.get("session_id"), cfg)
    with _memory(cfg) as mem:
        todo = new_turns(mem, space, turns)
        if not todo:
            return "", {"result": "empty", "space": space, "turns": len(turns),
                        **_model_work(args, raw, mem, space, cfg, payload.get("session_id"))}
        if len(todo) > cfg.hooks.capture_inline and not args.detached:
            if _HOSTED.get() is not None:   # a server starts no child: the hook process does
                raise HandOff()
            pid = detach(args, raw, cfg)
            return "", {"result": "detached" if pid else "busy", "space": space, "turns": len(turns), "new": len(todo), "child": pid}
        rep = store_in_chunks(mem, space, todo, args.detached)
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
    from hela_cli.hooks.capture_runs import current_job, detach

    if not modelwork.wanted(cfg):
        return {}
    if args.detached:
        return modelwork.run(mem, space, cfg, args.agent, session, args.event)
    if not modelwork.has_work(mem, space, cfg, args.agent, args.event, session):
        return {}
    if _HOSTED.get() is not None:   # a server starts no child: the hook process does
        raise HandOff()
    job = current_job()
    pid = detach(args, raw, cfg)
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
    from hela_cli.hooks import injected
    from hela_cli.hooks.context import path_context, tool_paths

    tool = payload.get("tool_name")
    paths = tool_paths(tool, payload.get("tool_input")) if isinstance(tool, str) else []
    space, root = _space(args, payload)
    if not paths:
        return "", {"result": "empty", "space": space, "detail": "no file in the tool call"}
    with _memory(cfg) as mem:
        if not _has_space(mem, space):
            return "", {"result": "empty", "space": space}
        with injected.held(mem.config.db, space, payload.get("session_id")):
            text, facts = path_context(mem, space, paths, [root, payload.get("cwd")], payload.get("session_id"),
                                       cfg)
    return text, {"result": "ok" if text else "empty", "space": space, "tool": tool, **facts}


def _counted(handler: Callable[..., tuple[str, dict[str, Any]]]) -> Callable[..., tuple[str, dict[str, Any]]]:
    """The handler, with the tokens of what it injects in its facts (``"tokens"`` of the hook log line,
    estimated as the context hooks' budgets are: characters / 4)."""

    def run(args: Any, payload: dict[str, Any], cfg: Any, raw: bytes) -> tuple[str, dict[str, Any]]:
        from hela_cli.hooks.context import approx_tokens

        text, facts = handler(args, payload, cfg, raw)
        return text, {**facts, "tokens": approx_tokens(text) if text else 0}

    return run


HANDLERS = {"start": _counted(_start), "prompt": _counted(_prompt), "capture": _capture, "path": _counted(_path)}
