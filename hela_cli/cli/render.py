"""Shared CLI rendering helpers (Rich console, safe text, JSON output). Only CLI modules import this."""

from __future__ import annotations

import json
import math
import re
import sys
from typing import TYPE_CHECKING, Any

from hela_cli.text.dates import fmt_ts  # noqa: F401 - re-exported: the CLI modules import it from here

if TYPE_CHECKING:
    from rich.text import Text

HUB_STYLE = "bold magenta"       # hubs (Figure 4: the strongly connected centres)
ISOLATED_STYLE = "dim"           # nodes without any edge


class _LazyConsole:
    """A Rich ``Console`` made on first use: importing rich's console is ~20 ms of every command, and
    ``--json`` output never needs it (measured with ``python -X importtime``). Attribute reads and writes
    go to the console."""

    def __init__(self, **options: Any):
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_console", None)

    def _get(self) -> Any:
        if self._console is None:
            from rich.console import Console

            object.__setattr__(self, "_console", Console(**self._options))
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._get(), name, value)

    @property
    def width(self) -> int:  # a data descriptor, so that monkeypatching it restores the console's own
        return self._get().width

    @width.setter
    def width(self, value: int) -> None:
        self._get().width = value


console: Any = _LazyConsole(highlight=False, soft_wrap=False)
err_console: Any = _LazyConsole(stderr=True, highlight=False)

# control characters (ANSI escapes), and what can make a terminal show other text than is stored: bidi
# overrides and isolates (U+202A-202E, U+2066-2069, marks U+200E/200F/061C) and zero-width characters
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def clean(s: Any) -> str:
    """User text made safe for a terminal: control characters (ANSI escapes included), bidi controls and
    zero-width characters shown escaped (``\\x1b``, ``\\u202e``)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        str(s))


def text(s: Any, style: str = "") -> "Text":
    """A Rich ``Text`` of user content: never parsed as markup, control characters escaped."""
    from rich.text import Text

    return Text(clean(s), style=style)


def _finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float as None (JSON has no such numbers: ``NaN`` is not JSON)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def print_json(obj: Any) -> None:
    """Machine output: plain JSON on stdout (no Rich processing); a non-finite number is null."""
    sys.stdout.write(json.dumps(_finite(obj), ensure_ascii=False, indent=2, default=str, allow_nan=False) + "\n")
    sys.stdout.flush()


def one_line(s: Any, width: int) -> str:
    """``s`` on one line (whitespace collapsed, control characters escaped), cut to ``width`` characters
    with a "…" marker - at a word boundary when one is near."""
    flat = " ".join(clean(s).split())
    if width <= 0 or len(flat) <= width:
        return flat
    if width == 1:
        return "…"
    cut = flat[: width - 1]
    space = cut.rfind(" ")
    if space >= width * 2 // 3:
        cut = cut[:space]
    return cut.rstrip() + "…"


def citation_lines(citations: list[dict[str, Any]], width: int) -> list[str]:
    """One line per citation, at most ``width`` characters:
    ``  D1:4 · 8 May 2023 · Jonas: text…`` (the node id ``#12`` when there is no source id); the excerpt
    starts before the first answer word the memory contains when the start would hide it."""
    from hela_cli.answering.citations import excerpt
    from hela_cli.answering.prompts import format_date

    out = []
    for c in citations:
        ref = c.get("source_id") or f"#{c.get('id')}"
        date = format_date(c["timestamp"]) if c.get("timestamp") is not None else (c.get("time_str") or "")
        head = one_line(f"{ref} · {date} · {c.get('speaker') or 'unknown'}: ", width - 2)
        room = width - 2 - len(head) - 1
        body = excerpt(clean(c.get("text") or ""), c.get("words") or (), room) if room >= 12 else ""
        out.append(f"  {head} {body}".rstrip())
    return out


def table(title: Any, columns: list[tuple[str, str]]) -> Any:
    """A Rich table that stays legible at 80 columns and when piped: no vertical rules, collapsed padding,
    and no value broken inside a narrow column. ``columns`` are ``(name, kind)``: ``num`` (right-aligned)
    and ``key`` (ids, names, dates: left) are kept whole on one line; ``name`` (a long name, e.g. a hooks
    space's) is kept whole too, continued on the next line when the row is wider than the terminal; ``text``
    (free text) wraps at word boundaries in a column at least 16 characters wide (a word longer than that is
    cut with "…")."""
    from rich import box
    from rich.table import Table

    t = Table(title=text(title) if isinstance(title, str) else title, title_justify="left",
              box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for name, kind in columns:
        if kind == "text":
            t.add_column(name, overflow="ellipsis", min_width=16)
        elif kind == "name":
            t.add_column(name, overflow="fold", min_width=12)
        else:
            t.add_column(name, justify="right" if kind == "num" else "left", no_wrap=True)
    return t


def row_width(cells: list[list[str]]) -> int:
    """The width a :func:`table` needs to show ``cells`` (header first, then rows) on one line each."""
    widths = [max(len(str(c)) for c in col) for col in zip(*cells)]
    return sum(widths) + 2 * (len(widths) - 1)


def candidates_table(title: str, cands: list[dict[str, Any]]) -> Any:
    """Forgetting candidates as a table (`hela forget`, `hela inspect prune`)."""
    t = table(title, [("id", "num"), ("speaker", "key"), ("text", "text"), ("weight", "num"), ("idle days", "num"),
                      ("accesses", "num"), ("why", "text")])
    for c in cands:
        why = "; ".join(r["reason"] for r in c["reasons"].values())
        t.add_row(text(str(c["id"]), ISOLATED_STYLE if not c["degree"] else ""), text(c["speaker"] or "-"),
                  text(c["text"][:70]), f"{c['total_weight']:.4f}", f"{c['idle_days']:.1f}",
                  str(c["access_count"]), text(why, "dim"))
    return t
