"""Private spans: text a person marks as never to be stored, ``<private>...</private>`` (the tag is
``ingest.private_tag``; several tags comma-separated). Removed before any redaction, cut, embedding or
write, at every entry point (ingest and imports, ``hela add`` and MCP ``remember``, a hook's capture and
prompt, a recall's question). An opening tag without its closing one hides everything after it: a span cut
short by a limit upstream (a tool output kept to its first characters) never leaks its part. Pure."""

from __future__ import annotations

import functools
import re

DEFAULT_TAG = "private"
SHOWN = "[private]"   # what stands where a span was (so a reader sees that something was left out)


@functools.lru_cache(maxsize=16)
def _pattern(tags: str) -> re.Pattern[str] | None:
    names = [re.escape(t.strip()) for t in tags.split(",") if t.strip()]
    if not names:
        return None
    alt = "|".join(names)
    # <tag ...>...</tag>, across lines, case-insensitive; an unclosed <tag> runs to the end of the text
    return re.compile(rf"<\s*(?P<t>{alt})\b[^>]*>.*?(?:<\s*/\s*(?P=t)\s*>|\Z)", re.I | re.S)


@functools.lru_cache(maxsize=16)
def _raw_pattern(tags: str) -> re.Pattern[str] | None:
    names = [re.escape(t.strip()) for t in tags.split(",") if t.strip()]
    if not names:
        return None
    alt = "|".join(names)
    # a closed span that crosses no unescaped quote: inside one JSON string, or in plain text
    return re.compile(rf'<\s*(?P<t>{alt})\b[^>"]*>(?:[^"\\]|\\.)*?<\s*/\s*(?P=t)\s*>', re.I | re.S)


def strip_raw(text: str, tags: str = DEFAULT_TAG) -> str:
    """A file's text with its closed private spans removed before it is parsed (a parser cuts a tool output
    or an answer to its limit; a span is gone before that). A span crossing a JSON string's quotes is left
    to :func:`strip_private` on the parsed turn (where an unclosed tag hides the rest of the turn)."""
    if not text or "<" not in text:
        return text
    p = _raw_pattern(tags)
    return text if p is None else p.sub(SHOWN, text)


def has_private(text: str | None, tags: str = DEFAULT_TAG) -> bool:
    p = _pattern(tags)
    return bool(text) and p is not None and "<" in text and p.search(text) is not None   # type: ignore[operator]


def strip_private(text: str, tags: str = DEFAULT_TAG) -> str:
    """``text`` with each private span replaced by ``[private]``: ``"key <private>hunter2</private> ok"`` ->
    ``"key [private] ok"``. Text without a tag comes back unchanged (one substring test)."""
    if not text or "<" not in text:
        return text
    p = _pattern(tags)
    return text if p is None else p.sub(SHOWN, text)
