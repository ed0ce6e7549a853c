"""The hook log: one JSON line per ``hela hook`` run in hela's home (``hooks.log``), so that a broken install
is visible at once (``hela hooks status``) instead of failing silently for months.

A line: ``{"time", "agent", "event", "role", "result", "ms", "detail"?, "space"?, "session"?}`` where
``result`` is ``ok`` (context printed or turns stored), ``empty`` (nothing relevant, nothing new),
``detached`` (capture handed to a child process), ``busy`` (a capture of the session was running: it takes
these turns), ``error`` or ``timeout``. A detached child's line has ``"detached": true`` and its ``pid``; a
hook with ``hooks.server`` set has ``server`` (``ok`` or why it ran in-process). ``detail`` is one line, already
redacted; it never holds a prompt or a memory's text. The file is user-only and rotated at
:data:`MAX_BYTES` (one older file kept). Writing the log never raises: a read-only home just means no log.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterator

from hela_cli.paths import data_dir, ensure_private_dir

MAX_BYTES = 1_000_000
FAILURES = ("error", "timeout")


def log_path() -> Path:
    return data_dir() / "hooks.log"


def append(entry: dict[str, Any]) -> None:
    """Add one line (``time`` filled in when missing). Never raises."""
    try:
        path = log_path()
        ensure_private_dir(path.parent)
        line = json.dumps({"time": round(time.time(), 3), **entry}, ensure_ascii=False) + "\n"
        try:
            if path.stat().st_size > MAX_BYTES:
                os.replace(path, path.with_name(path.name + ".1"))
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))   # one write of one line: lines of concurrent hooks never mix
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001 - the log must never break a hook
        pass


def entries(path: Path | None = None) -> Iterator[dict[str, Any]]:
    """Every readable line, oldest first (the rotated file first); unreadable lines are skipped."""
    path = path or log_path()
    for p in (path.with_name(path.name + ".1"), path):
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                yield row


def last_runs(path: Path | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    """``(agent, event) -> {"last": newest line, "last_failure": newest failed line or None, "runs": n}``."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for row in entries(path):
        key = (str(row.get("agent", "")), str(row.get("event", "")))
        slot = out.setdefault(key, {"last": None, "last_failure": None, "runs": 0})
        slot["last"] = row
        slot["runs"] += 1
        if row.get("result") in FAILURES:
            slot["last_failure"] = row
    return out
