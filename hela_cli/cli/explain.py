"""``hela ask --explain``: the paper's Figure 5 trace in the terminal (CLI-only module).

A stacked layout, legible at 80 columns and when piped: one line of scores per memory (fixed-width
columns that fit in 78 characters), the memory itself on the next line and the neighbours its spreading
bonus came from on a third, each cut to the terminal width with a "…" marker.
"""

from __future__ import annotations

from typing import Any

from hela_cli.cli.render import console, fmt_ts, one_line, text

_HEAD = f"{'#':>3} {'path':<8} {'id':>6} {'source':<10}" + "".join(
    f"{c:>8}" for c in ("S", "S_base", "cos", "kw", "time", "spread"))


def explain_lines(res: dict[str, Any], width: int) -> list[tuple[str, str]]:
    """The trace as ``(line, style)`` pairs, no line longer than ``width`` (at least 40)."""
    width = max(width, 40)
    out = [(one_line(f"retrieval trace: {res['question']}", width), "bold"), (_HEAD[:width], "dim")]
    for rank, m in enumerate(res["memories"], 1):
        style = "magenta" if m["path"] == "hebbian" else ""
        source = one_line(m["source_id"] or "-", 10)
        nums = "".join(f"{m[k]:>8.3f}" for k in ("score", "base_score", "cos", "keyword", "time_factor",
                                                    "spread_bonus"))
        out.append((f"{rank:>3} {m['path']:<8} {m['id']:>6} {source:<10}{nums}"[:width], style))
        out.append(("    " + one_line(f"[{fmt_ts(m['timestamp'])}] {m['speaker']}: {m['text']}", width - 4), ""))
        if m["spread_from"]:
            sources = ", ".join(f"{s['id']}(+{s['contribution']:.3f})" for s in m["spread_from"])
            out.append(("    " + one_line(f"spread from {sources}", width - 4), "dim"))
    kw = ", ".join(res.get("query_keywords") or []) or "(none)"
    out.append((f"query keywords: {kw}; now = {fmt_ts(res.get('now'))}; step {res.get('step')}. "
                f"S = S_base + spreading (Eq.4); 'hebbian' rows came by the flipped path (Eq.5); a 'reply' row "
                f"answers the question or complaint above it.", "dim"))
    for rec in res.get("semantic") or []:
        out.append((f"semantic [{rec['kind']}] {rec.get('subject') or ''}: {rec['text']} "
                    f"(similarity {rec.get('similarity', 0):.3f}, evidence {rec['evidence']})", ""))
    return out


def render_explain(res: dict[str, Any]) -> None:
    for line, style in explain_lines(res, console.width):
        # long notes wrap at word boundaries; the trace lines already fit
        console.print(text(line, style))
