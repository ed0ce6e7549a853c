"""Small graphs as inline SVG: a recall (the paper's Figure 5) and a memory's neighbourhood.

Hand-written rather than a JS graph library (d3, cytoscape.js, vis-network): the graphs are bounded (a
recall draws at most k + m memories plus 12 spreading sources, a neighbourhood 40 nodes), so a
deterministic radial layout computed here is enough, costs no download or licence to ship, renders with
scripting off, and gives the same picture for the same data (tests can check nodes and edges in the DOM).

Nothing is told by colour alone: node shapes (circle: base hit, diamond: came by the Hebbian / flipped path,
hexagon: a reply brought in below its question, triangle: a successor brought in above the memory it
replaces, square: a spreading source outside the result, double ring: the centre), line styles (solid:
spreading or conversation link, dashed: keyword link, dotted: learned link or the question's match, dash-dot:
a reply's or a successor's link), widths (weight) and text labels (ids with H, R or S, weights) carry the
same information. Each node is a link with a ``<title>`` (tooltip on
hover) and ``data-detail`` (shown in a live region on focus by the page script).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from hela_cli.maintenance.inspection import escape, preview

LABELLED_EDGES = 14   # spreading edges whose weight is written on the line (the strongest contributions)
EDGE_DASH = {"spread": "", "conversation": "", "keyword": "7 4", "learned": "2 3", "match": "1 4",
             "reply": "9 3 2 3", "successor": "9 3 2 3"}
#: how the recall graph draws each memory of the result by its path: (shape, label suffix, tooltip words);
#: the base hits sit on the inner ring, the others on the outer ring next to what brought them
RESULT_NODES = {"base": ("circle", "", "base hit"), "hebbian": ("diamond", " H", "Hebbian path (flipped)"),
                "reply": ("hexagon", " R", "reply: the next turn after a recalled question"),
                "successor": ("triangle", " S", "successor: replaces a recalled memory")}


def _fmt(x: float | None, nd: int = 3) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def _ring(n: int, r: float, cx: float, cy: float, start: float = -math.pi / 2) -> list[tuple[float, float, float]]:
    return [(cx + r * math.cos(a), cy + r * math.sin(a), a)
            for a in (start + 2 * math.pi * i / max(n, 1) for i in range(n))]


def _spread_angles(wanted: list[float], min_gap: float) -> list[float]:
    """Angles near ``wanted`` (in that order of preference) at least ``min_gap`` apart (greedy, sorted)."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    out = [0.0] * len(wanted)
    last = -math.inf
    for i in order:
        a = max(wanted[i], last + min_gap)
        out[i] = a
        last = a
    return out


def _shape(shape: str, x: float, y: float, r: float, cls: str) -> str:
    if shape == "diamond":
        pts = f"{x:.1f},{y - r:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r:.1f} {x - r:.1f},{y:.1f}"
        return f'<polygon class="{cls}" points="{pts}"/>'
    if shape in ("hexagon", "triangle"):
        n, start = (6, 0.0) if shape == "hexagon" else (3, -math.pi / 2)
        corners = (start + 2 * math.pi * i / n for i in range(n))
        pts = " ".join(f"{x + r * math.cos(a):.1f},{y + r * math.sin(a):.1f}" for a in corners)
        return f'<polygon class="{cls}" points="{pts}"/>'
    if shape == "square":
        return f'<rect class="{cls}" x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}"/>'
    if shape == "double":
        return (f'<circle class="{cls}" cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}"/>'
                f'<circle class="{cls} inner" cx="{x:.1f}" cy="{y:.1f}" r="{r - 4:.1f}"/>')
    return f'<circle class="{cls}" cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}"/>'


def _svg(width: int, height: int, title: str, desc: str, body: list[str], legend: list[str], gid: str) -> str:
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" id="{gid}" viewBox="0 0 {width} {height}" '
        f'aria-labelledby="{gid}-t {gid}-d">',
        f'<title id="{gid}-t">{escape(title)}</title><desc id="{gid}-d">{escape(desc)}</desc>',
        *body, '<g class="legend" aria-hidden="true">', *legend, "</g>", "</svg>"])


def _edge(x1: float, y1: float, x2: float, y2: float, kind: str, width: float, label: str, tip: str,
          source: int | str, target: int) -> str:
    dash = EDGE_DASH.get(kind, "")
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    mx, my = (x1 + x2) / 2, (y1 + y2) / 2
    text = (f'<text class="edge-label" x="{mx:.1f}" y="{my - 3:.1f}" text-anchor="middle">{escape(label)}</text>'
            if label else "")
    return (f'<g class="edge {kind}" data-source="{source}" data-target="{target}" data-kind="{kind}">'
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke-width="{width:.2f}"{dash_attr}>'
            f"<title>{escape(tip)}</title></line>{text}</g>")


def _node(n: dict[str, Any], x: float, y: float, r: float, shape: str, cls: str, label: str, tip: str,
          href: str) -> str:
    return (f'<a class="node {cls}" href="{escape(href)}" data-id="{n["id"]}" data-role="{cls}" '
            f'data-detail="{escape(tip)}" aria-label="{escape(tip)}">'
            f"<title>{escape(tip)}</title>{_shape(shape, x, y, r, 'mark')}"
            f'<text class="node-label" x="{x:.1f}" y="{y + r + 13:.1f}" text-anchor="middle">{escape(label)}</text></a>')


def _legend_items(items: Sequence[tuple[str, str, str]], x: float, y: float) -> list[str]:
    """``(kind, 'node'|'edge', text)`` rows of a legend from (x, y)."""
    out = []
    for i, (kind, what, text) in enumerate(items):
        yy = y + 18 * i
        if what == "edge":
            dash = EDGE_DASH.get(kind, "")
            out.append(f'<line class="edge {kind}" x1="{x:.0f}" y1="{yy:.0f}" x2="{x + 28:.0f}" y2="{yy:.0f}" '
                       f'stroke-width="2"{f" stroke-dasharray={chr(34)}{dash}{chr(34)}" if dash else ""}/>')
        else:
            out.append(f'<g class="node {kind}">{_shape(what, x + 14, yy, 6, "mark")}</g>')
        out.append(f'<text x="{x + 36:.0f}" y="{yy + 4:.0f}">{escape(text)}</text>')
    return out


def recall_svg(data: dict[str, Any], href: Any, width: int = 900, height: int = 700) -> str:
    """The recall graph: the question in the centre, base hits on the inner ring (rank order, sized by
    S_base), memories that came by the Hebbian path, replies, successors and spreading sources outside the
    result on the outer ring next to what brought them, spreading edges with their weights, a reply's link
    to its question and a successor's to the memory it replaces. ``href(node_id)`` gives each link."""
    nodes, everything = data["nodes"], data["edges"]
    edges = [e for e in everything if e.get("kind", "spread") == "spread"]
    links = [e for e in everything if e.get("kind") in ("reply", "successor")]
    cx, cy = width / 2, (height - 100) / 2 + 6
    r1, r2 = min(cx, cy) * 0.55, min(cx, cy) * 0.9
    base = [n for n in nodes if n["role"] == "base"]
    outer = [n for n in nodes if n["role"] != "base"]
    pos: dict[int, tuple[float, float]] = {}
    angle: dict[int, float] = {}
    for n, (x, y, a) in zip(base, _ring(len(base), r1, cx, cy)):
        pos[n["id"]], angle[n["id"]] = (x, y), a
    # outer nodes: the mean angle of their neighbours already placed, else spread evenly
    wanted = []
    for i, n in enumerate(outer):
        linked = [angle[e["source"] if e["target"] == n["id"] else e["target"]] for e in edges + links
                  if n["id"] in (e["source"], e["target"]) and
                  (e["source"] if e["target"] == n["id"] else e["target"]) in angle]
        if linked:
            wanted.append(math.atan2(sum(math.sin(a) for a in linked), sum(math.cos(a) for a in linked)))
        else:
            wanted.append(-math.pi / 2 + 2 * math.pi * (i + 0.5) / max(len(outer), 1))
    gap = min(2 * math.pi / max(len(outer), 1), 0.42)
    for n, a in zip(outer, _spread_angles(wanted, gap)):
        pos[n["id"]], angle[n["id"]] = (cx + r2 * math.cos(a), cy + r2 * math.sin(a)), a
    top = max((n["base_score"] for n in base), default=1.0) or 1.0
    body = ['<g class="edges">']
    for n in base:   # the question matched each base hit
        x, y = pos[n["id"]]
        body.append(_edge(cx, cy, x, y, "match", 1.0, "", f"question matched memory {n['id']} "
                          f"(S_base {_fmt(n['base_score'])})", "q", n["id"]))
    # weights are labelled on the strongest contributions only (a learned space links most pairs weakly)
    labelled = {id(e) for e in sorted(edges, key=lambda e: -e["contribution"])[:LABELLED_EDGES]}
    for e in edges:
        if e["source"] not in pos or e["target"] not in pos:
            continue
        (x1, y1), (x2, y2) = pos[e["source"]], pos[e["target"]]
        w = e["weight"] or 0.0
        tip = (f"spreading {e['source']} -> {e['target']}: edge weight {_fmt(w)} (fixed {_fmt(e.get('prior'))}, "
               f"learned {_fmt(e.get('learned'))}), contribution +{_fmt(e['contribution'])}")
        body.append(_edge(x1, y1, x2, y2, "spread", 0.6 + 5 * min(1.0, w), f"{w:.2f}" if id(e) in labelled else "",
                          tip, e["source"], e["target"]))
    for e in links:
        if e["source"] not in pos or e["target"] not in pos:
            continue
        (x1, y1), (x2, y2) = pos[e["source"]], pos[e["target"]]
        tip = (f"memory {e['target']} answers memory {e['source']} (the next turn of its session)"
               if e["kind"] == "reply" else
               f"memory {e['target']} replaces memory {e['source']} ({e.get('status') or 'possible'})")
        body.append(_edge(x1, y1, x2, y2, e["kind"], 1.5, "", tip, e["source"], e["target"]))
    body.append("</g>")
    body.append(f'<g class="node question" data-id="q"><circle class="mark" cx="{cx:.1f}" cy="{cy:.1f}" r="16"/>'
                f'<text class="node-label" x="{cx:.1f}" y="{cy + 5:.1f}" text-anchor="middle">?</text>'
                f"<title>{escape('question: ' + data['question'])}</title></g>")
    body.append('<g class="nodes">')
    for n in nodes:
        x, y = pos[n["id"]]
        if n["role"] == "source":
            tip = (f"memory {n['id']} (spreading source, not in the result; contribution +{_fmt(n['contribution'])})"
                   f": {n['speaker'] or ''}: {preview(n['text'], 120)}")
            body.append(_node(n, x, y, 7, "square", "source", str(n["id"]), tip, href(n["id"])))
            continue
        r = 8 + 14 * math.sqrt(max(0.0, n["base_score"]) / top)
        shape, suffix, words = RESULT_NODES.get(n["role"], RESULT_NODES["base"])
        tip = (f"#{n['rank']} memory {n['id']} ({words}): "
               f"S {_fmt(n['score'])}, S_base {_fmt(n['base_score'])}, cos {_fmt(n['cos'])}, kw {_fmt(n['keyword'])}, "
               f"time {_fmt(n['time_factor'])}, spread +{_fmt(n['spread_bonus'])}. "
               f"{n['speaker'] or ''}: {preview(n['text'], 120)}")
        body.append(_node(n, x, y, r, shape, n["role"], f"{n['id']}{suffix}", tip, href(n["id"])))
    body.append("</g>")
    legend = _legend_items([("base", "circle", "base hit (size: S_base)"),
                            ("hebbian", "diamond", "Hebbian path (flipped), label H"),
                            ("reply", "hexagon", "reply below its question, label R"),
                            ("successor", "triangle", "successor of a recalled memory, label S"),
                            ("source", "square", "spreading source outside the result")], 12, height - 88)
    legend += _legend_items([("spread", "edge", "spreading edge (width, label: weight)"),
                             ("match", "edge", "the question matched it"),
                             ("reply", "edge", "answers / replaces (reply, successor)")], width / 2, height - 88)
    count = {role: sum(1 for n in nodes if n["role"] == role) for role in ("hebbian", "reply", "successor", "source")}
    desc = (f"{len(base)} base hits, {count['hebbian']} memories by the Hebbian path, {count['reply']} replies, "
            f"{count['successor']} successors, {count['source']} other spreading sources, {len(edges)} "
            f"spreading edges")
    return _svg(width, height, f"recall graph: {data['question']}", desc, body, legend, "recall-graph")


def neighbourhood_svg(data: dict[str, Any], href: Any, width: int = 900, height: int = 720) -> str:
    """A memory's neighbourhood: the centre, its cluster on the inner ring and other neighbours on the outer
    ring (strongest first, clockwise), every edge among them styled by kind with its weight."""
    nodes, edges = data["nodes"], data["edges"]
    cx, cy = width / 2, (height - 120) / 2 + 6
    r1, r2 = min(cx, cy) * 0.5, min(cx, cy) * 0.9
    centre = [n for n in nodes if n["role"] == "centre"]
    inner = [n for n in nodes if n["role"] == "cluster"]
    outer = [n for n in nodes if n["role"] == "other"]
    pos: dict[int, tuple[float, float]] = {n["id"]: (cx, cy) for n in centre}
    for group, r in ((inner, r1), (outer, r2)):
        for n, (x, y, _) in zip(group, _ring(len(group), r, cx, cy)):
            pos[n["id"]] = (x, y)
    body = ['<g class="edges">']
    for e in edges:
        if e["source"] not in pos or e["target"] not in pos:
            continue
        (x1, y1), (x2, y2) = pos[e["source"]], pos[e["target"]]
        w = e["weight"]
        on_centre = data["id"] in (e["source"], e["target"])
        tip = (f"{e['kind']} link {e['source']} - {e['target']}: weight {_fmt(w)} (fixed {_fmt(e['prior'])}, "
               f"learned {_fmt(e['learned'])})")
        body.append(_edge(x1, y1, x2, y2, e["kind"], 1 + 5 * min(1.0, w), f"{w:.2f}" if on_centre else "", tip,
                          e["source"], e["target"]))
    body.append('</g><g class="nodes">')
    for n in nodes:
        x, y = pos[n["id"]]
        role = n["role"]
        what = {"centre": "this memory", "cluster": "in its cluster", "other": "neighbour"}[role]
        weight = "" if n["weight"] is None else f", weight {_fmt(n['weight'])}"
        tip = f"memory {n['id']} ({what}{weight}): {n['speaker'] or ''}: {preview(n['text'], 120)}"
        shape = {"centre": "double", "cluster": "circle", "other": "square"}[role]
        r = 16 if role == "centre" else (7 + 8 * min(1.0, n["weight"] or 0.0))
        body.append(_node(n, x, y, r, shape, role, str(n["id"]), tip, href(n["id"])))
    body.append("</g>")
    legend = _legend_items([("centre", "double", "this memory"), ("cluster", "circle", "its cluster"),
                            ("other", "square", "other neighbour"),
                            ("conversation", "edge", "conversation link"), ("keyword", "edge", "keyword link"),
                            ("learned", "edge", "learned link")], 12, height - 106)
    desc = f"{len(nodes)} memories and {len(edges)} links around memory {data['id']}"
    return _svg(width, height, f"neighbourhood of memory {data['id']}", desc, body, legend, "hub-graph")
