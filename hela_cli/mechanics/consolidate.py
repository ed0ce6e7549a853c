"""Reflective consolidation (paper section 3.3, "Hebbian distillation"): hubs -> clusters -> semantic records.

1. **Hubs** (Eq.2): every node whose associative strength ``D(v) = sum_j w_vj`` over its *current* edge
   weights exceeds ``consolidation.delta_hub`` (:func:`hela_cli.mechanics.dynamics.hub_strength` / ``is_hub``).
2. **Cluster**: the hub plus its strongest neighbours, at most ``max_neighbours`` with
   ``w >= neighbour_min_weight`` (:func:`select_cluster`).
3. **Plan** (:func:`plan_consolidation`, no model, no writes; this is ``--dry-run``): a hub is distilled
   when it was never distilled, or when its cluster changed by at least ``redistill_change`` (Jaccard
   distance to the cluster distilled last time, :func:`cluster_change`). A hub whose cluster is already
   almost entirely (all but less than ``redistill_change``) contained in clusters distilled before is
   *covered*: nothing new would be learnt, so no model call is spent on it (status ``covered: hub N``).
   Hubs that failed before are retried by an explicit run, but not by auto-consolidation unless their
   cluster changed.
4. **Distil** with the chat model and prompt A.1 (:func:`hela_cli.answering.prompts.distill_messages`) under a
   JSON schema derived from :data:`hela_cli.answering.prompts.DISTILL_SCHEMA` (llama.cpp turns it into a grammar,
   so the output is always JSON of that shape; evidence ids are restricted to the cluster's ids and the
   number/length of items is sized to the ``max_tokens`` budget). A reply cut short by the token budget
   is salvaged up to its last complete item. Validation (:func:`validate_distillation`): evidence must
   cite cluster turns, a record's words must be grounded in its evidence turns (else its evidence is
   re-pointed to the cluster turns that do contain them, or the record is rejected), trait confidence is
   clipped to [0, 1], dates are made absolute against the evidence turns' timestamps
   (:func:`resolve_relative`, :func:`normalise_date`). Nothing valid -> one retry with a tighter schema;
   still nothing -> the hub's status becomes ``failed: reason`` and the run goes on (reported, never
   silently dropped, never a crash). A chat model that can follow a longer prompt (an ``agent:`` route or
   an ``openai:`` server) gets the hubs in batches instead, ``max_hubs_per_run`` clusters per call, through
   the deferred judge's batch prompt (``consolidate(batch=...)``, :func:`hela_cli.mechanics.judge.
   distill_batch`): the same validation, one call per batch, no retry.
5. **Store**: each record is embedded; a record at cosine >= ``merge_similarity`` to an existing record of
   the space merges its evidence into it instead of being inserted. One short write transaction per hub;
   model calls and embeddings happen outside transactions.

Status values in the ``hubs`` table: ``ok``, ``covered: hub N``, ``failed: reason``.
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from hela_cli.config import Config
from hela_cli.mechanics.dynamics import is_hub
from hela_cli.errors import HelaError
from hela_cli.text.keywords import keywords, stem
from hela_cli.text.redact import redact
from hela_cli.models import ChatModel, Embedder
from hela_cli.text.dates import MONTH_NAMES, WEEKDAY_NAMES, YEAR_RE, has_relative, normalise_date, resolve_relative
from hela_cli.answering.prompts import DISTILL_SCHEMA, distill_messages
from hela_cli.store import Space, Store

KINDS = {"traits": "trait", "facts": "fact", "knowledge": "knowledge"}
TOKENS_PER_ITEM = 70          # rough budget of one JSON item (subject, one-sentence text, date, ids)
PROMPT_MARGIN_TOKENS = 64     # chat template overhead kept free in the context window
MIN_WORDS = 3                 # a record text needs at least this many words
GROUNDED_SHARE = 0.5          # ... and at least this share of its content words must occur in the cluster


# ----------------------------------------------------------------------------------- hubs (pure)
def detect_hubs(strengths: Mapping[int, tuple[float, int]], delta_hub: float) -> list[tuple[int, float, int]]:
    """Eq.2 over ``{node: (D(v), degree)}``: ``[(node, D, degree)]`` of hubs, strongest first (ties: id)."""
    hubs = [(n, d, deg) for n, (d, deg) in strengths.items() if is_hub(d, delta_hub)]
    return sorted(hubs, key=lambda t: (-t[1], t[0]))


def select_cluster(hub: int, neighbours: Iterable[tuple[int, float]], min_weight: float,
                   max_neighbours: int) -> list[int]:
    """The hub followed by its strongest neighbours (``w >= min_weight``, at most ``max_neighbours``)."""
    best: dict[int, float] = {}
    for j, w in neighbours:
        if j != hub and w >= min_weight:
            best[j] = max(w, best.get(j, 0.0))
    ranked = sorted(best, key=lambda j: (-best[j], j))[:max(0, max_neighbours)]
    return [hub, *ranked]


def cluster_change(old: Sequence[int], new: Sequence[int]) -> float:
    """Share of the cluster that changed: Jaccard distance ``1 - |old & new| / |old | new|``."""
    a, b = set(old), set(new)
    if not a and not b:
        return 0.0
    return 1.0 - len(a & b) / len(a | b)


def novelty(cluster: Sequence[int], distilled: set[int]) -> float:
    """Share of the cluster's nodes not yet part of any distilled cluster."""
    if not cluster:
        return 0.0
    return sum(1 for n in cluster if n not in distilled) / len(cluster)


@dataclass
class HubPlan:
    node_id: int
    strength: float                    # D(v), Eq.2
    degree: int
    cluster: list[int]                 # hub first, then neighbours strongest first
    weights: dict[int, float]          # neighbour -> current edge weight to the hub
    action: str                        # distill | redistill | retry | covered | unchanged | skip-failed
    change: float | None = None        # cluster change vs. the last distilled cluster (None: new hub)
    covered_by: int | None = None      # for "covered": a hub whose distilled cluster overlaps most
    previous_status: str | None = None

    @property
    def needs_model(self) -> bool:
        return self.action in ("distill", "redistill", "retry")

    def as_dict(self) -> dict[str, Any]:
        return {"hub": self.node_id, "strength": round(self.strength, 6), "degree": self.degree,
                "cluster": self.cluster, "action": self.action,
                "change": None if self.change is None else round(self.change, 4),
                "covered_by": self.covered_by, "previous_status": self.previous_status}


def plan_hubs(hubs: Sequence[tuple[int, float, int]], clusters: Mapping[int, list[int]],
              weights: Mapping[int, dict[int, float]], state: Mapping[int, Mapping[str, Any]],
              redistill_change: float, retry_failed: bool = True) -> list[HubPlan]:
    """Decide per hub what to do (pure). ``state`` is the stored ``hubs`` bookkeeping.

    Hubs are taken strongest first; a hub planned for distillation is assumed to succeed, so weaker hubs
    inside its cluster are *covered*. Without ``retry_failed`` (auto-consolidation) clusters that failed
    before also count as covering, so a failing region is not re-sent to the model on every check."""
    def index(statuses: Callable[[str], bool]) -> tuple[set[int], dict[int, int]]:
        nodes: set[int] = set()
        owner: dict[int, int] = {}
        for hid, st in sorted(state.items()):
            if statuses(st["status"]):
                nodes.update(st["cluster"])
                for n in st["cluster"]:
                    owner.setdefault(n, hid)
        return nodes, owner

    def top_owner(cluster: Sequence[int], owner: Mapping[int, int]) -> int | None:
        counts: dict[int, int] = {}
        for n in cluster:
            if n in owner:
                counts[owner[n]] = counts.get(owner[n], 0) + 1
        return max(counts, key=lambda h: (counts[h], -h)) if counts else None

    distilled, owners = index(lambda s: s == "ok")
    failed_nodes, failed_owners = index(lambda s: s.startswith("failed"))
    plans = []
    for hub, d, deg in hubs:
        cluster = clusters[hub]
        st = state.get(hub)
        p = HubPlan(hub, d, deg, cluster, dict(weights.get(hub, {})), "distill",
                    previous_status=st["status"] if st else None)
        plans.append(p)
        if st is not None:
            p.change = cluster_change(st["cluster"], cluster)
            failed = st["status"].startswith("failed")
            if p.change < redistill_change:
                if not failed:
                    p.action = "unchanged"
                    continue
                if not retry_failed:
                    p.action = "skip-failed"
                    continue
                p.action = "retry"
            else:
                p.action = "redistill"
        if novelty(cluster, distilled) < redistill_change:
            p.action, p.covered_by = "covered", top_owner(cluster, owners)
            continue
        if not retry_failed and novelty(cluster, distilled | failed_nodes) < redistill_change:
            p.action, p.covered_by = "skip-failed", top_owner(cluster, {**failed_owners, **owners})
            continue
        distilled.update(cluster)  # assume success: later hubs inside this cluster are covered by it
        for n in cluster:
            owners.setdefault(n, hub)
    return plans


def plan_consolidation(store: Store, space: Space, cfg: Config, retry_failed: bool = True) -> list[HubPlan]:
    """Hubs of the space (Eq.2 over ``store.edge_strengths``) with their clusters and planned action."""
    c = cfg.consolidation
    strengths = store.edge_strengths(space)
    hubs = detect_hubs(strengths, c.delta_hub)
    if not hubs:
        return []
    nbrs = store.neighbours(space, [h for h, _, _ in hubs])
    clusters, weights = {}, {}
    for hub, _, _ in hubs:
        clusters[hub] = select_cluster(hub, nbrs.get(hub, []), c.neighbour_min_weight, c.max_neighbours)
        w = dict(nbrs.get(hub, []))
        weights[hub] = {j: w[j] for j in clusters[hub][1:]}
    return plan_hubs(hubs, clusters, weights, store.hub_state(space.id), c.redistill_change, retry_failed)


# ----------------------------------------------------------------------------------- schema
def distill_schema(cluster: Sequence[int], max_tokens: int, compact: bool = False) -> dict[str, Any]:
    """:data:`DISTILL_SCHEMA` tightened for one cluster: evidence ids restricted to the cluster (at least
    one each), string lengths bounded and item counts sized so a full reply fits ``max_tokens``.
    ``compact`` (the retry) halves the item budget and shortens texts."""
    schema = copy.deepcopy(DISTILL_SCHEMA)
    props = schema["properties"]
    budget = max(3, (max_tokens - 20) // TOKENS_PER_ITEM)
    if compact:
        budget = max(3, budget // 2)
    shares = {"traits": 0.3, "facts": 0.45, "knowledge": 0.25}
    for key, share in shares.items():
        arr = props[key]
        arr["maxItems"] = max(1, min(arr.get("maxItems", budget), int(budget * share + 0.5)))
        item = arr["items"]["properties"]
        item["evidence"]["items"] = {"type": "integer", "enum": sorted(set(int(n) for n in cluster))}
        item["evidence"]["minItems"] = 1
        item["evidence"]["maxItems"] = 3
        item["text"]["maxLength"] = 100 if compact else 160
        if "subject" in item:
            item["subject"]["maxLength"] = 40
        if "date" in item:
            item["date"]["maxLength"] = 40
        if "confidence" in item:
            item["confidence"] = {"type": "number", "minimum": 0, "maximum": 1}
    props["facts"]["minItems"] = 1  # a hub always yields at least one grounded statement to check
    return schema


def salvage_json(raw: str) -> tuple[dict[str, Any] | None, bool]:
    """Parse the model's reply; a reply cut off by the token budget is repaired up to its last complete
    array item (the grammar fixes the key order, so missing trailing arrays are simply empty).

    Returns ``(object or None, salvaged)``."""
    try:
        obj = json.loads(raw)
        return (obj if isinstance(obj, dict) else None), False
    except (json.JSONDecodeError, ValueError):
        pass
    stack: list[str] = []
    in_str = esc = False
    cut: tuple[int, list[str]] | None = None
    for i, ch in enumerate(raw):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append(ch)
            if ch == "[" and len(stack) == 2:
                cut = (i + 1, list(stack))
        elif ch in "}]":
            if not stack:
                break
            stack.pop()
            if ch == "}" and stack == ["{", "["]:
                cut = (i + 1, list(stack))
    if cut is None:
        return None, False
    pos, open_ = cut
    text = raw[:pos] + "".join("]" if c == "[" else "}" for c in reversed(open_))
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return None, False
    return (obj if isinstance(obj, dict) else None), True


# ----------------------------------------------------------------------------------- dates
# date parsing and relative-date resolution live in hela_cli/text/dates.py
_MONTH_WORDS = {stem(m) for m in MONTH_NAMES} | {stem(d) for d in WEEKDAY_NAMES}


# ----------------------------------------------------------------------------------- validation
@dataclass
class Record:
    kind: str                          # trait | fact | knowledge
    subject: str | None
    text: str
    confidence: float | None
    date: str | None
    evidence: list[int]
    notes: list[str] = field(default_factory=list)

    def embed_text(self) -> str:
        return f"{self.subject}: {self.text}" if self.subject else self.text

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "text": self.text, "confidence": self.confidence,
                "date": self.date, "evidence": self.evidence, "notes": self.notes}


_LIST_MARK = re.compile(r"^(?:\d{1,2}[.)]|[-*\u2022])\s+")  # "1. ", "- " in front of a record's text


def _repetitive(text: str) -> bool:
    words = text.lower().split()
    if len(words) >= 6 and len(set(words)) / len(words) < 0.4:
        return True
    if re.search(r"(.{2,12}?)\1{4,}", text):  # "x.json.json.json.json.json"
        return True
    # a phrase said over and over: "You can't live without family. You can't live without family. ..."
    grams = Counter(" ".join(words[i:i + 4]) for i in range(len(words) - 3))
    return bool(grams) and max(grams.values()) >= 3


def validate_distillation(obj: Mapping[str, Any], turns: Mapping[int, Mapping[str, Any]],
                          hub: int) -> tuple[list[Record], list[dict[str, Any]]]:
    """Check and repair the model's records against the cluster ``turns`` (``{id: node}``).

    Returns ``(accepted records, rejected [{kind, text, reason}])``. Rules: text non-empty, at least
    MIN_WORDS words (a leading list mark dropped), not degenerate repetition (also a 4-word phrase three
    times), some content beyond speaker names, numbers and dates, at least GROUNDED_SHARE of its content words (dates aside)
    found in the cluster's turns (a small model's world knowledge is not memory); evidence = cited ids that
    are cluster turns; the record's
    content words must occur in its evidence turns - otherwise the evidence is re-pointed to the cluster
    turns sharing the most words with it, and a record sharing none is rejected as ungrounded; cited turns
    sharing no word are dropped, and the cluster turn sharing the most words is added when it shares more
    than every cited one; the same text twice (under two kinds) is kept once; trait
    subjects must be a speaker of the cluster (else the speaker of the evidence turn); confidence clipped
    to [0, 1]; relative dates resolved against the evidence turn that contains them.
    """
    speakers = {t.get("speaker") for t in turns.values() if t.get("speaker")}
    kw = {nid: set(keywords(f"{t.get('speaker') or ''} {t['text']}")) for nid, t in turns.items()}
    years = {datetime.fromtimestamp(t["ts"], tz=timezone.utc).year for t in turns.values() if t.get("ts") is not None}
    for t in turns.values():
        years.update(int(y) for y in YEAR_RE.findall(t["text"]))
    accepted: list[Record] = []
    rejected: list[dict[str, Any]] = []
    seen: set[str] = set()
    for key, kind in KINDS.items():
        items = obj.get(key, [])
        if not isinstance(items, list):
            rejected.append({"kind": kind, "text": None, "reason": f"'{key}' is not a list"})
            continue
        for item in items:
            if not isinstance(item, Mapping):
                rejected.append({"kind": kind, "text": None, "reason": "not an object"})
                continue
            # the model's words are stored text like a turn's: redacted (it saw redacted memories, but may
            # still write a secret's shape)
            text = redact(_LIST_MARK.sub("", " ".join(str(item.get("text") or "").split())))
            reason = None
            if len(text.split()) < MIN_WORDS:
                reason = "text too short"
            elif _repetitive(text):
                reason = "degenerate repetition"
            if reason:
                rejected.append({"kind": kind, "text": text, "reason": reason})
                continue
            notes: list[str] = []
            cited: list[int] = []
            outside = 0
            for e in item.get("evidence") or []:
                try:
                    e = int(e)
                except (TypeError, ValueError):
                    outside += 1
                    continue
                if e not in turns:
                    outside += 1
                elif e not in cited:
                    cited.append(e)
            if outside:
                notes.append(f"{outside} evidence id(s) outside the cluster dropped")
            subject = (str(item.get("subject") or "").strip() or None) if kind != "knowledge" else None
            words = {w for w in keywords(text) if not w.isdigit() and w not in _MONTH_WORDS}
            words -= {w for s in speakers for w in keywords(s or "")}
            if not words:  # "13(27 June 2023) Melanie": the turn header copied, nothing said
                rejected.append({"kind": kind, "text": text, "reason": "nothing beyond names and dates"})
                continue
            stated = words & set().union(*kw.values())
            if words and len(stated) / len(words) < GROUNDED_SHARE:
                rejected.append({"kind": kind, "text": text, "reason": "mostly not stated in the cluster's turns"})
                continue
            overlap = {nid: len(words & kw[nid]) for nid in turns}
            if not cited or not any(overlap[n] for n in cited):
                best = max(overlap.values(), default=0)
                if best == 0:
                    rejected.append({"kind": kind, "text": text, "reason": "not grounded in the cluster's turns"})
                    continue
                cited = sorted(n for n, v in overlap.items() if v == best)[:3]
                notes.append("evidence re-pointed to the turns that contain its words")
            else:
                cited = [n for n in cited if overlap[n]]
                best_turn = max(overlap, key=lambda n: (overlap[n], -n))
                if best_turn not in cited and overlap[best_turn] > max(overlap[n] for n in cited):
                    cited.append(best_turn)
                    notes.append("evidence completed with the turn that states it")
            if kind == "trait" and subject not in speakers:
                subject = turns[cited[0]].get("speaker") or subject
            confidence = None
            if kind == "trait":
                try:
                    confidence = float(item.get("confidence", 0.5))
                except (TypeError, ValueError):
                    confidence = 0.5
                if confidence != confidence:  # NaN
                    confidence = 0.5
                confidence = min(1.0, max(0.0, confidence))
            # dates: against the evidence turn that holds the relative phrase, else the earliest one
            ev_turns = sorted((turns[n] for n in cited), key=lambda t: t.get("ts") or 0)
            ref = next((t for t in ev_turns if has_relative(t["text"])), ev_turns[0])
            ref_ts = ref.get("ts") or 0.0
            date = None
            if has_relative(text):
                text, date = resolve_relative(text, ref_ts)
                notes.append("relative date resolved")
            if kind == "fact":
                model_date = normalise_date(str(item.get("date") or ""), ref_ts, years)
                if item.get("date") and model_date is None:
                    notes.append(f"date {str(item.get('date'))[:40]!r} dropped (unparseable or ungrounded)")
                date = model_date or date
                if date is None:
                    relative_turns = [t for t in ev_turns if has_relative(t["text"])]
                    if len(relative_turns) == 1:
                        date = resolve_relative(relative_turns[0]["text"], relative_turns[0].get("ts") or 0.0)[1]
                        notes.append("date taken from the evidence turn's relative phrase")
            else:
                date = None  # only facts carry a date; the text keeps the resolved phrase
            sig = text.lower()
            if sig in seen:  # the same statement under another kind: keep the first
                continue
            seen.add(sig)
            accepted.append(Record(kind, subject, text, confidence, date, sorted(cited), notes))
    return accepted, rejected


# ----------------------------------------------------------------------------------- distillation
@dataclass
class Distillation:
    records: list[Record]
    rejected: list[dict[str, Any]]
    attempts: int
    salvaged: bool
    error: str | None                  # None when the hub produced at least one valid record
    raw: list[str]


def _fit_turns(chat: ChatModel, turns: list[dict[str, Any]], max_tokens: int) -> list[dict[str, Any]]:
    """Shorten the turns' text so prompt A.1 plus the generation budget fits the context window."""
    n_ctx = getattr(chat, "n_ctx", 0) or 0
    if n_ctx <= 0:
        return turns
    limit = 2000
    while True:
        msgs = distill_messages(turns)
        used = sum(chat.count_tokens(m["content"]) + 4 for m in msgs) + max_tokens + PROMPT_MARGIN_TOKENS
        if used <= n_ctx or limit < 40:
            return turns
        limit //= 2
        turns = [{**t, "text": t["text"][:limit] + ("..." if len(t["text"]) > limit else "")} for t in turns]


def distill_cluster(chat: ChatModel, turns: Mapping[int, Mapping[str, Any]], hub: int, max_tokens: int,
                    temperature: float = 0.0) -> Distillation:
    """Prompt A.1 for one cluster, schema-constrained; validate; one retry with a tighter schema."""
    ordered = [dict(t) for t in turns.values()]
    raws: list[str] = []
    rejected: list[dict[str, Any]] = []
    error = "no attempt"
    salvaged_any = False
    for attempt in (1, 2):
        compact = attempt == 2
        fitted = _fit_turns(chat, ordered, max_tokens)
        schema = distill_schema(list(turns), max_tokens, compact=compact)
        try:
            raw = chat.generate(distill_messages(fitted), max_tokens=max_tokens, temperature=temperature,
                                json_schema=schema)
        except HelaError as e:
            raws.append("")
            error = f"model error: {e.message}"
            continue
        raws.append(raw)
        obj, salvaged = salvage_json(raw)
        if obj is None:
            error = "reply is not valid JSON" + (" (cut off by max_tokens)" if raw.strip() else " (empty)")
            continue
        salvaged_any = salvaged_any or salvaged
        records, rej = validate_distillation(obj, turns, hub)
        rejected.extend(rej)
        if records:
            return Distillation(records, rejected, attempt, salvaged, None, raws)
        error = ("no valid record: " + "; ".join(sorted({r["reason"] for r in rej}))) if rej \
            else "the model returned no records"
    return Distillation([], rejected, 2, salvaged_any, error, raws)


def _resolve(x: Any) -> Any:
    """Models may be given as zero-argument factories so they load only when a hub needs them."""
    return x() if callable(x) and not hasattr(x, "generate") and not hasattr(x, "embed") else x


def store_records(store: Store, space: Space, hub: int, records: Sequence[Record], vectors: np.ndarray,
                  merge_similarity: float) -> tuple[list[int], list[int]]:
    """Insert records, or merge the evidence of near-duplicates (cosine >= ``merge_similarity``) into
    the existing record. Inside a transaction. Returns ``(inserted ids, merged-into ids)``."""
    inserted, merged = [], []
    for rec, vec in zip(records, vectors):
        hits = store.semantic_knn(space.id, vec, 1) if store.count_semantic(space.id) else []
        if hits and hits[0][1] >= merge_similarity:
            store.add_evidence(hits[0][0], rec.evidence)
            merged.append(hits[0][0])
        else:
            inserted.append(store.insert_semantic(space.id, rec.kind, rec.subject, rec.text, rec.confidence,
                                                  rec.date, hub, rec.evidence, vec))
    return inserted, merged


def consolidate(store: Store, space: Space, cfg: Config, embedder: Embedder | Callable[[], Embedder] | None = None,
                chat: ChatModel | Callable[[], ChatModel] | None = None, *, dry_run: bool = False,
                retry_failed: bool = True, max_hubs: int | None = None,
                progress: Callable[[int, int, HubPlan], None] | None = None,
                batch: Callable[[ChatModel, Embedder, list[HubPlan]],
                                tuple[dict[int, dict[str, Any]], int]] | None = None,
                per_hub_fallback: bool = False) -> dict[str, Any]:
    """Run (or with ``dry_run`` only plan) consolidation of one space. Never raises for a hub's failure:
    it is recorded as ``failed: reason`` and reported. Returns the ``hela consolidate --json`` object.

    ``batch(chat, embedder, plans)``: distil several hubs in one model call, store what it gives and
    return each hub's report entry and the calls made (the caller's batched prompt, for a chat model that
    can follow it: :func:`hela_cli.mechanics.judge.distill_batch`); the hubs go to it
    ``consolidation.max_hubs_per_run`` at a time instead of one prompt A.1 per hub. ``per_hub_fallback``:
    the hubs a batch failed (a model server too small to follow the batched prompt) are distilled again
    with prompt A.1, one call each (for a server; an agent route's calls are budgeted)."""
    t0 = time.perf_counter()
    c = cfg.consolidation
    space = store.refresh_space(space)
    plans = plan_consolidation(store, space, cfg, retry_failed=retry_failed)
    report: dict[str, Any] = {"space": space.name, "step": space.step, "dry_run": dry_run,
                              "hubs": [p.as_dict() for p in plans]}
    todo = [p for p in plans if p.needs_model]
    deferred = 0
    if max_hubs is not None and len(todo) > max_hubs:  # strongest hubs first; the rest wait for next time
        deferred = len(todo) - max_hubs
        todo = todo[:max_hubs]
    counts = {"hubs_found": len(plans), "distilled": 0, "failed": 0, "covered": 0, "unchanged": 0,
              "skipped_failed": 0, "pending": 0, "records_inserted": 0, "records_merged": 0,
              "records_rejected": 0, "model_calls": 0}
    counts["deferred"] = deferred
    if dry_run:
        for p in plans:
            key = {"covered": "covered", "unchanged": "unchanged", "skip-failed": "skipped_failed"}.get(p.action)
            if key:
                counts[key] += 1
        counts["to_distill"] = len(todo)
        report.update(counts, seconds=round(time.perf_counter() - t0, 3))
        return report

    chat_model = _resolve(chat) if todo else None
    emb = _resolve(embedder) if todo else None
    entries = {e["hub"]: e for e in report["hubs"]}
    size = max(1, c.max_hubs_per_run)
    for i in range(0, len(todo), size) if batch is not None else ():
        chunk = todo[i:i + size]
        if progress:
            progress(i, len(todo), chunk[0])
        t1 = time.perf_counter()
        done, calls = batch(chat_model, emb, chunk)
        counts["model_calls"] += calls
        for p in chunk:
            entry = entries[p.node_id]
            entry.update(done.get(p.node_id) or {"status": "skipped: not in the batch"})
            entry.setdefault("inserted", [])
            entry.setdefault("merged_into", [])
            entry["seconds"] = round((time.perf_counter() - t1) / len(chunk), 3)
            status = entry["status"]
            counts["distilled"] += status == "ok"
            counts["failed"] += status.startswith("failed")
            counts["records_inserted"] += len(entry["inserted"])
            counts["records_merged"] += len(entry["merged_into"])
            counts["records_rejected"] += len(entry.get("rejected") or [])
    again = todo if batch is None else []
    if batch is not None and per_hub_fallback:
        again = [p for p in todo if entries[p.node_id]["status"].startswith("failed")]
        counts["failed"] -= len(again)
        for p in again:
            entries[p.node_id]["batch_status"] = entries[p.node_id]["status"]
    for i, p in enumerate(again):
        if progress:
            progress(i, len(todo), p)
        entry = entries[p.node_id]
        t1 = time.perf_counter()
        read_at = time.time()
        turns = store.get_nodes(p.cluster)
        ordered = {n: turns[n] for n in p.cluster if n in turns}
        if p.node_id not in ordered:  # forgotten by another process since planning
            entry.update(status="skipped: the hub was forgotten meanwhile")
            continue
        dist = distill_cluster(chat_model, ordered, p.node_id, c.max_tokens)
        counts["model_calls"] += len(dist.raw)
        counts["records_rejected"] += len(dist.rejected)
        entry.update(attempts=dist.attempts, salvaged=dist.salvaged, rejected=dist.rejected,
                     records=[r.as_dict() for r in dist.records])
        inserted: list[int] = []
        merged: list[int] = []
        if dist.error is None:
            try:
                vectors = emb.embed([r.embed_text() for r in dist.records])
            except HelaError as e:
                dist.error = f"embedding failed: {e.message}"
        status = ""
        with store.transaction(space=space.id):
            # a memory of the cluster deleted or edited since it was read: what was distilled from its old
            # text is not written (hela delete / edit: store/correct.py)
            if store.changed_since(p.cluster, read_at):
                status = "skipped: a memory of its cluster was deleted or edited meanwhile"
            elif dist.error is None:
                inserted, merged = store_records(store, space, p.node_id, dist.records, vectors, c.merge_similarity)
                store.set_hub_state(space.id, p.node_id, p.cluster, store.refresh_space(space).step, "ok")
                status = "ok"
                counts["distilled"] += 1
            else:
                status = f"failed: {dist.error}"
                store.set_hub_state(space.id, p.node_id, p.cluster, store.refresh_space(space).step, status)
                counts["failed"] += 1
        counts["records_inserted"] += len(inserted)
        counts["records_merged"] += len(merged)
        entry.update(status=status, inserted=inserted, merged_into=merged,
                     seconds=round(time.perf_counter() - t1, 3))
    if progress and todo:
        progress(len(todo), len(todo), todo[-1])
    # covered / unchanged hubs: bookkeeping only, in the run's last short transaction. A hub covered by
    # one that failed in this run stays unrecorded ("pending") and is planned afresh next time.
    failed_now = {p.node_id for p in todo if entries[p.node_id]["status"].startswith("failed")}
    with store.transaction(space=space.id):
        for p in plans:
            entry = entries[p.node_id]
            if p.action == "covered" and p.covered_by in failed_now:
                entry["status"] = f"pending: covering hub {p.covered_by} failed"
                counts["pending"] += 1
            elif p.action == "covered":
                entry["status"] = f"covered: hub {p.covered_by}"
                store.set_hub_state(space.id, p.node_id, p.cluster, space.step, entry["status"])
                counts["covered"] += 1
            elif p.action == "skip-failed":
                entry["status"] = p.previous_status or f"skipped: overlaps failed hub {p.covered_by}"
                counts["skipped_failed"] += 1
            elif not p.needs_model:
                entry["status"] = p.previous_status
                counts["unchanged"] += 1
        store.set_consolidated_step(space.id, store.refresh_space(space).step)
    report.update(counts, seconds=round(time.perf_counter() - t0, 3))
    return report


def needs_auto(space: Space, cfg: Config) -> bool:
    """Auto-consolidation is due: enabled and ``auto_every`` learning steps since the last run."""
    c = cfg.consolidation
    return bool(c.auto) and c.auto_every > 0 and space.step - space.consolidated_step >= c.auto_every


__all__ = ["HubPlan", "Record", "consolidate", "detect_hubs", "select_cluster", "cluster_change", "plan_hubs",
           "plan_consolidation", "distill_schema", "salvage_json", "validate_distillation", "resolve_relative",
           "normalise_date", "needs_auto"]
