"""What the coding-agent transcript parsers share (``claude_code``, ``codex``, ``gemini``): a tool call as
one short line, a tool's output cut to ``Source.tool_output_chars``, and the time of a record."""

from __future__ import annotations

import json
import re
from typing import Any

from hela_cli.formats.base import _Bad, _short
from hela_cli.formats.chat_export import _time

TOOL_LINE_CHARS = 160   # a tool call's line: "[tool] NAME: its short input", at most this long

# the argument that says what a call does, by the names the three agents give their tools' arguments
_MAIN_ARGS = ("command", "cmd", "file_path", "path", "absolute_path", "pattern", "query", "url", "prompt",
              "description", "notebook_path", "dir_path", "skill", "name")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def tool_line(name: str, args: Any) -> str:
    """``[tool] Bash: python3 --version``: the tool's name and its main argument (the first of
    :data:`_MAIN_ARGS` it has, else its arguments as JSON), on one line of at most ``TOOL_LINE_CHARS``."""
    if isinstance(args, str):   # Codex gives arguments as a JSON string
        try:
            args = json.loads(args)
        except ValueError:
            pass
    shown: str = ""
    if isinstance(args, dict):
        for key in _MAIN_ARGS:
            v = args.get(key)
            if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                v = " ".join(v)   # Codex's shell: {"command": ["bash", "-lc", "ls"]}
            if isinstance(v, str) and v.strip():
                shown = v
                break
        else:
            shown = json.dumps(args, ensure_ascii=False) if args else ""
    elif args is not None:
        shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    head = f"[tool] {name}"
    return _cut(f"{head}: {shown}" if shown.strip() else head, TOOL_LINE_CHARS)


def _cut(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters; a longer one is redacted before it is cut, whatever
    the redaction setting: a cut can split a secret into a piece no pattern finds any more (the line as a
    whole is redacted, or not, later like every turn)."""
    one = " ".join(text.split())
    if len(one) <= limit:
        return one
    from hela_cli.text.redact import redact

    return _short(redact(one), limit)


def tool_output(text: str, limit: int) -> str:
    """A tool's output kept as a turn (``ingest.tool_output_chars`` > 0): ``[tool output] ...`` cut at
    ``limit`` characters; "" when outputs are dropped (``limit`` 0) or empty."""
    text = text.strip()
    if limit <= 0 or not text:
        return ""
    if len(text) <= limit:
        return "[tool output] " + text
    from hela_cli.text.redact import redact   # before the cut, as in _cut

    return "[tool output] " + redact(text)[:limit].rstrip() + " …"


def without_reminders(text: str) -> str:
    """The text less the ``<system-reminder>`` blocks an agent injects into a user's message."""
    return _REMINDER.sub("", text).strip() if "<system-reminder>" in text else text.strip()


def record_time(obj: dict, key: str, place: str) -> tuple[float, str] | None:
    """The ISO 8601 time of a record, or None when it has none."""
    return _time(obj.get(key), place, key, iso_only=True)


def want_str(obj: dict, key: str, place: str) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or not v.strip():
        raise _Bad(place, f"missing {key!r}" if v is None else f"{key!r} must be a non-empty string")
    return v
