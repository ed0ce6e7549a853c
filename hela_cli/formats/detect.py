"""``auto``: which format a file is in (the rules are in docs/formats.md, "Detection")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hela_cli.formats.base import _JSONL_SUFFIXES, _error, _first_nonblank_line, _loads, _read_text, _type_name
from hela_cli.formats.claude_code import is_claude_code
from hela_cli.formats.codex import is_codex
from hela_cli.formats.gemini import is_gemini
from hela_cli.formats.whatsapp import is_whatsapp

#: JSON Lines written by a coding agent: the test on a line's object, the format
AGENT_LINES = (
    (is_claude_code, "claude_code"),
    (is_codex, "codex"),
    (is_gemini, "gemini"),
)


def _agent_jsonl(text: str) -> str | None:
    """The coding agent whose transcript this JSON Lines text is (its first whole line says), or None."""
    for line in text.split("\n", 3)[:3]:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            return None
        return next((fmt for test, fmt in AGENT_LINES if test(obj)), None)
    return None

#: the key that marks a JSON object as each format's, in the order they are tried
JSON_KEYS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("conversation",), "locomo"),
    (("haystack_sessions",), "longmemeval"),
    (("mapping",), "chatgpt"),
    (("chat_messages",), "claude"),
    (("projectHash",), "gemini"),
    (("role", "content"), "messages"),
)


def _shape_of(obj: Any) -> str | None:
    """Format name implied by a parsed JSON document, or None."""
    items = obj if isinstance(obj, list) else [obj]
    for it in items:
        if isinstance(it, dict):
            for keys, fmt in JSON_KEYS:
                if any(k in it for k in keys):
                    return fmt
            return None
    return None


def _expected() -> str:
    parts = [f"{'/'.join(repr(k) for k in keys)} ({fmt})" for keys, fmt in JSON_KEYS]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _sniff(text: str, name: str) -> tuple[str, Any, bool]:
    """(format, parsed JSON or None, parsed-ok flag)."""
    if name.lower().endswith(_JSONL_SUFFIXES):
        return _agent_jsonl(text) or "messages", None, False
    if is_whatsapp(text):
        return "whatsapp", None, False
    stripped = text.lstrip()
    if stripped[:1] not in ("[", "{"):
        return "text", None, False
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        lineno, line = _first_nonblank_line(text)
        try:
            first = json.loads(line)
        except (ValueError, RecursionError):
            first = None
        if isinstance(first, dict):
            return _agent_jsonl(text) or "messages", None, False
        _loads(text, name)  # raises the JSON error with its position
        raise AssertionError("unreachable")  # pragma: no cover
    if isinstance(obj, list) and not obj:
        raise _error(name, "top level", "empty JSON array; nothing to import")
    fmt = _shape_of(obj)
    if fmt is None:
        if isinstance(obj, (list, dict)):
            first = obj[0] if isinstance(obj, list) else obj
            if isinstance(first, dict):
                keys = ", ".join(sorted(map(str, first))[:6]) or "no keys"
                what = f"cannot tell the format: object has {keys}; expected {_expected()}"
            else:
                what = f"expected an array of objects, got an array of {_type_name(first)}s"
            raise _error(name, "top level", what)
        raise _error(name, "top level", f"expected a JSON array or object, got {_type_name(obj)}")
    return fmt, obj, True


def detect_format(path: str | Path) -> str:
    """The format ``parse_file(path, "auto")`` would use (one of ``FORMATS`` but ``auto``)."""
    text = _read_text(path)
    return _sniff(text, str(path))[0]
