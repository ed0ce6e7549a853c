"""Shared CLI rendering helpers (Rich console, safe text, JSON output). Only CLI modules import this."""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime, timezone
from typing import Any

from rich.console import Console
from rich.text import Text

console = Console(highlight=False, soft_wrap=False)
err_console = Console(stderr=True, highlight=False)

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(s: Any) -> str:
    """User text made safe for a terminal: control characters (ANSI escapes included) shown escaped."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(s))


def text(s: Any, style: str = "") -> Text:
    """A Rich ``Text`` of user content: never parsed as markup, control characters escaped."""
    return Text(clean(s), style=style)


def print_json(obj: Any) -> None:
    """Machine output: plain JSON on stdout (no Rich processing)."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")
    sys.stdout.flush()


def fmt_ts(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")
