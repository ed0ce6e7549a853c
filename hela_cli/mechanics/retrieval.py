"""Hebbian dual-path retrieval (paper section 3.4): candidates -> Eq.3 -> Eq.4 -> Eq.5 -> Eq.1.

1. Candidates: cosine neighbours from sqlite-vec KNN plus keyword hits by BM25 (the space's own statistics).
2. Eq.3 base activation for every candidate, exactly: ``(cos + alpha*kw) * exp(-dt/tau)`` where ``dt`` is
   measured from the space's "now" (its newest memory, or ``--now``), never the wall clock.
   ``kw`` is the share of query keywords found in the node's keywords, blended with the candidate's
   normalised BM25 score (``retrieval.bm25_weight``; 0 gives the paper's plain share).
3. Eq.4 spreading from candidates above theta over current Hebbian edge weights; neighbours reached this
   way get their own exact base activation.
4. Eq.5: top-k by S_base, then up to m more by S (the Hebbian / flipped path).
5. Eq.1 learning (unless disabled): one short ``BEGIN IMMEDIATE`` transaction advances the space's step
   (all edges decay once, O(1)), reinforces every pair of the final set and records the accesses.

Round 3 (issue 47; docs/retrieval.md): a speaker's name a turn only addresses them by is not that turn's
keyword (``retrieval.vocatives``), the speakers' names stay out of the BM25 query (``retrieval.bm25_names``),
and a recalled question or complaint brings the next turn of its session right below it, within k + m
(``retrieval.replies``). Measured and left off: a person prior and session coverage; in round 4 a focused
second dense probe (``retrieval.focus_weight`` / ``focus_max``: the question's focus words,
:mod:`hela_cli.text.question_focus`), more spreading slots for a list question (``retrieval.list_slots``) and a
word-level semantic keyword match (``retrieval.soft_keywords``).

Facts that change (:mod:`hela_cli.facts.recall`): a superseded memory gets no Eq.4 bonus, brings
its successor (placed above it), carries its marks, takes no part in Eq.1, and is dropped with
``current_only``; ``as_of`` recalls as of a past time.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from hela_cli.config import Config
from hela_cli.mechanics.dynamics import (base_activation, dual_path, fuse_probes, hebbian_update, idf, person_factor,
                               reinforcement, session_cover, soft_keyword_match, spread_activation, time_factor, trace_bonus, trace_slot_cap,
                               weighted_keyword_match, window_factor)
from hela_cli.facts.recall import Marks, blocked_targets, with_successors
from hela_cli.mechanics.request import EVERYTHING, RecallRequest
from hela_cli.text.keywords import keyword_match, keywords, query_text
from hela_cli.models import Embedder, embed_queries
from hela_cli.text.query_time import only_time, question_window
from hela_cli.text.question_focus import asks_for_list, focus_text
from hela_cli.text.turns import asks_for_reply, only_addressed
from hela_cli.store import Space, Store


@dataclass
class Retrieval:
    memories: list[dict[str, Any]]            # final episodic set, base path first (by S_base), then flipped
    semantic: list[dict[str, Any]]            # semantic records (top semantic_k by similarity)
    query_keywords: list[str]
    now: float | None
    step: int
    timings_ms: dict[str, float] = field(default_factory=dict)
    recall_id: int | None = None              # the asks-log row feedback names (Memory.retrieve fills it in)
    query_vector: np.ndarray | None = None    # the question's embedding (kept with the recall: a use trace)


@functools.lru_cache(maxsize=4096)
def _speaker_keywords(speaker: str) -> tuple[str, ...]:
    return tuple(keywords(speaker))


def _kw_scores(q_kw: list[str], nodes: dict[int, dict[str, Any]], bm25: dict[int, float],
               bm25_weight: float, speaker_keywords: bool = True,
               weights: dict[str, float] | None = None, soft: tuple[float, Embedder] | None = None
               ) -> dict[int, float]:
    """keyword_match blended with normalised BM25 for every node; ``soft`` (tau, embedder): the word-level
    semantic match of :func:`_soft_shares` in place of the plain share (not with IDF ``weights``)."""
    top = max(bm25.values(), default=0.0)
    softs = _soft_shares(q_kw, nodes, speaker_keywords, *soft) if soft is not None and weights is None and q_kw \
        else None
    out = {}
    for nid, node in nodes.items():
        if softs is not None:
            share = softs[nid]
        else:
            kws = node["keywords"]
            if speaker_keywords and node.get("speaker"):
                kws = [*kws, *_speaker_keywords(node["speaker"])]
            share = keyword_match(q_kw, kws) if weights is None else weighted_keyword_match(q_kw, kws, weights)
        norm = bm25.get(nid, 0.0) / top if top > 0 else 0.0
        out[nid] = (1.0 - bm25_weight) * share + bm25_weight * norm
    return out


#: (embedder model id, keyword) -> the keyword's vector, for the word-level semantic match
#: (``retrieval.soft_keywords``); kept for the process, emptied past ``_TERM_CAP`` entries
_TERM_VECTORS: dict[tuple[str, str], np.ndarray] = {}
_TERM_CAP = 200_000


def _term_vectors(embedder: Embedder, terms: list[str]) -> dict[str, np.ndarray]:
    """The embedder's vector of each keyword (a stem, embedded as written), from the process's cache; the
    missing ones in one batch."""
    mid = str(getattr(embedder, "model_id", ""))
    todo = [t for t in dict.fromkeys(terms) if (mid, t) not in _TERM_VECTORS]
    if todo:
        if len(_TERM_VECTORS) + len(todo) > _TERM_CAP:
            _TERM_VECTORS.clear()
        for t, v in zip(todo, embedder.embed(todo)):
            _TERM_VECTORS[(mid, t)] = np.asarray(v, dtype=np.float32)
    return {t: _TERM_VECTORS[(mid, t)] for t in dict.fromkeys(terms)}


def _soft_shares(q_kw: list[str], nodes: dict[int, dict[str, Any]], speaker_keywords: bool, tau: float,
                 embedder: Embedder) -> dict[int, float]:
    """Word-level semantic keyword match (``retrieval.soft_keywords``): for each node, the question's keywords
    it holds count 1, and each other one counts its best cosine with one of the node's own keywords when that
    reaches ``tau`` (:func:`hela_cli.mechanics.dynamics.soft_keyword_match`: "martial" / "kickbox"). The
    speakers' names match only exactly."""
    names = {t for n in nodes.values() if n.get("speaker") for t in _speaker_keywords(n["speaker"])}
    q = list(dict.fromkeys(q_kw))
    soft_q = [t for t in q if t not in names]
    terms = list(dict.fromkeys(t for n in nodes.values() for t in n["keywords"] if t not in names))
    col = {t: j for j, t in enumerate(terms)}
    sims = None
    if soft_q and terms:   # every question keyword against every keyword of the scored memories, once
        vec = _term_vectors(embedder, [*soft_q, *terms])
        sims = np.stack([vec[t] for t in soft_q]) @ np.stack([vec[t] for t in terms]).T
    out = {}
    for nid, node in nodes.items():
        have = set(node["keywords"])
        if speaker_keywords and node.get("speaker"):
            have.update(_speaker_keywords(node["speaker"]))
        exact = sum(1 for t in q if t in have)
        own = [col[t] for t in node["keywords"] if t in col]
        best: list[float] = []
        if sims is not None and own:
            top = sims[:, own].max(axis=1)
            best = [float(top[i]) for i, t in enumerate(soft_q) if t not in have]
        out[nid] = soft_keyword_match(exact, best, len(q), tau)
    return out


def _people(store: Store, space_id: int) -> dict[str, tuple[str, frozenset[str]]] | None:
    """Each speaker of the space with the name others address them by (the first word of the speaker name)
    and that name's keywords; None for a space with fewer than two speakers."""
    out = {}
    for sp in store.speaker_counts(space_id):
        first = sp.split()[0] if sp and sp.split() else ""
        kws = frozenset(_speaker_keywords(first)) if first else frozenset()
        if kws:
            out[sp] = (first, kws)
    return out if len(out) > 1 else None


def _named_people(store: Store, space_id: int, q_kw: list[str]) -> tuple[set[str], set[str]] | None:
    """The speakers of the space the question names by a name keyword (``"What has Melanie painted?"``) and
    those names' keywords; None when it names none of them or all of them (then no one is preferred)."""
    speakers = store.speaker_counts(space_id)
    have = set(q_kw)
    named = {sp for sp in speakers if sp and have.intersection(_speaker_keywords(sp))}
    if not named or len(named) == len(speakers):
        return None
    return named, {t for sp in named for t in _speaker_keywords(sp)}


def _idf_weights(store: Store, space_id: int, q_kw: list[str], speaker_keywords: bool) -> dict[str, float]:
    """IDF of each query keyword in the space. A speaker name's document frequency counts the memories that
    speaker said (when speaker names are keywords), so a name shared by half the memories weighs little and a
    rare one a lot."""
    n = store.count_nodes(space_id)
    df = store.term_counts(space_id, q_kw)
    if speaker_keywords:
        for speaker, count in store.speaker_counts(space_id).items():
            for t in _speaker_keywords(speaker):
                if t in df:
                    df[t] += count
    return {t: idf(df.get(t, 0), n) for t in q_kw}


def retrieve(store: Store, space: Space, embedder: Embedder, question: str, cfg: Config, *,
             now: float | None = None, learn: bool | None = None,
             query_vector: np.ndarray | None = None, request: RecallRequest = EVERYTHING) -> Retrieval:
    """``request`` (:class:`~hela_cli.mechanics.request.RecallRequest`, built where the recall entered): its
    filters (``speaker``, ``session``, ``since``, ``until``) restrict the candidates before ranking: KNN,
    keyword search, passages, the date window and spreading see only the matching memories; its ``k``
    replaces ``retrieval.k``. ``as_of``: recall as of that time: memories after it are left out (an ``until``
    filter), supersessions in force only from later are ignored, and it is the space's "now" unless ``now``
    is given. ``current_only``: memories superseded for certain are left out (possibly superseded ones are
    kept, marked), and so are semantic records resting on them.
    The reads run in one snapshot of the space (``Store.reading``: one statement fewer per read on
    Postgres), the learning write after it."""
    learn = cfg.retrieval.learn if learn is None else learn
    t0 = time.perf_counter()
    question = query_text(question)   # a question of any length is read in bounded time (issue 44)
    filters = request.filters()
    if request.as_of is not None and now is None:
        now = request.as_of
    if request.k is not None and request.k != cfg.retrieval.k:
        cfg = cfg.replace(**{"retrieval.k": request.k})
    r = cfg.retrieval
    focus = _focus(store, space, question) if r.focus_max or r.focus_weight > 0 else ""
    # before the snapshot: a served embedder may take a while (the question and its focus in one batch)
    texts = ([question] if query_vector is None else []) + ([focus] if focus else [])
    vecs = embed_queries(embedder, texts) if texts else []
    if query_vector is None:
        query_vector = vecs[0]
    probes = _Probes(query_vector, vecs[-1] if focus else None)
    changes = _Changes(request.current_only, request.as_of)
    with store.reading(space.id):
        res = _ranked(store, space, question, cfg, now, probes, filters, t0, changes, embedder)
        res = _time_first(store, space, question, cfg, now, probes, filters, t0, res, changes, embedder)
    if learn:
        learn_from_retrieval(store, space, res, cfg)
    res.timings_ms["total"] = (time.perf_counter() - t0) * 1000
    return res


@dataclass
class _Probes:
    """The question's vector and, with a focused probe (``retrieval.focus_weight`` / ``focus_max``), the
    vector of its focus words (:func:`hela_cli.text.question_focus.focus_text`), or None."""
    q: np.ndarray
    focus: np.ndarray | None = None


def _focus(store: Store, space: Space, question: str) -> str:
    """The question's focus words without the space's speakers' names; empty when they are all the
    question's keywords anyway (the probe would repeat the question) or nothing is left."""
    names = {t for sp in store.speaker_counts(space.id) for t in (sp or "").lower().split()}
    focus = focus_text(question, names)
    if not focus or focus.split() == [t for t in question.lower().split()]:
        return ""
    return focus


@dataclass
class _Changes:
    """What a recall does about facts that change: its ``current_only`` / ``as_of``."""
    current_only: bool = False
    as_of: float | None = None


def _time_first(store: Store, space: Space, question: str, cfg: Config, now: float | None,
                probes: _Probes, filters: dict[str, Any] | None, t0: float, res: Retrieval,
                changes: _Changes, embedder: Embedder | None = None) -> Retrieval:
    """A question that only names a time relative to now ("What did I do 3 days ago?": :func:`only_time`)
    has no topic to rank by: the memories of its window come first (ranked among themselves), then the
    others as ranked. Unchanged when the window holds no memory or the caller filtered by time."""
    if cfg.retrieval.date_prior <= 0 or (filters and ("since" in filters or "until" in filters)) \
            or not only_time(question):
        return res
    window = question_window(question, now, clock=now if now is not None else time.time(), tz=None)
    if window is None or window.scale_days is None:
        return res
    narrow = {**(filters or {}), "since": window.start, "until": window.end}
    if not store.filtered_ids(space.id, **narrow):
        return res
    first = _ranked(store, space, question, cfg, now, probes, narrow, t0, changes, embedder)
    seen = {m["id"] for m in first.memories}
    first.memories = (first.memories + [m for m in res.memories if m["id"] not in seen])[
        :max(len(res.memories), len(first.memories))]
    first.timings_ms = res.timings_ms
    return first


def _ranked(store: Store, space: Space, question: str, cfg: Config, now: float | None,
            probes: _Probes, filters: dict[str, Any] | None, t0: float, changes: _Changes,
            embedder: Embedder | None = None) -> Retrieval:
    """:func:`retrieve` up to the ranked memories and semantic records (the reads), stage by stage:
    candidates and their Eq.3 base scores, use traces, Eq.4 spreading, Eq.5 dual path, then the rows
    (successors of superseded memories brought in: :func:`_successors`)."""
    r = cfg.retrieval
    timings: dict[str, float] = {}
    q = probes.q
    q_kw = keywords(question)
    k, m = r.k, r.m
    if r.list_slots > 0 and k > 1 and asks_for_list(question):   # more spreading slots for a list question
        moved = min(r.list_slots, k - 1)
        k, m = k - moved, m + moved
    timings["embed"] = (time.perf_counter() - t0) * 1000

    t1 = time.perf_counter()
    cands = _candidates(store, space, question, probes, q_kw, r, now, filters)
    weights = _idf_weights(store, space.id, q_kw, r.speaker_keywords) if r.keyword_idf else None
    base = _BaseScores(store, space.id, q, q_kw, cands, r, weights,
                       _named_people(store, space.id, q_kw) if r.person_prior > 0 else None,
                       _people(store, space.id) if r.vocatives else None,
                       (r.soft_keywords, embedder) if r.soft_keywords > 0 and embedder is not None else None)
    base.add(set(cands.nodes))
    timings["candidates"] = (time.perf_counter() - t1) * 1000

    t2 = time.perf_counter()
    traced = _use_traces(store, space, q, r, base, cands.allowed) if r.trace_weight > 0 else {}
    spreads: dict[int, Any] = {}
    edge_w: dict[tuple[int, int], float] = {}   # (source, target) -> the edge weight spreading used
    marks = Marks({}, changes.as_of)
    changed = store.has_supersessions(space.id)   # the marks of the scored memories are read only then
    if r.spreading and base.scores:
        spreads, edge_w = _spreading(store, space, cfg, base, cands.allowed, marks if changed else None)
    elif changed:
        marks.add(store.supersessions_for(base.scores))
    s_base = base.scores
    s_final = {v: sp.score for v, sp in spreads.items()} if spreads else dict(s_base)
    for v, b in traced.items():
        s_final[v] = s_final.get(v, s_base[v]) + b
    cover = None
    if r.session_decay < 1.0 and s_base:   # coverage: the base path does not spend itself on one session
        top = sorted(s_base, key=lambda v: -s_base[v])[:4 * (k + m)]
        cover = session_cover({v: s_base[v] for v in top}, store.node_sessions(top), k, r.session_decay)
    chosen = dual_path(s_base, s_final, k, m, base=cover)
    fill: list[tuple[int, str]] = []
    if changes.current_only and marks:   # the slots superseded memories leave: Eq.5's next memories fill them
        gone = blocked_targets(marks, s_base)
        if gone:
            fill = dual_path({v: s for v, s in s_base.items() if v not in gone},
                             {v: s for v, s in s_final.items() if v not in gone}, k, m)
    timings["spreading"] = (time.perf_counter() - t2) * 1000

    memories = _memory_rows(store, chosen, base, s_final, spreads, traced, edge_w)
    if r.replies > 0 and memories:
        memories = _replies(store, space, base, memories, s_final, r.replies, cands.allowed, changes)
    if marks:
        memories = _successors(store, base, memories, marks, changes, len(chosen), fill,
                               lambda ids: _memory_rows(store, ids, base, s_final, spreads, traced, edge_w))
    semantic = _semantic(store, space, q, r, changes, changed) if r.semantic_k > 0 else []
    return Retrieval(memories=memories, semantic=semantic, query_keywords=q_kw, now=cands.now, step=space.step,
                     timings_ms=timings, query_vector=q)


@dataclass
class _Candidates:
    """Stage 1: the candidate memories and what scoring needs of them."""
    nodes: dict[int, dict[str, Any]]      # scoring fields of every candidate (``Store.node_features``)
    cos: dict[int, float]                 # cosine of the KNN hits (the others are filled in when scored)
    pcos: dict[int, float]                # best passage cosine of long turns
    bm25: dict[int, float]                # BM25 of the keyword hits
    allowed: set[int] | None              # the ids the filters let through; None: the whole space
    window: Any                           # the date window the question names (a TimeWindow), or None
    now: float | None                     # the space's present
    focus: np.ndarray | None = None       # the focused probe's vector (None: no focused probe)
    fcos: dict[int, float] = field(default_factory=dict)   # its cosine with the KNN hits of that probe


def _candidates(store: Store, space: Space, question: str, probes: _Probes, q_kw: list[str], r: Any,
                now: float | None, filters: dict[str, Any] | None) -> _Candidates:
    """Cosine neighbours, keyword hits, the memories of long turns' best passages and of the question's date
    window; with ``filters``, from the matching memories only (not dropped after top-k)."""
    allowed = set(store.filtered_ids(space.id, **filters)) if filters else None
    search_kw = q_kw
    if not r.bm25_names:   # the speakers' names are matched by who speaks, not by BM25 (unless nothing else is asked)
        people = _people(store, space.id) or {}
        names = {t for _, kws in people.values() for t in kws}
        search_kw = [t for t in q_kw if t not in names] or q_kw
    q, fq = probes.q, probes.focus
    fcos: dict[int, float] = {}
    if allowed is None:
        cos = dict(store.knn(space.id, q, r.vector_candidates))
        if fq is not None:
            fcos = dict(store.knn(space.id, fq, r.vector_candidates))
        bm25 = dict(store.keyword_search(space.id, search_kw, r.keyword_candidates))
    else:
        cos = dict(store.knn_among(space.id, q, r.vector_candidates, allowed))
        if fq is not None:
            fcos = dict(store.knn_among(space.id, fq, r.vector_candidates, allowed))
        bm25 = dict(store.keyword_search_among(space.id, search_kw, r.keyword_candidates, **filters))
    asked_at = now if now is not None else time.time()   # "yesterday", "3 days ago": from the moment of asking
    now = now if now is not None else store.space_now(space.id)
    cand = set(cos) | set(bm25) | set(fcos)
    # passage vectors of long turns: a memory's cosine is the best of its main and passage vectors, and
    # the best passages' memories join the candidates
    pcos = store.passage_cosines(space.id, q) if r.passages else {}
    if allowed is not None:
        pcos = {nid: c for nid, c in pcos.items() if nid in allowed}
    cand |= {nid for nid, _ in sorted(pcos.items(), key=lambda t: -t[1])[:r.vector_candidates]}
    window = question_window(question, now, clock=asked_at, relative_weight=r.date_prior_relative, tz=None) \
        if r.date_prior > 0 else None
    if window is not None:   # the memories of the window the question names join the candidates
        slack = r.date_slack_days * 86_400.0
        cand |= set(store.nodes_in_window(space.id, window[0], window[1] + slack, r.vector_candidates)
                    if allowed is None else store.nodes_in_window_among(
                        space.id, window[0], window[1] + slack, r.vector_candidates, **filters))
    # scoring fields only (full rows for the final set later); a node forgotten by another process since
    # the index was read is no candidate
    nodes = store.node_features(cand, space.id)
    return _Candidates(nodes=nodes, cos=cos, pcos=pcos, bm25=bm25, allowed=allowed, window=window, now=now,
                       focus=fq, fcos=fcos)


class _BaseScores:
    """Stage 2: Eq.3 base activation S_base of every memory scored so far (the candidates, then the ones use
    traces and spreading bring in), with each one's trace ``explain[id] = (cos, keyword, time factor)``."""

    def __init__(self, store: Store, space_id: int, q: np.ndarray, q_kw: list[str], cands: _Candidates, r: Any,
                 weights: dict[str, float] | None, named: tuple[set[str], set[str]] | None = None,
                 people: dict[str, tuple[str, frozenset[str]]] | None = None,
                 soft: tuple[float, Embedder] | None = None):
        self.store, self.space_id, self.q, self.q_kw, self.r, self.weights = store, space_id, q, q_kw, r, weights
        self.named = named   # the people the question names: (their speaker names, their name keywords)
        self.people = people   # speaker -> (the name they are addressed by, its keywords): vocatives are dropped
        self.soft = soft       # (tau, embedder): the word-level semantic keyword match, or None
        self.nodes, self.cos, self.pcos, self.bm25 = cands.nodes, cands.cos, cands.pcos, cands.bm25
        self.window, self.now = cands.window, cands.now
        self.focus, self.fcos = cands.focus, cands.fcos
        self.scores: dict[int, float] = {}
        self.explain: dict[int, tuple[float, float, float]] = {}

    def join(self, ids: set[int]) -> set[int]:
        """Fetch the scoring fields of memories that are not candidates and score them; returns the ids that
        still exist (one may be forgotten by another process meanwhile)."""
        self.nodes.update(self.store.node_features(ids, self.space_id))
        ids = ids & set(self.nodes)
        self.add(ids)
        return ids

    def add(self, ids: set[int]) -> None:
        """Score memories whose scoring fields are in ``nodes``: their cosine first (KNN hit, else from their
        vector; a better passage cosine wins), then Eq.3 times the date window's factor."""
        r, nodes, now = self.r, self.nodes, self.now
        focus = self.focus
        missing = [i for i in ids if i not in self.cos or (focus is not None and i not in self.fcos)]
        for nid, vec in self.store.node_vectors(missing, self.space_id).items():
            if nid not in self.cos:
                self.cos[nid] = float(np.dot(self.q, vec))
            if focus is not None and nid not in self.fcos:
                self.fcos[nid] = float(np.dot(focus, vec))
        for i in ids:
            if i in self.pcos and self.pcos[i] > self.cos.get(i, -2.0):
                self.cos[i] = self.pcos[i]
        scored = {i: nodes[i] for i in ids}
        if self.people:
            scored.update(self._without_vocatives(ids))
        kw = _kw_scores(self.q_kw, scored, self.bm25, r.bm25_weight, r.speaker_keywords, self.weights, self.soft)
        out = {}
        for i in ids:
            dt = (now - nodes[i]["ts"]) if now is not None else 0.0
            c = self.cos.get(i, 0.0)
            if focus is not None:   # the focused probe's cosine, fused with the question's
                c = fuse_probes(c, self.fcos.get(i, c), r.focus_weight, r.focus_max)
            wf = window_factor(nodes[i]["ts"], self.window, r.date_prior, r.date_slack_days)
            if self.named is not None:
                speakers, names = self.named
                wf *= person_factor(nodes[i].get("speaker") in speakers or not names.isdisjoint(scored[i]["keywords"]),
                                    r.person_prior)
            self.explain[i] = (c, kw[i], (time_factor(dt, r.tau_days) if r.time_decay else 1.0) * wf)
            out[i] = base_activation(c, kw[i], dt, r.alpha, r.tau_days, r.time_decay) * wf
        self.scores.update(out)


    def _without_vocatives(self, ids: set[int]) -> dict[int, dict[str, Any]]:
        """The scoring fields of the memories among ``ids`` that name a speaker the question names only to
        address them ("Thanks, Melanie! ..." said by Caroline), with that name's keywords left out (a name
        the question does not ask for changes no score). Whether a memory only addresses a speaker is
        derived once per memory and process (``Store.node_derived``; its text is read then)."""
        asked = set(self.q_kw)
        nodes = self.nodes
        drop: dict[int, set[str]] = {}
        for sp, (name, kws) in (self.people or {}).items():
            if kws.isdisjoint(asked):
                continue
            hit = [i for i in ids if nodes[i].get("speaker") != sp and not kws.isdisjoint(nodes[i]["keywords"])]
            if not hit:
                continue

            def derive(missing: list[int], name: str = name) -> dict[int, bool]:
                texts = self.store.get_nodes(missing)
                return {i: only_addressed((texts.get(i) or {}).get("text") or "", name) for i in missing}

            for i, addressed in self.store.node_derived(self.space_id, f"vocative:{sp}", hit, derive).items():
                if addressed:
                    drop.setdefault(i, set()).update(kws)
        return {i: {**nodes[i], "keywords": [t for t in nodes[i]["keywords"] if t not in d]} for i, d in drop.items()}


def _use_traces(store: Store, space: Space, q: np.ndarray, r: Any, base: _BaseScores,
                allowed: set[int] | None) -> dict[int, float]:
    """Stage 3: earlier similar recalls with feedback point at what they used (``dynamics.trace_bonus``): the
    bonus of each memory they point at, which joins the scored memories; at most ``trace_max_slots`` of the
    flipped slots go to traces (``dynamics.trace_slot_cap``)."""
    vecs, used_sets = store.use_traces(space.id)
    if not used_sets or vecs.shape[1] != len(q):
        return {}
    traced = trace_bonus((vecs @ q).tolist(), used_sets, r.trace_weight, r.trace_min_sim)
    if allowed is not None:   # traces stay inside the filter too
        traced = {v: b for v, b in traced.items() if v in allowed}
    new = set(traced) - set(base.scores)
    if new:
        base.join(new)
    traced = {v: b for v, b in traced.items() if v in base.scores}
    if r.trace_max_slots > 0:
        traced = trace_slot_cap(traced, base.scores, r.k, r.trace_max_slots)
    return traced


def _spreading(store: Store, space: Space, cfg: Config, base: _BaseScores, allowed: set[int] | None,
               marks: Marks | None) -> tuple[dict[int, Any], dict[tuple[int, int], float]]:
    """Stage 4: Eq.4 from the memories above theta over the current Hebbian edge weights; the neighbours it
    reaches get their own base score first. Returns the spread per memory and the weight of each edge used.
    ``marks`` (None: the space has none) gets the supersession rows of every scored memory (one read); a
    memory superseded for certain receives no bonus (a departure from Eq.4: an old fact is not revived
    through its neighbours)."""
    r = cfg.retrieval
    sources = [i for i, s in base.scores.items() if s > r.theta]
    nbrs = store.neighbours(space, sources) if sources else {}
    reached = {j for lst in nbrs.values() for j, _ in lst} - set(base.scores)
    if allowed is not None:   # spreading stays inside the filter too
        reached &= allowed
        nbrs = {i: [(j, w) for j, w in lst if j in allowed] for i, lst in nbrs.items()}
    if reached:
        base.join(reached)   # an edge may outlive its node by a moment (forgotten meanwhile)
    if marks is not None:
        marks.add(store.supersessions_for(base.scores))
    if marks:
        blocked = blocked_targets(marks, base.scores)
        if blocked:
            nbrs = {i: [(j, w) for j, w in lst if j not in blocked] for i, lst in nbrs.items()}
    spreads = spread_activation(base.scores, nbrs, r.beta, r.theta)
    return spreads, {(i, j): w for i, lst in nbrs.items() for j, w in lst}


def _memory_rows(store: Store, chosen: list[tuple[int, str]], base: _BaseScores, s_final: dict[int, float],
                 spreads: dict[int, Any], traced: dict[int, float], edge_w: dict[tuple[int, int], float]
                 ) -> list[dict[str, Any]]:
    """Stage 5: the chosen memories' full rows with their score trace, in the dual path's order."""
    memories = []
    rows = store.get_nodes([nid for nid, _ in chosen])
    for nid, path in chosen:
        node = rows.get(nid)
        if node is None:  # forgotten by another process since it was scored
            continue
        c, kw, tf = base.explain[nid]
        sp = spreads.get(nid)
        memories.append({
            "id": nid, "source_id": node["source_id"], "text": node["text"], "speaker": node["speaker"],
            "timestamp": node["ts"], "time_str": node["time_str"], "session": node["session"],
            "path": path, "score": s_final[nid], "base_score": base.scores[nid],
            "cos": c, "keyword": kw, "time_factor": tf,
            "spread_bonus": sp.bonus if sp else 0.0, "trace_bonus": traced.get(nid, 0.0),
            "spread_from": [{"id": i, "contribution": w, "weight": edge_w.get((i, nid))}
                            for i, w in (sp.sources if sp else [])],
            "superseded_by": None, "invalid_at": None, "supersession_status": None, "supersedes": [],
        })
    return memories


def _replies(store: Store, space: Space, base: _BaseScores, memories: list[dict[str, Any]],
             s_final: dict[int, float], n: int, allowed: set[int] | None, changes: _Changes
             ) -> list[dict[str, Any]]:
    """Stage 5a: the turn that answers. A recalled memory that asks for a reply (a question, a complaint:
    :func:`hela_cli.text.turns.asks_for_reply`) brings the next turn of its session, placed right below it
    with a score just under its own (path ``reply``), at most ``n`` of them, best-ranked askers first. The
    list keeps its length: what falls off its end makes room (a departure from Eq.5, docs/retrieval.md)."""
    budget = len(memories)
    have = {m["id"] for m in memories}
    askers = [m for m in memories if asks_for_reply(m["text"])]
    nxt = store.next_turns(space.id, [m["id"] for m in askers]) if askers else {}
    bring: dict[int, int] = {}   # asker -> its reply
    for m in askers:
        j = nxt.get(m["id"])
        if j is None or j in have or j in bring.values() or (allowed is not None and j not in allowed):
            continue
        bring[m["id"]] = j
        if len(bring) == n:
            break
    if not bring:
        return memories
    ids = base.join(set(bring.values()) - set(base.scores)) | (set(bring.values()) & set(base.scores))
    if changes.as_of is not None:
        ids = {j for j in ids if base.nodes[j]["ts"] <= changes.as_of}
    score = {j: s_final.get(j, base.scores[j]) for j in ids}
    out: list[dict[str, Any]] = []
    for m in memories:
        out.append(m)
        j = bring.get(m["id"])
        if j in ids:
            score[j] = min(score[j], m["score"] - 1e-6)
            out.extend(_memory_rows(store, [(j, "reply")], base, score, {}, {}, {}))
    return out[:budget]


def _successors(store: Store, base: _BaseScores, memories: list[dict[str, Any]], marks: Marks,
                changes: _Changes, budget: int, fill: list[tuple[int, str]],
                rows: Callable[[list[tuple[int, str]]], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Stage 5b: each recalled memory superseded for certain brings its successor into the result, above it,
    every memory with its marks (:func:`hela_cli.facts.recall.with_successors`); with
    ``current_only`` the ones superseded for certain then leave. A successor joins whatever the recall
    filters (speaker, session, a time window: the old memory is never shown without it), except one after
    ``as_of``, which did not exist then.

    The budget holds (issue 45): the result has at most ``budget`` memories (Eq.5's k + m); a successor
    brought in takes a place within it (the last memory leaves), never one past it, and a ``possible`` mark
    brings nothing in: it only places the newer of two recalled memories (or several) right above the older
    one when the question asks about what they share (a keyword of the question, not a speaker's name, in
    both). With ``current_only``, slots left free by the superseded memories go to ``fill`` (Eq.5 over the
    memories not superseded), in its order, after the others."""
    until = changes.as_of

    def load(ids: set[int]) -> list[dict[str, Any]]:
        ids = base.join(set(ids) - set(base.scores)) | (set(ids) & set(base.scores))
        keep = [(nid, "successor") for nid in sorted(ids) if until is None or base.nodes[nid]["ts"] <= until]
        return _memory_rows(store, keep, base, base.scores, {}, {}, {})

    q_kw = set(base.q_kw)

    def about(old: int, new: int) -> bool:
        """A possible mark moves its newer memory up only when the question asks about what the two share:
        a keyword of the question (not a speaker's name) in both."""
        a, b = base.nodes.get(old), base.nodes.get(new)
        if a is None or b is None:
            return False
        names = set(_speaker_keywords(a["speaker"] or "")) | set(_speaker_keywords(b["speaker"] or ""))
        return bool((q_kw - names) & set(a["keywords"]) & set(b["keywords"]))

    out = with_successors(memories, marks, load, store.supersessions_for, about)
    if changes.current_only:
        out = [m for m in out if not marks.superseded(m["id"])]
        have = {m["id"] for m in out}
        extra = [(nid, path) for nid, path in fill if nid not in have][:max(0, budget - len(out))]
        if extra:
            more = rows(extra)
            marks.add(store.supersessions_for([m["id"] for m in more]))
            for m in more:
                m.update(marks.fields(m["id"]))
            out += more
    return out[:budget]


def _semantic(store: Store, space: Space, q: np.ndarray, r: Any, changes: _Changes,
              changed: bool) -> list[dict[str, Any]]:
    """The top ``semantic_k`` semantic records by similarity; low-confidence traits are skipped. A record whose
    evidence holds a superseded memory is marked ``stale`` (with ``stale_evidence``); ``current_only`` skips
    it. ``changed``: the space has a supersession row (else no record can be stale: nothing is read)."""
    semantic: list[dict[str, Any]] = []
    if not store.count_semantic(space.id):
        return semantic
    hits = store.semantic_knn(space.id, q, r.semantic_k * 4)   # over-fetch: the rest keep their order
    sims = dict(hits)
    stale = store.stale_records(sims, changes.as_of) if changed else {}
    for rec in store.get_semantic([sid for sid, _ in hits]):
        conf = rec.get("confidence")
        if rec["kind"] == "trait" and conf is not None and conf < r.semantic_min_confidence:
            continue
        rec["stale"] = rec["id"] in stale
        rec["stale_evidence"] = stale.get(rec["id"], [])
        if rec["stale"] and changes.current_only:
            continue
        rec["similarity"] = sims[rec["id"]]
        semantic.append(rec)
        if len(semantic) == r.semantic_k:
            break
    return semantic


def learn_from_retrieval(store: Store, space: Space, res: Retrieval, cfg: Config) -> None:
    """The learning step of a retrieval, wherever it runs (:func:`retrieve` with ``learn``, or
    ``Memory.ask`` once the answer is there): Eq.1 over ``res.memories`` (:func:`learn_from_memories`),
    ``res.step`` set to the space's new step and ``res.timings_ms["learn"]`` to its time. Nothing without
    memories."""
    if not res.memories:
        return
    t0 = time.perf_counter()
    res.step = learn_from_memories(store, space, res.memories, cfg, when=time.time())
    res.timings_ms["learn"] = (time.perf_counter() - t0) * 1000


def learn_from_memories(store: Store, space: Space, memories: list[dict[str, Any]], cfg: Config,
                        when: float) -> int:
    """:func:`learn_from` for the memories of a retrieval (``Retrieval.memories``): their ids, S_base scores
    and which of them the spreading bonus brought in."""
    return learn_from(store, space, [m["id"] for m in memories], cfg, when=when,
                      scores={m["id"]: m["base_score"] for m in memories},
                      spread_in=[m["id"] for m in memories if m["path"] == "hebbian"],
                      superseded=[m["id"] for m in memories if m.get("superseded_by") is not None
                                  and m.get("supersession_status") == "superseded"])


def learn_from(store: Store, space: Space, node_ids: list[int], cfg: Config, when: float,
               scores: dict[int, float] | None = None, spread_in: list[int] | tuple[int, ...] = (),
               superseded: list[int] | tuple[int, ...] = ()) -> int:
    """Eq.1 after a retrieval, in one short write transaction. Returns the space's new step.

    ``scores`` (each memory's S_base) select and weight the reinforced pairs when ``hebbian.pair_margin`` or
    ``hebbian.eta_by_score`` is set (:func:`hela_cli.mechanics.dynamics.reinforcement`); without them every pair of
    the set is reinforced at ``eta`` (the paper). ``spread_in``: the memories the spreading bonus brought in
    (path ``hebbian``); with ``hebbian.learn_spread`` off they take no part in Eq.1 (an association that
    brought a memory in is not reinforced by that same retrieval). ``superseded``: memories a later one
    replaced (a departure from Eq.1, docs/retrieval.md "Facts that change"): they take no part in Eq.1, so
    recalling an old fact beside its successor never strengthens it over the successor. With
    ``hebbian.coretrieval`` off no pair is
    reinforced and the step does not advance (learning comes from feedback, :mod:`hela_cli.mechanics.feedback`); the
    access is still recorded."""
    h = cfg.hebbian
    ids = list(dict.fromkeys(node_ids))
    skip = (set() if h.learn_spread else set(spread_in)) | set(superseded)
    s_base = {i: (scores.get(i, 0.0) if scores is not None else 1.0) for i in ids if i not in skip}
    if scores is None:
        rates = reinforcement(s_base, h.eta)
    else:
        rates = reinforcement(s_base, h.eta, h.pair_margin, h.eta_by_score)
    with store.transaction(space=space.id):
        if not h.coretrieval:   # learning from feedback only (hela_cli.mechanics.feedback): the access is recorded
            store.touch_nodes(ids, when)
            return store.refresh_space(space).step
        fresh = store.advance_step(space.id, h.decay)   # every edge decays once (O(1))
        weights = store.edges_among(fresh, ids)
        # current weights already include this step's decay; Eq.1 is decay*w_prev + eta = w_now + eta
        updates = {p: hebbian_update(weights.get(p, 0.0), eta, 1.0, h.cap) for p, eta in rates.items()}
        if updates:
            store.set_edges(fresh, updates, h.decay)
        store.touch_nodes(ids, when)
    return fresh.step
