"""``hela reembed``: give an existing database the vectors of another embedder.

A database is bound to one embedder (vectors of two models do not compare), for all its spaces. To move
to another model every memory is embedded again, as ingest embeds it (the turn with
``ingest.context_window`` preceding turns of its session, each cut to ``ingest.max_turn_chars``), and so
are the passages of long turns (``ingest.passage_chars``) and the semantic records.

* Resumable: vectors are staged one batch per transaction (store: ``reembed_stage``); an interrupted run
  (Ctrl-C, crash) keeps its batches, and running the same command again continues where it stopped.
  Starting with another model drops the staged vectors of the first.
* All or nothing for readers: the database keeps answering with the old embedder until the last batch;
  then every vector and the binding are swapped in one transaction.
* Memories added meanwhile (another process, the old embedder) are embedded before the swap.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Container

from hela_cli.config import Config
from hela_cli.errors import StoreError
from hela_cli.formats import Turn
from hela_cli.ingest import embedding_text, split_passages
from hela_cli.models import Embedder
from hela_cli.store import Store

Progress = Callable[[int, int], None]


def node_texts(store: Store, cfg: Config, skip: Container[int]) -> list[tuple[int, str]]:
    """``(node_id, text the embedder sees)`` for every node not in ``skip``, as ingest builds it: the turn
    after up to ``ingest.context_window`` preceding turns of its session (in the space's order)."""
    window, max_chars = cfg.ingest.context_window, cfg.ingest.max_turn_chars
    sessions: dict[tuple[int, str | None], list[Turn]] = {}
    out: list[tuple[int, str]] = []
    for nid, space_id, session, speaker, text, ts, source_id in store.reembed_nodes():
        turns = sessions.setdefault((space_id, session), [])
        turns.append(Turn(speaker, text, ts, "", session, source_id))
        if nid in skip:
            continue
        # a node without a session has no context: ingest gives every turn one, live adds get "add:..."
        ctx = turns if session is not None else [turns[-1]]
        out.append((nid, embedding_text(ctx, len(ctx) - 1, window, max_chars)))
    return out


def reembed(store: Store, embedder: Embedder, cfg: Config, progress: Progress | None = None,
            batch: int | None = None) -> dict[str, Any]:
    """Re-embed every memory, passage and semantic record of ``store`` with ``embedder`` and bind it.

    Returns ``{"model", "dim", "previous", "vectors": {kind: count}, "resumed", "embedded", "seconds"}``.
    A database already bound to ``embedder`` is left alone (``"unchanged": True``)."""
    t0 = time.perf_counter()
    model_id, dim = embedder.model_id, int(embedder.dim)
    if store.embedder_info() == (model_id, dim) and store.reembed_target() is None:
        return {"model": model_id, "dim": dim, "previous": [model_id, dim], "unchanged": True,
                "vectors": {}, "resumed": 0, "embedded": 0, "passages_dropped": 0,
                "seconds": round(time.perf_counter() - t0, 3)}
    resumed = store.reembed_begin(model_id, dim)
    bs = max(1, batch or cfg.ingest.batch_size)
    size = cfg.ingest.passage_chars
    embedded = 0
    for _round in range(10):  # another process may add memories while this runs: catch up, then swap
        node_done = store.reembed_staged("node")
        todo_nodes = node_texts(store, cfg, node_done)
        owners = store.reembed_passage_owners() if size > 0 else set()
        passage_done = store.reembed_staged("passage")
        todo_passages = []
        for nid, _space, _sess, sp, text, _ts, _src in store.reembed_nodes():
            parts = split_passages(text, size) if nid in owners else []
            if parts and passage_done.get(nid) != len(parts):  # a node's passages may straddle two batches
                todo_passages += [(nid, f"{sp}: {part}" if sp else part, k) for k, part in enumerate(parts)]
        sem_done = store.reembed_staged("semantic")
        todo_sem = [(rid, f"{subject}: {text}" if subject else text, 0)
                    for rid, subject, text in store.reembed_semantic() if rid not in sem_done]
        jobs = ([("node", nid, t, 0) for nid, t in todo_nodes]
                + [("passage", nid, t, k) for nid, t, k in todo_passages]
                + [("semantic", rid, t, 0) for rid, t, _ in todo_sem])
        total = len(jobs)
        for s in range(0, total, bs):
            chunk = jobs[s:s + bs]
            vecs = embedder.embed([t for _, _, t, _ in chunk])
            with store.transaction():
                for kind in ("node", "passage", "semantic"):
                    rows = [(i, part, v) for (k, i, _, part), v in zip(chunk, vecs) if k == kind]
                    if rows:
                        store.stage_vectors(kind, rows)
            embedded += len(chunk)
            if progress:
                progress(min(s + bs, total), total)
        swapped = store.reembed_swap(model_id, dim)
        if swapped is not None:
            return {"model": model_id, "dim": dim, **swapped, "resumed": resumed, "embedded": embedded,
                    "seconds": round(time.perf_counter() - t0, 3)}
    raise StoreError("memories kept arriving during the re-embed; run it again to finish")  # pragma: no cover
