"""Learning from use signals: feedback on a recall (``Memory.reinforce``, ``hela reinforce``, MCP ``reinforce``).

Every learning recall or ask is a row of the asks log; its id is the *recall id* returned with the results. The
caller later names the memories of that retrieval it used; :func:`apply_feedback` applies the feedback rule
(:func:`hela_cli.mechanics.dynamics.feedback_pairs`) in one short write transaction, on the same edge machinery as Eq.1
(current weights under the lazy global decay, ``set_edges``, pruning of negligible learned edges). It does not
advance the step: decay counts retrievals, and the retrieval the feedback is about already counted.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

from hela_cli.config import Config
from hela_cli.mechanics.dynamics import depressed_weight, feedback_pairs, hebbian_update
from hela_cli.facts.recall import Marks, blocked_targets
from hela_cli.errors import InputError
from hela_cli.store import Space, Store

__all__ = ["retrieval_record", "apply_feedback", "check_feedback", "echoed_memories"]


def retrieval_record(memories: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What the asks log keeps of a retrieval for feedback: per memory its id, S_base, path and the ids its
    spreading bonus came from."""
    return [{"id": m["id"], "base": round(float(m.get("base_score") or 0.0), 6), "path": m.get("path"),
             "from": [s["id"] for s in m.get("spread_from") or []]} for m in memories]


def _ids(used: Iterable[Any]) -> list[int]:
    out = []
    for u in used:
        if isinstance(u, bool) or not isinstance(u, (int, str)) or not str(u).strip().lstrip("-").isdigit():
            raise InputError(f"used: {u!r} is not a memory id (an integer)")
        out.append(int(u))
    return list(dict.fromkeys(out))


def check_feedback(store: Store, space: Space, used: Iterable[Any], recall_id: Any = None
                   ) -> tuple[dict[str, Any], list[int]]:
    """The asks-log row the feedback is about and the used ids, validated; raises :class:`InputError` (nothing
    written) for an unknown recall id, a recall of another space, one that already has feedback, one logged
    without its retrieved set, or used memories that retrieval did not return. Without ``recall_id``: the
    space's most recent recall."""
    ids = _ids(used)
    if recall_id is None:
        row = store.latest_ask(space.id)
        if row is None:
            raise InputError(f"space '{space.name}': no recall to give feedback on (recall or ask first)")
    else:
        if isinstance(recall_id, bool) or not str(recall_id).strip().isdigit():
            raise InputError(f"recall id {recall_id!r} is not a number")
        row = store.get_ask(int(recall_id))
        if row is None:
            raise InputError(f"recall {recall_id}: no such recall in {store.path} (a recall that gets no feedback "
                             f"is kept for the space's newest answer.keep_recalls recalls)")
        if row["space_id"] != space.id:
            raise InputError(f"recall {recall_id} is a recall of another space, not of '{space.name}'")
    rid = row["id"]
    if row.get("retrieval") is None:
        raise InputError(f"recall {rid} has no retrieved set to learn from (a read-only recall, or logged before "
                         f"feedback existed); recall again")
    if row.get("used") is not None:
        raise InputError(f"recall {rid} already has feedback (memories {row['used']})")
    returned = [r["id"] for r in row["retrieval"]]
    foreign = [u for u in ids if u not in returned]
    if foreign:
        raise InputError(f"recall {rid} did not return memor{'y' if len(foreign) == 1 else 'ies'} "
                         f"{', '.join(map(str, foreign))} (it returned {', '.join(map(str, returned))})")
    return row, ids


def apply_feedback(store: Store, space: Space, retrieval: Sequence[Mapping[str, Any]], used: Sequence[int],
                   cfg: Config, when: float, recall_id: int | None = None) -> dict[str, Any]:
    """Apply the feedback rule to one retrieval (``retrieval``: :func:`retrieval_record` rows) in one write
    transaction: strengthened pairs ``w <- min(cap, w + rate)``, weakened ones keep their prior and a share of
    their learned weight, negligible learned edges pruned, the used memories' access recorded. With
    ``recall_id`` the asks-log row is marked in the same transaction (a second feedback on it fails there).
    Returns ``{"used", "strengthened", "weakened", "step"}``."""
    h = cfg.hebbian
    s_base = {int(r["id"]): float(r["base"]) for r in retrieval}
    spread_from = {int(r["id"]): list(r.get("from") or []) for r in retrieval if r.get("path") == "hebbian"}
    strengthen, weaken = feedback_pairs(s_base, used, eta=h.feedback_eta, anchors=h.feedback_anchors,
                                        anchor_eta=h.feedback_anchor_eta, spread_from=spread_from,
                                        depress=h.feedback_depress)
    # facts that change: a memory superseded for certain is not strengthened, as in Eq.1 (docs/retrieval.md)
    old = blocked_targets(Marks(store.supersessions_for(s_base)), s_base)
    if old:
        strengthen = {p: rate for p, rate in strengthen.items() if not old.intersection(p)}
    with store.transaction(space=space.id):
        if recall_id is not None and not store.mark_feedback(recall_id, used, when):
            raise InputError(f"recall {recall_id} already has feedback")
        fresh = store.refresh_space(space)
        touched = {v for p in (*strengthen, *weaken) for v in p}
        weights = store.edges_among(fresh, sorted(touched)) if touched else {}
        updates = {p: hebbian_update(weights.get(p, 0.0), rate, 1.0, h.cap) for p, rate in strengthen.items()}
        weakened = 0
        for p, keep in weaken.items():
            w = weights.get(p)
            if w is None or p in updates:
                continue
            prior = store.edge_prior(fresh, *p)
            new = depressed_weight(w, prior, keep)
            if new < w:
                updates[p] = new
                weakened += 1
        if updates:
            store.set_edges(fresh, updates, h.decay)
        store.prune_edges(space.id)
        if used:
            store.touch_nodes(list(used), when)
    return {"used": list(used), "strengthened": len(strengthen), "weakened": weakened, "step": fresh.step}


def echoed_memories(memories: Sequence[Mapping[str, Any]], message: str, *, prompt: str | None = None,
                    min_terms: int = 2, max_share: float = 0.25) -> list[int]:
    """Ids of the injected ``memories`` (``{"id", "text"}``, as a recall returns them) whose distinctive terms
    reappear in the assistant's final ``message``: a use signal a prompt hook can report through
    :func:`apply_feedback` (``hooks.feedback``, off by default: its precision is measured in BENCHMARKS.md).

    * terms are the keyword extractor's stems (:func:`hela_cli.text.keywords.keywords`); the words of the
      user's ``prompt`` do not count (an answer repeats the question whatever it used);
    * a memory's distinctive terms are those found in at most ``max_share`` of the injected memories (at
      least one): words every memory shares say nothing about which one was used;
    * a memory is echoed when ``min(min_terms, its number of distinctive terms)`` of them are in the
      message (at least one).

    Pure function, no model: ids in the order of ``memories``."""
    from hela_cli.text.keywords import keywords

    said = set(keywords(message or "")) - set(keywords(prompt or ""))
    if not said or not memories:
        return []
    terms = [set(keywords(str(m.get("text") or ""))) for m in memories]
    df = Counter(t for ts in terms for t in ts)
    limit = max(1, int(max_share * len(memories)))
    asked = set(keywords(prompt or ""))
    out = []
    for m, ts in zip(memories, terms):
        distinct = {t for t in ts if df[t] <= limit} - asked
        hits = distinct & said
        if hits and len(hits) >= min(min_terms, len(distinct)):
            out.append(int(m["id"]))
    return out
