"""Read-only views of a memory space as plain data (``hela inspect``, ``hela ui``). No typer / rich.

Every function returns JSON-ready dicts / lists (or a string for GraphML, the text grid and SVG), so the
CLI only renders, and the same data is what ``--json`` prints.

* :func:`overview` - nodes, edges, weight distribution, hubs, forgetting candidates, semantic records;
* :func:`hubs` - hubs with D(v) (Eq.2), degree, cluster preview, consolidation status;
* :func:`prune` - forgetting candidates with the reason for each criterion;
* :func:`node` - one memory: text, metadata, neighbours with current weights, semantic records citing it;
* :func:`heatmap` - the current edge-weight matrix of the strongest nodes or of the hubs' clusters
  (paper appendix B), with :func:`heatmap_text` and :func:`heatmap_svg` renderings;
* :func:`semantic` - semantic records with their evidence turns.

The whole space as JSON or GraphML (``hela export``) is :mod:`hela_cli.maintenance.exporting`.
"""

from __future__ import annotations

import statistics
from typing import Any, Sequence

from hela_cli.config import Config
from hela_cli.mechanics.consolidate import detect_hubs, plan_consolidation, select_cluster
from hela_cli.mechanics.dynamics import hub_strength, is_hub
from hela_cli.errors import StoreError
from hela_cli.mechanics.forget import evaluate
from hela_cli.maintenance.correct import fact_chain
from hela_cli.store import Space, Store

PREVIEW_CHARS = 80
HEATMAP_RAMP = " .:-=+*#%@"   # text grid: weight 0 .. cap
HEATMAP_MAX_NODES = 60


def escape(s: str) -> str:
    """XML text/attribute escaping (``xml.sax.saxutils`` would load the HTTP client modules at import)."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def preview(text: str | None, n: int = PREVIEW_CHARS) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= n else t[: n - 1] + "…"


def _consolidated(status: str | None) -> bool:
    return bool(status) and (status == "ok" or status.startswith("covered"))


# ----------------------------------------------------------------------------------- overview
def weight_histogram(weights: Sequence[float], cap: float = 1.0, bins: int = 10) -> dict[str, Any]:
    """Counts of edge weights in ``bins`` equal bins over ``[0, cap]`` (the last bin includes ``cap``)."""
    cap = cap if cap > 0 else max(weights, default=1.0) or 1.0
    counts = [0] * bins
    for w in weights:
        i = min(bins - 1, max(0, int(w / cap * bins)))
        counts[i] += 1
    edges = [round(cap * i / bins, 6) for i in range(bins + 1)]
    stats = {}
    if weights:
        stats = {"min": min(weights), "mean": statistics.fmean(weights), "median": statistics.median(weights),
                 "max": max(weights)}
    return {"bins": edges, "counts": counts, **{k: round(v, 6) for k, v in stats.items()}}


def overview(store: Store, space: Space, cfg: Config) -> dict[str, Any]:
    """Nodes, edges, weight distribution, hubs, isolated nodes, candidates, semantic records."""
    space = store.refresh_space(space)
    strengths = store.edge_strengths(space)
    weights = [w for _, _, w in store.all_edges(space)]
    n_nodes = store.count_nodes(space.id)
    hub_list = detect_hubs(strengths, cfg.consolidation.delta_hub)
    state = store.hub_state(space.id)
    now, cands = evaluate(store, space, cfg)
    sem = store.get_semantic(space_id=space.id)
    by_kind: dict[str, int] = {}
    for r in sem:
        by_kind[r["kind"]] = by_kind.get(r["kind"], 0) + 1
    info = store.embedder_info()
    return {
        "space": space.name, "nodes": n_nodes, "edges": len(weights), "step": space.step,
        "consolidated_step": space.consolidated_step, "now": now,
        "decay": store.space_decay(space.id),   # Eq.1's decay the weights are read with (the space's own)
        "embedder": {"model": info[0], "dim": info[1]} if info else None,
        "weight_distribution": weight_histogram(weights, cfg.hebbian.cap),
        "isolated_nodes": n_nodes - len(strengths),
        "hubs": {"count": len(hub_list), "delta_hub": cfg.consolidation.delta_hub,
                 "consolidated": sum(1 for h, _, _ in hub_list if _consolidated(state.get(h, {}).get("status"))),
                 "top": [{"id": h, "strength": round(d, 6), "degree": deg,
                          "status": state.get(h, {}).get("status")} for h, d, deg in hub_list[:5]]},
        "forgetting_candidates": len(cands),
        "semantic": {"count": len(sem), "by_kind": by_kind},
    }


# ----------------------------------------------------------------------------------- hubs
def hubs(store: Store, space: Space, cfg: Config, top: int = 20) -> list[dict[str, Any]]:
    """Hubs strongest first: D(v), degree, cluster preview, stored status and what consolidation would do."""
    space = store.refresh_space(space)
    plans = plan_consolidation(store, space, cfg)[: max(0, top)]
    state = store.hub_state(space.id)
    nodes = store.get_nodes({n for p in plans for n in p.cluster})
    out = []
    for p in plans:
        status = state.get(p.node_id, {}).get("status")
        hub_node = nodes.get(p.node_id, {})
        out.append({
            "id": p.node_id, "strength": round(p.strength, 6), "degree": p.degree,
            "speaker": hub_node.get("speaker"), "text": preview(hub_node.get("text")),
            "consolidated": _consolidated(status), "status": status, "next_action": p.action,
            "cluster": [{"id": n, "weight": None if n == p.node_id else round(p.weights.get(n, 0.0), 6),
                         "speaker": nodes.get(n, {}).get("speaker"), "text": preview(nodes.get(n, {}).get("text"))}
                        for n in p.cluster],
        })
    return out


# ----------------------------------------------------------------------------------- prune
def prune(store: Store, space: Space, cfg: Config, now: float | None = None) -> dict[str, Any]:
    """Forgetting candidates, each with the reason for every criterion (weak, old, unused)."""
    now, cands = evaluate(store, space, cfg, now)
    for c in cands:
        c["text"] = preview(c["text"])
    f = cfg.forgetting
    return {"space": space.name, "now": now, "criteria": {"delta_prune": f.delta_prune,
                                                           "delta_age_days": f.delta_age_days, "access_count": 0},
            "nodes": store.count_nodes(space.id), "candidates": cands}


# ----------------------------------------------------------------------------------- node
def node(store: Store, node_id: int, cfg: Config, space: str | None = None) -> dict[str, Any]:
    """One memory with its neighbours (current weights, strongest first) and the semantic records citing
    it. ``space``: if given, the node must belong to it."""
    n = store.get_node(node_id)
    if n is None:
        raise StoreError(f"unknown node id {node_id}")
    name = next((s["name"] for s in store.spaces() if s["id"] == n["space_id"]), None)
    if name is None:
        raise StoreError(f"node {node_id} belongs to no space")
    if space is not None and space != name:
        store.require_space(space)
        raise StoreError(f"node {node_id} is in space '{name}', not '{space}'")
    sp = store.require_space(name)
    nbrs = sorted(store.neighbours(sp, [node_id])[node_id], key=lambda t: (-t[1], t[0]))
    others = store.get_nodes([j for j, _ in nbrs])
    strength = hub_strength(w for _, w in nbrs)
    state = store.hub_state(sp.id).get(node_id)
    sem = store.get_semantic(store.semantic_citing(node_id))
    return {
        **{k: v for k, v in n.items() if k != "space_id"}, "space": name,
        "strength": round(strength, 6), "degree": len(nbrs),
        "hub": is_hub(strength, cfg.consolidation.delta_hub), "isolated": not nbrs,
        "hub_state": state,
        "neighbours": [{"id": j, "weight": round(w, 6), "speaker": others.get(j, {}).get("speaker"),
                        "text": preview(others.get(j, {}).get("text"))} for j, w in nbrs],
        "semantic": [{k: r[k] for k in ("id", "kind", "subject", "text", "confidence", "date", "evidence")}
                     for r in sem],
        "changes": fact_chain(store, node_id),   # facts that change: the supersessions around it
    }


# ----------------------------------------------------------------------------------- heatmap
def heatmap(store: Store, space: Space, cfg: Config, nodes: int = 20, hubs_only: bool = False,
            max_nodes: int = HEATMAP_MAX_NODES) -> dict[str, Any]:
    """Current edge-weight matrix (appendix B). Nodes: the top ``nodes`` by D(v) in chronological order,
    or (``hubs_only``) every hub followed by its cluster, at most ``max_nodes``."""
    space = store.refresh_space(space)
    strengths = store.edge_strengths(space)
    c = cfg.consolidation
    if hubs_only:
        hub_list = detect_hubs(strengths, c.delta_hub)
        nbrs = store.neighbours(space, [h for h, _, _ in hub_list]) if hub_list else {}
        order: list[int] = []
        for h, _, _ in hub_list:
            for n in select_cluster(h, nbrs.get(h, []), c.neighbour_min_weight, c.max_neighbours):
                if n not in order:
                    order.append(n)
        order = order[:max_nodes]
    else:
        ranked = sorted(strengths, key=lambda n: (-strengths[n][0], n))[: max(0, min(nodes, max_nodes))]
        order = sorted(ranked)
    return heatmap_of(store, space, cfg, order, strengths)


def heatmap_of(store: Store, space: Space, cfg: Config, order: Sequence[int],
               strengths: dict[int, tuple[float, int]] | None = None) -> dict[str, Any]:
    """The matrix for the given nodes, in that order."""
    strengths = strengths if strengths is not None else store.edge_strengths(space)
    index = {n: i for i, n in enumerate(order)}
    matrix = [[0.0] * len(order) for _ in order]
    nbrs = store.neighbours(space, list(order)) if order else {}
    for a, lst in nbrs.items():
        for b, w in lst:
            if b in index:
                matrix[index[a]][index[b]] = round(w, 6)
    info = store.get_nodes(order)
    return {
        "space": space.name, "cap": cfg.hebbian.cap,
        "nodes": [{"id": n, "strength": round(strengths.get(n, (0.0, 0))[0], 6),
                   "degree": strengths.get(n, (0.0, 0))[1],
                   "hub": is_hub(strengths.get(n, (0.0, 0))[0], cfg.consolidation.delta_hub),
                   "isolated": n not in strengths, "speaker": info.get(n, {}).get("speaker"),
                   "text": preview(info.get(n, {}).get("text"), 40)} for n in order],
        "matrix": matrix,
    }


def heat_char(weight: float, cap: float) -> str:
    """One character of the text ramp for a weight (``' '`` = 0, ``'@'`` = cap)."""
    if weight <= 0:
        return HEATMAP_RAMP[0]
    i = 1 + int(min(1.0, weight / (cap or 1.0)) * (len(HEATMAP_RAMP) - 2) + 0.5)
    return HEATMAP_RAMP[min(i, len(HEATMAP_RAMP) - 1)]


def heatmap_text(hm: dict[str, Any]) -> str:
    """Plain-text grid: one row per node (``H`` marks hubs, ``o`` isolated nodes), two characters per
    cell from the ramp ``' .:-=+*#%@'`` (0 .. cap), ``··`` on the diagonal."""
    nodes, matrix, cap = hm["nodes"], hm["matrix"], hm["cap"] or 1.0
    if not nodes:
        return "(no nodes with edges)\n"
    width = max(len(str(n["id"])) for n in nodes)
    lines = [" " * (width + 3) + "".join(f"{i % 100:>2}" for i in range(len(nodes)))]
    for i, n in enumerate(nodes):
        mark = "H" if n["hub"] else ("o" if n["isolated"] else " ")
        cells = "".join("··" if i == j else heat_char(w, cap) * 2 for j, w in enumerate(matrix[i]))
        lines.append(f"{n['id']:>{width}} {mark} {cells}".rstrip())
    lines.append(f"scale: '{HEATMAP_RAMP}' = 0 .. {cap:g}; H hub, o isolated; columns in row order")
    return "\n".join(lines) + "\n"


def heat_colour(weight: float, cap: float) -> str:
    """``#rrggbb`` from pale yellow (weak) to dark red (cap); white for no edge."""
    if weight <= 0:
        return "#ffffff"
    t = min(1.0, weight / (cap or 1.0))
    lo, hi = (255, 237, 160), (128, 0, 38)
    return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(lo, hi))


def heatmap_svg(hm: dict[str, Any], cell: int = 16) -> str:
    """A standalone SVG of the matrix: coloured rects (tooltip: pair and weight), node labels, a legend."""
    nodes, matrix, cap = hm["nodes"], hm["matrix"], hm["cap"] or 1.0
    n = len(nodes)
    label_w = 12 + 8 * max([len(str(x["id"])) + 2 for x in nodes] or [4])
    top = label_w
    size_w = label_w + n * cell + 20
    size_h = top + n * cell + 50
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size_w}" height="{size_h}" '
           f'viewBox="0 0 {size_w} {size_h}" font-family="monospace" font-size="11">',
           "<title>" + escape(f"hela edge weights: space {hm.get('space', '')}") + "</title>",
           f'<rect x="0" y="0" width="{size_w}" height="{size_h}" fill="#ffffff"/>']
    for i, x in enumerate(nodes):
        style = ' font-weight="bold" fill="#b00026"' if x["hub"] else (' fill="#999999"' if x["isolated"] else "")
        label = escape(f"{x['id']}{' H' if x['hub'] else ''}")
        y = top + i * cell + cell * 0.75
        out.append(f'<text x="{label_w - 6}" y="{y:.1f}" text-anchor="end"{style}>{label}</text>')
        cx = label_w + i * cell + cell * 0.75
        out.append(f'<text x="{cx:.1f}" y="{top - 6}" transform="rotate(-90 {cx:.1f} {top - 6})"{style}>'
                   f"{label}</text>")
    for i in range(n):
        for j in range(n):
            w = matrix[i][j]
            fill = "#dddddd" if i == j else heat_colour(w, cap)
            tip = escape(f"{nodes[i]['id']} - {nodes[j]['id']}: {w:.4f}")
            out.append(f'<rect x="{label_w + j * cell}" y="{top + i * cell}" width="{cell}" height="{cell}" '
                       f'fill="{fill}" stroke="#eeeeee"><title>{tip}</title></rect>')
    ly = top + n * cell + 20
    for k in range(10):
        out.append(f'<rect x="{label_w + k * 14}" y="{ly}" width="14" height="10" '
                   f'fill="{heat_colour(cap * (k + 1) / 10, cap)}"/>')
    out.append(f'<text x="{label_w + 150}" y="{ly + 9}">0 .. {cap:g} (current weight)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------- semantic
def semantic(store: Store, space: Space) -> list[dict[str, Any]]:
    """Semantic records of the space, each with its evidence turns (forgotten ones are counted)."""
    recs = store.get_semantic(space_id=space.id)
    turns = store.get_nodes({n for r in recs for n in r["evidence"]})
    for r in recs:
        r.pop("space_id", None)
        r["evidence_turns"] = [{"id": n, "speaker": turns[n]["speaker"], "timestamp": turns[n]["ts"],
                                "source_id": turns[n]["source_id"], "text": preview(turns[n]["text"])}
                               for n in r["evidence"] if n in turns]
    return recs
