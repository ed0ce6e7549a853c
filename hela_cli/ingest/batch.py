"""Files -> a space: every file parsed first, then turns embedded and stored in batches (one transaction
each), consecutive turns linked, and the cold-start keyword links after a space's last batch."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from hela_cli.config import Config
from hela_cli.formats import Conversation, parse_file, session_files
from hela_cli.ingest.embedding import embed_passages, embedding_texts
from hela_cli.ingest.links import link_keywords
from hela_cli.ingest.nodes import node_row, source_hash, turn_hash
from hela_cli.ingest.write import Entry, clean, embed, write
from hela_cli.facts.detect import Judge
from hela_cli.models import Embedder
from hela_cli.errors import StoreFull
from hela_cli.store import Store

Progress = Callable[[int, int], None]


def add_passages(store: Store, embedder: Embedder, space: str, cfg: Config, batch: int = 64) -> int:
    """Give the space's long turns that have none their passage vectors (``ingest.passage_chars``); for
    databases ingested before passages existed or with another setting. Returns the nodes updated."""
    size = cfg.ingest.passage_chars
    if size <= 0:
        return 0
    sp = store.require_space(space)
    todo = store.long_nodes_without_passages(sp.id, size)
    for i in range(0, len(todo), batch):
        vecs = embed_passages(embedder, todo[i:i + batch], size)
        with store.transaction(space=sp.id):
            store.insert_passages(sp.id, vecs)
    return len(todo)


def parse_all(paths: Sequence[str | Path], fmt: str = "auto", tool_output_chars: int = 0,
              private_tag: str = "private") -> list[Conversation]:
    """Parse every file first; any error aborts before a single write. A directory stands for the agent
    session files under it (:func:`hela_cli.formats.session_files`)."""
    convs: list[Conversation] = []
    for p in paths:
        files = session_files(p) if Path(p).is_dir() else [p]
        for f in files:
            convs.extend(parse_file(f, fmt, tool_output_chars=tool_output_chars, private_tag=private_tag))
    return convs


#: formats of AI-assistant transcripts: redacted by default (``ingest.redact_assistant``), whatever ``ingest.redact``
ASSISTANT_FORMATS = frozenset({"claude_code", "codex", "gemini", "chatgpt", "claude"})


def redacts(conv: Conversation, cfg: Config) -> bool:
    """Whether ``conv``'s turns go through :func:`hela_cli.text.redact.redact` before they are stored."""
    return cfg.ingest.redact or (cfg.ingest.redact_assistant and conv.format in ASSISTANT_FORMATS)


def redacted(convs: Sequence[Conversation], cfg: Config | None = None) -> list[Conversation]:
    """The conversations with every turn's text through :func:`hela_cli.text.redact.redact` (with ``cfg``:
    those :func:`redacts` picks)."""
    from hela_cli.text.redact import redact

    return [replace(c, turns=[replace(t, text=redact(t.text)) for t in c.turns])
            if cfg is None or redacts(c, cfg) else c for c in convs]


def ingest_conversations(store: Store, embedder: Embedder, convs: Sequence[Conversation], cfg: Config,
                         space: str | None = None, progress: Progress | None = None,
                         judge: Judge | None = None) -> dict[str, Any]:
    """Store ``convs`` (each into ``space`` or its own name) in batches of ``ingest.batch_size`` turns, one
    transaction each: embedded, linked (consecutive turns, association, cold-start keyword links) and, with
    ``supersession.detect``, checked for facts they replace (:mod:`hela_cli.facts.detect`, with
    the optional ``judge``)."""
    t0 = time.perf_counter()
    convs = [c for c in convs if c.turns]   # an agent session without text: no space created for it
    # private spans out, then secrets, before anything is embedded or written (the one write path)
    convs = [replace(c, turns=clean(c.turns, cfg, redacts(c, cfg))) for c in convs]
    for conv in convs:  # a bad space name must fail before the first conversation is written
        store.check_space_name(space or conv.name or "default")
    store.bind_embedder(embedder.model_id, embedder.dim)
    total = sum(len(c.turns) for c in convs)
    done = added = skipped = truncated = marked = 0
    spaces: dict[str, int] = {}
    new_ids: dict[str, list[int]] = {}   # space -> nodes added (cold-start keyword links after the last batch)
    for conv in convs:
        name = space or conv.name or "default"
        sp = store.ensure_space(name, cfg.hebbian.decay)
        hashes = [source_hash(t.source_id) if conv.keyed and t.source_id else turn_hash(t, i)
                  for i, t in enumerate(conv.turns)]
        existing = store.existing_hashes(sp.id, hashes)
        base_ord = store.next_ord(sp.id)
        prev_id: dict[str, int] = {}  # session -> node id of the previous turn (for consecutive links)
        bs = max(1, cfg.ingest.batch_size)
        for start in range(0, len(conv.turns), bs):
            idx = range(start, min(start + bs, len(conv.turns)))
            new = [i for i in idx if hashes[i] not in existing]
            texts = embedding_texts(conv.turns, new, embedder, cfg)
            truncated += sum(1 for i, tx in zip(new, texts)  # the turn's own line not whole in its text
                             if not tx.endswith(f"{conv.turns[i].speaker}: {conv.turns[i].text}"))
            vectors, passages = embed(embedder, texts, [conv.turns[i] for i in new], cfg)
            vec_of = {i: (vectors[k], passages.get(k)) for k, i in enumerate(new)}
            entries = [Entry(conv.turns[i].session, node_row(conv.turns[i], base_ord + i, hashes[i], conv.source),
                             *vec_of[i]) if i in vec_of else Entry(conv.turns[i].session, node=existing[hashes[i]])
                       for i in idx]
            try:
                with store.transaction(space=sp.id):
                    wrote = write(store, sp, entries, prev_id, cfg, judge=judge)
                ids, n_marked = wrote.ids, len(wrote.found)
            except StoreFull as e:
                raise StoreFull(f"{e.message}: {done} of {total} turns are stored ({added} new); free some space "
                                f"and run the same command again: what is stored is skipped, the rest is "
                                f"added") from None
            marked += n_marked
            n_new = sum(1 for n in ids if n != -1)
            new_ids.setdefault(name, []).extend(n for n in ids if n != -1)
            added += n_new
            skipped += len(idx) - n_new
            done += len(idx)
            if progress:
                progress(done, total)
        spaces[name] = spaces.get(name, 0) + len(conv.turns)
    keyword_links = 0
    if cfg.ingest.keyword_links > 0:
        for name, nids in new_ids.items():
            if nids:
                keyword_links += link_keywords(store, name, cfg, nids)
    return {"nodes_added": added, "skipped_duplicates": skipped, "turns": total,
            "embedding_truncated": truncated, "spaces": spaces, "keyword_links": keyword_links,
            "supersessions": marked, "seconds": round(time.perf_counter() - t0, 3)}
