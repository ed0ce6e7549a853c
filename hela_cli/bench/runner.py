"""The runner both benchmarks share (``hela bench locomo`` and ``hela bench longmemeval``; no typer / rich here).

* :data:`VARIANTS` and :func:`variant_config` - the ablations, through configuration only (the table is in
  :mod:`hela_cli.bench.locomo`);
* :func:`fingerprint`, :func:`load_records`, :class:`RecordWriter` - the resumable records file (JSONL,
  flushed and fsynced; a torn last line is dropped);
* :class:`Runner` - asks one conversation's questions against one fresh space; :func:`retrieved` - the
  per-question record of the retrieved memories.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from hela_cli.config import Config
from hela_cli.errors import InputError
from hela_cli.text.keywords import keywords
from hela_cli.models import embed_queries
from hela_cli.answering.prompts import answer_messages
from hela_cli.answering.answer import answer

__all__ = ["VARIANTS", "BASELINES", "variant_config", "fingerprint", "load_records", "RecordWriter", "Runner",
           "retrieved"]

VARIANTS = ("full", "no-spreading", "no-reflect", "no-forget", "no-learn", "cosine", "bm25")
BASELINES = ("cosine", "bm25")

# ----------------------------------------------------------------------------------- variants
def variant_config(cfg: Config, variant: str, k: int | None = None) -> tuple[Config, list[str]]:
    """The configuration of a variant (a copy of ``cfg``) and notes about what it means in this run."""
    if variant not in VARIANTS:
        raise InputError(f"unknown variant '{variant}' (choose from {', '.join(VARIANTS)})")
    changes: dict[str, Any] = {}
    if k is not None:
        if k < 1:
            raise InputError(f"--k must be at least 1, got {k}")
        changes["retrieval.k"] = k
    notes: list[str] = []
    if variant == "no-spreading":
        changes["retrieval.spreading"] = False
    elif variant == "no-reflect":
        changes["consolidation.auto"] = False
        changes["retrieval.semantic_k"] = 0
    elif variant == "no-learn":
        changes["retrieval.learn"] = False
    elif variant in BASELINES:
        notes.append(f"{variant} baseline: plain top-(k+m) by "
                     f"{'embedding cosine' if variant == 'cosine' else 'BM25 on the question keywords'}, "
                     f"no Hebbian learning, no semantic records")
    return cfg.replace(**changes), notes


# ----------------------------------------------------------------------------------- records file
def fingerprint(cfg: Config, variant: str, retrieval_only: bool, path: str | Path,
                 forget_every: int) -> dict[str, Any]:
    """What must match for records to be reused: variant, mode, dataset file name and the effective config
    (minus machine-specific paths and thread counts)."""
    d = dataclasses.asdict(cfg)
    d.pop("db", None)
    d["models"].pop("dir", None)
    d["models"].pop("n_threads", None)
    digest = hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]
    return {"variant": variant, "retrieval_only": retrieval_only, "k": cfg.retrieval.k, "m": cfg.retrieval.m,
            "file": Path(path).name, "forget_every": forget_every, "config": digest}


def load_records(path: str | Path) -> list[dict[str, Any]]:
    """Read a records JSONL file. A torn last line (the process died while writing it) is dropped from the
    file; any other unreadable line is an :class:`InputError`."""
    p = Path(path)
    if not p.exists():
        return []
    if p.is_dir():
        raise InputError(f"{p}: is a directory, not a records file")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise InputError(f"{p}: cannot read records file ({e.strerror})") from None
    lines = data.split(b"\n")
    out: list[dict[str, Any]] = []
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
            if not isinstance(rec, dict) or "sample" not in rec or "qa_index" not in rec:
                raise ValueError("not a benchmark record")
        except (ValueError, UnicodeDecodeError) as e:
            if n == len(lines) and not data.endswith(b"\n"):  # torn final write: drop it
                with open(p, "r+b") as f:
                    f.truncate(len(data) - len(raw))
                break
            raise InputError(f"{p}: line {n}: not a benchmark record ({e.__class__.__name__}); "
                             f"use a new --records file") from None
        out.append(rec)
    else:
        if data and not data.endswith(b"\n"):  # complete last record without its newline
            with open(p, "ab") as f:
                f.write(b"\n")
    return out


class RecordWriter:
    def __init__(self, path: str | Path | None):
        self.f = None
        if path is not None:
            p = Path(path)
            if p.parent and not p.parent.exists():
                raise InputError(f"{p}: directory {p.parent} does not exist")
            try:
                self.f = open(p, "a", encoding="utf-8")
            except OSError as e:
                raise InputError(f"{p}: cannot write records file ({e.strerror})") from None

    def write(self, rec: Mapping[str, Any]) -> None:
        if self.f is None:
            return
        self.f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        self.f.flush()
        os.fsync(self.f.fileno())

    def close(self) -> None:
        if self.f is not None:
            self.f.close()


# ----------------------------------------------------------------------------------- one conversation
class Runner:
    """Asks one conversation's questions against one fresh space."""

    def __init__(self, mem: Any, space: str, variant: str, retrieval_only: bool,
                 count_tokens: Callable[[str], int], forget: Callable[..., dict[str, Any]] | None = None,
                 forget_every: int = 0):
        from hela_cli.mechanics.retrieval import retrieve

        self._retrieve = retrieve
        self._forget = forget
        self.forget_every = forget_every
        self.questions = 0
        self.forgotten = 0
        self.count_tokens = count_tokens
        self.mem = mem
        self.store = mem.store
        self.cfg: Config = mem.config
        self.space = space
        self.variant = variant
        self.retrieval_only = retrieval_only
        self.budget = self.cfg.retrieval.k + self.cfg.retrieval.m

    def _baseline(self, question: str) -> list[dict[str, Any]]:
        sp = self.store.require_space(self.space)
        if self.variant == "cosine":
            q = embed_queries(self.mem.embedder, [question])[0]
            hits = self.store.knn(sp.id, q, self.budget)
        else:
            hits = self.store.keyword_search(sp.id, keywords(question), self.budget)
        nodes = self.store.get_nodes([nid for nid, _ in hits])
        return [{"id": nid, "source_id": nodes[nid]["source_id"], "text": nodes[nid]["text"],
                 "speaker": nodes[nid]["speaker"], "timestamp": nodes[nid]["ts"],
                 "time_str": nodes[nid]["time_str"], "session": nodes[nid]["session"],
                 "path": "base", "score": score, "base_score": score}
                for nid, score in hits if nid in nodes]

    def after_question(self) -> None:
        """Periodic forgetting (paper section 3.3): every ``forget_every`` questions, asked or replayed."""
        self.questions += 1
        if self._forget is not None and self.forget_every > 0 and self.questions % self.forget_every == 0:
            out = self._forget(self.store, self.store.require_space(self.space), self.cfg, apply=True)
            self.forgotten += int(out.get("removed", 0))

    def replay(self, question: str) -> dict[str, Any]:
        """Redo the graph side effects of an already recorded question (no answer generation); returns what
        its feedback needs: ``memories``, ``query_vector`` / ``recall_id``."""
        if self.variant in BASELINES:
            return {"memories": []}  # baselines do not change the store
        if self.retrieval_only:
            res = self._retrieve(self.store, self.store.require_space(self.space), self.mem.embedder, question,
                                 self.cfg)
            return {"memories": res.memories, "query_vector": res.query_vector}
        # Memory.ask minus the answer: learning, then the auto-consolidation a learning ask with the
        # LLM is followed by (distillation is deterministic: temperature 0, fixed seed)
        out = self.mem.ask(question, self.space, llm=False)
        if self.cfg.retrieval.learn and out["memories"]:
            self.mem.consolidate_if_due(self.space)
        return {"memories": out["memories"], "recall_id": out["recall_id"]}

    def ask(self, question: str) -> dict[str, Any]:
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        prediction = None
        trace: dict[str, Any] = {}   # what the question's feedback needs: its asks-log row or its query vector
        if self.variant in BASELINES:
            memories = self._baseline(question)
            messages = answer_messages(question, memories, [])
            timings["retrieval_ms"] = (time.perf_counter() - t0) * 1000
            if not self.retrieval_only:
                t1 = time.perf_counter()
                prediction = answer(self.mem.chat, messages, memories, self.cfg.answer)  # as Memory.ask answers
                timings["generate_ms"] = (time.perf_counter() - t1) * 1000
            tokens = self.count_tokens("\n".join(m["content"] for m in messages))
            semantic_n = 0
        elif self.retrieval_only:
            # the space object must be fresh: its step defines the current edge weights
            res = self._retrieve(self.store, self.store.require_space(self.space), self.mem.embedder, question,
                                 self.cfg)
            timings["retrieval_ms"] = res.timings_ms.get("total", (time.perf_counter() - t0) * 1000)
            memories, semantic_n = res.memories, len(res.semantic)
            messages = answer_messages(question, res.memories, res.semantic)
            tokens = self.count_tokens("\n".join(m["content"] for m in messages))
            trace = {"query_vector": res.query_vector}
        else:
            out = self.mem.ask(question, self.space, llm=True)
            trace = {"recall_id": out["recall_id"]}
            memories, semantic_n, prediction = out["memories"], len(out["semantic"]), out["answer"]
            tokens = out["context_tokens"]
            tm = out["timings_ms"]
            gen = tm.get("generate")
            timings["retrieval_ms"] = tm.get("total", 0.0) - (gen or 0.0)
            if gen is not None:
                timings["generate_ms"] = gen
            if self.cfg.retrieval.learn and memories:  # as `hela ask` runs it, after the answer
                rep = self.mem.consolidate_if_due(self.space)
                if rep is not None:
                    timings["consolidate_ms"] = rep.get("seconds", 0.0) * 1000
        return {"memories": memories, "semantic": semantic_n, "prediction": prediction, "tokens": tokens,
                **{k: round(v, 2) for k, v in timings.items()}, **trace}


def retrieved(memories: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    def r(x: Any) -> Any:
        return round(float(x), 6) if x is not None else None

    return [{"source_id": m.get("source_id"), "path": m.get("path"), "score": r(m.get("score")),
             "base_score": r(m.get("base_score"))} for m in memories]
