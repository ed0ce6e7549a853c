"""Retrieval lab (research harness, not a test): evaluate retrieval variants on cached, ingested dev files.

    python benchmarks/ablations/retrieval_lab.py build                       # ingest once into --dir (default /tmp/hela-lab)
    python benchmarks/ablations/retrieval_lab.py eval VARIANT [VARIANT ...]  # evidence recall per variant
    python benchmarks/ablations/retrieval_lab.py retest [VARIANT]              # LoCoMo asked twice (test-retest, issue 17)
    python benchmarks/ablations/retrieval_lab.py ranks [VARIANT]               # where evidence ranks by S_base
    python benchmarks/ablations/retrieval_lab.py misses [VARIANT]              # where missed evidence lies (links, rank)
    python benchmarks/ablations/retrieval_lab.py causes [VARIANT]              # why categories 1-3 miss evidence (issue 47)
    python benchmarks/ablations/retrieval_lab.py loco VARIANT ... --baseline B # leave-one-conversation-out choice (issue 47)
    python benchmarks/ablations/retrieval_lab.py topk [VARIANT ...]            # recall at 5 / 8 / 13 and within a token budget
    python benchmarks/ablations/retrieval_lab.py speed VARIANT ...             # recall time, warm and fresh store
    python benchmarks/ablations/retrieval_lab.py cosines                       # the embedder's cosine scale (LoCoMo)
    python benchmarks/ablations/retrieval_lab.py preq [VARIANT ...] --feedback evidence   # prequential feedback (simulation)
    python benchmarks/ablations/retrieval_lab.py list                        # the named variants

Ingest is the expensive part (the embedder), so both dev files are ingested once into database files
outside the repository and reused: ``locomo.db`` (``locomo_dev.json``, one space per conversation) and
``lme.db`` (a fixed subset of ``longmemeval_s_dev30.json``: every 4th item, 8 haystacks of ~500 turns,
one space per item). Passage vectors of long turns (``ingest.passage_chars``) are added in a second pass
by the same code ``hela ingest`` uses, so a variant can switch them on or off.

A variant is a set of configuration overrides (dotted keys of :class:`hela_cli.config.Config`) plus a
learning switch (``NAME@key=value,...`` adds overrides to a named one; ``learn=0`` turns learning off).
Variants with ingest links that the cache lacks (``ingest.fixed_links``, ``ingest.keyword_links``) get them
on their database copy through the same code ``hela link`` runs; retrieval runs in-process through
:func:`hela_cli.mechanics.retrieval.retrieve`, exactly the code ``hela ask`` and ``hela bench`` use. With learning on,
each variant works on a fresh copy of the cached database (Eq.1 writes edges); with learning off the cached
file is only read.

Scores: LoCoMo evidence recall per category (:func:`hela_cli.bench.summarize`, so "all 1-5" matches the
``all 1-5`` column of ``hela bench locomo``); LongMemEval turn recall (share of ``has_answer`` turns in the
context), session recall_any (an answer session's turn is in the context) and the BM25 / cosine baselines
at the same 13-memory budget.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any


from hela_cli.bench import CATEGORY_NAMES, question_category, summarize  # noqa: E402
from hela_cli.config import Config, load_config  # noqa: E402
from hela_cli.formats import parse_date, parse_file  # noqa: E402
from hela_cli.ingest import ingest_conversations  # noqa: E402
from hela_cli.text.keywords import keywords  # noqa: E402
from hela_cli.memory import Memory  # noqa: E402
from hela_cli.bench.metrics import evidence_ids, evidence_recall  # noqa: E402
from hela_cli.models import embed_queries  # noqa: E402
from hela_cli.mechanics.retrieval import learn_from_memories, retrieve  # noqa: E402
from hela_cli.store import Store  # noqa: E402

LOCOMO = "/work/shared/data/locomo_dev.json"
LME = "/work/shared/data/longmemeval_s_dev30.json"
LME_EVERY = 4  # items 0, 4, 8, ... of the dev30 file: all six question types
LME_FILLER = 10  # per item: its answer sessions plus the first 10 other sessions of its haystack

#: name -> (config overrides, learning on)
# Each lever is measured alone against the defaults before this round (date prior off); the cached databases
# hold passage vectors of long turns, which only the "passages" variants use. Reciprocal rank fusion, a cap
# on memories per session and pseudo-relevance feedback lost and were removed after commit 008c8e5, where
# `eval rrf rrf-k20 session-cap2 session-cap4 feedback0.3 feedback0.7` reproduces them.
OFF = {"retrieval.passages": False, "retrieval.date_prior": 0.0, "retrieval.date_slack_days": 14.0}
BEFORE_17 = {"retrieval.passages": False, "ingest.fixed_links": False, "ingest.keyword_links": 0}
VARIANTS: dict[str, tuple[dict[str, Any], bool]] = {
    "default": (OFF, True),
    "default-nolearn": (OFF, False),
    "new-defaults": ({"retrieval.passages": False}, True),
    "new-defaults-nolearn": ({"retrieval.passages": False}, False),
    "new-defaults-nospread": ({"retrieval.passages": False, "retrieval.spreading": False}, False),
    # issue 17: the defaults before fixed ingest links and cold-start keyword links (the "new-defaults" rows
    # of issue 17's sweep were run under these; `before-17@key=value,...` reproduces each of them)
    "before-17": (BEFORE_17, True),
    "before-17-nolearn": (BEFORE_17, False),
    "before-17-nospread": ({**BEFORE_17, "retrieval.spreading": False}, False),
    "new+pool200": ({"retrieval.passages": False, "retrieval.vector_candidates": 200,
                     "retrieval.keyword_candidates": 200}, True),
    "new+alpha0.7": ({"retrieval.passages": False, "retrieval.alpha": 0.7}, True),
    "new+passages": ({}, True),
    "pool200": ({**OFF, "retrieval.vector_candidates": 200, "retrieval.keyword_candidates": 200}, True),
    "pool50": ({**OFF, "retrieval.vector_candidates": 50, "retrieval.keyword_candidates": 50}, True),
    "idf": ({**OFF, "retrieval.keyword_idf": True}, True),
    "passages": ({**OFF, "retrieval.passages": True}, True),
    "date-0.3": ({**OFF, "retrieval.date_prior": 0.3}, True),
    "date-0.6": ({**OFF, "retrieval.date_prior": 0.6}, True),
    "alpha0.7": ({**OFF, "retrieval.alpha": 0.7}, True),
    "alpha1.5": ({**OFF, "retrieval.alpha": 1.5}, True),
    "bm25w0.8": ({**OFF, "retrieval.bm25_weight": 0.8}, True),
    "date-0.5": ({**OFF, "retrieval.date_prior": 0.5}, True),
    "date-1.0": ({**OFF, "retrieval.date_prior": 1.0}, True),
    "date-0.5-slack7": ({**OFF, "retrieval.date_prior": 0.5, "retrieval.date_slack_days": 7.0}, True),
    "date-0.5-slack30": ({**OFF, "retrieval.date_prior": 0.5, "retrieval.date_slack_days": 30.0}, True),
    "date-0.5+pool200": ({**OFF, "retrieval.date_prior": 0.5, "retrieval.vector_candidates": 200,
                          "retrieval.keyword_candidates": 200}, True),
    "no-speaker": ({**OFF, "retrieval.speaker_keywords": False}, True),
    # A stronger embedder (issue 18): multilingual-e5-small's cosines sit in a narrow, high band (LoCoMo,
    # `cosines`: mean 0.787, sd 0.021; MiniLM 0.254, 0.100). "e5-scale" maps the defaults onto that band
    # (ratio r = 0.021 / 0.100 = 0.21): alpha 1.0 * r, theta 0.787 + (1.0 - 0.254) * r, beta such that the
    # spreading bonus moves a score by the same number of standard deviations (1.0 * 1.25 * r / 0.95), and a
    # date prior that lowers an out-of-window score by about as many standard deviations (0.5 -> 0.1: the
    # prior multiplies S_base, and e5's S_base carries a large constant offset). Derived, then one coarse
    # sweep of alpha around it; run with HELA_MODELS_EMBEDDER pointing at the e5 GGUF.
    "e5-scale": ({"retrieval.passages": False, "retrieval.alpha": 0.21, "retrieval.theta": 0.944,
                  "retrieval.beta": 0.28, "retrieval.date_prior": 0.1}, True),
    "e5-scale-alpha0.1": ({"retrieval.passages": False, "retrieval.alpha": 0.1, "retrieval.theta": 0.944,
                           "retrieval.beta": 0.28, "retrieval.date_prior": 0.1}, True),
    "e5-scale-alpha0.4": ({"retrieval.passages": False, "retrieval.alpha": 0.4, "retrieval.theta": 0.944,
                           "retrieval.beta": 0.28, "retrieval.date_prior": 0.1}, True),
    "e5-alpha-only": ({"retrieval.passages": False, "retrieval.alpha": 0.21}, True),
    # issue 47 (round 3): main's defaults before it, and its three mechanisms together
    "before-47": ({"retrieval.passages": False, "retrieval.vocatives": False, "retrieval.replies": 0,
                   "retrieval.bm25_names": True, "retrieval.person_prior": 0.0}, True),
    "round3": ({"retrieval.passages": False, "retrieval.vocatives": True, "retrieval.replies": 1,
                "retrieval.bm25_names": False, "retrieval.person_prior": 0.0}, True),
    # issue 47, round 4: round3 with a focused second dense probe and two more spreading slots for list
    # questions (the setting the leave-one-conversation-out folds chose most; not the defaults)
    "round4": ({"retrieval.passages": False, "retrieval.vocatives": True, "retrieval.replies": 1,
                "retrieval.bm25_names": False, "retrieval.person_prior": 0.0, "retrieval.focus_weight": 0.7,
                "retrieval.list_slots": 2}, True),
    # ... and with the word-level semantic keyword match at tau 0.6 (the setting the folds chose most)
    "round4-soft": ({"retrieval.passages": False, "retrieval.vocatives": True, "retrieval.replies": 1,
                     "retrieval.bm25_names": False, "retrieval.person_prior": 0.0, "retrieval.focus_weight": 0.7,
                     "retrieval.list_slots": 2, "retrieval.soft_keywords": 0.6}, True),
}


def lme_items(path: str = LME) -> list[dict[str, Any]]:
    """Every 4th item, each with a shortened haystack: its answer sessions plus the first ``LME_FILLER`` other
    sessions in haystack order (~150 turns instead of ~500; embedding the full haystacks of long turns takes
    about an hour on this machine). Easier than LongMemEval-S: fewer distractors."""
    data = json.loads(Path(path).read_text())
    out = []
    for i, x in enumerate(data):
        if i % LME_EVERY:
            continue
        gold = set(x.get("answer_session_ids") or [])
        sids = x.get("haystack_session_ids") or [f"session_{k + 1}" for k in range(len(x["haystack_sessions"]))]
        keep, filler = [], 0
        for k, sid in enumerate(sids):
            if sid in gold or any(t.get("has_answer") for t in x["haystack_sessions"][k]):
                keep.append(k)
            elif filler < LME_FILLER:
                keep.append(k)
                filler += 1
        y = dict(x)
        for key in ("haystack_sessions", "haystack_dates", "haystack_session_ids"):
            if x.get(key) is not None:
                y[key] = [x[key][k] for k in keep]
        out.append(y)
    return out


def lme_gold(item: dict[str, Any]) -> tuple[set[str], set[str]]:
    """Gold turn source_ids (``has_answer``) and answer session ids, named as the parser names them."""
    seen: set[str] = set()
    turns: set[str] = set()
    sids = item.get("haystack_session_ids") or [f"session_{k + 1}" for k in range(len(item["haystack_sessions"]))]
    for sid, sess in zip(sids, item["haystack_sessions"]):
        name = sid
        if name in seen:
            n = 2
            while f"{sid}#{n}" in seen:
                n += 1
            name = f"{sid}#{n}"
        seen.add(name)
        for ti, t in enumerate(sess):
            if t.get("has_answer"):
                turns.add(f"{name}:{ti}")
    return turns, set(item.get("answer_session_ids") or [])


def build(out: Path, cfg: Config, only: str | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    mem = Memory(cfg, store=Store(":memory:"))
    emb = mem.embedder
    for name, convs in (("locomo.db", parse_file(LOCOMO, "locomo")),):
        p = out / name
        if p.exists():
            print(f"{p}: exists, kept")
            continue
        tmp = out / (name + ".part")
        tmp.unlink(missing_ok=True)
        with Store(tmp) as st:
            t0 = time.perf_counter()
            r = ingest_conversations(st, emb, convs, cfg)
            print(f"{name}: {r['nodes_added']} nodes in {time.perf_counter() - t0:.0f} s", flush=True)
        tmp.rename(p)
    # one file per conversation, as `hela bench locomo` runs them (FTS5's BM25 statistics are per file)
    names = [str(c.name) for c in parse_file(LOCOMO, "locomo")]
    for name in names:
        p = out / f"locomo_{name}.db"
        if p.exists():
            continue
        tmp = out / f"locomo_{name}.db.part"
        shutil.copy(out / "locomo.db", tmp)
        with Store(tmp) as st:
            others = [st.require_space(n) for n in names if n != name]
            with st.transaction():
                for sp in others:
                    st.delete_nodes([r["id"] for r in st.iter_nodes(sp.id)])
            st.db.execute("VACUUM")
        tmp.rename(p)
    if only == "locomo":
        return
    items = lme_items()
    tmpjson = out / "lme_subset.json"
    tmpjson.write_text(json.dumps(items))
    for conv in parse_file(tmpjson, "longmemeval"):   # one file per item, like one user's memory
        p = out / f"lme_{conv.name}.db"
        if p.exists():
            continue
        tmp = out / f"lme_{conv.name}.db.part"
        tmp.unlink(missing_ok=True)
        with Store(tmp) as st:
            t0 = time.perf_counter()
            r = ingest_conversations(st, emb, [conv], cfg)
            print(f"{p.name}: {r['nodes_added']} nodes in {time.perf_counter() - t0:.0f} s "
                  f"({r['embedding_truncated']} truncated)", flush=True)
        tmp.rename(p)


def build_passages(out: Path, cfg: Config, size: int) -> None:
    """Second embedding pass: passage vectors (``ingest.passage_chars = size``) for the long turns of every
    cached database, by :func:`hela_cli.ingest.add_passages` (what ``hela ingest`` does with the setting)."""
    from hela_cli.ingest import add_passages

    pcfg = cfg.replace(**{"ingest.passage_chars": size})
    emb = Memory(cfg, store=Store(":memory:")).embedder
    for p in sorted(out.glob("*_*.db")):
        with Store(p) as st:
            t0 = time.perf_counter()
            n = sum(add_passages(st, emb, sp["name"], pcfg) for sp in st.spaces())
            print(f"{p.name}: passages for {n} long turns in {time.perf_counter() - t0:.0f} s", flush=True)


def _qvecs(out: Path, emb: Any, questions: list[str]) -> dict[str, Any]:
    """Question vectors, cached in ``qvecs.npz`` (the embedder is the slow part of a lab run)."""
    import numpy as np

    p = out / "qvecs.npz"
    cache: dict[str, Any] = {}
    if p.exists():
        z = np.load(p, allow_pickle=False)
        cache = dict(zip(z["q"].tolist(), z["v"]))
    todo = [q for q in dict.fromkeys(questions) if q not in cache]
    if todo:
        for q, v in zip(todo, embed_queries(emb, todo)):
            cache[q] = v
        keys = list(cache)
        np.savez(p, q=np.array(keys), v=np.stack([cache[k] for k in keys]))
    return cache


class _QueryMemo:
    """The embedder with its query vectors kept per text for the process (a variant's focused probe,
    ``retrieval.focus_weight`` / ``focus_max``, embeds the question's focus words at each recall; every
    variant and fold asks for the same ones)."""

    def __init__(self, emb: Any) -> None:
        self._emb, self._cache = emb, {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._emb, name)

    def embed_query(self, texts: list[str]) -> Any:
        import numpy as np

        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            self._cache.update(zip(todo, embed_queries(self._emb, todo)))
        return np.stack([self._cache[t] for t in texts])


def _open(out: Path, name: str, learn: bool, tmp: Path, cfg: Config | None = None) -> Store:
    """The cached database, read in place without learning; a copy in ``tmp`` when learning writes edges or
    the variant adds cold-start keyword links (``ingest.keyword_links``: the one-off step
    :func:`hela_cli.ingest.link_keywords` runs on the copy, as ``hela link`` does on an existing space)."""
    src = out / name
    links = cfg is not None and (cfg.ingest.keyword_links > 0 or cfg.ingest.fixed_links)
    if not learn and not links:
        return Store(src)
    dst = tmp / name
    shutil.copy(src, dst)
    st = Store(dst)
    if links:
        from hela_cli.ingest import link_conversation, link_keywords

        for sp in st.spaces():
            if cfg.ingest.fixed_links:
                link_conversation(st, sp["name"], cfg)
            LINK_STATS.append((link_keywords(st, sp["name"], cfg), st.count_nodes(st.require_space(sp["name"]).id)))
    return st


LINK_STATS: list[tuple[int, int]] = []   # (keyword links written, nodes) per database opened with links


def _with_overrides(name: str) -> tuple[dict[str, Any], bool]:
    """``VARIANT`` or ``VARIANT@key=value,key=value``: a named variant with extra dotted-key overrides
    (``learn=0`` switches learning off), e.g. ``new-defaults@ingest.keyword_links=3,hebbian.pair_margin=0.8``."""
    base, _, extra = name.partition("@")
    overrides, learn = VARIANTS[base]
    overrides = dict(overrides)
    for item in filter(None, extra.split(",")):
        key, _, value = item.partition("=")
        if key == "learn":
            learn = value.lower() in ("1", "true", "yes", "on")
        else:
            overrides[key] = value
    return overrides, learn


def eval_locomo(out: Path, cfg: Config, emb: Any, learn: bool, tmp: Path) -> dict[str, Any]:
    convs = parse_file(LOCOMO, "locomo")
    qv = _qvecs(out, emb, [str(qa["question"]) for c in convs for qa in c.qa])
    rows, ms = [], []
    for c in convs:
        with _open(out, f"locomo_{c.name}.db", learn, tmp, cfg) as st:
            for qa in c.qa:
                q = str(qa["question"])
                res = retrieve(st, st.require_space(str(c.name)), emb, q, cfg, learn=learn, query_vector=qv[q])
                ms.append(res.timings_ms["total"])
                ids = [m["source_id"] for m in res.memories]
                rows.append({"category": question_category(qa), "recall": evidence_recall(qa.get("evidence"), ids),
                             "recall_flipped": evidence_recall(
                                 qa.get("evidence"), [m["source_id"] for m in res.memories if m["path"] != "base"])})
    s = summarize(rows)
    out_ = {s["per_category"][k]["name"]: round(100 * s["per_category"][k]["recall"], 1)
            for k in sorted(s["per_category"])}
    out_["overall 1-4"] = round(100 * s["overall"]["recall"], 1)
    out_["all 1-5"] = round(100 * s["overall_all"]["recall"], 1)
    out_["ms p50"] = round(median(ms), 1)
    return out_


TOKEN_BUDGETS = (200, 1000)   # context tokens (estimated: characters / 4) a reader gets


def _token_prefix(texts: list[str], ids: list[str], budget: int) -> list[str]:
    """The ids of the memories that fit in ``budget`` estimated tokens (characters / 4), in list order."""
    out, used = [], 0
    for t, i in zip(texts, ids):
        used += max(1, len(t) // 4)
        if used > budget:
            break
        out.append(i)
    return out


def locomo_rows(out: Path, cfg: Config, emb: Any, learn: bool, tmp: Path, baseline: str | None = None
                ) -> list[dict[str, Any]]:
    """One row per LoCoMo dev question: its conversation, category, evidence recall of the list (at the
    configured k + m; the baselines ``bm25`` / ``cosine`` return k + m memories) and recall within each of
    ``TOKEN_BUDGETS`` taken from the top of that list."""
    convs = parse_file(LOCOMO, "locomo")
    qv = _qvecs(out, emb, [str(qa["question"]) for c in convs for qa in c.qa])
    budget = cfg.retrieval.k + cfg.retrieval.m
    rows = []
    for c in convs:
        with (Store(out / f"locomo_{c.name}.db") if baseline is not None
              else _open(out, f"locomo_{c.name}.db", learn, tmp, cfg)) as st:
            sp = st.require_space(str(c.name))
            for qa in c.qa:
                q = str(qa["question"])
                t0 = time.perf_counter()
                if baseline is not None:
                    hits = (st.keyword_search(sp.id, keywords(q), budget) if baseline == "bm25"
                            else st.knn(sp.id, qv[q], budget))
                    nodes = st.get_nodes([h for h, _ in hits])
                    mems = [nodes[h] for h, _ in hits]
                else:
                    mems = retrieve(st, st.require_space(str(c.name)), emb, q, cfg, learn=learn,
                                    query_vector=qv[q]).memories
                ms = (time.perf_counter() - t0) * 1000
                ids = [m["source_id"] for m in mems]
                row = {"conv": str(c.name), "category": question_category(qa), "ms": ms,
                       "recall": evidence_recall(qa.get("evidence"), ids)}
                for tb in TOKEN_BUDGETS:
                    row[f"recall@{tb}tok"] = evidence_recall(qa.get("evidence"),
                                                             _token_prefix([m["text"] for m in mems], ids, tb))
                rows.append(row)
    return rows


def locomo_table(rows: list[dict[str, Any]], metric: str = "recall") -> dict[str, Any]:
    s = summarize([{"category": r["category"], "recall": r[metric]} for r in rows])
    out_ = {s["per_category"][k]["name"]: round(100 * s["per_category"][k]["recall"], 1)
            for k in sorted(s["per_category"])}
    out_["overall 1-4"] = round(100 * s["overall"]["recall"], 1)
    out_["all 1-5"] = round(100 * s["overall_all"]["recall"], 1)
    return out_


def loco(out: Path, cfg: Config, emb: Any, names: list[str], baseline: str, reuse: bool = False) -> dict[str, Any]:
    """Leave-one-conversation-out choice among ``names`` (variants: a mechanism's settings, "off" among
    them): for each dev conversation, the variant with the best all 1-5 recall on the other four
    conversations is chosen (ties: the first listed) and scored on the held-out one, against ``baseline``
    there. Only the held-out scores are reported as results; the tuned (all five) table is labelled."""
    per: dict[str, list[dict[str, Any]]] = {}
    saved = out / "loco-rows"   # each variant's rows at this budget, kept for ``--reuse`` (same code only)
    saved.mkdir(exist_ok=True)
    for name in dict.fromkeys([baseline, *names]):
        p = saved / f"{re.sub(r'[^A-Za-z0-9_.=@,-]', '_', name)}-k{cfg.retrieval.k}-m{cfg.retrieval.m}.json"
        if reuse and p.exists():
            per[name] = json.loads(p.read_text())
            continue
        overrides, learn = _with_overrides(name)
        with tempfile.TemporaryDirectory(dir=out) as tmp:
            per[name] = locomo_rows(out, cfg.replace(**overrides), emb, learn, Path(tmp))
        p.write_text(json.dumps(per[name]))
    convs = sorted({r["conv"] for r in per[baseline]})
    folds = []
    for held in convs:
        train = {n: locomo_table([r for r in rows if r["conv"] != held])["all 1-5"] for n, rows in per.items()
                 if n in names}
        best = max(names, key=lambda n: (train[n], -names.index(n)))
        test = locomo_table([r for r in per[best] if r["conv"] == held])
        base_ = locomo_table([r for r in per[baseline] if r["conv"] == held])
        folds.append({"held out": held, "chosen": best, "train all 1-5": train,
                      "held-out": test, "baseline held-out": base_,
                      "delta": {k: round(test[k] - base_[k], 1) for k in test}})
    return {"baseline": baseline, "variants": names, "folds": folds,
            "tuned (all five conversations; not a result)": {n: locomo_table(rows) for n, rows in per.items()}}


def eval_lme(out: Path, cfg: Config, emb: Any, learn: bool, tmp: Path, baseline: str | None = None
             ) -> dict[str, Any]:
    items = lme_items()
    qv = _qvecs(out, emb, [x["question"] for x in items])
    budget = cfg.retrieval.k + cfg.retrieval.m
    turn_r, sess_any, ms = [], [], []
    per_type: dict[str, list[float]] = {}
    for x in items:
        with _open(out, f"lme_{x['question_id']}.db", learn, tmp, cfg) as st:
            gold_turns, gold_sess = lme_gold(x)
            sp = st.require_space(x["question_id"])
            q = x["question"]
            if baseline == "bm25":
                hits = st.keyword_search(sp.id, keywords(q), budget)
            elif baseline == "cosine":
                hits = st.knn(sp.id, qv[q], budget)
            else:
                hits = None
            if hits is not None:
                nodes = st.get_nodes([h for h, _ in hits])
                got = [nodes[h]["source_id"] for h, _ in hits]
            else:
                # the question's own date is the present of a LongMemEval question
                res = retrieve(st, sp, emb, q, cfg, learn=learn, query_vector=qv[q],
                               now=parse_date(x["question_date"]))
                ms.append(res.timings_ms["total"])
                got = [m["source_id"] for m in res.memories]
            if gold_turns:
                r = len(gold_turns & set(got)) / len(gold_turns)
                turn_r.append(r)
                per_type.setdefault(x["question_type"], []).append(r)
            if gold_sess:
                sess_any.append(float(any(g.rsplit(":", 1)[0] in gold_sess for g in got)))
    res_ = {"turn recall": round(100 * sum(turn_r) / len(turn_r), 1),
            "session recall_any": round(100 * sum(sess_any) / len(sess_any), 1)}
    res_.update({f"{t}": round(100 * sum(v) / len(v), 1) for t, v in sorted(per_type.items())})
    if ms:
        res_["ms p50"] = round(median(ms), 1)
    return res_


def _by_evidence_session(qa_list: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Questions grouped by the session of their first evidence turn ("D3:12" -> 3), dataset order within."""
    def key(iq: tuple[int, dict[str, Any]]) -> tuple[int, int]:
        ids = evidence_ids(iq[1].get("evidence"))
        try:
            return int(ids[0].split(":")[0].lstrip("D")), iq[0]
        except (IndexError, ValueError):
            return 10 ** 6, iq[0]
    return [qa for _, qa in sorted(enumerate(qa_list), key=key)]


def retest(out: Path, cfg: Config, emb: Any, passes: int = 2, order: str = "dataset") -> dict[str, Any]:
    """Test-retest on LoCoMo (issue 17): every question of a conversation asked in dataset order with learning
    on, then all of them again, ``passes`` times. Per question it also finds which flipped memories the
    spreading bonus actually brought in (not in the top-(k+m) by S_base: a second retrieval with spreading
    off and no learning, on the same graph state) and splits their bonus between learned weight (the edge's
    weight above what its ingest link would weigh now, ``initial_weight * decay ** step``) and the ingest
    conversation link."""
    convs = parse_file(LOCOMO, "locomo")
    qv = _qvecs(out, emb, [str(qa["question"]) for c in convs for qa in c.qa])
    h, w0, w_kw = cfg.hebbian, cfg.ingest.initial_weight, cfg.ingest.keyword_link_weight
    ref_cfg = cfg.replace(**{"retrieval.spreading": False})
    rows: dict[int, list[dict[str, Any]]] = {p: [] for p in range(1, passes + 1)}
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        for c in convs:
            with _open(out, f"locomo_{c.name}.db", True, Path(tmp), cfg) as st:
                sp0 = st.require_space(str(c.name))
                links = {(a, b) for a, b, _ in st.all_edges(sp0)}   # before any question: ingest links
                sess = {n["id"]: n["session"] for n in st.iter_nodes(sp0.id)}
                kw_links = {p for p in links if sess.get(p[0]) != sess.get(p[1])}   # cold-start keyword links
                qas = _by_evidence_session(c.qa) if order == "session" else c.qa
                for p in range(1, passes + 1):
                    for qa in qas:
                        q = str(qa["question"])
                        sp = st.require_space(str(c.name))
                        ref = {m["id"] for m in retrieve(st, sp, emb, q, ref_cfg, learn=False,
                                                         query_vector=qv[q]).memories}
                        weights = {}
                        res = retrieve(st, sp, emb, q, cfg, learn=False, query_vector=qv[q])
                        for m in res.memories:
                            for src in m["spread_from"]:
                                pair = (min(m["id"], src["id"]), max(m["id"], src["id"]))
                                weights[pair] = st.edge_weight(sp, pair[0], pair[1])
                        if cfg.retrieval.learn and res.memories:   # Eq.1, as retrieve(learn=True) applies it
                            learn_from_memories(st, sp, res.memories, cfg, when=time.time())
                        ev = qa.get("evidence")
                        spread_in = [m for m in res.memories if m["path"] != "base" and m["id"] not in ref]
                        learned_ids, link_ids, kw_ids = [], [], []
                        for m in spread_in:
                            learned = link = kw = 0.0
                            for src in m["spread_from"]:
                                pair = (min(m["id"], src["id"]), max(m["id"], src["id"]))
                                w = weights.get(pair, 0.0)
                                w_init = w_kw if pair in kw_links else w0
                                fade = 1.0 if cfg.ingest.fixed_links else h.decay ** sp.step
                                init = w_init * fade if pair in links else 0.0
                                frac = max(0.0, w - init) / w if w > 0 else 0.0
                                learned += src["contribution"] * frac
                                if pair in kw_links:
                                    kw += src["contribution"] * (1 - frac)
                                else:
                                    link += src["contribution"] * (1 - frac)
                            best = max(learned, link, kw)
                            (learned_ids if learned == best else kw_ids if kw == best else link_ids).append(
                                m["source_id"])
                        rows[p].append({
                            "category": question_category(qa),
                            "recall": evidence_recall(ev, [m["source_id"] for m in res.memories]),
                            "recall_flipped": evidence_recall(ev, [m["source_id"] for m in spread_in]),
                            "recall_learned": evidence_recall(ev, learned_ids),
                            "recall_link": evidence_recall(ev, link_ids),
                            "recall_kwlink": evidence_recall(ev, kw_ids),
                        })
    out_: dict[str, Any] = {}
    for p, rr in rows.items():
        cats: dict[str, dict[str, float]] = {}
        for key in ("recall", "recall_flipped", "recall_learned", "recall_link", "recall_kwlink"):
            s_ = summarize([{"category": r["category"], "recall": r[key]} for r in rr])
            for k in sorted(s_["per_category"]):
                cats.setdefault(s_["per_category"][k]["name"], {})[key] = round(100 * s_["per_category"][k]["recall"], 1)
            cats.setdefault("all 1-5", {})[key] = round(100 * s_["overall_all"]["recall"], 1)
        out_[f"pass {p}"] = cats
    return out_


def prequential(out: Path, cfg: Config, emb: Any, feedback: str, passes: int = 2) -> dict[str, Any]:
    """LoCoMo in dataset order with simulated feedback (:mod:`hela_cli.bench.feedback`, a simulation): each
    question is retrieved (learning per ``cfg``) and scored, then its simulated feedback is applied through
    :func:`hela_cli.mechanics.feedback.apply_feedback`, as ``hela bench locomo --feedback`` does; ``passes`` test-retest
    passes on the same graph. Per pass: recall by category; pass 1 also split by whether the question's
    evidence overlaps an earlier question's evidence."""
    from hela_cli.bench.feedback import EvidenceHistory, parse_feedback, simulated_used
    from hela_cli.mechanics.feedback import apply_feedback, retrieval_record
    from hela_cli.bench.metrics import gold_answer

    kind, p_noise = parse_feedback(feedback)
    convs = parse_file(LOCOMO, "locomo")
    qv = _qvecs(out, emb, [str(qa["question"]) for c in convs for qa in c.qa])
    rows: dict[int, list[dict[str, Any]]] = {p: [] for p in range(1, passes + 1)}
    used_n = traced_n = traced_q = traced_ev = 0
    slot_n: dict[int, int] = {}
    slot_ev: dict[int, int] = {}
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        for c in convs:
            hist = EvidenceHistory()
            reported: set[str] = set()
            with _open(out, f"locomo_{c.name}.db", True, Path(tmp), cfg) as st:
                for p in range(1, passes + 1):
                    for i, qa in enumerate(c.qa):
                        q = str(qa["question"])
                        sp = st.require_space(str(c.name))
                        res = retrieve(st, sp, emb, q, cfg, query_vector=qv[q])
                        ev = evidence_ids(qa.get("evidence"))
                        got = {m["source_id"] for m in res.memories}
                        # ceiling: missed evidence that an earlier question reported as used, at most m of it
                        # brought in (the flipped slots) by a perfect association
                        reach = min(cfg.retrieval.m, len((set(ev) - got) & reported))
                        rows[p].append({"category": question_category(qa), "overlap": hist.overlaps(ev) if p == 1 else None,
                                        "recall": evidence_recall(qa.get("evidence"), list(got)),
                                        "ceiling": (len(set(ev) & got) + reach) / len(set(ev)) if ev else None})
                        if p == 1:   # evidence by slot: the k base hits, then the flipped slots
                            for j, m in enumerate(res.memories):
                                slot_n[j] = slot_n.get(j, 0) + 1
                                slot_ev[j] = slot_ev.get(j, 0) + (m["source_id"] in set(ev))
                        if p == 1:   # use traces that took a flipped slot (after the k base hits)
                            fired = [m for j, m in enumerate(res.memories) if m.get("trace_bonus", 0.0) > 0
                                     and (j >= cfg.retrieval.k or m["path"] == "hebbian")]
                            traced_n += len(fired)
                            traced_q += bool(fired)
                            traced_ev += sum(m["source_id"] in set(ev) for m in fired)
                        used = simulated_used(kind, p_noise, res.memories, ev, gold_answer(qa), q,
                                              seed=f"{c.name}:{i}:{p}")
                        reported |= {m["source_id"] for m in res.memories if m["id"] in set(used)}
                        used_n += len(used)
                        if kind != "none":
                            rec_ = retrieval_record(res.memories)
                            rid = st.log_ask(sp.id, q, None, [m["id"] for m in res.memories], sp.step, kind="recall",
                                             retrieval=rec_, vector=res.query_vector)
                            apply_feedback(st, st.require_space(str(c.name)), rec_, used, cfg, when=time.time(),
                                           recall_id=rid)
    def table(rr: list[dict[str, Any]]) -> dict[str, float]:
        s_ = summarize(rr)
        d = {s_["per_category"][k]["name"]: round(100 * s_["per_category"][k]["recall"], 1)
             for k in sorted(s_["per_category"])}
        d["all 1-5"] = round(100 * s_["overall_all"]["recall"], 1)
        return d
    res_: dict[str, Any] = {f"pass {p}": table(rr) for p, rr in rows.items()}
    for flag, name in ((True, "overlap"), (False, "no overlap")):
        sub = [r for r in rows[1] if r["overlap"] is flag]
        res_[f"pass 1, {name} ({len(sub)})"] = table(sub)
    ceil = [r for r in rows[1] if r["ceiling"] is not None]
    res_["pass 1 ceiling (reported evidence, m slots)"] = table([{**r, "recall": r["ceiling"]} for r in ceil])
    res_["used per question"] = round(used_n / max(1, sum(len(r) for r in rows.values())), 2)
    res_["pass 1 evidence share by slot (%)"] = [round(100 * slot_ev[j] / slot_n[j], 1) for j in sorted(slot_n)]
    n1 = max(1, len(rows[1]))
    res_["pass 1 traces taking a slot: per question / share of questions / evidence share"] = [
        round(traced_n / n1, 2), round(traced_q / n1, 3), round(traced_ev / max(1, traced_n), 3)]
    return res_


def evidence_ranks(out: Path, cfg: Config, emb: Any, depth: int = 200) -> dict[str, list[float]]:
    """Where LoCoMo evidence turns rank by S_base (learning off, spreading off, ``depth`` memories): per
    category, the share of evidence turns within the top 13, 20, 30, 50, 100 and ``depth``."""
    convs = parse_file(LOCOMO, "locomo")
    qv = _qvecs(out, emb, [str(qa["question"]) for c in convs for qa in c.qa])
    dcfg = cfg.replace(**{"retrieval.k": depth, "retrieval.m": 0, "retrieval.spreading": False,
                          "retrieval.vector_candidates": 3000, "retrieval.keyword_candidates": 3000})
    ranks: dict[str, list[int]] = {}
    for c in convs:
        with Store(out / f"locomo_{c.name}.db") as st:
            sp = st.require_space(str(c.name))
            for qa in c.qa:
                q = str(qa["question"])
                order = [m["source_id"] for m in retrieve(st, sp, emb, q, dcfg, learn=False,
                                                          query_vector=qv[q]).memories]
                for g in evidence_ids(qa.get("evidence")):
                    name = CATEGORY_NAMES.get(question_category(qa) or 0, "?")
                    ranks.setdefault(name, []).append(order.index(g) + 1 if g in order else depth + 1)
    cuts = (13, 20, 30, 50, 100, depth)
    return {name: [round(100 * sum(1 for x in r if x <= cut) / len(r), 1) for cut in cuts]
            for name, r in ranks.items()}


def evidence_misses(out: Path, cfg: Config, emb: Any, depth: int = 200) -> dict[str, dict[str, int]]:
    """Where the LoCoMo evidence that a retrieval (learning off) misses lies: per category, evidence turns
    found, and the missed ones by whether the graph links them to one of the ten base memories (a
    conversation link, else a keyword link, else not linked: what spreading could reach at all) and by
    their rank by S_base (spreading off, ``depth`` memories): 14-30, 31-100, beyond."""
    convs = parse_file(LOCOMO, "locomo")
    qv = _qvecs(out, emb, [str(qa["question"]) for c in convs for qa in c.qa])
    deep = cfg.replace(**{"retrieval.k": depth, "retrieval.m": 0, "retrieval.spreading": False,
                          "retrieval.vector_candidates": 3000, "retrieval.keyword_candidates": 3000})
    link_prior = cfg.ingest.initial_weight
    stats: dict[str, dict[str, int]] = {}
    for c in convs:
        with Store(out / f"locomo_{c.name}.db") as st:
            sp = st.require_space(str(c.name))
            node_of = {sid: nid for nid, sid in st.db.execute("SELECT id, source_id FROM nodes WHERE space_id=?",
                                                                 (sp.id,))}
            adj: dict[int, dict[int, float]] = {}
            for a, b, prior in st.db.execute("SELECT a, b, prior FROM edges WHERE space_id=?", (sp.id,)):
                adj.setdefault(a, {})[b] = prior
                adj.setdefault(b, {})[a] = prior
            for qa in c.qa:
                q = str(qa["question"])
                got = retrieve(st, sp, emb, q, cfg, learn=False, query_vector=qv[q]).memories
                found = {m["source_id"] for m in got}
                base = [node_of[m["source_id"]] for m in got if m["path"] == "base"][:cfg.retrieval.k]
                order = [m["source_id"] for m in retrieve(st, sp, emb, q, deep, learn=False,
                                                          query_vector=qv[q]).memories]
                row = stats.setdefault(CATEGORY_NAMES.get(question_category(qa) or 0, "?"), {})
                for g in evidence_ids(qa.get("evidence")):
                    if g in found or g not in node_of:
                        key = "found" if g in found else "not stored"
                    else:
                        priors = [adj.get(node_of[g], {}).get(b) for b in base]
                        kind = ("conversation link" if link_prior in priors else
                                "keyword link" if any(p is not None for p in priors) else "not linked")
                        rank = order.index(g) + 1 if g in order else depth + 1
                        key = f"missed, {kind}, rank {'14-30' if rank <= 30 else '31-100' if rank <= 100 else '>100'}"
                    row[key] = row.get(key, 0) + 1
    return {name: dict(sorted(row.items())) for name, row in stats.items()}


_NAME = re.compile(r"(?<![\w'])([A-Z][A-Za-z]+)(?:'s|’s)?\b")


def _question_names(question: str) -> list[str]:
    """Capitalised words of a question after its first word (names, places, titles), lower-cased."""
    words = [m.group(1) for m in _NAME.finditer(question) if m.start() > 0]
    return [w.lower() for w in words if w.lower() not in _NOT_NAMES]


_NOT_NAMES = {"i", "what", "when", "where", "who", "why", "how", "which", "did", "does", "do", "is", "was", "would",
              "could", "has", "have", "the", "a", "an", "in", "on", "of"}

CAUSES = ("reply to a recalled turn", "never a candidate", "crowded out by one session",
          "date stated differently", "name stated differently", "ranked too low (within 2x budget)",
          "ranked too low (beyond)")


def miss_causes(out: Path, cfg: Config, emb: Any, ks: tuple[int, ...] = (10, 2),
                categories: tuple[int, ...] = (1, 2, 3), detail: Path | None = None) -> dict[str, Any]:
    """Issue 47's miss table: every evidence turn of a multi-hop, temporal or open-domain question that a
    retrieval misses (learning off, ``--k K`` with m as configured: 13 and 5 memories), each put under the
    first cause that holds, in this order:

    1. *reply to a recalled turn*: the turn right before it in its session was recalled (the evidence is
       the answer to a memory that matched);
    2. *never a candidate*: not among the memories the recall scored at all (KNN, keyword hits, the date
       window, the neighbours spreading reached);
    3. *crowded out by one session*: one session other than the evidence's holds half the list or more;
    4. *date stated differently*: the question names a time and the turn lies outside it (its
       ``window_factor`` below 1);
    5. *name stated differently*: the question names someone or something (a capitalised word after the
       first) that is neither the turn's speaker nor in its text;
    6. *ranked too low*: scored, none of the above; split by its rank by the final score (within twice
       the budget, or beyond).

    Two flags are counted beside the cause (not exclusive): no keyword shared with the question (its
    words differ: "ill" / "flu"), and spoken by a person the question names."""
    from hela_cli.mechanics.dynamics import window_factor
    from hela_cli.text.query_time import question_window

    convs = parse_file(LOCOMO, "locomo")
    qv = _qvecs(out, emb, [str(qa["question"]) for c in convs for qa in c.qa])
    every = cfg.replace(**{"retrieval.k": 1, "retrieval.m": 100_000})   # every scored memory, by final score
    table: dict[str, dict[str, Any]] = {}
    lines = []
    for c in convs:
        with Store(out / f"locomo_{c.name}.db") as st:
            sp = st.require_space(str(c.name))
            nodes = list(st.iter_nodes(sp.id))
            by_src = {n["source_id"]: n for n in nodes}
            prev: dict[str, str | None] = {}
            for a, b in zip([None, *nodes[:-1]], nodes):
                prev[b["source_id"]] = a["source_id"] if a is not None and a["session"] == b["session"] else None
            speakers = {str(n["speaker"]).lower() for n in nodes if n["speaker"]}
            for qa in c.qa:
                cat = question_category(qa)
                if cat not in categories:
                    continue
                q = str(qa["question"])
                gold = [g for g in evidence_ids(qa.get("evidence")) if g in by_src]
                if not gold:
                    continue
                ranked = [m["source_id"] for m in retrieve(st, sp, emb, q, every, learn=False,
                                                           query_vector=qv[q]).memories]
                rank = {s_: i + 1 for i, s_ in enumerate(ranked)}
                window = question_window(q, st.space_now(sp.id), tz=None)
                names = _question_names(q)
                q_kw = set(keywords(q))
                name_kw = {t for sp_ in speakers for t in keywords(sp_)}
                for k in ks:
                    kcfg = cfg.replace(**{"retrieval.k": k})
                    budget = k + cfg.retrieval.m
                    got = [m["source_id"] for m in retrieve(st, sp, emb, q, kcfg, learn=False,
                                                            query_vector=qv[q]).memories]
                    sessions = [by_src[s_]["session"] for s_ in got]
                    top_sess = max(set(sessions), key=sessions.count) if sessions else None
                    row = table.setdefault(f"{CATEGORY_NAMES[cat]} @{budget}", {"evidence": 0, "missed": 0})
                    row["evidence"] += len(gold)
                    named = set(names) & speakers
                    if len(named) == 1:   # the question names one of the two people: who speaks the list?
                        for key, val in (("one person named: evidence", len(gold)),
                                         ("... spoken by that person", sum(str(by_src[g]["speaker"]).lower() in named
                                                                           for g in gold)),
                                         ("... list slots", len(got)),
                                         ("... list slots spoken by the other", sum(
                                             str(by_src[s_]["speaker"]).lower() not in named for s_ in got))):
                            row[key] = row.get(key, 0) + val
                    for g in gold:
                        if g in got:
                            continue
                        n = by_src[g]
                        spoken = str(n["speaker"] or "").lower()
                        if prev.get(g) in got:
                            cause = CAUSES[0]
                        elif g not in rank:
                            cause = CAUSES[1]
                        elif top_sess is not None and top_sess != n["session"] \
                                and 2 * sessions.count(top_sess) >= budget:
                            cause = CAUSES[2]
                        elif window is not None and window_factor(n["ts"], window, 1.0,
                                                                  cfg.retrieval.date_slack_days) < 1.0:
                            cause = CAUSES[3]
                        elif any(w != spoken and w not in n["text"].lower() for w in names):
                            cause = CAUSES[4]
                        else:
                            cause = CAUSES[5] if rank[g] <= 2 * budget else CAUSES[6]
                        row["missed"] += 1
                        row[cause] = row.get(cause, 0) + 1
                        if not (q_kw - name_kw) & set(n["keywords"]):
                            row["flag: no shared keyword"] = row.get("flag: no shared keyword", 0) + 1
                        if spoken in names and spoken in speakers:
                            row["flag: spoken by the person named"] = row.get("flag: spoken by the person named", 0) + 1
                        lines.append({"conv": str(c.name), "budget": budget, "category": CATEGORY_NAMES[cat],
                                      "question": q, "evidence": g, "cause": cause, "rank": rank.get(g),
                                      "text": n["text"][:160], "speaker": n["speaker"]})
    if detail is not None:
        detail.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return table


def cosine_scale(out: Path, emb: Any) -> dict[str, float]:
    """The embedder's cosine scale on LoCoMo (question vs every memory of its conversation): medians over
    questions of the mean and standard deviation of all cosines, of the evidence turns' cosine, and of the
    evidence's distance from the mean in standard deviations; plus cosine-only recall in the top 13. Eq.3
    adds ``alpha * keyword_match`` (0..~1.5) to the cosine and Eq.4's ``theta`` is a threshold on that sum,
    so a model whose cosines sit in a narrower or higher band changes what both constants mean."""
    import numpy as np

    convs = parse_file(LOCOMO, "locomo")
    qv = _qvecs(out, emb, [str(qa["question"]) for c in convs for qa in c.qa])
    means, stds, golds, zs, hits = [], [], [], [], []
    for c in convs:
        with Store(out / f"locomo_{c.name}.db") as st:
            sp = st.require_space(str(c.name))
            nodes = list(st.iter_nodes(sp.id))
            vecs = st.node_vectors([n["id"] for n in nodes], sp.id)
            src = [n["source_id"] for n in nodes]
            mat = np.stack([vecs[n["id"]] for n in nodes])
            for qa in c.qa:
                gold = set(evidence_ids(qa.get("evidence")))
                idx = [i for i, s_ in enumerate(src) if s_ in gold]
                if not idx:
                    continue
                cos = mat @ qv[str(qa["question"])]
                mu, sd = float(cos.mean()), float(cos.std())
                g = float(cos[idx].mean())
                means.append(mu)
                stds.append(sd)
                golds.append(g)
                zs.append((g - mu) / sd)
                top = set(np.argsort(-cos)[:13].tolist())
                hits.append(sum(1 for i in idx if i in top) / len(idx))
    return {"mean cos": round(median(means), 3), "sd cos": round(median(stds), 3),
            "evidence cos": round(median(golds), 3), "evidence z": round(median(zs), 2),
            "cosine-only recall@13": round(100 * sum(hits) / len(hits), 1), "questions": len(hits)}


def recall_speed(out: Path, cfg: Config, emb: Any, names: list[str], rounds: int = 3,
                 cold: bool = False, embed: bool = False) -> dict[str, Any]:
    """In-process recall time (``retrieve``, learning off, question vectors cached) of each variant on
    the LoCoMo dev questions, the variants interleaved question by question so load on a shared machine
    falls on all alike: median and p90 of ``timings_ms["total"]`` per variant, the first round a warm-up
    (caches of each process, as a long-lived server or the hook's server has them after its first recall).
    ``cold``: every recall on a freshly opened store (no per-space caches: a one-shot process's recall).
    ``embed``: the question is embedded by the recall, as ``hela ask`` and the hooks do (with a focused probe,
    with its focus words in one batch); else its cached vector is passed in."""
    convs = parse_file(LOCOMO, "locomo")
    qv = _qvecs(out, emb, [str(qa["question"]) for c in convs for qa in c.qa])
    cfgs = {n: cfg.replace(**_with_overrides(n)[0]) for n in names}
    ms: dict[str, list[float]] = {n: [] for n in names}
    for rnd in range(rounds):
        for c in convs:
            with Store(out / f"locomo_{c.name}.db") as st:
                sp = st.require_space(str(c.name))
                for qa in c.qa:
                    q = str(qa["question"])
                    for n in (names if rnd % 2 == 0 else names[::-1]):
                        if cold:
                            from hela_cli.mechanics import retrieval as _rt

                            _rt._TERM_VECTORS.clear()   # a one-shot process has no keyword vectors yet either
                            with Store(out / f"locomo_{c.name}.db") as st1:
                                t = retrieve(st1, st1.require_space(str(c.name)), emb, q, cfgs[n], learn=False,
                                             query_vector=None if embed else qv[q]).timings_ms["total"]
                            if rnd > 0:
                                ms[n].append(t)
                            continue
                        t = retrieve(st, sp, emb, q, cfgs[n], learn=False,
                                     query_vector=None if embed else qv[q]).timings_ms["total"]
                        if rnd > 0:
                            ms[n].append(t)
    return {n: {"p50 ms": round(median(v), 2), "p90 ms": round(sorted(v)[int(0.9 * len(v))], 2), "n": len(v)}
            for n, v in ms.items()}


def run_variant(out: Path, base: Config, name: str, emb: Any, only: str | None = None) -> dict[str, Any]:
    if name in ("bm25", "cosine"):
        with tempfile.TemporaryDirectory() as tmp:
            return {"variant": name, "lme": eval_lme(out, base, emb, False, Path(tmp), baseline=name)}
    overrides, learn = _with_overrides(name)
    cfg = base.replace(**overrides)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        loc = eval_locomo(out, cfg, emb, learn, Path(tmp)) if only != "lme" else None
        lme = eval_lme(out, cfg, emb, learn, Path(tmp)) if only != "locomo" else None
    return {"variant": name, "overrides": overrides, "learn": learn, "locomo": loc, "lme": lme,
            "seconds": round(time.perf_counter() - t0, 1)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cmd", choices=["build", "passages", "eval", "retest", "preq", "ranks", "misses", "causes",
                                    "loco", "topk", "speed", "cosines", "list"])
    ap.add_argument("--categories", default="1,2,3", help="causes: LoCoMo categories (1 multi-hop, 2 temporal, "
                    "3 open-domain, 4 single-hop, 5 adversarial)")
    ap.add_argument("--baseline", default="new-defaults", help="loco: the variant the folds are compared with")
    ap.add_argument("variants", nargs="*")
    ap.add_argument("--dir", default="/tmp/hela-lab")
    ap.add_argument("--budget", type=int, nargs=2, metavar=("K", "M"),
                    help="retrieval.k and retrieval.m for every variant (baselines get K + M)")
    ap.add_argument("--size", type=int, default=500, help="passages: ingest.passage_chars")
    ap.add_argument("--order", choices=["dataset", "session"], default="dataset",
                    help="retest: question order (dataset, or grouped by evidence session)")
    ap.add_argument("--only", choices=["locomo", "lme"], help="evaluate one file only")
    ap.add_argument("--feedback", default="evidence", help="preq: none|evidence|answer|noisy:P (simulation)")
    ap.add_argument("--passes", type=int, default=2, help="preq: test-retest passes")
    ap.add_argument("--warm-only", action="store_true", help="speed: the warm process only (no fresh store)")
    ap.add_argument("--embed", action="store_true", help="speed: each recall embeds its question (as hela ask "
                    "does) instead of taking the cached vector")
    ap.add_argument("--reuse", action="store_true", help="loco: take a variant's rows from an earlier loco run "
                    "in --dir (loco-rows/; only while the code is unchanged)")
    args = ap.parse_args()
    cfg = load_config()
    if args.budget:
        cfg = cfg.replace(**{"retrieval.k": args.budget[0], "retrieval.m": args.budget[1]})
    if args.cmd == "build":
        build(Path(args.dir), cfg, args.only)
    elif args.cmd == "passages":
        build_passages(Path(args.dir), cfg, args.size)
    elif args.cmd == "retest":
        emb = Memory(cfg, store=Store(":memory:")).embedder
        for name in args.variants or ["new-defaults"]:
            overrides, learn = _with_overrides(name)
            vcfg = cfg.replace(**overrides, **{"retrieval.learn": learn})
            LINK_STATS.clear()
            r = {"variant": name, "order": args.order, "retest": retest(Path(args.dir), vcfg, emb,
                                                                        order=args.order)}
            if LINK_STATS:
                r["keyword links per node"] = round(sum(a for a, _ in LINK_STATS) / sum(n for _, n in LINK_STATS), 2)
            print(json.dumps(r), flush=True)
            with open(Path(args.dir) / "results.jsonl", "a") as f:
                f.write(json.dumps(r) + "\n")
    elif args.cmd == "preq":
        emb = Memory(cfg, store=Store(":memory:")).embedder
        for name in args.variants or ["new-defaults"]:
            overrides, learn = _with_overrides(name)
            vcfg = cfg.replace(**overrides, **{"retrieval.learn": learn})
            t0 = time.perf_counter()
            r = {"variant": name, "feedback (simulation)": args.feedback,
                 "prequential": prequential(Path(args.dir), vcfg, emb, args.feedback, args.passes),
                 "seconds": round(time.perf_counter() - t0, 1)}
            print(json.dumps(r), flush=True)
            with open(Path(args.dir) / "results.jsonl", "a") as f:
                f.write(json.dumps(r) + "\n")
    elif args.cmd == "ranks":
        emb = Memory(cfg, store=Store(":memory:")).embedder
        for name in args.variants or ["new-defaults"]:
            r = {"variant": name, "evidence within top 13/20/30/50/100/200 by S_base":
                 evidence_ranks(Path(args.dir), cfg.replace(**VARIANTS[name][0]), emb)}
            print(json.dumps(r), flush=True)
    elif args.cmd == "misses":
        emb = Memory(cfg, store=Store(":memory:")).embedder
        for name in args.variants or ["new-defaults"]:
            print(json.dumps({"variant": name, "evidence": evidence_misses(Path(args.dir),
                                                                           cfg.replace(**VARIANTS[name][0]), emb)}),
                  flush=True)
    elif args.cmd == "causes":
        emb = Memory(cfg, store=Store(":memory:")).embedder
        for name in args.variants or ["new-defaults"]:
            overrides, _ = _with_overrides(name)
            table = miss_causes(Path(args.dir), cfg.replace(**overrides), emb,
                                categories=tuple(int(x) for x in args.categories.split(",")),
                                detail=Path(args.dir) / f"causes-{name}.jsonl")
            print(json.dumps({"variant": name, "causes": table}), flush=True)
    elif args.cmd == "loco":
        emb = _QueryMemo(Memory(cfg, store=Store(":memory:")).embedder)
        r = {"loco": loco(Path(args.dir), cfg, emb, args.variants, args.baseline, args.reuse),
             "budget": cfg.retrieval.k + cfg.retrieval.m}
        print(json.dumps(r), flush=True)
        with open(Path(args.dir) / "results.jsonl", "a") as f:
            f.write(json.dumps(r) + "\n")
    elif args.cmd == "speed":
        emb = Memory(cfg, store=Store(":memory:")).embedder
        for cold in (False,) if args.warm_only else (False, True):
            print(json.dumps({"recall time (in process, learning off)": "fresh store each recall" if cold else "warm",
                              "question embedded in the recall": args.embed,
                              **recall_speed(Path(args.dir), cfg, emb, args.variants, rounds=2 if cold else 3,
                                             cold=cold, embed=args.embed)}), flush=True)
    elif args.cmd == "topk":
        emb = _QueryMemo(Memory(cfg, store=Store(":memory:")).embedder)
        for name in args.variants or ["new-defaults"]:
            for k in (2, 5, 10):   # 5, 8 and 13 memories (m as configured; baselines k + m)
                kcfg = cfg.replace(**{"retrieval.k": k})
                if name in ("bm25", "cosine"):
                    rows = locomo_rows(Path(args.dir), kcfg, emb, False, Path(args.dir), baseline=name)
                else:
                    overrides, learn = _with_overrides(name)
                    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
                        rows = locomo_rows(Path(args.dir), kcfg.replace(**overrides), emb, learn, Path(tmp))
                r = {"variant": name, "budget": k + cfg.retrieval.m, "recall": locomo_table(rows),
                     **{f"recall within {tb} tokens": locomo_table(rows, f"recall@{tb}tok") for tb in TOKEN_BUDGETS},
                     "ms p50": round(median(r_["ms"] for r_ in rows), 1)}
                print(json.dumps(r), flush=True)
                with open(Path(args.dir) / "results.jsonl", "a") as f:
                    f.write(json.dumps(r) + "\n")
    elif args.cmd == "cosines":
        emb = Memory(cfg, store=Store(":memory:")).embedder
        print(json.dumps({"embedder": emb.model_id, **cosine_scale(Path(args.dir), emb)}), flush=True)
    elif args.cmd == "list":
        for n, (o, le) in VARIANTS.items():
            print(f"{n}: {o} learn={le}")
    else:
        out = Path(args.dir)
        emb = Memory(cfg, store=Store(":memory:")).embedder
        for name in args.variants:
            LINK_STATS.clear()
            r = run_variant(out, cfg, name, emb, args.only)
            if LINK_STATS:
                r["keyword links per node"] = round(sum(a for a, _ in LINK_STATS) / sum(n for _, n in LINK_STATS), 2)
            r["budget"] = cfg.retrieval.k + cfg.retrieval.m
            print(json.dumps(r), flush=True)
            with open(out / "results.jsonl", "a") as f:
                f.write(json.dumps(r) + "\n")
