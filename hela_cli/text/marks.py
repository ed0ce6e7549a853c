"""The mark a superseded memory carries wherever it is shown (issue 38): ``(superseded by #N, YYYY-MM-DD)``
or ``(possibly superseded by #N, YYYY-MM-DD)``, the date being when the successor took over
(``invalid_at``). Pure functions over a recalled memory's keys (``superseded_by``, ``invalid_at``,
``supersession_status``; :mod:`hela_cli.facts.recall`)."""

from __future__ import annotations

from typing import Any, Mapping

from hela_cli.text.dates import format_iso


def supersession_mark(m: Mapping[str, Any]) -> str:
    """``(superseded by #N, DATE)`` / ``(possibly superseded by #N, DATE)``; '' for a memory without one."""
    new = m.get("superseded_by")
    if new is None:
        return ""
    at = m.get("invalid_at")
    date = f", {format_iso(at)[:10]}" if isinstance(at, (int, float)) else ""
    word = "possibly superseded" if m.get("supersession_status") == "possible" else "superseded"
    return f"({word} by #{new}{date})"


def with_mark(text: str, m: Mapping[str, Any]) -> str:
    """``text`` followed by the memory's mark, if it has one."""
    mark = supersession_mark(m)
    return f"{text} {mark}" if mark else text
