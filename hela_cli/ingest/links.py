"""Ingest links: consecutive turns of a session, cold-start keyword links between sessions, association on
ingest; fixed priors with ``ingest.fixed_links`` (Eq.1's decay leaves them alone)."""

from __future__ import annotations

import math
from typing import Any, Sequence

from hela_cli.config import Config
from hela_cli.mechanics.dynamics import hebbian_update, keyword_partners
from hela_cli.store import Store


def link_keywords(store: Store, space: str, cfg: Config, node_ids: Sequence[int] | None = None) -> int:
    """Cold-start associations: prior edges from ``node_ids`` (default: every memory of the space, the
    one-off step for a space ingested without them) to their ``ingest.keyword_links`` best partners in other
    sessions by shared rare keywords (:func:`hela_cli.mechanics.dynamics.keyword_partners`), each at weight
    ``ingest.keyword_link_weight`` (a fixed prior with ``ingest.fixed_links``). An existing edge keeps its
    weight if it is already heavier, so running it again changes nothing but links decayed since. One
    write transaction. Returns the edges written."""
    ic, h = cfg.ingest, cfg.hebbian
    if ic.keyword_links <= 0 or ic.keyword_link_weight <= 0:
        return 0
    sp = store.require_space(space)
    n = store.count_nodes(sp.id)
    if node_ids is None or len(node_ids) * 20 > n:   # most of the space is new: read every memory's keywords
        docs = store.keyword_docs(sp.id)
        pairs = keyword_partners(docs, docs if node_ids is None else node_ids, ic.keyword_links,
                                 ic.keyword_link_min_score)
    else:   # a few new turns (`hela add`): only the memories sharing one of their rare keywords (postings)
        cap = max(2, int(math.sqrt(n)))
        mine = {i: f["keywords"] for i, f in store.node_features(node_ids).items()}
        postings = store.term_postings(sp.id, sorted({t for kws in mine.values() for t in kws}), cap)
        holders: dict[int, list[str]] = {}
        for t, ids in postings.items():
            for i in ids:
                holders.setdefault(i, []).append(t)
        sessions = store.node_sessions(set(holders) | set(mine))
        docs = {i: (sessions.get(i), holders.get(i, [])) for i in set(holders) | set(mine) if i in sessions}
        pairs = keyword_partners(docs, node_ids, ic.keyword_links, ic.keyword_link_min_score, max_df=cap, n=n)
    if not pairs:
        return 0
    with store.transaction(space=sp.id):
        fresh = store.refresh_space(sp)
        have = store.pair_weights(fresh, pairs)
        part = 0 if ic.fixed_links else 1   # what a link must exceed: the fixed prior, else the current weight
        updates = {p: ic.keyword_link_weight for p in pairs
                   if have.get((min(p), max(p)), (0.0, 0.0))[part] < ic.keyword_link_weight}
        if updates:
            write_links(store, fresh, updates, cfg)
    return len(updates)


def write_links(store: Store, space: Any, links: dict[tuple[int, int], float], cfg: Config) -> None:
    """Write ingest links (inside a transaction): fixed priors with ``ingest.fixed_links`` (Eq.1's decay
    leaves them alone; what use adds decays on top), else plain edge weights that decay like learned
    weight (the paper)."""
    if cfg.ingest.fixed_links:
        # an edge that already weighs something (a link written before fixed links, or learned weight) keeps
        # its total: the prior takes the link's part, only the excess stays as decaying learned weight
        weights = store.pair_weights(space, links)
        now = {p: w for p in links if (w := weights.get((min(p), max(p)), (0.0, 0.0))[1]) > 0}
        store.set_priors(space, links)
        if now:
            store.set_edges(space, {p: max(w, links[p]) for p, w in now.items()}, cfg.hebbian.decay)
    else:
        store.set_edges(space, links, cfg.hebbian.decay)


def link_conversation(store: Store, space: str, cfg: Config) -> int:
    """The conversation links of an existing space (consecutive turns of a session, ``ingest.initial_weight``)
    written again as ingest writes them now: with ``ingest.fixed_links`` they become fixed priors (a space
    ingested before fixed links, whose links Eq.1's decay has been eroding). Returns the pairs whose
    weight was below ``initial_weight``."""
    sp = store.require_space(space)
    w0 = cfg.ingest.initial_weight
    with store.transaction(space=sp.id):
        fresh = store.refresh_space(sp)
        consecutive = store.consecutive_pairs(sp.id)
        have = store.pair_weights(fresh, consecutive)
        pairs = {}
        for p in consecutive:
            prior, weight = have.get((min(p), max(p)), (0.0, 0.0))
            if weight < w0 or (cfg.ingest.fixed_links and prior < w0):
                pairs[p] = w0
        if pairs:
            write_links(store, fresh, pairs, cfg)
    return len(pairs)


def _associate(store: Store, space: Any, new_ids: list[int], vectors: Any, cfg: Config) -> None:
    """Association on ingest (the paper's future work against cold start): a new turn co-activates with
    its top-r most similar *earlier* memories above a similarity floor (Eq.1 update, no global decay)."""
    r, floor, h = cfg.ingest.associate_top, cfg.ingest.associate_min_sim, cfg.hebbian
    updates: dict[tuple[int, int], float] = {}
    for nid, vec in zip(new_ids, vectors):
        hits = [(o, s) for o, s in store.knn(space.id, vec, r + 1) if o < nid and s >= floor][:r]
        for other, _ in hits:
            pair = (min(nid, other), max(nid, other))
            current = updates[pair] if pair in updates else store.edge_weight(space, pair[0], pair[1])
            updates[pair] = hebbian_update(current, h.eta, 1.0, h.cap)
    if updates:
        store.set_edges(space, updates, h.decay)
