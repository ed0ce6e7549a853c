"""One write path for a turn: what ``hela ingest`` (:mod:`~hela_cli.ingest.batch`), ``hela add`` / MCP ``remember``
/ a hook capture (:mod:`~hela_cli.ingest.live`) all do to the turns they store, in this order:

1. :func:`clean`: private spans removed, then secrets redacted (before anything is embedded or written);
2. :func:`embed`: each turn's embedding text embedded, and a long turn's passages (``ingest.passage_chars``);
3. :func:`write` (inside the caller's write transaction): the nodes with their vectors and passages, the
   consecutive link of each turn to the previous turn of its session, the association links, the keyword
   links when asked, and the changes the new turns state (:func:`hela_cli.facts.detect.detect_and_mark`).

The two callers differ only in what comes before: which turns are new (content hashes for a file, source ids
for a live turn), which session a live turn joins, and what context its embedding sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from hela_cli.config import Config
from hela_cli.facts.detect import Found, Judge, detect_and_mark
from hela_cli.formats import Turn
from hela_cli.ingest.embedding import embed_passages
from hela_cli.ingest.links import _associate, link_keywords, write_links
from hela_cli.models import Embedder
from hela_cli.store import Store


def clean(turns: Sequence[Turn], cfg: Config, redact: bool) -> list[Turn]:
    """The turns with every private span removed (:func:`hela_cli.text.private.strip_private`, speaker too)
    and, with ``redact``, every secret replaced (:func:`hela_cli.text.redact.redact`)."""
    from hela_cli.text.private import strip_private

    tag = cfg.ingest.private_tag
    out = [replace(t, text=strip_private(t.text, tag), speaker=strip_private(t.speaker, tag) if t.speaker else t.speaker)
           for t in turns]
    if redact:
        from hela_cli.text.redact import redact as redact_text

        out = [replace(t, text=redact_text(t.text)) for t in out]
    return out


def embed(embedder: Embedder, texts: Sequence[str], turns: Sequence[Turn], cfg: Config
          ) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """The vectors of ``texts`` (the turns' embedding texts, in batches of ``ingest.batch_size``) and the
    passage vectors of the long ones among ``turns`` (``{position: (n, dim)}``, ``ingest.passage_chars``)."""
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32), {}
    bs = max(1, cfg.ingest.batch_size)
    vectors = np.asarray([v for s in range(0, len(texts), bs) for v in embedder.embed(list(texts[s:s + bs]))])
    size = cfg.ingest.passage_chars
    passages = embed_passages(embedder, [(i, t.speaker, t.text) for i, t in enumerate(turns)], size) if size > 0 else {}
    return vectors, passages


@dataclass
class Entry:
    """One turn of a write, in order: a new one (``row``, its ``vector`` and ``passages``) or one already
    stored (``node``: its id), which the next turn of its session links to."""
    session: str | None
    row: dict[str, Any] | None = None
    vector: Any = None
    passages: Any = None
    node: int | None = None


@dataclass
class Written:
    """What :func:`write` wrote: the node id of each new entry in order (-1: another writer stored it first),
    and the changes found."""
    ids: list[int] = field(default_factory=list)
    found: list[Found] = field(default_factory=list)


def write(store: Store, space: Any, entries: Sequence[Entry], prev: dict[str, int], cfg: Config, *,
          judge: Judge | None = None, keyword_links: bool = False) -> Written:
    """Write ``entries`` into ``space`` inside the caller's write transaction (see the module's docstring).
    ``prev``: the newest node of each session before these entries (updated in place). ``keyword_links``:
    the cold-start keyword links of the new nodes too (a batch ingest writes them after a space's last batch)."""
    new = [e for e in entries if e.node is None]
    rows = [e.row for e in new]
    ids = store.insert_nodes(space.id, rows, np.asarray([e.vector for e in new])) if rows else []
    passages = {nid: e.passages for e, nid in zip(new, ids) if nid != -1 and e.passages is not None}
    if passages:
        store.insert_passages(space.id, passages)
    id_of = {id(e): nid for e, nid in zip(new, ids)}
    raced = [e for e, nid in zip(new, ids) if nid == -1]
    if raced:   # another writer stored these since the caller looked: the next turns link to its nodes
        theirs = store.existing_hashes(space.id, [e.row["hash"] for e in raced])   # type: ignore[index]
        for e in raced:
            e.node = theirs.get(e.row["hash"])   # type: ignore[index]
    links: dict[tuple[int, int], float] = {}
    added: list[int] = []
    vectors: list[Any] = []
    for e in entries:
        nid = id_of.get(id(e))
        if nid is not None and nid != -1:   # written here
            added.append(nid)
            vectors.append(e.vector)
            if e.session in prev:
                links[(prev[e.session], nid)] = cfg.ingest.initial_weight
            prev[e.session] = nid   # type: ignore[index]
        elif e.node is not None:   # stored before, or by the other writer
            prev[e.session] = e.node   # type: ignore[index]
    fresh = store.refresh_space(space)
    if links:
        write_links(store, fresh, links, cfg)
    stacked = np.asarray(vectors)
    if cfg.ingest.associate and added:
        _associate(store, fresh, added, stacked, cfg)
    if keyword_links and cfg.ingest.keyword_links > 0 and added:   # a savepoint of the same transaction
        link_keywords(store, space.name, cfg, added)
    found = detect_and_mark(store, space.id, added, stacked, cfg, judge) if added else []
    return Written(ids=list(ids), found=found)


__all__ = ["Entry", "Written", "clean", "embed", "write"]
