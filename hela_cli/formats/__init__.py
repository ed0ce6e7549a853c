"""Conversation file parsers: one module per format, each registered in :data:`PARSERS`.

``parse_file(path, fmt="auto")`` returns a list of :class:`Conversation`; every problem with the input
raises :class:`hela_cli.errors.InputError` with a single line ``"FILE: PLACE: what is wrong"`` and nothing
is returned (no partial data). ``detect_format(path)`` names the format ``auto`` would pick. The formats,
their fields, the date rules and the detection rules are described for users in docs/formats.md.

A format is a module with ``parse(src: Source) -> list[Conversation]`` (``src.text``, ``src.name``, and
``src.document()``: the text as one JSON document, parsed at most once), registered below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from hela_cli.text.private import DEFAULT_TAG, strip_raw
from hela_cli.text.dates import MAX_YEAR, MIN_YEAR, parse_date  # noqa: F401  (MIN_YEAR, MAX_YEAR: still imported from here)
from hela_cli.formats import chatgpt, claude, claude_code, codex, gemini, locomo, longmemeval, messages, text, whatsapp
from hela_cli.formats.base import Conversation, Source, Turn, _Bad, _error, _read_text, _show
from hela_cli.formats.detect import _sniff, detect_format

__all__ = [
    "FORMATS",
    "PARSERS",
    "Turn",
    "Conversation",
    "Source",
    "parse_file",
    "detect_format",
    "parse_date",
    "session_files",
]

#: format name -> its parser (``parse(src) -> list[Conversation]``)
PARSERS: dict[str, Callable[[Source], list[Conversation]]] = {
    "locomo": locomo.parse,
    "longmemeval": longmemeval.parse,
    "messages": messages.parse,
    "text": text.parse,
    "chatgpt": chatgpt.parse,
    "claude": claude.parse,
    "whatsapp": whatsapp.parse,
    "claude_code": claude_code.parse,
    "codex": codex.parse,
    "gemini": gemini.parse,
}

FORMATS = ("auto", *PARSERS)


def parse_file(path: str | Path, fmt: str = "auto", *, tool_output_chars: int = 0,
               private_tag: str = DEFAULT_TAG) -> list[Conversation]:
    """Parse a conversation file. Raises InputError("FILE: PLACE: what") on any bad input.
    ``tool_output_chars``: coding-agent transcripts keep each tool's output cut to this many characters
    (0: dropped). ``private_tag``: the closed private spans of the file are removed before it is parsed,
    so no parser's cut can fall inside one (:func:`hela_cli.text.private.strip_raw`; the turns are cleared
    of any left again at ingest)."""
    name = str(path)
    if fmt not in FORMATS:
        raise _error(name, None, f"unknown format {_show(fmt)}; expected one of {', '.join(FORMATS)}")
    src = Source(name, strip_raw(_read_text(path), private_tag), tool_output_chars=tool_output_chars)
    try:
        if fmt == "auto":
            fmt, document, ok = _sniff(src.text, name)
            if ok:
                src = Source(name, src.text, document, tool_output_chars)
        convs = PARSERS[fmt](src)
        for c in convs:
            c.format = fmt
        return convs
    except _Bad as b:
        raise _error(name, b.place, b.what) from None
    except RecursionError:
        raise _error(name, "top level", "input nested too deeply") from None


#: the file names of coding-agent sessions that a directory given to ``hela ingest`` stands for
SESSION_FILE_PATTERNS = ("*.jsonl", "session-*.json")


def session_files(directory: str | Path) -> list[Path]:
    """The session files under ``directory`` (every depth, sorted; hidden files and folders left out):
    Claude Code's ``<session>.jsonl``, Codex's ``rollout-*.jsonl``, Gemini CLI's ``chats/session-*.json``.
    Raises InputError when there is none."""
    root = Path(directory)
    found = sorted({f for pat in SESSION_FILE_PATTERNS for f in root.rglob(pat)
                    if f.is_file() and not any(part.startswith(".") for part in f.relative_to(root).parts)})
    if not found:
        raise _error(str(directory), None, "a directory without session files (" + ", ".join(SESSION_FILE_PATTERNS)
                     + "); give a file or a folder of agent sessions")
    return found
