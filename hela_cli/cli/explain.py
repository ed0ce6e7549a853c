"""``hela ask --explain``: the paper's Figure 5 trace in the terminal (CLI-only module)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from hela_cli.cli.render import console, fmt_ts, text


def render_explain(res: dict[str, Any]) -> None:
    t = Table(title=text(f"retrieval trace: {res['question']}"), show_lines=False)
    for col, j in (("#", "right"), ("path", "left"), ("id", "right"), ("source", "left"), ("S", "right"),
                   ("S_base", "right"), ("cos", "right"), ("kw", "right"), ("time", "right"),
                   ("spread", "right"), ("from neighbours", "left"), ("memory", "left")):
        t.add_column(col, justify=j, overflow="fold")
    for rank, m in enumerate(res["memories"], 1):
        style = "magenta" if m["path"] == "hebbian" else ""
        sources = ", ".join(f"{s['id']}(+{s['contribution']:.3f})" for s in m["spread_from"][:4])
        if len(m["spread_from"]) > 4:
            sources += f" +{len(m['spread_from']) - 4} more"
        t.add_row(str(rank), text(m["path"], style), str(m["id"]), text(m["source_id"] or "-"),
                  f"{m['score']:.3f}", f"{m['base_score']:.3f}", f"{m['cos']:.3f}", f"{m['keyword']:.3f}",
                  f"{m['time_factor']:.3f}", f"{m['spread_bonus']:.3f}", text(sources or "-"),
                  text(f"[{fmt_ts(m['timestamp'])}] {m['speaker']}: {m['text'][:120]}"))
    console.print(t)
    kw = ", ".join(res.get("query_keywords") or []) or "(none)"
    console.print(text(f"query keywords: {kw}; now = {fmt_ts(res.get('now'))}; step {res.get('step')}. "
                       f"S = S_base + spreading (Eq.4); 'hebbian' rows came by the flipped path (Eq.5)."),
                  style="dim")
    for rec in res.get("semantic") or []:
        console.print(text(f"semantic [{rec['kind']}] {rec.get('subject') or ''}: {rec['text']} "
                           f"(similarity {rec.get('similarity', 0):.3f}, evidence {rec['evidence']})"))
