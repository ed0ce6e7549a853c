"""The hook log: one JSON line per ``hela hook`` run in hela's home (``hooks.log``), so that a broken install
is visible at once (``hela hooks status``) instead of failing silently for months.

A line: ``{"time", "agent", "event", "role", "result", "ms", "detail"?, "space"?, "session"?, "tokens"?}`` where
``result`` is ``ok`` (context printed or turns stored), ``empty`` (nothing relevant, nothing new),
``detached`` (capture handed to a child process), ``busy`` (a capture of the session was running: it takes
these turns), ``error`` or ``timeout``. A detached child's line has ``"detached": true`` and its ``pid``; a
hook with ``hooks.server`` set has ``server`` (``ok`` or why it ran in-process). ``detail`` is one line, already
redacted; it never holds a prompt or a memory's text. ``tokens``: what a start, prompt or file hook injected
(estimated as characters / 4, 0 when nothing), summed per session and per prompt by :func:`token_stats`. The
file is user-only and rotated at
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
T_START = time.perf_counter()   # a hook's own start: this module is the first one ``hela hook`` imports
_SAFE_IN = 100_000   # a log message is redacted from at most this many characters (then cut to 300)


class Fail(Exception):
    """A hook's failure to log as one line (the message names no prompt or memory text)."""


def safe(msg: str) -> str:
    """One line, secrets redacted, then cut to at most 300 characters: redacting first, so that a key the cut
    would split is still whole (and found) when it is replaced. When the redaction itself fails, nothing of
    the message is written."""
    line = " ".join(str(msg)[:_SAFE_IN].split())
    try:
        from hela_cli.text.redact import redact
        from hela_cli.text.session_lines import cut

        return cut(redact(line), 300, stored=True)   # a [REDACTED:kind] marker the limit falls inside goes whole
    except Exception as e:  # noqa: BLE001 - the log line must still be written, without the message
        return f"(detail withheld: redaction failed with {e.__class__.__name__})"


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


def write(entry: dict[str, Any], t0: float) -> None:
    """:func:`append` ``entry`` with ``ms``, the milliseconds since ``t0`` (a ``time.perf_counter()``)."""
    append({**entry, "ms": round((time.perf_counter() - t0) * 1000, 1)})


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


INJECTING = ("start", "prompt", "path")


def _quantile(values: list[int], q: float) -> float:
    """The ``q`` quantile of ``values`` (linear between the closest ranks); 0 for none."""
    if not values:
        return 0.0
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return round(v[lo] + (v[hi] - v[lo]) * (pos - lo), 1)


def token_stats(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Per agent, the tokens its hooks injected: ``{"sessions", "per_session": {"p50", "p95"}, "prompts",
    "per_prompt": {"p50", "p95"}, "total", "by_role": {role: tokens}}``. A prompt that got nothing counts as
    0; lines written before token counting (no ``tokens``) are left out."""
    sessions: dict[str, dict[str, int]] = {}
    prompts: dict[str, list[int]] = {}
    by_role: dict[str, dict[str, int]] = {}
    for row in entries(path):
        role, tokens = row.get("role"), row.get("tokens")
        if role not in INJECTING or not isinstance(tokens, int):
            continue
        agent = str(row.get("agent") or "")
        by_role.setdefault(agent, {}).setdefault(role, 0)
        by_role[agent][role] += tokens
        if row.get("session"):
            per = sessions.setdefault(agent, {})
            per[str(row["session"])] = per.get(str(row["session"]), 0) + tokens
        if role == "prompt":
            prompts.setdefault(agent, []).append(tokens)
    out = {}
    for agent in sorted(set(by_role)):
        per_session = list(sessions.get(agent, {}).values())
        per_prompt = prompts.get(agent, [])
        out[agent] = {"sessions": len(per_session),
                      "per_session": {"p50": _quantile(per_session, 0.5), "p95": _quantile(per_session, 0.95)},
                      "prompts": len(per_prompt),
                      "per_prompt": {"p50": _quantile(per_prompt, 0.5), "p95": _quantile(per_prompt, 0.95)},
                      "total": sum(by_role[agent].values()), "by_role": by_role[agent]}
    return out


def session_stats(path: Path | None = None, last: int = 5) -> list[dict[str, Any]]:
    """The newest ``last`` agent sessions of the log, newest first: per session its agent, the prompts the
    prompt hook saw and the share of them that got nothing (``silent``), the tokens all its hooks injected,
    the memories the prompt hook injected and, once a reply was captured, how many of them the reply used
    (``used``: echoed, ``hooks.feedback``; None before any reply was read)."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for row in entries(path):
        session = row.get("session")
        if not session:
            continue
        key = (str(row.get("agent") or ""), str(session))
        s = rows.get(key)
        if s is None:
            s = rows[key] = {"agent": key[0], "session": key[1], "prompts": 0, "silent_prompts": 0, "tokens": 0,
                             "injected": 0, "used": None, "time": 0.0}
        else:
            rows.pop(key)
            rows[key] = s   # most recent activity last
        s["time"] = float(row.get("time") or s["time"])
        role, tokens = row.get("role"), row.get("tokens")
        if role in INJECTING and isinstance(tokens, int):
            s["tokens"] += tokens
        if role == "prompt" and row.get("result") in ("ok", "empty"):
            s["prompts"] += 1
            s["silent_prompts"] += 0 if tokens else 1
            s["injected"] += len(row.get("memories") or [])
        fb = row.get("feedback")
        if isinstance(fb, dict) and isinstance(fb.get("echoed"), list):
            s["used"] = (s["used"] or 0) + len(fb["echoed"])
    out = list(rows.values())[-last:][::-1] if last else []
    for s in out:
        s["silent"] = round(s["silent_prompts"] / s["prompts"], 3) if s["prompts"] else None
    return out
