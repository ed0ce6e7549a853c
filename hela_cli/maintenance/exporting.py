"""``hela export``: a whole space as JSON (everything ``hela import`` restores, optionally with vectors) or as
GraphML (networkx, Gephi). Plain data; no typer / rich."""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from typing import Any

from hela_cli.config import Config
from hela_cli.mechanics.dynamics import is_hub
from hela_cli.store import Space, Store

EXPORT_FORMAT = "hela-export"
EXPORT_VERSION = 1


def _vec(v: Any) -> list[float] | None:
    return None if v is None else [float(x) for x in v]


def export_json(store: Store, space: Space, cfg: Config, vectors: bool = False) -> dict[str, Any]:
    """Everything an import (``hela import``, :mod:`hela_cli.maintenance.importing`) needs, read in one snapshot: space
    counters (``step``, ``base_step``, ``consolidated_step``), embedder, nodes (all columns), supersession marks (facts that changed), edges with their
    current ``weight`` and the stored ``prior`` / ``amp`` it is made of (``weight = prior + amp * decay **
    (step - base_step)`` with the space's own decay, written as ``hebbian.decay``),
    semantic records with evidence, hub bookkeeping; with ``vectors`` each node's
    ``vector`` and ``passages`` (passage vectors of long turns) and each record's ``vector``."""
    with store.snapshot():
        return _export_json(store, space, cfg, vectors)


def _export_json(store: Store, space: Space, cfg: Config, vectors: bool) -> dict[str, Any]:
    space = store.refresh_space(space)
    strengths = store.edge_strengths(space)
    nodes = list(store.iter_nodes(space.id))
    ids = [n["id"] for n in nodes]
    vecs = store.node_vectors(ids) if vectors else {}
    passages = store.passage_vectors(ids) if vectors else {}
    out_nodes = []
    for n in nodes:
        d = {k: v for k, v in n.items() if k != "space_id"}
        s, deg = strengths.get(n["id"], (0.0, 0))
        d.update(strength=round(s, 9), degree=deg, hub=is_hub(s, cfg.consolidation.delta_hub))
        if vectors:
            d["vector"] = _vec(vecs.get(n["id"]))
            d["passages"] = [_vec(p) for p in passages.get(n["id"], [])]
        out_nodes.append(d)
    sem = store.get_semantic(space_id=space.id)
    for r in sem:
        r.pop("space_id", None)
        if vectors:
            r["vector"] = _vec(store.semantic_vector(r["id"]))
    info = store.embedder_info()
    step, base_step, stored, raw = store.raw_edges(space.id)
    decay = store.space_decay(space.id) if stored is None else stored   # the space's own (issue 41)
    factor = decay ** (step - base_step) if step > base_step else 1.0
    return {
        "format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exported_at": time.time(),
        "space": {"name": space.name, "step": step, "base_step": base_step,
                  "consolidated_step": space.consolidated_step, "now": store.space_now(space.id)},
        "embedder": {"model": info[0], "dim": info[1]} if info else None,
        "hebbian": {"decay": decay, "cap": cfg.hebbian.cap},
        "vectors": vectors,
        "nodes": out_nodes,
        "edges": [{"source": a, "target": b, "weight": round(prior + amp * factor, 12), "prior": prior, "amp": amp}
                  for a, b, prior, amp in raw],
        "semantic": sem,
        "hubs": [{"node_id": h, **st} for h, st in sorted(store.hub_state(space.id).items())],
        "supersessions": [{k: v for k, v in r.items() if k != "space_id"}
                          for r in store.space_supersessions(space.id)],
    }


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"

_NODE_KEYS = [("kind", "string"), ("text", "string"), ("speaker", "string"), ("role", "string"),
              ("timestamp", "double"), ("time_str", "string"), ("source_id", "string"), ("session", "string"),
              ("keywords", "string"),
              ("ord", "int"), ("access_count", "int"), ("last_access", "double"), ("strength", "double"),
              ("degree", "int"), ("hub", "boolean"), ("subject", "string"), ("confidence", "double"),
              ("date", "string"), ("hub_id", "int"), ("forgotten_evidence", "int")]
_EDGE_KEYS = [("weight", "double"), ("relation", "string")]


def _xml_text(v: Any, typ: str) -> str:
    if typ == "boolean":
        return "true" if v else "false"
    if typ == "int":
        return str(int(v))
    if typ == "double":
        return repr(float(v))
    return _XML_BAD.sub("\ufffd", str(v))


def export_graphml(store: Store, space: Space, cfg: Config) -> str:
    """The space as GraphML (undirected): turn nodes ``n<id>`` with Hebbian edges (``relation=hebbian``,
    ``weight`` = current weight) and semantic-record nodes ``s<id>`` linked to their evidence turns
    (``relation=evidence``, weight 0). Opens in networkx (``read_graphml``) and Gephi."""
    data = export_json(store, space, cfg)
    root = ET.Element("graphml", {"xmlns": _GRAPHML_NS})
    for name, typ in _NODE_KEYS:
        ET.SubElement(root, "key", {"id": f"n_{name}", "for": "node", "attr.name": name, "attr.type": typ})
    for name, typ in _EDGE_KEYS:
        ET.SubElement(root, "key", {"id": f"e_{name}", "for": "edge", "attr.name": name, "attr.type": typ})
    graph = ET.SubElement(root, "graph", {"id": _xml_text(data["space"]["name"], "string"),
                                          "edgedefault": "undirected"})
    types = dict(_NODE_KEYS)

    def add_node(nid: str, attrs: dict[str, Any]) -> None:
        el = ET.SubElement(graph, "node", {"id": nid})
        for name, value in attrs.items():
            if value is None or name not in types:
                continue
            if isinstance(value, (list, tuple)):
                value = " ".join(map(str, value))
            ET.SubElement(el, "data", {"key": f"n_{name}"}).text = _xml_text(value, types[name])

    for n in data["nodes"]:
        add_node(f"n{n['id']}", {**n, "kind": "turn", "timestamp": n["ts"]})
    for r in data["semantic"]:
        add_node(f"s{r['id']}", {**r, "kind": f"semantic:{r['kind']}"})
    count = 0

    def add_edge(a: str, b: str, weight: float, relation: str) -> None:
        nonlocal count
        el = ET.SubElement(graph, "edge", {"id": f"e{count}", "source": a, "target": b})
        ET.SubElement(el, "data", {"key": "e_weight"}).text = _xml_text(weight, "double")
        ET.SubElement(el, "data", {"key": "e_relation"}).text = relation
        count += 1

    for e in data["edges"]:
        add_edge(f"n{e['source']}", f"n{e['target']}", e["weight"], "hebbian")
    for r in data["semantic"]:
        for n in r["evidence"]:
            add_edge(f"s{r['id']}", f"n{n}", 0.0, "evidence")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
