"""``hela bench locomo``: the LoCoMo evaluation, as a library function (no typer / rich here).

Protocol (see BENCHMARKS.md):

* each selected conversation is ingested into its own fresh space, in a temporary database file created
  in a private (0700) temporary directory and deleted afterwards - never the user's database - unless a
  database path is given explicitly;
* its questions are then asked in dataset order with learning on, so the Hebbian graph evolves from
  question to question as in the paper;
* per question we record the retrieved episodic memories (dia_ids, path, scores), LoCoMo evidence recall
  (all / base path / flipped path, the flipped part split into memories whose spreading bonus came mostly
  from learned weight or from the conversation links of ingest), the context size of prompt A.2 in
  chat-model tokens and, unless ``retrieval_only``, the answer of the chat model with A-Mem F1 / BLEU-1 and
  LoCoMo's own F1.

Variants are ablations of the same code path, obtained through configuration only:

=============== =========================================================================================
``full``        the configured defaults
``no-spreading``  ``retrieval.spreading = False`` (Eq.4 off; the m flipped slots are filled by S_base)
``no-reflect``  ``consolidation.auto = False`` and ``retrieval.semantic_k = 0``
``no-forget``   no forgetting (``full`` applies ``hela_cli.mechanics.forget`` every ``forget_every`` questions)
``no-learn``    ``retrieval.learn = False`` (no Eq.1 update: the graph keeps its ingest edges)
``cosine``      baseline: plain top-(k+m) nodes by embedding cosine (``Store.knn``), no learning
``bm25``        baseline: plain top-(k+m) nodes by BM25 (the space's statistics) on the question's keywords, no learning
=============== =========================================================================================

Baselines get ``k + m`` memories, the full variant's context budget, so recall compares at equal budget.

Resumability: with ``records`` every question is appended to a JSONL file (flushed and fsynced). A later
run with the same file skips the (sample, question index) pairs already there. A conversation that was
only partly done is re-ingested into a fresh space and the learning of its done questions is replayed in
order (retrieval with learning on, no answer generation) before it continues, so the graph is in the same
state as in an uninterrupted run.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from hela_cli.bench.metrics import (aggregate, amem_bleu1, amem_f1, evidence_ids, evidence_recall, gold_answer,
                                    locomo_f1, require_nltk)
from hela_cli.bench.runner import (BASELINES, VARIANTS, RecordWriter, Runner, fingerprint, load_records,
                                   retrieved, variant_config)
from hela_cli.config import Config
from hela_cli.errors import InputError, StoreError
from hela_cli.formats import Conversation, parse_file
from hela_cli.ingest import ingest_conversations

__all__ = ["VARIANTS", "BASELINES", "CATEGORY_NAMES", "run_locomo", "variant_config", "load_records",
           "summarize"]

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

#: per-question metric keys averaged in the summary
METRICS = ("recall", "recall_base", "recall_flipped", "recall_learned", "recall_link", "context_tokens", "amem_f1",
           "amem_bleu1", "locomo_f1")

Progress = Callable[[int, int, str], None]


def _forgetting() -> Callable[..., dict[str, Any]] | None:
    """``hela_cli.mechanics.forget.forget`` when the forgetting module is available, else None."""
    try:
        from hela_cli.mechanics.forget import forget
    except ImportError:
        return None
    return forget


# ----------------------------------------------------------------------------------- selection
def _select(convs: list[Conversation], path: str | Path, samples: Sequence[str] | None) -> list[Conversation]:
    convs = [c for c in convs if c.qa]
    if not convs:
        raise InputError(f"{path}: no conversation with questions ('qa') - not a LoCoMo benchmark file")
    if not samples:
        return convs
    names = [c.name for c in convs]
    wanted = list(dict.fromkeys(s.strip() for s in samples if s and s.strip()))
    unknown = [s for s in wanted if s not in names]
    if unknown:
        raise InputError(f"{path}: unknown sample id{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(repr(u) for u in unknown)} (available: {', '.join(map(str, names))})")
    return [c for c in convs if c.name in wanted]


def question_category(qa: Mapping[str, Any]) -> int | None:
    try:
        return int(qa.get("category"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


# ----------------------------------------------------------------------------------- scoring
def _spread_attribution(memories: Sequence[Mapping[str, Any]], initial: Mapping[tuple[int, int], float],
                        factor: float, fixed: Mapping[tuple[int, int], float] | None = None
                        ) -> tuple[list[str], list[str]]:
    """source_ids of the ``hebbian`` memories (brought in by the spreading bonus) whose bonus came mostly from
    learned weight, and of those whose bonus came mostly from initial edges (conversation links made at
    ingest): each source's contribution is split by :func:`hela_cli.mechanics.dynamics.learned_share`, with the
    edge's ingest weight ``initial`` decayed by ``factor`` (``decay ** step``), except its ``fixed`` prior part
    (``ingest.fixed_links``), which does not decay."""
    from hela_cli.mechanics.dynamics import learned_share

    learned_ids, link_ids = [], []
    for m in memories:
        if m.get("path") != "hebbian" or not m.get("source_id"):
            continue
        learned = link = 0.0
        for src in m.get("spread_from") or []:
            w = src.get("weight")
            if w is None:
                continue
            pair = (min(m["id"], src["id"]), max(m["id"], src["id"]))
            prior = fixed.get(pair, 0.0) if fixed else 0.0
            share = learned_share(w, prior + (initial.get(pair, 0.0) - prior) * factor)
            learned += src["contribution"] * share
            link += src["contribution"] * (1.0 - share)
        (learned_ids if learned > link else link_ids).append(m["source_id"])
    return learned_ids, link_ids


def _score(qa: Mapping[str, Any], memories: Sequence[Mapping[str, Any]], prediction: str | None,
           retrieval_only: bool, attribution: tuple[list[str], list[str]] = ([], [])) -> dict[str, Any]:
    cat = question_category(qa)
    gold = gold_answer(qa)
    ev = qa.get("evidence")
    all_ids = [m.get("source_id") for m in memories if m.get("source_id")]
    base_ids = [m.get("source_id") for m in memories if m.get("path") == "base" and m.get("source_id")]
    flipped_ids = [m.get("source_id") for m in memories if m.get("path") != "base" and m.get("source_id")]
    recall = evidence_recall(ev, all_ids)
    out: dict[str, Any] = {
        "recall": recall,
        "recall_base": evidence_recall(ev, base_ids),
        # flipped ids are disjoint from base ids, so recall = recall_base + recall_flipped
        "recall_flipped": evidence_recall(ev, flipped_ids),
        # of the flipped recall: memories the spreading bonus brought in mostly through learned weight /
        # mostly through the conversation links of ingest
        "recall_learned": evidence_recall(ev, attribution[0]),
        "recall_link": evidence_recall(ev, attribution[1]),
        "amem_f1": None, "amem_bleu1": None, "locomo_f1": None,
    }
    if not retrieval_only:
        out["amem_f1"] = amem_f1(prediction, gold)
        out["amem_bleu1"] = amem_bleu1(prediction, gold)
        out["locomo_f1"] = locomo_f1(prediction, gold, cat) if cat in CATEGORY_NAMES else None
    return out


def _group(g: Mapping[str, Any]) -> dict[str, Any]:
    means = g["means"]
    out: dict[str, Any] = {"count": g["count"]}
    for name in METRICS:
        v = means.get(name)
        out[name] = None if v is None else round(v, 6)
    rec, fl = means.get("recall"), means.get("recall_flipped")
    out["flipped_share"] = round(fl / rec, 6) if rec and fl is not None else None
    out["recall_scored"] = g["counts"].get("recall", 0)
    return out


def summarize(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-category (1-5), overall (categories 1-4, as the paper reports) and overall_all (1-5) means."""
    rows = [{"category": r["category"], **{m: r.get(m) for m in METRICS}}
            for r in records if r.get("category") is not None]
    if not rows:
        return {"per_category": {}, "overall": None, "overall_all": None}
    agg = aggregate(rows)
    return {
        "per_category": {str(c): {"name": CATEGORY_NAMES.get(c, str(c)), **_group(g)}
                         for c, g in agg["per_category"].items()},
        "overall": _group(agg["overall"]),
        "overall_all": _group(agg["overall_all"]),
    }


# ----------------------------------------------------------------------------------- run
def run_locomo(path: str | Path, *, samples: Sequence[str] | None = None, limit: int | None = None,
               retrieval_only: bool = False, variant: str = "full", k: int | None = None, cfg: Config,
               db: str | Path | None = None, records: str | Path | None = None,
               progress: Progress | None = None, embedder: Any = None, chat: Any = None,
               forget_every: int = 50, passes: int = 1,
               categories: Sequence[int] | None = None, feedback: str = "none") -> dict[str, Any]:
    """Run the LoCoMo benchmark; returns the summary dict (also what ``--json`` / ``--out`` give).

    ``limit`` caps the questions asked *per conversation* (the first N in dataset order). ``db`` keeps the
    spaces in that database instead of temporary ones (each sample's space must not exist there yet).
    ``embedder`` / ``chat`` let a caller reuse loaded models (tests); by default they load from ``cfg``.
    ``progress(done, total, label)`` is called as questions complete (resumed ones included).
    ``forget_every``: the hela variants except ``no-forget`` apply forgetting (``hela_cli.mechanics.forget``) to the
    conversation's space after every N questions (0: never).
    ``passes`` > 1: test-retest - each conversation's questions are asked in dataset order, then all of them
    again on the same (learning) memory, ``passes`` times; records carry their ``pass``, the summary's main
    figures are pass 1's and ``by_pass`` has every pass.
    ``categories``: score (and answer) only questions of these LoCoMo categories; the others are still asked
    in their place without an answer (as a resumed question is replayed), so learning, consolidation and
    forgetting see the same sequence of questions as a run over all categories.
    ``feedback``: ``none|evidence|answer|noisy:P``, simulated use signals (:mod:`hela_cli.bench.feedback`,
    labelled simulation): each question is retrieved and scored first, then its simulated feedback is applied
    (:func:`hela_cli.mechanics.feedback.apply_feedback`), so no question profits from its own answer. Records carry
    ``used`` and, in pass 1, ``overlap`` (its evidence overlaps an earlier question's); the summary has
    ``by_overlap``.
    """
    from hela_cli.bench.feedback import parse_feedback

    require_nltk()
    fb_kind, fb_p = parse_feedback(feedback)
    if fb_kind != "none" and variant in BASELINES:
        raise InputError(f"--feedback {feedback}: the {variant} baseline does not learn; use a hela variant")
    if fb_kind == "cite" and retrieval_only:
        raise InputError("--feedback cite: the reader's citations need its answers; drop --retrieval-only")
    t_start = time.perf_counter()
    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    if forget_every < 0:
        raise InputError(f"forget_every must be >= 0, got {forget_every}")
    if passes < 1:
        raise InputError(f"--passes must be at least 1, got {passes}")
    vcfg, notes = variant_config(cfg, variant, k)
    convs = _select(parse_file(path, "locomo"), path, samples)
    forget_fn = _forgetting()
    active_forget = _forget_every(variant, forget_every, forget_fn, notes)
    fp = fingerprint(vcfg, variant, retrieval_only, path, active_forget)
    if passes > 1:
        fp["passes"] = passes
    if fb_kind != "none":
        fp["feedback"] = feedback
    done = _done_records(records, fp)
    if categories is not None and (not categories or any(int(c) not in range(1, 6) for c in categories)):
        raise InputError(f"categories: LoCoMo categories are 1-5, got {list(categories)}")
    wanted = None if categories is None else {int(c) for c in categories}
    plan = [(c, list(enumerate(c.qa))[: limit] if limit else list(enumerate(c.qa))) for c in convs]
    _check_plan(plan, done, passes, path, records)

    run = _Run(vcfg, variant, retrieval_only, fp, done, plan, wanted=wanted, passes=passes, db=db, records=records,
               progress=progress, models={"embedder": embedder, "chat": chat},
               forget_fn=forget_fn if active_forget else None, forget_every=active_forget,
               feedback=(fb_kind, fb_p))
    try:
        for conv, questions in plan:
            run.conversation(conv, questions)
    finally:
        run.close()
    return _summary(run, path, plan, vcfg, variant, retrieval_only, limit, wanted, passes, feedback, fb_kind,
                    active_forget, fp, notes, t_start)


def _forget_every(variant: str, forget_every: int, forget_fn: Any, notes: list[str]) -> int:
    """How often forgetting runs in this variant (0: never), with the note that says so."""
    if variant in BASELINES or variant == "no-forget" or not forget_every:
        if variant == "no-forget" and forget_fn is None:
            notes.append("the forgetting module (hela_cli.mechanics.forget) is not available, so no forgetting is applied "
                         "in any variant: no-forget gives the same numbers as full")
        return 0
    if forget_fn is None:
        notes.append("no forgetting applied: the forgetting module (hela_cli.mechanics.forget) is not available, so "
                     "full and no-forget give the same numbers")
        return 0
    notes.append(f"forgetting (hela_cli.mechanics.forget, apply) runs on the space after every {forget_every} "
                 f"questions; no-forget skips it")
    return forget_every


def _done_records(records: str | Path | None, fp: dict[str, Any]) -> dict[tuple[str, int, int], dict[str, Any]]:
    """Resume: the records of this run by (sample, question index, pass); records of another run are refused."""
    done: dict[tuple[str, int, int], dict[str, Any]] = {}
    if records is None:
        return done
    for rec in load_records(records):
        if rec.get("run") != fp:
            raise InputError(
                f"{records}: holds records of a different run (variant {(rec.get('run') or {}).get('variant')!r}, "
                f"settings {rec.get('run')}); this run is {fp}. Use a new --records file")
        done.setdefault((rec["sample"], int(rec["qa_index"]), int(rec.get("pass", 1))), rec)
    return done


def _check_plan(plan: list[tuple[Conversation, list[tuple[int, Any]]]], done: Mapping[tuple[str, int, int], Any],
                passes: int, path: str | Path, records: str | Path | None) -> None:
    """Every question has a text and matches its resumed record: checked before any work."""
    for conv, questions in plan:
        for i, qa in questions:
            if not isinstance(qa, Mapping) or not str(qa.get("question") or "").strip():
                raise InputError(f"{path}: sample {conv.name}: qa[{i}]: no question")
            for p in range(1, passes + 1):
                rec = done.get((str(conv.name), i, p))
                if rec is not None and rec.get("question") != str(qa["question"]):
                    raise InputError(f"{records}: the record of {conv.name} qa[{i}] is for another question than "
                                     f"{path} has; use a new --records file")


class _Run:
    """One LoCoMo run, conversation by conversation: ingest into a fresh space, then each question retrieved
    (and answered) through :class:`Runner`, scored, recorded, and only then its feedback applied. Holds the
    counters and results the summary reports."""

    def __init__(self, vcfg: Config, variant: str, retrieval_only: bool, fp: dict[str, Any],
                 done: dict[tuple[str, int, int], dict[str, Any]], plan: list[tuple[Conversation, list]], *,
                 wanted: set[int] | None, passes: int, db: str | Path | None, records: str | Path | None,
                 progress: Progress | None, models: dict[str, Any], forget_fn: Callable[..., Any] | None,
                 forget_every: int, feedback: tuple[str, float | None]):
        self.vcfg, self.variant, self.retrieval_only, self.fp, self.done = vcfg, variant, retrieval_only, fp, done
        self.wanted, self.passes, self.db, self.progress, self.models = wanted, passes, db, progress, models
        self.forget_fn, self.forget_every = forget_fn, forget_every
        self.fb_kind, self.fb_p = feedback
        self.pass_range = range(1, passes + 1)
        self.total = sum(1 for _, qs in plan for _, qa in qs if self.scored(qa)) * passes
        self.writer = RecordWriter(records)
        self.n_done = 0
        self.per_sample: dict[str, Any] = {}
        self.results: list[dict[str, Any]] = []
        self.asked = self.replayed = self.resumed = self.unscored = 0
        self.t_ingest = self.t_questions = 0.0

    def scored(self, qa: Any) -> bool:
        return self.wanted is None or question_category(qa) in self.wanted

    def close(self) -> None:
        self.writer.close()
        if self.models.get("counter") is not None:
            self.models["counter"].close()

    def conversation(self, conv: Conversation, questions: list[tuple[int, Any]]) -> None:
        """One conversation: what is not in the records yet, in a fresh space (a temporary database unless
        ``db``)."""
        from hela_cli.store import Store

        name = str(conv.name)
        todo = [(i, qa) for p in self.pass_range for i, qa in questions
                if (name, i, p) not in self.done and self.scored(qa)]
        prior = [self.done[(name, i, p)] for p in self.pass_range for i, qa in questions
                 if (name, i, p) in self.done and self.scored(qa)]
        self.resumed += len(prior)
        self.results.extend(prior)
        if not todo:
            self.n_done += len(prior)
            self.per_sample[name] = {"questions": sum(1 for _, qa in questions if self.scored(qa)),
                                     "resumed": len(prior), "turns": len(conv.turns)}
            if self.progress:
                self.progress(self.n_done, self.total, name)
            return
        tmpdir = None
        if self.db is None:
            tmpdir = tempfile.mkdtemp(prefix="hela-bench-")  # 0700
            store = Store(Path(tmpdir) / "bench.db", vector_cache=self.vcfg.retrieval.vector_cache)
        else:
            store = Store(self.db, vector_cache=self.vcfg.retrieval.vector_cache)
        try:
            self._ingest_and_ask(store, conv, questions, prior)
        finally:
            store.close()
            if tmpdir is not None:
                shutil.rmtree(tmpdir, ignore_errors=True)

    def _ingest_and_ask(self, store: Any, conv: Conversation, questions: list[tuple[int, Any]],
                        prior: list[dict[str, Any]]) -> None:
        from hela_cli.bench.feedback import EvidenceHistory
        from hela_cli.memory import Memory
        from hela_cli.store import Store

        name, vcfg, models = str(conv.name), self.vcfg, self.models
        existing = store.get_space(name)
        if existing is not None and store.count_nodes(existing.id):
            raise StoreError(f"{store.path}: space '{name}' already exists; the benchmark needs a fresh "
                             f"space per conversation (use another --db, or none for temporary databases)")
        # ingest
        mem = Memory(vcfg, store=store, embedder=models["embedder"], chat=models["chat"])
        models["embedder"] = mem.embedder
        if not self.retrieval_only:
            models["chat"] = mem.chat
        if self.progress:
            self.progress(self.n_done, self.total, f"{name}: ingest")
        t0 = time.perf_counter()
        ing = ingest_conversations(store, mem.embedder, [conv], vcfg, space=name)
        self.t_ingest += time.perf_counter() - t0
        sp0 = store.require_space(name)   # the edges right after ingest: its links, at step sp0.step
        links = _Links({(a, b): w for a, b, w in store.all_edges(sp0)},
                       store.edge_priors(sp0), sp0.step)
        if models.get("counter") is None:  # one tokenizer for the whole run (the chat model's)
            models["counter"] = Memory(vcfg, store=Store(":memory:"), embedder=models["embedder"],
                                       chat=models["chat"])
        runner = Runner(mem, name, self.variant, self.retrieval_only, models["counter"].count_tokens,
                        self.forget_fn, self.forget_every)
        self.n_done += len(prior)
        # the questions, in dataset order, per pass
        t1 = time.perf_counter()
        history = EvidenceHistory()
        for p, (i, qa) in ((p, q) for p in self.pass_range for q in questions):
            overlap = history.overlaps(evidence_ids(qa.get("evidence"))) if p == 1 else None
            if (name, i, p) in self.done or not self.scored(qa):
                self._replay(store, runner, name, qa, i, p)
                continue
            self._ask(store, runner, links, name, qa, i, p, overlap)
        self.t_questions += time.perf_counter() - t1
        self.per_sample[name] = {"questions": sum(1 for _, qa in questions if self.scored(qa)),
                                 "resumed": len(prior), "turns": len(conv.turns),
                                 "nodes": ing["nodes_added"], "ingest_s": ing["seconds"],
                                 "forgotten": runner.forgotten}

    def _replay(self, store: Any, runner: Runner, name: str, qa: Mapping[str, Any], i: int, p: int) -> None:
        """A question answered before an interruption, or of a category not scored: its learning again (no
        answer), so the graph stays in step."""
        again = runner.replay(str(qa.get("question", "")))
        if (name, i, p) in self.done:   # cite: the answer it gave then
            again["prediction"] = self.done[(name, i, p)].get("prediction")
        self._feedback(store, name, qa, again, i, p)
        runner.after_question()
        if self.scored(qa):
            self.replayed += 1
        else:
            self.unscored += 1

    def _ask(self, store: Any, runner: Runner, links: "_Links", name: str, qa: Mapping[str, Any], i: int, p: int,
             overlap: bool | None) -> None:
        """A question: retrieved and answered (``Runner.ask``), scored, written, then its feedback applied."""
        question = str(qa["question"])
        step = store.require_space(name).step   # the step this question's retrieval scores at
        out = runner.ask(question)
        attribution = _spread_attribution(out["memories"], links.initial,
                                          self.vcfg.hebbian.decay ** (step - links.step), links.fixed)
        rec = {"run": self.fp, "sample": name, "qa_index": i, "question": question,
               "category": question_category(qa), "gold": gold_answer(qa),
               "evidence": evidence_ids(qa.get("evidence")), "prediction": out["prediction"],
               "retrieved": retrieved(out["memories"]), "semantic": out["semantic"], "context_tokens": out["tokens"],
               **_score(qa, out["memories"], out["prediction"], self.retrieval_only, attribution),
               "retrieval_ms": out.get("retrieval_ms"), "generate_ms": out.get("generate_ms"),
               "consolidate_ms": out.get("consolidate_ms")}
        if self.passes > 1:
            rec["pass"] = p
        if overlap is not None:
            rec["overlap"] = overlap

        def write(used: list[int]) -> None:
            if self.fb_kind != "none":
                rec["used"] = [m["source_id"] for m in out["memories"] if m["id"] in set(used)]
            self.writer.write(rec)

        self._feedback(store, name, qa, out, i, p, write)   # scored and written: now (and only now) its feedback
        runner.after_question()
        self.results.append(rec)
        self.asked += 1
        self.n_done += 1
        if self.progress:
            self.progress(self.n_done, self.total, name)

    def _feedback(self, store: Any, name: str, qa: Mapping[str, Any], out: Mapping[str, Any], i: int, p: int,
                  scored: Callable[[list[int]], None] | None = None) -> None:
        """The question's simulated feedback, applied after it was scored (prequential), through the asks log
        as ``Memory.reinforce`` does (the row keeps the query vector: a use trace). ``scored(used)`` writes the
        question's record first."""
        from hela_cli.bench.feedback import simulated_used
        from hela_cli.mechanics.feedback import apply_feedback, retrieval_record

        memories = out["memories"]
        question = str(qa.get("question", ""))
        used = [] if self.fb_kind == "none" else simulated_used(
            self.fb_kind, self.fb_p, memories, evidence_ids(qa.get("evidence")), gold_answer(qa), question,
            seed=f"{name}:{i}:{p}", prediction=out.get("prediction"))
        if scored is not None:
            scored(used)
        if self.fb_kind == "none" or not memories:
            return
        sp = store.require_space(name)
        record = retrieval_record(memories)
        rid = out.get("recall_id")
        if rid is None:
            rid = store.log_ask(sp.id, question, None, [m["id"] for m in memories], sp.step,
                                kind="recall", retrieval=record, vector=out.get("query_vector"))
        apply_feedback(store, sp, record, used, self.vcfg, when=time.time(), recall_id=rid)


@dataclasses.dataclass
class _Links:
    """A space's edges right after ingest (its conversation links), to tell learned weight from them."""
    initial: dict[tuple[int, int], float]
    fixed: dict[tuple[int, int], float]
    step: int


def _summary(run: _Run, path: str | Path, plan: list[tuple[Conversation, list]], vcfg: Config, variant: str,
             retrieval_only: bool, limit: int | None, wanted: set[int] | None, passes: int, feedback: str,
             fb_kind: str, active_forget: int, fp: dict[str, Any], notes: list[str],
             t_start: float) -> dict[str, Any]:
    """The summary dict of a finished run: pass 1's figures, by overlap, by pass, the timings."""
    results = run.results
    order = {(str(c.name), i): n for n, (c, qs) in enumerate(plan) for i, _ in qs}
    results.sort(key=lambda r: (int(r.get("pass", 1)), order.get((r["sample"], int(r["qa_index"])), 0),
                                int(r["qa_index"])))
    summary = summarize([r for r in results if int(r.get("pass", 1)) == 1])
    first = [r for r in results if int(r.get("pass", 1)) == 1]
    summary["by_overlap"] = {
        "overlap": summarize([r for r in first if r.get("overlap") is True]),
        "no overlap": summarize([r for r in first if r.get("overlap") is False])}
    if passes > 1:
        summary["by_pass"] = {str(p): summarize([r for r in results if int(r.get("pass", 1)) == p])
                              for p in range(1, passes + 1)}
    ret_ms = [r["retrieval_ms"] for r in results if r.get("retrieval_ms") is not None]
    gen_ms = [r["generate_ms"] for r in results if r.get("generate_ms") is not None]
    cons_ms = [r["consolidate_ms"] for r in results if r.get("consolidate_ms") is not None]
    return {
        "benchmark": "locomo",
        "file": str(path),
        "variant": variant,
        "retrieval_only": retrieval_only,
        "k": vcfg.retrieval.k,
        "m": vcfg.retrieval.m,
        "budget": vcfg.retrieval.k + vcfg.retrieval.m,
        "forget_every": active_forget,
        "samples": [str(c.name) for c, _ in plan],
        "limit_per_sample": limit,
        "categories": sorted(wanted) if wanted is not None else None,
        "passes": passes,
        "feedback": feedback if fb_kind in ("none", "cite") else f"{feedback} (simulation)",
        "questions": len(results),
        **summary,
        "per_sample": run.per_sample,
        "models": {"embedder": vcfg.models.embedder, "chat": None if retrieval_only else vcfg.models.chat},
        "config": {"retrieval": dataclasses.asdict(vcfg.retrieval), "hebbian": dataclasses.asdict(vcfg.hebbian),
                   "consolidation_auto": vcfg.consolidation.auto, "fingerprint": fp["config"]},
        "timing": {
            "seconds": round(time.perf_counter() - t_start, 2),
            "ingest_s": round(run.t_ingest, 2),
            "questions_s": round(run.t_questions, 2),
            "asked": run.asked, "resumed": run.resumed, "replayed": run.replayed, "asked_unscored": run.unscored,
            "retrieval_ms_mean": round(sum(ret_ms) / len(ret_ms), 2) if ret_ms else None,
            "generate_ms_mean": round(sum(gen_ms) / len(gen_ms), 2) if gen_ms else None,
            "consolidations": len(cons_ms), "consolidate_s": round(sum(cons_ms) / 1000, 2),
        },
        "notes": notes,
    }
