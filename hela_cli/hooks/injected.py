"""Which memories the hooks already put in front of the model in an agent session, so that none is injected
twice in one session (by any hook: the start brief, the prompt recall, the recall by file).

One small user-only file per session in hela's home (``hooks-state/<hash>.injected``), keyed by the
database (:func:`hela_cli.paths.db_identity`: memory ids are one database's), the space and the session id:
one line of memory ids per injection. A hook holds the session's record (:func:`held`, an exclusive
``flock`` on that file) from reading what was shown to writing what it shows, so hooks of one session that
run at once (parallel ``PreToolUse`` hooks, in separate processes or in a server's threads) never inject the
same memory: the second waits for the first (a few milliseconds of SQL, or one recall) and then sees its
ids. Every holder is a hook bounded by its budget, and the kernel releases the lock of a process that dies.
Without ``fcntl`` (Windows) there is no lock: parallel hooks may show a memory twice.

A file not touched for :data:`KEEP_DAYS` days is removed by the next session start; a session whose
context was compacted or cleared starts its record afresh (:func:`forget`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path
from typing import Iterable, Iterator

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from hela_cli.paths import data_dir, db_identity, ensure_private_dir

SUFFIX = ".injected"
KEEP_DAYS = 14


def _path(db: str, space: str, session: str) -> Path:
    ident = "\0".join([db_identity(db), space, session])
    name = hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:24] + SUFFIX
    return data_dir() / "hooks-state" / name


def _open(path: Path) -> int:
    ensure_private_dir(path.parent)
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)


@contextlib.contextmanager
def held(db: str, space: str, session: str | None) -> Iterator[None]:
    """Hold ``session``'s record exclusively for the block (see the module's docstring). A missing session
    id, a read-only home or no ``fcntl``: the block runs without a lock."""
    fd = None
    if session and fcntl is not None:
        try:
            fd = _open(_path(db, space, session))
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            if fd is not None:
                os.close(fd)
            fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)   # releases the lock


def already(db: str, space: str, session: str | None) -> set[int]:
    """The ids injected so far in ``session`` of ``space`` in the database ``db`` (none without a session
    id or a record)."""
    if not session:
        return set()
    try:
        text = _path(db, space, session).read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    return {int(w) for w in text.split() if w.isdigit()}


def remember(db: str, space: str, session: str | None, ids: Iterable[int]) -> None:
    """Add ``ids`` to what ``session`` was shown, with one write. Never raises (a read-only home: no state,
    no harm)."""
    ids = [int(i) for i in ids]
    if not session or not ids:
        return
    try:
        fd = _open(_path(db, space, session))
        try:
            os.write(fd, (" ".join(map(str, ids)) + "\n").encode("ascii"))
        finally:
            os.close(fd)
    except OSError:
        pass


def forget(db: str, space: str, session: str | None) -> None:
    """Start ``session``'s record afresh: after the agent compacted or cleared its context, what it was shown
    is gone from it (Claude Code's ``SessionStart`` with ``source`` ``compact`` / ``clear``). The file is
    emptied under its lock, not removed: a hook holding it keeps the same file."""
    if not session:
        return
    path = _path(db, space, session)
    if not path.exists():
        return
    with held(db, space, session):
        try:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.ftruncate(fd, 0)
            finally:
                os.close(fd)
        except OSError:
            pass


def prune(now: float | None = None) -> int:
    """Remove the records of sessions idle for more than :data:`KEEP_DAYS` days (none that a hook holds);
    how many."""
    cutoff = (now or time.time()) - KEEP_DAYS * 86400
    n = 0
    try:
        for p in (data_dir() / "hooks-state").glob("*" + SUFFIX):
            try:
                if p.stat().st_mtime >= cutoff:
                    continue
                fd = os.open(p, os.O_RDONLY)
                try:
                    if fcntl is not None:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)   # held: in use, keep it
                    if os.fstat(fd).st_mtime < cutoff:
                        p.unlink()
                        n += 1
                finally:
                    os.close(fd)
            except OSError:
                pass
    except OSError:
        pass
    return n
