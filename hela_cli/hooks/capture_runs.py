"""When and where a capture runs: at most one capture per session at a time, a capture too long for the
hook in a detached child process, at most ``hooks.max_detached`` such children in all, none of them left
holding anything when it dies, and a child's turns committed in chunks.

Locks. Both kinds are ``flock`` locks on small files in ``<hela home>/captures/`` (user-only): the kernel
releases a lock when the last descriptor of its open file closes, so a process that crashed or was killed
never leaves a stale lock behind (no pid to check, no age to guess). A parent that hands a capture to a
detached child passes the child its descriptors (``pass_fds``): the session lock and the child slot it took
are held without a gap until the child exits.

Pending. A capture that finds its session's lock taken marks the session *pending* (an empty file) and
returns at once; whoever holds the lock looks for that mark after releasing it and captures again
(:func:`locked`), so the turns of the last ``Stop`` of a session are never left for a capture that may not
come. The order (mark, then try the lock; release, then look for the mark) leaves no window where both sides
miss each other.

Children. A capture with more new turns than ``hooks.capture_inline``, one that ran past its budget, and
every capture of an event the agent cuts short (``SessionEnd``) go to a detached child process
(:func:`detach`: ``hela hook EVENT --detached``, its own session, no stdin / stdout / stderr of the agent's)
that holds the session's lock and one of ``hooks.max_detached`` child slots, commits every
:data:`CHILD_CHUNK` turns (:func:`store_in_chunks`) and stops after ``hooks.detached_budget_s`` (keeping the
chunks it committed); with every slot taken, no child starts and the session's next capture takes the
turns. So a locked database never piles up children: one per session, a bounded number in all, each for a
bounded time.

Without ``fcntl`` (Windows) there is no lock: captures of one session may overlap, which only costs time
(``Memory.add_batch`` skips ids already stored, also when two captures race).
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import sys
from pathlib import Path
from typing import Any, Callable

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from hela_cli.hooks.log import Fail
from hela_cli.paths import data_dir, ensure_private_dir

CHILD_CHUNK = 64        # a detached capture child commits this many turns at a time
NO_SLOT = "every detached-child slot is taken (hooks.max_detached): the session's next capture takes these turns"
_CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("hela_hook_capture", default=None)


def current_job() -> Any:
    """The capture job this thread runs (its session lock), or None."""
    return _CURRENT.get()


def folder() -> Path:
    return ensure_private_dir(data_dir() / "captures")


def session_key(agent: str, session: str | None, transcript: str | None, space: str | None) -> str:
    """A file-name-safe key of one agent session's captures (the session id, else the transcript)."""
    ident = "\0".join([agent, session or "", transcript or "", space or ""])
    return hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def try_lock(path: Path) -> int | None:
    """An open descriptor holding an exclusive lock on ``path``, or None when another process holds it.
    (Without ``fcntl``: always a descriptor, locking nothing.)"""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    if fcntl is None:  # pragma: no cover - Windows
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def unlock(fd: int) -> None:
    """Release the lock for every process sharing it, then close ``fd``."""
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def lock_session(key: str) -> int | None:
    return try_lock(folder() / f"{key}.lock")


def slot(max_children: int) -> int | None:
    """A descriptor holding one of ``max_children`` child slots, or None when all are taken."""
    for i in range(max_children):
        fd = try_lock(folder() / f"child-{i}.lock")
        if fd is not None:
            return fd
    return None


def mark_pending(key: str) -> None:
    fd = os.open(folder() / f"{key}.pending", os.O_WRONLY | os.O_CREAT, 0o600)
    os.close(fd)


def take_pending(key: str) -> bool:
    """Was the session marked pending? The mark is removed."""
    try:
        (folder() / f"{key}.pending").unlink()
        return True
    except FileNotFoundError:
        return False


def locked(job: Any, run: Callable[[], tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    """Run the capture ``run`` under its session's lock (``job``: the hook's ``Job`` of
    :mod:`hela_cli.hooks.process`; its ``lock`` is the lock while held, so that the main thread can hand it
    to a child at the budget). A capture that finds the lock taken marks the session pending and returns
    ``busy``; the holder captures again what came meanwhile (a child, up to 3 times) or hands it to a child."""
    _CURRENT.set(job)
    key = session_key(job.args.agent, job.payload.get("session_id"), job.payload.get("transcript_path"),
                      job.args.space)
    if job.args.lock_fd is not None:
        job.lock = job.args.lock_fd   # inherited from the parent, already held
    else:
        job.lock = lock_session(key)
        if job.lock is None:
            mark_pending(key)   # then once more: the holder may have let go meanwhile
            job.lock = lock_session(key)
        if job.lock is None:
            return "", {"result": "busy", "detail": "a capture of this session is running; it takes these "
                                                     "turns too when it is done"}
    text, facts = "", {}
    try:
        for _ in range(3 if job.args.detached else 1):   # a child captures again what came while it ran
            take_pending(key)
            if job.child_now:
                check_transcript(job.payload)   # what the child would fail on is logged here
                pid = detach(job.args, job.raw, job.cfg, job)
                text, facts = "", ({"result": "detached", "child": pid, "detail": f"{job.args.event}: the agent "
                                    f"allows {job.limit:g} s; a detached child captures"} if pid else
                                   {"result": "busy", "detail": NO_SLOT})
            else:
                text, facts = run()
            if facts.get("result") in ("detached", "busy") or not take_pending(key):
                break
            mark_pending(key)   # keep the mark for the check after the release
    finally:
        lock, job.lock = job.lock, None
        if facts.get("result") == "detached" or job.handed or lock is None:
            if lock is not None:
                os.close(lock)   # the child holds the lock now
        else:
            unlock(lock)
    if facts.get("result") not in ("detached", "busy") and job.process and take_pending(key):
        # a capture came while this one ran and found the lock taken: a child takes its turns
        job.lock = lock_session(key)
        if job.lock is not None:
            try:
                facts["pending_child"] = detach(job.args, job.raw, job.cfg, job)
            finally:
                os.close(job.lock)
                job.lock = None
    return text, facts


def check_transcript(payload: dict[str, Any]) -> None:
    path = payload.get("transcript_path")
    if not path:
        raise Fail("stdin has no 'transcript_path'")
    if not Path(path).is_file():
        raise Fail(f"{path}: transcript not found")


def store_in_chunks(mem: Any, space: str, todo: list[Any], detached: bool) -> dict[str, int]:
    """Store the new turns ``todo``: all in one commit, or, in a detached child, every :data:`CHILD_CHUNK`
    turns (each written as a live add, with its session's context from the database): stopped at its budget,
    a child keeps what it stored and the next capture goes on from there (all or nothing, a first capture of
    a long session could never finish). ``{"added", "skipped"}``."""
    from hela_cli.hooks.capture import store_turns

    rep = {"added": 0, "skipped": 0}
    for i in range(0, len(todo), CHILD_CHUNK if detached else len(todo)):
        part = store_turns(mem, space, todo[i:i + CHILD_CHUNK] if detached else todo)
        rep = {k: rep[k] + part[k] for k in rep}
    return rep


def detach(args: Any, raw: bytes, cfg: Any, job: Any = None) -> int | None:
    """Start ``hela hook EVENT --detached`` in its own session with the payload ``raw`` on its stdin; do not
    wait. The child gets the session lock the capture holds (``job``'s, by default the one :func:`locked`
    runs in this thread) and one of ``hooks.max_detached`` child slots; with every slot taken nothing starts
    (None)."""
    import subprocess

    job = job or _CURRENT.get()
    lock = job.lock if job is not None else None
    slots = cfg.hooks.max_detached if cfg is not None else 2
    fd = slot(slots)
    if fd is None:
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
                                pass_fds=(fd,) if lock is None else (fd, lock))
    finally:
        os.close(fd)   # the child holds the slot now (or nobody does)
    assert proc.stdin is not None
    proc.stdin.write(raw)
    proc.stdin.close()
    return proc.pid
