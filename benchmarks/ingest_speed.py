"""Ingest speed, before/after in one run (performance, not a test): turns/s and embedder tokens/s.

    python benchmarks/ingest_speed.py --locomo ../shared/data/locomo_dev.json --lme ../shared/data/longmemeval_s_dev30.json

For each transcript and each embedding mode (interleaved, ``--reps`` rounds) a fresh database file is
ingested with ``ingest_conversations`` and the default config (turn + previous turn, 64 turns a batch):

* ``one_at_a_time``: the embedding path before batching: llama-cpp-python's ``Llama.embed`` called once
  per text, plain attention (what ``LlamaEmbedder.embed`` did up to commit 4b13683);
* ``batched``: today's ``LlamaEmbedder.embed`` (texts sorted by token count, several per ``llama_decode``,
  flash attention).

``--embedders minilm,e5-small`` compares embedders instead (each in the ``batched`` mode, interleaved; an
alias of ``hela models pull`` or a GGUF path; tokens counted by each model's own tokenizer, prefix included).

Reported per run: wall seconds, turns/s, embedder tokens/s (tokens the embedder saw, each text cut at its
context window), the share of wall time spent inside ``embed`` and process CPU seconds (less sensitive to
other processes than wall time on a shared machine). Model load is excluded. Medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hela_cli.config import Config  # noqa: E402
from hela_cli.formats import Conversation, parse_file  # noqa: E402
from hela_cli.ingest import embedding_text, ingest_conversations  # noqa: E402
from hela_cli.memory import Memory  # noqa: E402
from hela_cli.store import Store  # noqa: E402


class OneAtATime:
    """The pre-batching embedder: one ``Llama.embed`` call per text, no flash attention."""

    def __init__(self, emb: Any):
        from llama_cpp import Llama

        self.model_id, self.dim, self.n_ctx, self.path = emb.model_id, emb.dim, emb.n_ctx, emb.path
        self._llm = Llama(model_path=str(emb.path), verbose=False, embedding=True, n_ctx=emb.n_ctx,
                          n_batch=emb.n_ctx, n_ubatch=emb.n_ctx, n_threads=emb._llm.n_threads)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray([self._llm.embed(t if t.strip() else ".", normalize=True, truncate=True)
                           for t in texts], dtype=np.float32).reshape(len(texts), self.dim)


class Timed:
    """Counts the time spent inside ``embed``."""

    def __init__(self, inner: Any):
        self.inner, self.seconds = inner, 0.0
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        t = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - t


def load(kind: str, path: str, limit: int) -> list[Conversation]:
    if kind == "lme":
        from hela_cli.bench_longmemeval import load_items

        return [it.conv for it in load_items(path)[:limit]]
    convs = parse_file(path)
    left, out = limit, []
    for c in convs:  # the first `limit` turns
        if left <= 0:
            break
        c.turns = c.turns[:left]
        left -= len(c.turns)
        out.append(c)
    return out


def embed_tokens(convs: Sequence[Conversation], emb: Any, cfg: Config) -> int:
    n = 0
    for c in convs:
        for i in range(len(c.turns)):
            text = getattr(emb, "passage_prefix", "") + embedding_text(c.turns, i, cfg.ingest.context_window,
                                                                       cfg.ingest.max_turn_chars)
            n += min(len(emb._llm.tokenize(text.encode("utf-8", "replace"))), emb.n_ctx)
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", default=None, help="LoCoMo file (e.g. ../shared/data/locomo_dev.json)")
    ap.add_argument("--locomo-turns", type=int, default=700, help="first N turns of it [700]")
    ap.add_argument("--lme", default=None, help="LongMemEval file (e.g. ../shared/data/longmemeval_s_dev30.json)")
    ap.add_argument("--lme-items", type=int, default=1, help="first N haystacks of it [1]")
    ap.add_argument("--modes", default="one_at_a_time,batched")
    ap.add_argument("--embedders", default=None, help="compare these embedders (aliases or GGUF paths), "
                    "batched mode, instead of --modes")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()

    cfg = Config()
    if args.embedders:
        embedders = {name: Memory(cfg.replace(**{"models.embedder": name})).embedder
                     for name in args.embedders.split(",")}
        args.modes = args.embedders
    else:
        emb = Memory(cfg).embedder
        embedders = {"batched": emb, "one_at_a_time": OneAtATime(emb)}
    sets = []
    if args.locomo:
        sets.append(("locomo", load("locomo", args.locomo, args.locomo_turns)))
    if args.lme:
        sets.append(("lme", load("lme", args.lme, args.lme_items)))
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, convs in sets:
            turns = sum(len(c.turns) for c in convs)
            counted = {m: embed_tokens(convs, e, cfg) for m, e in embedders.items() if hasattr(e, "path")
                       and not isinstance(e, OneAtATime)}
            for rep in range(args.reps):
                for mode in args.modes.split(","):
                    tokens = counted.get(mode) or next(iter(counted.values()))
                    db = Path(tmp) / f"{name}-{mode}-{rep}.db"
                    store = Store(db)
                    timed = Timed(embedders[mode])
                    c0, t0 = time.process_time(), time.perf_counter()
                    summary = ingest_conversations(store, timed, convs, cfg)
                    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                    store.close()
                    assert summary["nodes_added"] == turns, summary
                    row = {"set": name, "mode": mode, "rep": rep, "turns": turns, "tokens": tokens,
                           "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "embed_s": round(timed.seconds, 2),
                           "turns_per_s": round(turns / wall, 1), "tokens_per_s": round(tokens / wall),
                           "embed_share": round(timed.seconds / wall, 3)}
                    results.append(row)
                    print(json.dumps(row), flush=True)
    print("medians:")
    for name, _ in sets:
        for mode in args.modes.split(","):
            rows = [r for r in results if r["set"] == name and r["mode"] == mode]
            print(f"  {name:7s} {mode:14s} {statistics.median(r['turns_per_s'] for r in rows):7.1f} turns/s "
                  f"{statistics.median(r['tokens_per_s'] for r in rows):7.0f} tokens/s "
                  f"cpu {statistics.median(r['cpu_s'] for r in rows):6.1f} s  embed share "
                  f"{statistics.median(r['embed_share'] for r in rows):.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
