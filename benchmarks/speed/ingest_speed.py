"""Ingest speed, before/after in one run (performance, not a test): turns/s and embedder tokens/s.

    python benchmarks/speed/ingest_speed.py --locomo ../shared/data/locomo_dev.json --lme ../shared/data/longmemeval_s_dev30.json

For each transcript and each embedding mode (interleaved, ``--reps`` rounds) a fresh database file is
ingested with ``ingest_conversations`` and the default config (turn + previous turn, 64 turns a batch):

* ``one_at_a_time``: the embedding path before batching: llama-cpp-python's ``Llama.embed`` called once
  per text, plain attention (what ``LlamaEmbedder.embed`` did up to commit 4b13683);
* ``one_context``: the batching below on one llama.cpp context with every thread (up to issue 16's round 4);
* ``batched``: today's ``LlamaEmbedder.embed`` (texts sorted by token count, several per ``llama_decode``,
  flash attention; with two or more threads, half of a batch's decodes on a second context in a second
  thread).

``--embedders minilm,e5-small`` compares embedders instead of modes (each in the ``batched`` mode, interleaved;
an alias of ``hela models pull`` or a GGUF path; tokens counted by each model's own tokenizer, prefix included).

``--rules`` compares embedding-text rules (named configuration overrides, see ``RULES``) in the same
run, interleaved with the modes: e.g. ``--modes batched --rules old,default``.

Reported per run: wall seconds, turns/s, embedder tokens/s (tokens the embedder saw, each text cut at its
context window), the share of wall time spent inside ``embed`` and process CPU seconds (less sensitive to
other processes than wall time on a shared machine). Model load is excluded. Medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

REPO = Path(__file__).resolve().parents[2]

from hela_cli.config import Config  # noqa: E402
from hela_cli.formats import Conversation, parse_file  # noqa: E402
from hela_cli.ingest import embedding_texts, ingest_conversations  # noqa: E402
from hela_cli.memory import Memory  # noqa: E402
from hela_cli.store import Store  # noqa: E402


#: rule name -> configuration overrides
RULES: dict[str, dict[str, Any]] = {
    "default": {},
    # before issue 16's round 3: preceding turn first, the 512-token window cuts the end
    "old": {"ingest.embed_tokens": 0},
    # the same order with a 256-token window (the embedder's window cuts the end at 256)
    "window256": {"ingest.embed_tokens": 0, "models.embed_ctx": 256},
    "budget256": {"ingest.embed_tokens": 256},
    "budget192": {"ingest.embed_tokens": 192},
    "budget128": {"ingest.embed_tokens": 128},
    "turn-only": {"ingest.context_window": 0, "ingest.embed_tokens": 0},
}


class OneAtATime:
    """The pre-batching embedder: one ``Llama.embed`` call per text, no flash attention."""

    def __init__(self, emb: Any):
        from llama_cpp import Llama

        self.model_id, self.dim, self.n_ctx, self.path = emb.model_id, emb.dim, emb.n_ctx, emb.path
        self.count_tokens = emb.count_tokens
        self._llm = Llama(model_path=str(emb.path), verbose=False, embedding=True, n_ctx=emb.n_ctx,
                          n_batch=emb.n_ctx, n_ubatch=emb.n_ctx, n_threads=emb._llm.n_threads)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray([self._llm.embed(t if t.strip() else ".", normalize=True, truncate=True)
                           for t in texts], dtype=np.float32).reshape(len(texts), self.dim)


def one_context(emb: Any) -> Any:
    """Today's batching on one llama.cpp context with every thread (the embedder before issue 16's round
    4, which runs half of a batch's decodes on a second context)."""
    from hela_cli.models import LlamaEmbedder

    e = LlamaEmbedder(emb.path, emb.model_id, n_ctx=emb.n_ctx, n_threads=emb.n_threads)
    e._embed_groups = lambda texts, groups, out: [e._embed_group(e._llm, texts, g, out) for g in groups]
    return e


class Timed:
    """Counts the time spent inside ``embed``."""

    def __init__(self, inner: Any):
        self.inner, self.seconds = inner, 0.0
        self.model_id, self.dim, self.n_ctx = inner.model_id, inner.dim, inner.n_ctx
        self.count_tokens = inner.count_tokens  # the embedding-text rule counts with the embedder's tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        t = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - t


def load(kind: str, path: str, limit: int) -> list[Conversation]:
    if kind == "lme":
        from hela_cli.bench.longmemeval import load_items

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
        for text in embedding_texts(c.turns, range(len(c.turns)), emb, cfg):
            text = getattr(emb, "passage_prefix", "") + text
            n += min(len(emb._llm.tokenize(text.encode("utf-8", "replace"))), emb.n_ctx)
    return n


def text_stats(convs: Sequence[Conversation], emb: Any, cfg: Config) -> dict[str, Any]:
    """Embedding texts of a rule against the 'old' rule's: tokens the embedder sees (cut at its window),
    texts that differ, turns whose own line is not whole within the window, CPU to build the texts."""
    old_cfg = Config().replace(**RULES["old"])
    turns = tokens = changed = own_cut = 0
    cpu = 0.0
    for c in convs:
        idx = range(len(c.turns))
        c0 = time.process_time()
        texts = embedding_texts(c.turns, idx, emb, cfg)
        cpu += time.process_time() - c0
        for i, text, old in zip(idx, texts, embedding_texts(c.turns, idx, emb, old_cfg)):
            toks = emb._llm.tokenize(text.encode("utf-8", "replace"))
            seen = emb._llm.detokenize(toks[:emb.n_ctx]).decode("utf-8", "replace")
            own = f"{c.turns[i].speaker}: {c.turns[i].text[:cfg.ingest.max_turn_chars]}"
            own_seen = emb._llm.detokenize(emb._llm.tokenize(own.encode("utf-8", "replace"))).decode("utf-8", "replace")
            turns += 1
            tokens += min(len(toks), emb.n_ctx)
            changed += text != old
            own_cut += not " ".join(seen.split()).endswith(" ".join(own_seen.split()))
    return {"turns": turns, "tokens_a_turn": round(tokens / turns, 1), "changed_vs_old": round(changed / turns, 3),
            "turn_not_whole": round(own_cut / turns, 3), "build_cpu_ms_a_turn": round(cpu / turns * 1e3, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", default=None, help="LoCoMo file (e.g. ../shared/data/locomo_dev.json)")
    ap.add_argument("--locomo-turns", type=int, default=700, help="first N turns of it [700]")
    ap.add_argument("--lme", default=None, help="LongMemEval file (e.g. ../shared/data/longmemeval_s_dev30.json)")
    ap.add_argument("--lme-items", type=int, default=1, help="first N haystacks of it [1]")
    ap.add_argument("--modes", default="one_context,batched", help="of one_at_a_time, one_context, batched")
    ap.add_argument("--embedders", default=None, help="compare these embedders (aliases or GGUF paths), "
                    "batched mode, instead of --modes")
    ap.add_argument("--rules", default="default", help=f"embedding-text rules, of {','.join(RULES)} [default]")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--tokens-only", action="store_true",
                    help="no ingest: per rule, tokens a turn, texts that differ from the 'old' rule, turns whose "
                         "own line the embedder does not see whole, and the CPU time of building the texts")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()

    rules = args.rules.split(",")
    modes = args.modes.split(",")
    cfgs = {r: Config().replace(**RULES[r]) for r in rules}
    base: dict[int, Any] = {}  # embed_ctx -> LlamaEmbedder
    for r in rules:
        ctx = cfgs[r].models.embed_ctx
        if ctx not in base:
            base[ctx] = Memory(cfgs[r]).embedder
    if args.embedders:   # one "mode" per embedder, each batched
        modes = args.embedders.split(",")
        embedders = {(name, ctx): Memory(cfgs[r].replace(**{"models.embedder": name})).embedder
                     for name in modes for r in rules for ctx in [cfgs[r].models.embed_ctx]}
    else:
        wrap = {"batched": lambda e: e, "one_context": one_context, "one_at_a_time": OneAtATime}
        embedders = {(m, ctx): wrap[m](e) for ctx, e in base.items() for m in modes}
    sets = []
    if args.locomo:
        sets.append(("locomo", load("locomo", args.locomo, args.locomo_turns)))
    if args.lme:
        sets.append(("lme", load("lme", args.lme, args.lme_items)))
    if args.tokens_only:
        for name, convs in sets:
            for rule in rules:
                print(json.dumps({"set": name, "rule": rule,
                                  **text_stats(convs, base[cfgs[rule].models.embed_ctx], cfgs[rule])}), flush=True)
        return
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, convs in sets:
            turns = sum(len(c.turns) for c in convs)
            if args.embedders:   # each embedder's own tokenizer (and prefix)
                tokens = {(r, m): embed_tokens(convs, embedders[(m, cfgs[r].models.embed_ctx)], cfgs[r])
                          for r in rules for m in modes}
            else:
                tokens = {(r, m): embed_tokens(convs, base[cfgs[r].models.embed_ctx], cfgs[r])
                          for r in rules for m in modes}
            for rep in range(args.reps):
                for rule in rules:
                    cfg = cfgs[rule]
                    for mode in modes:
                        db = Path(tmp) / f"{name}-{rule}-{mode}-{rep}.db"
                        store = Store(db)
                        timed = Timed(embedders[(mode, cfg.models.embed_ctx)])
                        c0, t0 = time.process_time(), time.perf_counter()
                        summary = ingest_conversations(store, timed, convs, cfg)
                        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                        store.close()
                        db.unlink()
                        assert summary["nodes_added"] == turns, summary
                        row = {"set": name, "rule": rule, "mode": mode, "rep": rep, "turns": turns,
                               "tokens": tokens[(rule, mode)], "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                               "embed_s": round(timed.seconds, 2), "turns_per_s": round(turns / wall, 1),
                               "tokens_per_s": round(tokens[(rule, mode)] / wall),
                               "tokens_per_cpu_s": round(tokens[(rule, mode)] / cpu),
                               "embed_share": round(timed.seconds / wall, 3),
                               "loadavg": Path("/proc/loadavg").read_text().split()[0]}
                        results.append(row)
                        print(json.dumps(row), flush=True)
    print("medians:")
    for name, _ in sets:
        for rule in rules:
            for mode in modes:
                rows = [r for r in results if r["set"] == name and r["mode"] == mode and r["rule"] == rule]
                print(f"  {name:7s} {rule:10s} {mode:14s} {statistics.median(r['turns_per_s'] for r in rows):7.1f} "
                      f"turns/s {statistics.median(r['tokens_per_s'] for r in rows):7.0f} tokens/s "
                      f"cpu {statistics.median(r['cpu_s'] for r in rows):6.1f} s  "
                      f"{rows[0]['tokens'] / rows[0]['turns']:.0f} tokens a turn  embed share "
                      f"{statistics.median(r['embed_share'] for r in rows):.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
