"""Capture locks and detached children: at most one capture per session at a time, at most
``hooks.max_detached`` detached capture children in all, none of them left holding anything when it dies.

Both are ``flock`` locks on small files in ``<hela home>/captures/`` (user-only): the kernel releases a lock
when the last descriptor of its open file closes, so a process that crashed or was killed never leaves a
stale lock behind (no pid to check, no age to guess). A parent that hands a capture to a detached child
passes the child its descriptors (``pass_fds``): the session lock and the child slot it took are held
without a gap until the child exits.

A capture that finds its session's lock taken marks the session *pending* (an empty file) and returns at
once; whoever holds the lock looks for that mark after releasing it and captures again, so the turns of the
last ``Stop`` of a session are never left for a capture that may not come. The order (mark, then try the
lock; release, then look for the mark) leaves no window where both sides miss each other.

Without ``fcntl`` (Windows) there is no lock: captures of one session may overlap, which only costs time
(``Memory.add_batch`` skips ids already stored, also when two captures race).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from hela_cli.paths import data_dir, ensure_private_dir


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
