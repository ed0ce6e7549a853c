"""Adaptive forgetting (paper section 3.3): remove memories that are weak, old and never used.

A node is a candidate only if all three criteria of :func:`hela_cli.mechanics.dynamics.forget_reasons` hold:

* **weak**: its total current edge weight ``D(v)`` is below ``forgetting.delta_prune``;
* **old**: it has been idle longer than ``forgetting.delta_age_days``, measured against the space's "now"
  (its newest memory's timestamp, as in retrieval; never the wall clock): ``idle = now - max(ts, last_access)``;
* **unused**: it was never returned by a retrieval (``access_count == 0``).

The default is a dry run. :func:`forget` with ``apply=True`` re-evaluates the candidates and removes them
(node, vector, keyword index entry, edges, hub bookkeeping) in one write transaction through
:meth:`hela_cli.store.Store.delete_nodes`. Semantic records are kept - the knowledge distilled from a
memory outlives it - but their evidence link to a forgotten turn is removed and counted in
``semantic.forgotten_evidence``, so nothing dangles and the loss stays visible.
"""

from __future__ import annotations

import time
from typing import Any

from hela_cli.config import Config
from hela_cli.mechanics.dynamics import DAY, forget_reasons, should_forget
from hela_cli.store import Space, Store


def explain_reasons(total_weight: float, idle_seconds: float, access_count: int, delta_prune: float,
                    delta_age_days: float) -> dict[str, dict[str, Any]]:
    """Each criterion with whether it holds and a human-readable reason (pure)."""
    held = forget_reasons(total_weight, idle_seconds, access_count, delta_prune, delta_age_days)
    idle_days = idle_seconds / DAY
    return {
        "weak": {"holds": held["weak"], "value": round(total_weight, 6),
                 "reason": f"total edge weight {total_weight:.4f} {'<' if held['weak'] else '>='} {delta_prune:g}"},
        "old": {"holds": held["old"], "value": round(idle_days, 3),
                "reason": f"idle {idle_days:.1f} days {'>' if held['old'] else '<='} {delta_age_days:g}"},
        "unused": {"holds": held["unused"], "value": access_count,
                   "reason": "never accessed" if held["unused"] else f"accessed {access_count} time(s)"},
    }


def evaluate(store: Store, space: Space, cfg: Config, now: float | None = None,
             only_candidates: bool = True) -> tuple[float | None, list[dict[str, Any]]]:
    """The space's "now" and, per node (only candidates by default), its criteria with reasons."""
    f = cfg.forgetting
    space = store.refresh_space(space)
    now = now if now is not None else store.space_now(space.id)
    if now is None:  # empty space
        return None, []
    strengths = store.edge_strengths(space, with_priors=True)  # fixed links count
    out = []
    for node in store.iter_nodes(space.id):
        total, degree = strengths.get(node["id"], (0.0, 0))
        last = max(node["ts"], node["last_access"] or node["ts"])
        idle = now - last
        if only_candidates and not should_forget(total, idle, node["access_count"], f.delta_prune,
                                                 f.delta_age_days):
            continue
        reasons = explain_reasons(total, idle, node["access_count"], f.delta_prune, f.delta_age_days)
        out.append({"id": node["id"], "source_id": node["source_id"], "speaker": node["speaker"],
                    "text": node["text"], "timestamp": node["ts"], "time_str": node["time_str"],
                    "total_weight": round(total, 6), "degree": degree, "idle_days": round(idle / DAY, 3),
                    "access_count": node["access_count"],
                    "candidate": all(r["holds"] for r in reasons.values()), "reasons": reasons})
    return now, _keep_successors(store, space, out, only_candidates)


def _keep_successors(store: Store, space: Space, rows: list[dict[str, Any]], only_candidates: bool
                     ) -> list[dict[str, Any]]:
    """Facts that change: a memory that supersedes another is never forgotten (a departure from the paper's
    three criteria): forgetting it would drop its mark and serve the replaced fact as current again. Such a
    row gets a fourth reason, ``successor``, that does not hold."""
    if not rows or not store.has_supersessions(space.id):
        return rows
    marks = store.supersessions_for(r["id"] for r in rows)
    successors = {r["id"] for r in rows
                  if any(m["new_id"] == r["id"] and m["status"] == "superseded" for m in marks.get(r["id"], ()))}
    for r in rows:
        if r["id"] in successors:
            r["reasons"]["successor"] = {"holds": False, "value": None,
                                         "reason": "it supersedes an earlier memory (facts that change)"}
            r["candidate"] = False
    return [r for r in rows if not (only_candidates and r["id"] in successors)]


def forget(store: Store, space: Space, cfg: Config, *, apply: bool = False, now: float | None = None) -> dict[str, Any]:
    """List (dry run) or remove (``apply``) the forgetting candidates of a space.

    Returns the ``hela forget --json`` object."""
    t0 = time.perf_counter()
    f = cfg.forgetting
    criteria = {"delta_prune": f.delta_prune, "delta_age_days": f.delta_age_days, "access_count": 0}
    removed = 0
    semantic_affected: list[int] = []
    if apply:
        with store.transaction(space=space.id):  # evaluate and delete atomically: no access can slip in between
            now, cands = evaluate(store, space, cfg, now)
            ids = [c["id"] for c in cands]
            for nid in ids:
                semantic_affected.extend(store.semantic_citing(nid))
            store.delete_nodes(ids)
            removed = len(ids)
    else:
        now, cands = evaluate(store, space, cfg, now)
    return {"space": space.name, "now": now, "applied": apply, "criteria": criteria,
            "nodes": store.count_nodes(space.id), "candidates": cands, "removed": removed,
            "semantic_affected": sorted(set(semantic_affected)),
            "seconds": round(time.perf_counter() - t0, 3)}
