"""Which memories the hooks already put in front of the model in an agent session, so that none is injected
twice in one session (by any hook: the start brief, the prompt recall, the recall by file). One small
user-only file per session in hela's home (``hooks-state/<hash of the session id>.injected``): one line of
memory ids per injection, appended with one write (hooks of one session that run at once never mix
lines). A file not touched for :data:`KEEP_DAYS` days is removed by the next session start; a session whose
context was compacted or cleared starts its record afresh (:func:`forget`)."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Iterable

from hela_cli.paths import data_dir, ensure_private_dir

SUFFIX = ".injected"
KEEP_DAYS = 14


def _path(session: str) -> Path:
    return data_dir() / "hooks-state" / (hashlib.sha256(session.encode("utf-8")).hexdigest()[:24] + SUFFIX)


def already(session: str | None) -> set[int]:
    """The ids injected so far in ``session`` (none without a session id or a file)."""
    if not session:
        return set()
    try:
        text = _path(session).read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    return {int(w) for w in text.split() if w.isdigit()}


def remember(session: str | None, ids: Iterable[int]) -> None:
    """Add ``ids`` to what ``session`` was shown. Never raises (a read-only home: no state, no harm)."""
    ids = [int(i) for i in ids]
    if not session or not ids:
        return
    try:
        path = _path(session)
        ensure_private_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, (" ".join(map(str, ids)) + "\n").encode("ascii"))
        finally:
            os.close(fd)
    except OSError:
        pass


def forget(session: str | None) -> None:
    """Start ``session``'s record afresh: after the agent compacted or cleared its context, what it was shown
    is gone from it (Claude Code's ``SessionStart`` with ``source`` ``compact`` / ``clear``)."""
    if session:
        try:
            _path(session).unlink()
        except OSError:
            pass


def prune(now: float | None = None) -> int:
    """Remove the state files of sessions idle for more than :data:`KEEP_DAYS` days; how many."""
    cutoff = (now or time.time()) - KEEP_DAYS * 86400
    n = 0
    try:
        for p in (data_dir() / "hooks-state").glob("*" + SUFFIX):
            try:
                if p.stat().st_mtime < cutoff:
                    p.unlink()
                    n += 1
            except OSError:
                pass
    except OSError:
        pass
    return n
