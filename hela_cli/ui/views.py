"""The data behind each page of ``hela ui``, as plain dicts (no web framework here; the pages only render).

Every function reads through the given :class:`~hela_cli.store.Store` (SQL lives in the store) and raises
:class:`~hela_cli.errors.HelaError` for an unknown space or memory, which the app shows as a page with a
link back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from hela_cli.maintenance import inspection
from hela_cli.config import Config
from hela_cli.mechanics.consolidate import select_cluster
from hela_cli.mechanics.request import EVERYTHING
from hela_cli.errors import HelaError, InputError, StoreError
from hela_cli.text.keywords import keywords
from hela_cli.store import NodeFilter, Space, Store

PAGE_SIZE = 50
MAX_NEIGHBOURS = 200        # neighbours listed on a memory's page (strongest first; the rest counted)
MAX_PAGE = 200
HUB_GRAPH_MAX = 40          # nodes of a hub's neighbourhood graph (the hub, its cluster, then strongest others)
WEAK_LINK = 0.1            # learned links between two neighbours below this are not drawn (counted)
RECALL_EXTRA_SOURCES = 12   # spreading sources outside the final set drawn in a recall graph


@dataclass
class Page:
    number: int
    size: int
    total: int

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))


def space(store: Store, name: str) -> Space:
    """The space, or a :class:`StoreError` naming it (the page says so and links back)."""
    if not name:
        raise InputError("no space given")
    return store.require_space(name)


def spaces(store: Store) -> list[dict[str, Any]]:
    return store.spaces()


def summary(store: Store, sp: Space) -> dict[str, Any]:
    """Counts shown at the top of a space's pages (each one indexed count)."""
    return {"name": sp.name, "nodes": store.count_nodes(sp.id), "edges": store.count_edges(sp.id),
            "semantic": store.count_semantic(sp.id), "step": store.refresh_space(sp).step,
            "now": store.space_now(sp.id)}


def parse_filter(params: dict[str, str]) -> NodeFilter:
    """A :class:`NodeFilter` from query parameters (``speaker``, ``session``, ``since``, ``until``,
    ``contains``, ``q`` keyword search); a bad date is an :class:`InputError` naming the field."""
    from hela_cli.text.dates import parse_date

    def date(key: str) -> float | None:
        value = (params.get(key) or "").strip()
        if not value:
            return None
        try:
            return parse_date(value)
        except (HelaError, ValueError, OverflowError) as e:
            raise InputError(f"{key}: {e}") from None

    q = (params.get("q") or "").strip()
    return NodeFilter(speaker=(params.get("speaker") or "").strip() or None,
                      session=(params.get("session") or "").strip() or None,
                      since=date("since"), until=date("until"),
                      contains=(params.get("contains") or "").strip() or None,
                      terms=tuple(keywords(q)) if q else ())


def memories(store: Store, sp: Space, f: NodeFilter, page: int = 1, size: int = PAGE_SIZE,
             oldest_first: bool = False) -> dict[str, Any]:
    """One page of the space's memories matching ``f`` (LIMIT / OFFSET in SQL) with the match count."""
    size = max(1, min(MAX_PAGE, size))
    total = store.count_browse(sp.id, f)
    pg = Page(max(1, page), size, total)
    rows = store.browse_nodes(sp.id, f, size, pg.offset, newest_first=not oldest_first)
    return {"rows": rows, "page": pg, "speakers": sorted(store.speaker_counts(sp.id))}


def conversation_links(store: Store, sp: Space, pairs: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """The pairs that are consecutive turns of one session (what ingest links as conversation): same
    session and no turn of it in between (a bounded range read per same-session pair)."""
    pos = store.node_positions({i for p in pairs for i in p})
    out = set()
    for a, b in pairs:
        if a in pos and b in pos and a != b and pos[a][0] == pos[b][0]:
            lo, hi = sorted((pos[a][1], pos[b][1]))
            if not store.turns_between(sp.id, pos[a][0], lo, hi):
                out.add((a, b))
    return out


def link_kind(conversation: bool, prior: float) -> str:
    """How an edge came to be: ``conversation`` (the next or previous turn of the session, linked at
    ingest), ``keyword`` (a fixed prior between sessions: a cold-start keyword link) or ``learned``
    (weight only from use: Eq.1 after retrievals, or association on ingest)."""
    if conversation:
        return "conversation"
    if prior > 0:
        return "keyword"
    return "learned"


def memory(store: Store, cfg: Config, node_id: int) -> dict[str, Any]:
    """One memory (:func:`hela_cli.maintenance.inspection.node`) whose neighbours carry their link kind and the
    fixed / learned parts of their weight; ``previous`` / ``next``: the neighbouring turns of its session
    when they are linked to it (only the nearest linked turn on each side can be one)."""
    name = store.node_space_name(node_id)
    if name is None:
        raise StoreError(f"unknown memory id {node_id}")
    data = inspection.node(store, node_id, cfg)
    data["more_neighbours"] = max(0, len(data["neighbours"]) - MAX_NEIGHBOURS)
    data["neighbours"] = data["neighbours"][:MAX_NEIGHBOURS]   # strongest first
    sp = store.require_space(name)
    parts = {other: (prior, learned) for other, prior, learned in store.node_edges(sp, node_id)}
    pos = store.node_positions({node_id, *parts})
    session, ord_ = pos[node_id]
    same = [(pos[j][1], j) for j in parts if j in pos and pos[j][0] == session]
    before = max(((o, j) for o, j in same if o < ord_), default=None)
    after = min(((o, j) for o, j in same if o > ord_), default=None)
    candidates = [(node_id, t[1]) for t in (before, after) if t is not None]
    conv = {b for _, b in conversation_links(store, sp, candidates)}
    for n in data["neighbours"]:
        prior, learned = parts.get(n["id"], (0.0, n["weight"]))
        n.update(kind=link_kind(n["id"] in conv, prior), prior=round(prior, 6), learned=round(learned, 6))
    data["previous"] = before[1] if before is not None and before[1] in conv else None
    data["next"] = after[1] if after is not None and after[1] in conv else None
    return data


def recall(mem: Any, sp_name: str, question: str, learn: bool = False) -> dict[str, Any]:
    """One retrieval (``hela ask --no-llm --explain``) and the graph of how its memories were reached.

    ``mem`` is a :class:`~hela_cli.memory.Memory` on the UI's store. Learning (Eq.1) only when ``learn``."""
    t0 = time.perf_counter()
    res = mem.retrieve(question, sp_name, EVERYTHING, learn=learn)   # the page has no filters yet
    store: Store = mem.store
    sp = store.require_space(sp_name)
    chosen = {m["id"]: m for m in res.memories}
    # spreading sources outside the final set: the strongest contributions only (the graph stays bounded)
    extra: dict[int, float] = {}
    for m in res.memories:
        for s in m["spread_from"]:
            if s["id"] not in chosen:
                extra[s["id"]] = max(extra.get(s["id"], 0.0), s["contribution"])
    keep = sorted(extra, key=lambda i: (-extra[i], i))[:RECALL_EXTRA_SOURCES]
    others = store.get_nodes(keep)
    nodes = [{"id": m["id"], "role": m["path"] if m["path"] in RESULT_ROLES else "base", "rank": rank,
              "speaker": m["speaker"], "text": m["text"], "timestamp": m["timestamp"], "session": m["session"],
              "score": m["score"], "base_score": m["base_score"], "cos": m["cos"], "keyword": m["keyword"],
              "time_factor": m["time_factor"], "spread_bonus": m["spread_bonus"]}
             for rank, m in enumerate(res.memories, 1)]
    nodes += [{"id": i, "role": "source", "rank": None, "speaker": others[i]["speaker"], "text": others[i]["text"],
               "timestamp": others[i]["ts"], "session": others[i]["session"], "contribution": extra[i]}
              for i in keep if i in others]
    drawn = {n["id"] for n in nodes}
    edges = [{"source": s["id"], "target": m["id"], "weight": s["weight"], "contribution": s["contribution"],
              "kind": "spread"} for m in res.memories for s in m["spread_from"] if s["id"] in drawn]
    parts = store.edge_parts(sp, [(e["source"], e["target"]) for e in edges])
    for e in edges:
        prior, learned = parts.get((min(e["source"], e["target"]), max(e["source"], e["target"])), (0.0, 0.0))
        e["prior"], e["learned"] = prior, learned
    edges += _result_links(res.memories)
    return {"question": question, "space": sp_name, "learn": learn, "memories": res.memories,
            "semantic": res.semantic, "query_keywords": res.query_keywords, "now": res.now, "step": res.step,
            "nodes": nodes, "edges": edges, "timings_ms": {k: round(v, 1) for k, v in res.timings_ms.items()},
            "seconds": round(time.perf_counter() - t0, 3)}


#: the paths of a recalled memory that the recall graph draws as their own kind of node (any other: base)
RESULT_ROLES = ("base", "hebbian", "reply", "successor")


def _result_links(memories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The links between recalled memories that are not spreading: a ``reply`` answers the memory it was
    placed below (its question: the nearest one above it that is not a successor placed there), a later
    memory replaces the recalled memories it ``supersedes`` (a ``successor`` brought in, or two recalled
    memories with a mark between them)."""
    ids = {m["id"] for m in memories}
    out = []
    for i, m in enumerate(memories):
        if m["path"] == "reply":
            asker = next((o for o in reversed(memories[:i]) if o["path"] != "successor"), None)
            if asker is not None:
                out.append({"source": asker["id"], "target": m["id"], "kind": "reply"})
        for old in m.get("supersedes") or []:
            if old in ids:
                status = next((o.get("supersession_status") for o in memories if o["id"] == old), None)
                out.append({"source": old, "target": m["id"], "kind": "successor", "status": status or "possible"})
    return out


def hubs(store: Store, sp: Space, cfg: Config, top: int = 30) -> list[dict[str, Any]]:
    return inspection.hubs(store, sp, cfg, top=top)


def hub_graph(store: Store, sp: Space, cfg: Config, node_id: int) -> dict[str, Any]:
    """The neighbourhood of a memory (a hub's cluster first): the centre, its consolidation cluster
    (:func:`hela_cli.mechanics.consolidate.select_cluster`), then its strongest other neighbours up to
    ``HUB_GRAPH_MAX`` nodes, and every edge among them with its kind."""
    name = store.node_space_name(node_id)
    if name is None or name != sp.name:
        raise StoreError(f"unknown memory id {node_id} in space '{sp.name}'")
    c = cfg.consolidation
    nbrs = store.neighbours(sp, [node_id])[node_id]
    cluster = select_cluster(node_id, nbrs, c.neighbour_min_weight, c.max_neighbours)
    ranked = [j for j, _ in sorted(nbrs, key=lambda t: (-t[1], t[0]))]
    order = list(dict.fromkeys([node_id, *cluster, *ranked]))[:HUB_GRAPH_MAX]
    rows = store.get_nodes(order)
    among = store.edges_among(sp, order)
    parts = store.edge_parts(sp, list(among))
    conv = conversation_links(store, sp, list(among))
    edges, hidden = [], 0
    for (a, b), w in sorted(among.items()):
        prior, learned = parts.get((a, b), (0.0, w))
        kind = link_kind((a, b) in conv, prior)
        if node_id not in (a, b) and kind == "learned" and w < WEAK_LINK:
            hidden += 1   # weak learned links between two neighbours: counted, not drawn
            continue
        edges.append({"source": a, "target": b, "weight": w, "prior": prior, "learned": learned, "kind": kind})
    strength = sum(w for _, w in nbrs)
    cl = set(cluster)
    nodes = [{"id": i, "role": "centre" if i == node_id else ("cluster" if i in cl else "other"),
              "speaker": rows.get(i, {}).get("speaker"), "text": rows.get(i, {}).get("text", ""),
              "timestamp": rows.get(i, {}).get("ts"),
              "weight": next((w for j, w in nbrs if j == i), None)} for i in order if i in rows]
    return {"id": node_id, "space": sp.name, "nodes": nodes, "edges": edges, "degree": len(nbrs),
            "strength": strength, "cluster": cluster, "shown": len(nodes), "hidden_links": hidden}


def semantic(store: Store, sp: Space, page: int = 1, size: int = PAGE_SIZE) -> dict[str, Any]:
    """One page of semantic records (newest first) with their evidence turns."""
    pg = Page(max(1, page), max(1, min(MAX_PAGE, size)), store.count_semantic(sp.id))
    recs = store.get_semantic(store.semantic_page(sp.id, pg.size, pg.offset))
    turns = store.get_nodes({n for r in recs for n in r["evidence"]})
    for r in recs:
        r["evidence_turns"] = [{"id": n, "speaker": turns[n]["speaker"], "timestamp": turns[n]["ts"],
                                "text": inspection.preview(turns[n]["text"], 160)}
                               for n in r["evidence"] if n in turns]
    return {"records": recs, "page": pg}


def heatmap(store: Store, sp: Space, cfg: Config, nodes: int = 20, hubs_only: bool = False) -> dict[str, Any]:
    hm = inspection.heatmap(store, sp, cfg, nodes=max(2, min(nodes, inspection.HEATMAP_MAX_NODES)),
                            hubs_only=hubs_only)
    return {"data": hm, "svg": inspection.heatmap_svg(hm) if hm["nodes"] else ""}
