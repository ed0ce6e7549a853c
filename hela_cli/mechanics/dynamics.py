"""The paper's equations as pure functions (HeLa-Mem, arXiv 2604.16839). No I/O here.

=========  =====================================================================  =====================
Equation   Formula                                                                Function
=========  =====================================================================  =====================
Eq.1       ``w <- min(cap, decay*w + eta)`` for co-activated pairs, else decay*w  :func:`hebbian_update`
Eq.2       ``D(v) = sum_j w_vj``; hub if ``D(v) > delta_hub``                     :func:`hub_strength`
Eq.3       ``S_base = (cos + alpha*kw) * exp(-dt/tau)``                           :func:`base_activation`
Eq.4       ``S(j) = S_base(j) + beta * sum_i S_base(i) * w_ij`` (S_base(i)>theta)  :func:`spread_activation`
Eq.5       top-k by S_base  U  up to m more by S                                  :func:`dual_path`
Forget     ``sum w < delta_prune`` AND idle > delta_age AND never accessed         :func:`forget_reasons`
Links      cross-session prior edges from shared rare keywords (cold start)        :func:`keyword_partners`
Eq.1 pairs which pairs of the final set Eq.1 reinforces, and by how much          :func:`reinforcement`
Feedback   which pairs feedback on a recall strengthens / weakens (departure from Eq.1)  :func:`feedback_pairs`
Traces     flipped-path bonus from earlier similar queries to what they used             :func:`trace_bonus`
Traces     ... at most this many flipped slots for traces (departure, with feedback)      :func:`trace_slot_cap`
=========  =====================================================================  =====================
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

DAY = 86_400.0


# ----------------------------------------------------------------------------------- Eq.1
def hebbian_update(weight: float, eta: float = 0.02, decay: float = 0.995, cap: float = 1.0) -> float:
    """Eq.1 for one co-activated pair: ``min(cap, decay * weight + eta)``.

    Edges that are not co-activated only decay (``decay * weight``); hela applies that decay to every
    edge at once by advancing the space's step counter (see ``store.Store.advance_step``).
    """
    return min(cap, decay * weight + eta)


def coactivated_pairs(node_ids: Iterable[int]) -> list[tuple[int, int]]:
    """All unordered pairs ``(a, b)`` with ``a < b`` of the final retrieved set (Eq.1 co-activation)."""
    return list(itertools.combinations(sorted(set(node_ids)), 2))


def learned_share(weight: float, initial_now: float) -> float:
    """The part of an edge's current weight that Eq.1 added: ``max(0, w - initial_now) / w``, where
    ``initial_now`` is what the edge's weight at creation (a conversation link, 0 for an edge created by
    learning) has decayed to by now. Eq.1 only adds to the decayed weight, so the rest is the initial link."""
    if weight <= 0:
        return 0.0
    return min(1.0, max(0.0, weight - initial_now) / weight)


def reinforcement(s_base: Mapping[int, float], eta: float, margin: float = 0.0,
                  by_score: bool = False) -> dict[tuple[int, int], float]:
    """Which pairs of the final retrieved set Eq.1 reinforces, each with its learning rate.

    ``s_base`` maps every memory of the final set to its base activation (Eq.3). The paper reinforces every
    pair (``margin`` 0, ``by_score`` False: each pair gets ``eta``). With ``margin`` > 0 only memories whose
    ``S_base`` is at least ``margin`` times the set's highest take part: a memory that only filled a slot
    (far below the best match) learns no association. With ``by_score`` a pair's rate is
    ``eta * r_a * r_b`` with ``r = S_base / max S_base`` (clamped to [0, 1]): the strongest matches learn
    fastest. Returns ``{(a, b): eta_ab}`` with ``a < b``; pairs with rate 0 are left out."""
    if not s_base:
        return {}
    top = max(s_base.values())
    rel = {v: (min(1.0, max(0.0, s / top)) if top > 0 else 0.0) for v, s in s_base.items()}
    keep = sorted(v for v in s_base if margin <= 0 or (top > 0 and s_base[v] >= margin * top))
    out = {}
    for a, b in itertools.combinations(keep, 2):
        rate = eta * rel[a] * rel[b] if by_score else eta
        if rate > 0:
            out[(a, b)] = rate
    return out


# ----------------------------------------------------------------------------------- feedback (use signals)
def feedback_pairs(s_base: Mapping[int, float], used: Iterable[int], *, eta: float, anchors: int = 0,
                   anchor_eta: float = 0.0, spread_from: Mapping[int, Sequence[int]] | None = None,
                   depress: float = 0.0) -> tuple[dict[tuple[int, int], float], dict[tuple[int, int], float]]:
    """The learning rule for feedback on one retrieval (a departure from the paper's Eq.1, which reinforces
    every co-retrieved pair: here the caller says which retrieved memories it *used*).

    ``s_base`` maps every memory the retrieval returned to its base activation (Eq.3); ``used`` is the subset
    the caller used (ids outside ``s_base`` are ignored; the caller validates them). Returns
    ``(strengthen, weaken)``:

    * ``strengthen`` ``{(a, b): rate}`` (``a < b``), applied as Eq.1's increment ``w <- min(cap, w + rate)``:
      every pair of used memories at ``eta`` (they answered one question together), and each used memory
      with each of the ``anchors`` best memories of the retrieval by ``S_base`` that were not used (the
      question's strongest direct matches: a later question that finds them finds what this one used
      through Eq.4) at ``anchor_eta``. A pair in both groups takes the larger rate.
    * ``weaken`` ``{(a, b): factor}``: for each memory the spreading bonus brought in (``spread_from``: id ->
      the ids its bonus came from) that was *not* used, its edges to those sources keep ``1 - depress`` of
      their learned weight (:func:`depressed_weight`): the association brought in something useless.

    Empty ``used``: nothing is strengthened (only the weakening applies)."""
    ids = set(s_base)
    used_set = {u for u in used if u in ids}
    strengthen: dict[tuple[int, int], float] = {}

    def add(a: int, b: int, rate: float) -> None:
        if a == b or rate <= 0:
            return
        p = (min(a, b), max(a, b))
        strengthen[p] = max(strengthen.get(p, 0.0), rate)

    for a, b in itertools.combinations(sorted(used_set), 2):
        add(a, b, eta)
    if anchors > 0 and used_set:
        ranked = sorted((v for v in ids if v not in used_set), key=lambda v: (-s_base[v], v))[:anchors]
        for u in sorted(used_set):
            for v in ranked:
                add(u, v, anchor_eta)
    weaken: dict[tuple[int, int], float] = {}
    if depress > 0 and spread_from:
        for v, sources in spread_from.items():
            if v in used_set or v not in ids:
                continue
            for src in sources:
                if src != v:
                    weaken[(min(v, src), max(v, src))] = 1.0 - min(1.0, depress)
    return strengthen, weaken


def trace_bonus(similarities: Sequence[float], used: Sequence[Sequence[int]], weight: float,
                min_sim: float) -> dict[int, float]:
    """Use traces (feedback ties a question to what it used): an earlier recall whose query has cosine
    ``sim >= min_sim`` with the current query acts as an Eq.4 source for the memories it used, each getting
    ``weight * (sim - min_sim) / (1 - min_sim)`` (0 at the threshold, ``weight`` for the same question); a
    memory used by several similar recalls takes the largest. The bonus joins ``S`` on the flipped path only
    (``S_base`` and the k base slots are unchanged). ``similarities[i]`` belongs to ``used[i]``."""
    out: dict[int, float] = {}
    if weight <= 0 or min_sim >= 1.0:
        return out
    for sim, ids in zip(similarities, used):
        if sim < min_sim:
            continue
        b = weight * (sim - min_sim) / (1.0 - min_sim)
        for v in ids:
            if b > out.get(v, 0.0):
                out[v] = b
    return out


def trace_slot_cap(raw: Mapping[int, float], s_base: Mapping[int, float], k: int, slots: int) -> dict[int, float]:
    """Use traces take at most ``slots`` of the flipped path's m slots: of the memories :func:`trace_bonus`
    points at (``raw``: id -> bonus) that are candidates (in ``s_base``) and not among the top ``k`` by
    ``S_base`` (those hold a base slot anyway), only the ``slots`` with the largest bonus keep it (ties break
    on id); the others compete on spreading alone. Each kept one still has to beat the spreading candidates
    on ``S`` (it does not take a slot by right), and the other flipped slots stay with the associations and
    conversation links that filled them before feedback. ``slots`` <= 0: no cap (all candidates keep their
    bonus). Returns ``{id: bonus}``."""
    ranked = sorted(s_base, key=lambda v: (-s_base[v], v))
    base = set(ranked[:k])
    out = {v: b for v, b in raw.items() if b > 0 and v in s_base and v not in base}
    if slots > 0 and len(out) > slots:
        out = {v: out[v] for v in sorted(out, key=lambda v: (-out[v], v))[:slots]}
    return out


def depressed_weight(weight: float, prior: float, keep: float) -> float:
    """An edge's weight after weakening: its fixed ``prior`` (an ingest link) stays, its learned part
    ``weight - prior`` is multiplied by ``keep``: ``prior + max(0, weight - prior) * keep``."""
    return prior + max(0.0, weight - prior) * max(0.0, keep)


# ----------------------------------------------------------------------------------- cold-start links
def keyword_partners(docs: Mapping[int, tuple[str | None, Sequence[str]]], new: Iterable[int], top_k: int,
                     min_score: float, max_df: int | None = None,
                     n: int | None = None) -> dict[tuple[int, int], float]:
    """Cold-start associations (the paper's future work): prior edges between memories of *different*
    sessions that share rare keywords, so Eq.4 can reach evidence in another session before any question
    co-activated the two.

    ``docs`` maps every memory of the space to ``(session, keywords)``; ``new`` are the memories to link
    (all of them for an existing space). A pair's score is the sum over the keywords both hold of the
    keyword's :func:`idf` in the space (``n = len(docs)``). Only keywords held by at most ``max_df``
    memories count (default ``max(2, sqrt(n))``: a rare keyword; common words would link everything and
    cost work quadratic in their frequency). Each new memory keeps its ``top_k`` partners with score
    ``>= min_score`` (ties broken by id); a pair proposed from both ends appears once. Returns
    ``{(a, b): score}`` with ``a < b``.

    ``n`` (default ``len(docs)``): the number of memories in the space when ``docs`` holds only the memories
    that share a rare keyword with ``new``, each with only its rare keywords (every memory holding such a
    keyword must be there, so that a keyword's document frequency is counted right)."""
    n = len(docs) if n is None else n
    if top_k <= 0 or n < 2:
        return {}
    cap = max(2, int(math.sqrt(n))) if max_df is None else max_df
    postings: dict[str, list[int]] = {}
    for v, (_, kws) in docs.items():
        for t in set(kws):
            postings.setdefault(t, []).append(v)
    weight = {t: idf(len(vs), n) for t, vs in postings.items() if 2 <= len(vs) <= cap}
    out: dict[tuple[int, int], float] = {}
    for v in new:
        if v not in docs:
            continue
        session, kws = docs[v]
        score: dict[int, float] = {}
        for t in set(kws):
            w = weight.get(t)
            if w is None:
                continue
            for u in postings[t]:
                if u != v and docs[u][0] != session:
                    score[u] = score.get(u, 0.0) + w
        best = sorted((u for u, s in score.items() if s >= min_score), key=lambda u: (-score[u], u))[:top_k]
        for u in best:
            out[(min(u, v), max(u, v))] = score[u]
    return out


# ----------------------------------------------------------------------------------- Eq.2
def hub_strength(weights: Iterable[float]) -> float:
    """Eq.2 associative strength ``D(v) = sum_j w_vj`` over the node's current edge weights."""
    return float(sum(weights))


def is_hub(strength: float, delta_hub: float) -> bool:
    """Eq.2 hub test: ``D(v) > delta_hub``."""
    return strength > delta_hub


# ----------------------------------------------------------------------------------- Eq.3
def time_factor(dt_seconds: float, tau_days: float = 60.0) -> float:
    """``exp(-dt / tau)`` with ``dt`` clamped at 0 (memories "from the future" are not boosted)."""
    if tau_days <= 0:
        return 1.0
    return math.exp(-max(0.0, dt_seconds) / (tau_days * DAY))


def base_activation(cos: float, keyword_match: float, dt_seconds: float, alpha: float = 1.0,
                    tau_days: float = 60.0, time_decay: bool = True) -> float:
    """Eq.3 base activation ``S_base(v) = (cos(q, e_v) + alpha * keyword_match) * exp(-dt / tau)``."""
    factor = time_factor(dt_seconds, tau_days) if time_decay else 1.0
    return (cos + alpha * keyword_match) * factor


# ----------------------------------------------------------------------------------- Eq.4
@dataclass
class Spread:
    score: float                               # S(v)
    bonus: float                               # S(v) - S_base(v)
    sources: list[tuple[int, float]]           # (neighbour i, its contribution beta*S_base(i)*w_ij)


def spread_activation(s_base: Mapping[int, float], neighbours: Mapping[int, Sequence[tuple[int, float]]],
                      beta: float = 0.1, theta: float = 0.6) -> dict[int, Spread]:
    """Eq.4 spreading: ``S(v_j) = S_base(v_j) + beta * sum_i S_base(v_i) * w_ij``.

    ``neighbours[i]`` lists ``(j, w_ij)`` for source nodes ``i``; only sources with ``S_base(i) > theta``
    spread. Every node of ``s_base`` gets an entry; a node reached only by spreading must already have
    its own ``S_base`` in ``s_base`` (the caller computes it exactly).
    """
    out = {v: Spread(score=s, bonus=0.0, sources=[]) for v, s in s_base.items()}
    for i, si in s_base.items():
        if si <= theta:
            continue
        for j, w in neighbours.get(i, ()):
            if j == i or j not in out or w <= 0:
                continue
            contribution = beta * si * w
            out[j].score += contribution
            out[j].bonus += contribution
            out[j].sources.append((i, contribution))
    for sp in out.values():
        sp.sources.sort(key=lambda t: -t[1])
    return out


# ----------------------------------------------------------------------------------- Eq.5
def session_cover(s_base: Mapping[int, float], session_of: Mapping[int, Any], k: int, decay: float) -> list[int]:
    """Coverage (a departure: Eq.5 takes the top-k by S_base): the k base memories picked one at a time by
    ``S_base * decay ** n``, n the memories of the same session already picked, so a second session's best
    memory can outrank a third of one session's. ``decay`` 1 (or no sessions): the top-k by S_base. Ties
    break on node id."""
    if decay >= 1.0:
        return sorted(s_base, key=lambda v: (-s_base[v], v))[:k]
    left = sorted(s_base, key=lambda v: (-s_base[v], v))
    taken: dict[Any, int] = {}
    out: list[int] = []
    while left and len(out) < k:
        best = max(left, key=lambda v: (s_base[v] * decay ** taken.get(session_of.get(v), 0)
                                        if session_of.get(v) is not None else s_base[v], -v))
        out.append(best)
        left.remove(best)
        sess = session_of.get(best)
        if sess is not None:
            taken[sess] = taken.get(sess, 0) + 1
    return out


def dual_path(s_base: Mapping[int, float], s_spread: Mapping[int, float], k: int = 10,
              m: int = 3, base: Sequence[int] | None = None) -> list[tuple[int, str]]:
    """Eq.5 dual-path selection: top-``k`` by ``S_base`` ("base"), then up to ``m`` nodes not among them,
    ranked by spread activation ``S`` (the flipped path). Ties break on node id.

    As in the paper, the flipped slots are filled by ``S`` even when no spreading bonus reached them, so
    a configuration with spreading off is compared at the same memory budget (k + m). A flipped node is
    labelled "hebbian" only when the spreading bonus brought it in - it is not among the top ``k + m`` by
    ``S_base`` -, else "base" (it would hold that slot by base activation alone)."""
    ranked = sorted(s_base, key=lambda v: (-s_base[v], v))
    base = list(base)[:k] if base is not None else ranked[:k]
    by_base = set(ranked[:k + m]) | set(base)
    chosen = set(base)
    rest = sorted((v for v in s_spread if v not in chosen), key=lambda v: (-s_spread[v], v))
    flipped = rest[:m]
    return [(v, "base") for v in base] + [(v, "base" if v in by_base else "hebbian") for v in flipped]


# ----------------------------------------------------------------------------------- forgetting
def forget_reasons(total_weight: float, idle_seconds: float, access_count: int, delta_prune: float,
                   delta_age_days: float) -> dict[str, bool]:
    """The three forgetting criteria, each True when it holds. Forget only if all three hold."""
    return {
        "weak": total_weight < delta_prune,
        "old": idle_seconds > delta_age_days * DAY,
        "unused": access_count == 0,
    }


def should_forget(total_weight: float, idle_seconds: float, access_count: int, delta_prune: float,
                  delta_age_days: float) -> bool:
    return all(forget_reasons(total_weight, idle_seconds, access_count, delta_prune, delta_age_days).values())


# ----------------------------------------------------------------------------------- Eq.3 inputs (departures)
# Measured departures that change what goes *into* Eq.3 (the departures table of docs/retrieval.md); Eq.3 itself is above.
def idf(df: int, n: int) -> float:
    """BM25's inverse document frequency ``ln(1 + (n - df + 0.5) / (df + 0.5))``: > 0, larger for rarer terms.

    A term found in every memory weighs ~0.4/ln-units, a term found in one memory of 1,000 ~6.5."""
    n = max(int(n), 0)
    df = min(max(int(df), 0), n)
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def weighted_keyword_match(query_keywords: Sequence[str], node_keywords: Iterable[str],
                           weights: Mapping[str, float]) -> float:
    """The share of the query's keywords found in the node, each keyword counted with its weight
    (e.g. :func:`idf`): ``sum_{t in q & node} w_t / sum_{t in q} w_t``. Equal weights give the paper's
    plain share; a missing weight counts 1. 0 when the query has no keywords."""
    q = set(query_keywords)
    total = sum(weights.get(t, 1.0) for t in q)
    if total <= 0:
        return 0.0
    have = set(node_keywords)
    return sum(weights.get(t, 1.0) for t in q if t in have) / total


def fuse_probes(cos: float, focus_cos: float, weight: float, use_max: bool = False) -> float:
    """The cosine Eq.3 reads when recall probes with the question and with its focus words
    (:func:`hela_cli.text.question_focus.focus_text`): ``max(cos, focus_cos)`` with ``use_max``, else
    ``(1 - weight) * cos + weight * focus_cos`` (weight 0: the question's cosine, the paper)."""
    if use_max:
        return max(cos, focus_cos)
    return cos if weight <= 0 else (1.0 - weight) * cos + weight * focus_cos


def soft_keyword_match(exact: int, best: Sequence[float], n_query: int, tau: float) -> float:
    """keyword_match with a word-level semantic match (a departure; ``retrieval.soft_keywords``): the share
    of the query's ``n_query`` keywords, each one the memory holds counting 1 (``exact``) and each other one
    its best cosine with a keyword of the memory (``best``) when that reaches ``tau``, else 0."""
    if n_query <= 0:
        return 0.0
    return (exact + sum(b for b in best if b >= tau)) / n_query


def person_factor(about_named: bool, weight: float) -> float:
    """Soft person prior of a question that names some, not all, of a space's speakers, a factor on Eq.3 like
    :func:`window_factor`: 1 for a memory spoken by a person the question names or mentioning one, else
    ``1 - weight``. No named person, or weight 0: 1 (the caller passes ``about_named`` True)."""
    return 1.0 if about_named or weight <= 0 else 1.0 - weight


def window_factor(ts: float, window: Sequence[float] | None, weight: float, slack_days: float = 14.0) -> float:
    """Soft time prior of a question that names a time (:func:`hela_cli.text.query_time.question_window`), a
    factor on Eq.3 in place of the global ``exp(-dt/tau)``: ``(1 - weight) + weight * match`` where match is
    1 for memories from the window's start to ``slack_days`` after its end (people talk about an event
    on the day or in the days after it) and falls as ``exp(-gap / scale)`` with the gap in days outside
    it, ``scale = max(slack_days, 1)``. A relative window (``(start, end, slack_days, scale_days, weight)``:
    "3 days ago", "yesterday") brings its own slack (0: the question says when it happened), fall-off
    (``scale_days``: half a day for "3 days ago", two for "last week") and weight (a question that says when
    asks for that time). No window or weight 0: 1."""
    if window is None:
        return 1.0
    start, end = window[0], window[1]
    own_slack = window[2] if len(window) > 2 else None
    own_scale = window[3] if len(window) > 3 else None
    weight = window[4] if len(window) > 4 and window[4] is not None else weight
    if weight <= 0:
        return 1.0
    slack = max(0.0, slack_days if own_slack is None else own_slack)
    scale = own_scale if own_scale else max(slack, 1.0)
    end = end + slack * DAY
    gap = start - ts if ts < start else (ts - end if ts > end else 0.0)
    match = math.exp(-(gap / DAY) / scale) if gap > 0 else 1.0
    return (1.0 - weight) + weight * match
