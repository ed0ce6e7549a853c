"""``hela bench longmemeval``: retrieval (and offline QA) evaluation on LongMemEval-S, as a library function.

Protocol (see docs/benchmarks/quality.md, section "LongMemEval-S, retrieval only"):

* every item has its own haystack (~50 sessions, ~500 turns) and one question; each item gets a fresh
  space in a temporary database (private 0700 directory, deleted afterwards), never the user's database;
* the haystack is ingested ONCE per item; every variant then runs on its own copy of that database file
  (learning writes edges, so variants must not share one), so a run of five variants costs one ingest.
  With ``cache_dir`` the ingested database is also kept on disk, keyed by item id, haystack content,
  embedder and ingest settings, and later runs (other variants, another ``--config`` with the same ingest
  settings) copy it instead of ingesting again;
* the question is asked with "now" = the item's ``question_date`` (Eq.3's Δt, ``--now`` semantics);
* only ``question`` reaches retrieval and answering: the gold fields (``answer``, ``answer_session_ids``,
  ``has_answer`` on turns, ``question_type``) are read for scoring only.

Metrics per question type and overall, at the variant's memory budget (k + m; baselines get k + m):

``session_recall_any``  1 if a session of ``answer_session_ids`` holds one of the retrieved memories
``session_recall_all``  1 if every ``answer_session_ids`` session does
``turn_recall``         share of the ``has_answer`` turns among the retrieved memories (items without such
                        turns are not scored)
``f1`` / ``em``         (with answers) token F1 (LoCoMo's normalisation and Porter stemming, multiset overlap)
                        and normalised exact match against ``answer``
``abstained``           (with answers, abstention items only) 1 if the answer abstains
                        (:data:`ABSTAIN_PHRASES`)

Abstention items (``question_id`` ending in ``_abs``: the haystack does not hold the answer) are excluded
from the recall and F1 / EM means and counted separately.

Resumability: as ``hela bench locomo``, ``records`` gets one JSON line per (item, variant); a rerun with the
same file skips what is there (an item whose variants are all recorded is not even ingested).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from hela_cli.bench.metrics import locomo_f1_score, normalize_answer, require_nltk
from hela_cli.bench.runner import (BASELINES, RecordWriter, Runner, fingerprint, load_records, retrieved,
                                   variant_config)
from hela_cli.config import Config
from hela_cli.errors import InputError, StoreError
from hela_cli.formats import Conversation, parse_date, parse_file
from hela_cli.ingest import embedding_texts, ingest_conversations

__all__ = ["QUESTION_TYPES", "ABSTAIN_PHRASES", "LmeItem", "load_items", "score_item", "summarize_lme",
           "abstains", "run_longmemeval"]

QUESTION_TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
                  "multi-session", "knowledge-update", "temporal-reasoning")

#: an answer that contains one of these (lower-cased) abstains
ABSTAIN_PHRASES = ("not mentioned", "did not mention", "didn't mention", "never mentioned", "no information",
                   "not enough information", "no record", "don't know", "do not know", "cannot answer",
                   "can't answer", "unknown")

#: per-record metric keys averaged in the summary
METRICS = ("session_recall_any", "session_recall_all", "turn_recall", "context_tokens", "f1", "em", "abstained")

#: bump when the layout of a cached item database changes
_CACHE_VERSION = 1

Progress = Callable[[int, int, str], None]


# ----------------------------------------------------------------------------------- items
@dataclass
class LmeItem:
    qid: str
    qtype: str
    question: str
    answer: str
    question_date: str | None
    now: float | None                 # question_date as epoch seconds: Eq.3's "now"
    conv: Conversation                # the haystack, as ``hela ingest`` parses it (no gold field in it)
    gold_sessions: list[str]          # stored session ids of answer_session_ids
    gold_turns: list[str]             # source ids of has_answer turns
    abstention: bool


def _raw_items(path: str | Path) -> list[dict[str, Any]]:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as e:  # parse_file read it already: only a race gets here
        raise InputError(f"{path}: cannot read ({e})") from None
    return raw if isinstance(raw, list) else [raw]


def load_items(path: str | Path) -> list[LmeItem]:
    """Parse a LongMemEval file: the haystacks through the ``longmemeval`` parser (what ``hela ingest``
    stores), the question and gold fields from the items. Every problem is one :class:`InputError` line."""
    convs = parse_file(path, "longmemeval")
    raw = _raw_items(path)
    items: list[LmeItem] = []
    for n, (conv, it) in enumerate(zip(convs, raw), start=1):
        place = f"{path}: item {n} ({conv.name})"
        question = it.get("question")
        if not isinstance(question, str) or not question.strip():
            raise InputError(f"{place}: no 'question' - not a LongMemEval benchmark item")
        qtype = it.get("question_type", "unknown")
        if not isinstance(qtype, str) or not qtype.strip():
            raise InputError(f"{place}: 'question_type' must be a non-empty string")
        answer = it.get("answer")
        if answer is None or isinstance(answer, (dict, list)):
            raise InputError(f"{place}: 'answer' must be a string or a number")
        qd = it.get("question_date")
        now = parse_date(qd) if isinstance(qd, str) else None  # validated by the parser
        answer_ids = it.get("answer_session_ids") or []
        if not isinstance(answer_ids, list) or not all(isinstance(a, str) for a in answer_ids):
            raise InputError(f"{place}: 'answer_session_ids' must be an array of strings")
        # stored session id of each raw session with turns (the parser renames repeated ids "<id>#2")
        stored = list(dict.fromkeys(t.session for t in conv.turns))
        raw_sessions = it["haystack_sessions"]
        with_turns = [k for k, s in enumerate(raw_sessions)
                      if any(isinstance(t.get("content"), str) and t["content"].strip() for t in s)]
        if len(with_turns) != len(stored):  # cannot happen with the parser's rules
            raise InputError(f"{place}: sessions do not line up with the parsed haystack")
        sid_of = dict(zip(with_turns, stored))
        raw_ids = it.get("haystack_session_ids")
        wanted = set(answer_ids)
        gold_sessions = [sid_of[k] for k in with_turns if raw_ids is not None and raw_ids[k] in wanted]
        gold_turns = [f"{sid_of[k]}:{ti}" for k in with_turns for ti, t in enumerate(raw_sessions[k])
                      if t.get("has_answer") is True and str(t.get("content") or "").strip()]
        items.append(LmeItem(str(conv.name), qtype.strip(), question.strip(), str(answer), qd, now, conv,
                             gold_sessions, gold_turns, str(conv.name).endswith("_abs")))
    return items


# ----------------------------------------------------------------------------------- scoring
def abstains(prediction: Any) -> bool:
    """Whether an answer declines to answer (contains one of :data:`ABSTAIN_PHRASES`)."""
    low = str(prediction or "").lower().replace("\u2019", "'")
    return any(p in low for p in ABSTAIN_PHRASES)


def exact_match(prediction: Any, gold: Any) -> float:
    """1.0 when both normalise (LoCoMo ``normalize_answer``) to the same non-empty string."""
    p, g = normalize_answer(prediction), normalize_answer(gold)
    return 1.0 if p and p == g else 0.0


def score_item(item: LmeItem, memories: Sequence[Mapping[str, Any]], prediction: str | None,
               retrieval_only: bool) -> dict[str, Any]:
    """The per-item metrics (None where a metric does not apply)."""
    out: dict[str, Any] = {m: None for m in METRICS if m != "context_tokens"}
    if not item.abstention:
        sessions = {m.get("session") for m in memories}
        ids = {m.get("source_id") for m in memories}
        gold = set(item.gold_sessions)
        if gold:
            out["session_recall_any"] = 1.0 if gold & sessions else 0.0
            out["session_recall_all"] = 1.0 if gold <= sessions else 0.0
        if item.gold_turns:
            out["turn_recall"] = sum(1 for t in item.gold_turns if t in ids) / len(item.gold_turns)
    if not retrieval_only:
        if item.abstention:
            out["abstained"] = 1.0 if abstains(prediction) else 0.0
        else:
            out["f1"] = locomo_f1_score(prediction or "", item.answer)
            out["em"] = exact_match(prediction or "", item.answer)
    return out


def _group(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"count": len(rows)}
    for m in METRICS:
        vals = [float(r[m]) for r in rows if r.get(m) is not None]
        out[m] = round(sum(vals) / len(vals), 6) if vals else None
        out[f"{m}_n"] = len(vals)
    return out


def summarize_lme(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per question type (known types first, in the benchmark's order), overall (abstention items count
    only in ``abstained``) and the abstention items on their own."""
    types = [t for t in QUESTION_TYPES if any(r["question_type"] == t for r in records)]
    types += sorted({r["question_type"] for r in records} - set(types))
    return {
        "per_type": {t: _group([r for r in records if r["question_type"] == t]) for t in types},
        "overall": _group(records) if records else None,
        "abstention": _group([r for r in records if r.get("abstention")]),
    }


# ----------------------------------------------------------------------------------- ingest once
def _cache_key(item: LmeItem, embedder: Any, cfg: Config) -> str:
    turns = [[t.speaker, t.text, t.timestamp, t.session, t.source_id] for t in item.conv.turns]
    payload = {"v": _CACHE_VERSION, "item": item.qid, "embedder": [embedder.model_id, int(embedder.dim)],
               "ingest": dataclasses.asdict(cfg.ingest),
               "supersession": [cfg.supersession.detect, cfg.supersession.candidates, cfg.supersession.min_similarity,
                                cfg.supersession.max_per_turn], "hebbian_decay": cfg.hebbian.decay,
               "turns": hashlib.sha256(json.dumps(turns, ensure_ascii=False).encode()).hexdigest()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:20]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80]


def _copy_db(src: Path, dst: Path) -> None:
    """Copy a closed database file (and its -wal, should one be left) to ``dst``."""
    shutil.copyfile(src, dst)
    wal = Path(f"{src}-wal")
    if wal.exists():
        shutil.copyfile(wal, Path(f"{dst}-wal"))
    os.chmod(dst, 0o600)


def _embed_tokens(item: LmeItem, embedder: Any, cfg: Config) -> int | None:
    """Tokens the embedder saw for this haystack (each text cut at the embedder's window)."""
    count = getattr(embedder, "count_tokens", None)
    if count is None:
        return None
    cap = int(getattr(embedder, "n_ctx", 0) or 0)
    total = 0
    for text in embedding_texts(item.conv.turns, range(len(item.conv.turns)), embedder, cfg):
        n = count(text)
        total += min(n, cap) if cap else n
    return total


# ----------------------------------------------------------------------------------- asking
class _LmeRunner(Runner):
    """``hela bench locomo``'s runner, asked at the item's question date (``now``), with LongMemEval's timings."""

    def ask(self, question: str) -> dict[str, Any]:
        if self.variant in BASELINES:  # no time in the baselines
            return super().ask(question)
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        prediction = None
        if self.retrieval_only:
            from hela_cli.answering.prompts import answer_messages

            res = self._retrieve(self.store, self.store.require_space(self.space), self.mem.embedder, question,
                                 self.cfg, now=self.now)
            timings["retrieval_ms"] = res.timings_ms.get("total", (time.perf_counter() - t0) * 1000)
            memories, semantic_n = res.memories, len(res.semantic)
            messages = answer_messages(question, res.memories, res.semantic)
            tokens = self.count_tokens("\n".join(m["content"] for m in messages))
        else:
            out = self.mem.ask(question, self.space, now=self.now, llm=True)
            memories, semantic_n, prediction = out["memories"], len(out["semantic"]), out["answer"]
            tokens = out["context_tokens"]
            tm = out["timings_ms"]
            gen = tm.get("generate") or 0.0
            timings["retrieval_ms"] = tm.get("total", 0.0) - gen - (tm.get("consolidate") or 0.0)
            timings["generate_ms"] = gen
        return {"memories": memories, "semantic": semantic_n, "prediction": prediction, "tokens": tokens,
                **{k: round(v, 2) for k, v in timings.items()}}


# ----------------------------------------------------------------------------------- run
def run_longmemeval(path: str | Path, *, variants: Sequence[str] = ("full",), limit: int | None = None,
                    per_type: int | None = None, item_ids: Sequence[str] | None = None, retrieval_only: bool = False, k: int | None = None, cfg: Config,
                    records: str | Path | None = None, cache_dir: str | Path | None = None,
                    progress: Progress | None = None, embedder: Any = None, chat: Any = None,
                    feedback: str = "none") -> dict[str, Any]:
    """Run LongMemEval on the items of ``path`` for each of ``variants``; returns the summary dict (what
    ``--json`` / ``--out`` give). ``item_ids`` keeps those items, in that order; ``per_type`` then keeps the
    first N items of each question type and ``limit`` the first N items. ``embedder`` / ``chat`` let a caller reuse loaded models.
    ``feedback``: simulated use signals as in :func:`hela_cli.bench.locomo.run_locomo` (a simulation; ``evidence`` = the
    ``has_answer`` turns retrieved), applied after the item's question is scored."""
    from hela_cli.bench.feedback import parse_feedback

    require_nltk()
    fb_kind, fb_p = parse_feedback(feedback)
    if fb_kind == "cite":
        raise InputError("--feedback cite: LongMemEval asks one question per haystack, so a citation could "
                         "only help that same question; use it with hela bench locomo")
    t_start = time.perf_counter()
    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    if per_type is not None and per_type < 1:
        raise InputError(f"--per-type must be at least 1, got {per_type}")
    variants = list(dict.fromkeys(variants))
    if not variants:
        raise InputError("--variant: no variant given")
    vcfgs, notes = _variant_configs(cfg, variants, k, fb_kind, feedback)
    if cache_dir is not None:
        cache = Path(cache_dir)
        if not cache.is_dir():
            raise InputError(f"--cache-dir: {cache} is not a directory")
    items = _select_items(load_items(path), path, item_ids, per_type, limit)
    fps = {v: {**fingerprint(vcfgs[v], v, retrieval_only, path, 0), "benchmark": "longmemeval"} for v in variants}
    done = _done_records(records, fps, {it.qid: it for it in items}, path)

    run = _LmeRun(cfg, vcfgs, fps, done, total=len(items) * len(variants), retrieval_only=retrieval_only,
                  records=records, cache_dir=cache_dir, progress=progress, models={"embedder": embedder, "chat": chat},
                  feedback=(fb_kind, fb_p))
    try:
        for item in items:
            run.item(item)
    finally:
        run.close()
    return _summary(run, path, items, cfg, retrieval_only, limit, per_type, notes, t_start)


def _variant_configs(cfg: Config, variants: list[str], k: int | None, fb_kind: str, feedback: str
                     ) -> tuple[dict[str, Config], list[str]]:
    """Each variant's configuration, and the run's notes."""
    vcfgs: dict[str, Config] = {}
    notes: list[str] = []
    for v in variants:
        vcfgs[v], vnotes = variant_config(cfg, v, k)
        notes.extend(vnotes)
    notes.append("one question per item: Eq.1 learning, forgetting and auto-consolidation act only after the "
                 "item's single retrieval, so full, no-learn, no-forget and no-reflect retrieve the same memories")
    if fb_kind != "none":
        notes.append(f"feedback {feedback} (simulation) is applied after each item's only question is scored, to "
                     f"that item's own memory: no later question is asked of it, so no score can change")
    notes.append("no consolidation runs before the question, so no semantic record exists and "
                 "retrieval.semantic_k has no effect here")
    return vcfgs, notes


def _select_items(items: list[LmeItem], path: str | Path, item_ids: Sequence[str] | None, per_type: int | None,
                  limit: int | None) -> list[LmeItem]:
    """``item_ids`` (in that order), then the first ``per_type`` of each question type, then the first ``limit``."""
    if item_ids:
        wanted = list(dict.fromkeys(i.strip() for i in item_ids if i and i.strip()))
        known = {it.qid: it for it in items}
        unknown = [i for i in wanted if i not in known]
        if unknown:
            raise InputError(f"{path}: unknown question_id{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(repr(u) for u in unknown)}")
        items = [known[i] for i in wanted]
    if per_type:
        kept: list[LmeItem] = []
        seen: dict[str, int] = {}
        for it in items:
            if seen.get(it.qtype, 0) < per_type:
                kept.append(it)
                seen[it.qtype] = seen.get(it.qtype, 0) + 1
        items = kept
    if limit:
        items = items[:limit]
    return items


def _done_records(records: str | Path | None, fps: Mapping[str, Any], by_qid: Mapping[str, LmeItem],
                  path: str | Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Resume: the records of this run by (item, variant); records of another run or question are refused."""
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if records is None:
        return done
    for rec in load_records(records):
        v = rec.get("variant")
        if v not in fps or rec.get("run") != fps[v]:
            raise InputError(f"{records}: holds records of a different run (variant {v!r}, settings "
                             f"{rec.get('run')}); this run is {list(fps.values())}. Use a new --records file")
        it = by_qid.get(rec["sample"])
        if it is not None and rec.get("question") != it.question:
            raise InputError(f"{records}: the record of item {rec['sample']} is for another question than "
                             f"{path} has; use a new --records file")
        done.setdefault((rec["sample"], v), rec)
    return done


class _LmeRun:
    """One LongMemEval run, item by item: the haystack ingested once (or copied from the cache), then each
    variant asked on its own copy of that database, scored and recorded, and only then its feedback applied.
    Holds the counters and results the summary reports."""

    def __init__(self, cfg: Config, vcfgs: dict[str, Config], fps: dict[str, Any],
                 done: dict[tuple[str, str], dict[str, Any]], *, total: int, retrieval_only: bool,
                 records: str | Path | None, cache_dir: str | Path | None, progress: Progress | None,
                 models: dict[str, Any], feedback: tuple[str, float | None]):
        self.cfg, self.vcfgs, self.fps, self.done, self.total = cfg, vcfgs, fps, done, total
        self.variants = list(vcfgs)
        self.retrieval_only, self.cache_dir, self.progress, self.models = retrieval_only, cache_dir, progress, models
        self.fb_kind, self.fb_p = feedback
        self.n_done = 0
        self.writer = RecordWriter(records)
        self.results: dict[str, list[dict[str, Any]]] = {v: [] for v in self.variants}
        self.per_item: dict[str, Any] = {}
        self.ing_turns = self.ing_chars = self.ing_tokens = 0
        self.ing_s = 0.0
        self.ingested = self.cached = self.asked = self.resumed = 0
        self.tmp_root = tempfile.mkdtemp(prefix="hela-bench-")  # 0700

    def close(self) -> None:
        self.writer.close()
        if self.models.get("counter") is not None:
            self.models["counter"].close()
        shutil.rmtree(self.tmp_root, ignore_errors=True)

    def item(self, item: LmeItem) -> None:
        """One item: its recorded variants taken over, the others asked on the ingested haystack."""
        from hela_cli.memory import Memory

        todo = [v for v in self.variants if (item.qid, v) not in self.done]
        for v in self.variants:
            if (item.qid, v) in self.done:
                self.results[v].append(self.done[(item.qid, v)])
                self.resumed += 1
                self.n_done += 1
        info: dict[str, Any] = {"question_type": item.qtype, "turns": len(item.conv.turns),
                                "sessions": len({t.session for t in item.conv.turns})}
        self.per_item[item.qid] = info
        if not todo:
            if self.progress:
                self.progress(self.n_done, self.total, item.qid)
            return
        if self.models["embedder"] is None:
            self.models["embedder"] = Memory(self.cfg).embedder  # loads the model only, opens no database
        base = self._ingested(item, info)
        for v in todo:
            rec = self._ask(item, v, base)
            self.writer.write(rec)
            self.results[v].append(rec)
            self.asked += 1
            self.n_done += 1
            if self.progress:
                self.progress(self.n_done, self.total, f"{item.qid}: {v}")
        if base.parent == Path(self.tmp_root):
            for p in (base, Path(f"{base}-wal"), Path(f"{base}-shm")):
                p.unlink(missing_ok=True)

    def _ingested(self, item: LmeItem, info: dict[str, Any]) -> Path:
        """The database file holding the item's ingested haystack: from the cache, else ingested now (and
        put in the cache when there is one)."""
        from hela_cli.store import Store

        cfg, emb, progress = self.cfg, self.models["embedder"], self.progress
        key = _cache_key(item, emb, cfg)
        base = Path(self.cache_dir) / f"{_safe(item.qid)}-{key}.db" if self.cache_dir is not None else None
        if base is not None and base.exists():
            self.cached += 1
            info["ingest"] = "cache"
            return base
        if progress:
            progress(self.n_done, self.total, f"{item.qid}: ingest 0/{len(item.conv.turns)} turns")
        target = Path(self.tmp_root) / "ingest.db"
        store = Store(target, vector_cache=cfg.retrieval.vector_cache)
        try:
            t0 = time.perf_counter()
            ingest_conversations(store, emb, [item.conv], cfg, space=item.qid, progress=(
                (lambda d, t: progress(self.n_done, self.total, f"{item.qid}: ingest {d}/{t} turns"))
                if progress else None))
            dt = time.perf_counter() - t0
        finally:
            store.close()
        tokens = _embed_tokens(item, emb, cfg)
        self.ing_s += dt
        self.ing_turns += len(item.conv.turns)
        self.ing_chars += sum(len(t.text) for t in item.conv.turns)
        self.ing_tokens += tokens or 0
        self.ingested += 1
        info.update(ingest="ingested", ingest_s=round(dt, 2), embed_tokens=tokens)
        if base is None:
            return target
        part = base.with_name(base.name + ".part")
        _copy_db(target, part)
        os.replace(part, base)
        for p in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
            p.unlink(missing_ok=True)
        return base

    def _ask(self, item: LmeItem, v: str, base: Path) -> dict[str, Any]:
        """Variant ``v`` on its own copy of the ingested database: the question retrieved (and answered),
        scored, then its simulated feedback applied; returns the record."""
        from hela_cli.bench.feedback import simulated_used
        from hela_cli.mechanics.feedback import apply_feedback, retrieval_record
        from hela_cli.memory import Memory
        from hela_cli.store import Store

        vcfg, emb, models = self.vcfgs[v], self.models["embedder"], self.models
        work = Path(self.tmp_root) / f"{_safe(v)}.db"
        _copy_db(base, work)
        store = Store(work, vector_cache=vcfg.retrieval.vector_cache)
        try:
            sp = store.get_space(item.qid)
            if sp is None or store.count_nodes(sp.id) != len(item.conv.turns):
                raise StoreError(f"{base}: the ingested database of item {item.qid} is incomplete "
                                 f"(delete it and rerun)")
            mem = Memory(vcfg, store=store, embedder=emb, chat=models["chat"])
            if not self.retrieval_only:
                models["chat"] = mem.chat
            if models.get("counter") is None:  # one tokenizer for the whole run (the chat model's)
                models["counter"] = Memory(vcfg, store=Store(":memory:"), embedder=emb, chat=models["chat"])
            runner = _LmeRunner(mem, item.qid, v, self.retrieval_only, models["counter"].count_tokens, now=item.now)
            out = runner.ask(item.question)  # the question only: no gold field reaches retrieval
            scores = score_item(item, out["memories"], out["prediction"], self.retrieval_only)
            used: list[int] = []
            if self.fb_kind != "none" and v not in BASELINES and out["memories"]:   # after scoring
                used = simulated_used(self.fb_kind, self.fb_p, out["memories"], item.gold_turns, str(item.answer),
                                      item.question, seed=f"{item.qid}:{v}")
                apply_feedback(store, store.require_space(item.qid), retrieval_record(out["memories"]),
                               used, vcfg, when=time.time())
        finally:
            store.close()
            for p in (work, Path(f"{work}-wal"), Path(f"{work}-shm")):
                p.unlink(missing_ok=True)
        return {"run": self.fps[v], "sample": item.qid, "qa_index": 0, "variant": v,
                "question": item.question, "question_type": item.qtype, "abstention": item.abstention,
                "question_date": item.question_date, "gold": item.answer,
                "gold_sessions": item.gold_sessions, "gold_turns": item.gold_turns,
                "prediction": out["prediction"],
                "retrieved": [{**r, "session": m.get("session")}
                              for r, m in zip(retrieved(out["memories"]), out["memories"])],
                "semantic": out["semantic"], "context_tokens": out["tokens"],
                **scores, **({"used": [m["source_id"] for m in out["memories"] if m["id"] in set(used)]}
                             if self.fb_kind != "none" else {}),
                "retrieval_ms": out.get("retrieval_ms"), "generate_ms": out.get("generate_ms")}


def _summary(run: _LmeRun, path: str | Path, items: list[LmeItem], cfg: Config, retrieval_only: bool,
             limit: int | None, per_type: int | None, notes: list[str], t_start: float) -> dict[str, Any]:
    """The summary dict of a finished run: per variant, per question type and overall; ingest figures."""
    order = {it.qid: n for n, it in enumerate(items)}
    out_variants: dict[str, Any] = {}
    for v in run.variants:
        recs = sorted(run.results[v], key=lambda r: order.get(r["sample"], 0))
        vcfg = run.vcfgs[v]
        ret_ms = [r["retrieval_ms"] for r in recs if r.get("retrieval_ms") is not None]
        gen_ms = [r["generate_ms"] for r in recs if r.get("generate_ms") is not None]
        out_variants[v] = {
            "variant": v, "k": vcfg.retrieval.k, "m": vcfg.retrieval.m, "budget": vcfg.retrieval.k + vcfg.retrieval.m,
            "questions": len(recs), **summarize_lme(recs),
            "retrieval_ms_median": _median(ret_ms), "generate_ms_median": _median(gen_ms),
            "fingerprint": run.fps[v]["config"],
        }
    ing_s, ing_turns, ing_tokens = run.ing_s, run.ing_turns, run.ing_tokens
    return {
        "benchmark": "longmemeval",
        "file": str(path),
        "retrieval_only": retrieval_only,
        "items": [it.qid for it in items],
        "limit": limit,
        "per_type": per_type,
        "variants": out_variants,
        "per_item": run.per_item,
        "ingest": {
            "ingested": run.ingested, "cached": run.cached, "turns": ing_turns, "chars": run.ing_chars,
            "embed_tokens": ing_tokens, "seconds": round(ing_s, 2),
            "turns_per_s": round(ing_turns / ing_s, 2) if ing_s else None,
            "tokens_per_s": round(ing_tokens / ing_s, 1) if ing_s and ing_tokens else None,
        },
        "models": {"embedder": cfg.models.embedder, "chat": None if retrieval_only else cfg.models.chat},
        "config": {"retrieval": dataclasses.asdict(cfg.retrieval), "ingest": dataclasses.asdict(cfg.ingest),
                   "hebbian": dataclasses.asdict(cfg.hebbian)},
        "timing": {"seconds": round(time.perf_counter() - t_start, 2), "asked": run.asked, "resumed": run.resumed},
        "notes": list(dict.fromkeys(notes)),
    }


def _median(xs: Sequence[float]) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    mid = len(s) // 2
    return round(s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2, 2)
