"""Correcting memory: list with filters, delete completely, edit with a history (``hela memories``,
``delete``, ``edit``, ``history``; ``Memory.memories`` / ``delete`` / ``edit`` / ``history``; MCP
``memories``, ``delete``, ``update``). The SQL is in :mod:`hela_cli.store.correct`; what an edit re-embeds
is built by ingest's own functions (:func:`hela_cli.ingest.embedding_texts`,
:func:`hela_cli.ingest.embed_passages`, :func:`hela_cli.text.keywords.keywords`)."""

from __future__ import annotations

import time
from typing import Any, Sequence

from hela_cli.config import Config
from hela_cli.text.dates import format_iso, parse_time
from hela_cli.errors import InputError
from hela_cli.models import Embedder
from hela_cli.store import Space, Store
from hela_cli.facts.recall import Marks

FILTER_KEYS = ("speaker", "session", "since", "until", "before", "contains")


def parse_filters(speaker: str | None = None, session: str | None = None, since: Any = None, until: Any = None,
                  before: Any = None, contains: str | None = None) -> dict[str, Any]:
    """The filters with their dates as UTC epoch seconds (any date ``hela add --time`` reads; the error
    names the option). Unset filters are left out."""
    out: dict[str, Any] = {}
    for key, value in (("speaker", speaker), ("session", session), ("contains", contains)):
        if value is not None:
            if not isinstance(value, str) or not value:
                raise InputError(f"--{key}: give a non-empty text")
            out[key] = value
    for key, value in (("since", since), ("until", until), ("before", before)):
        if value is not None:
            out[key] = value if isinstance(value, (int, float)) and not isinstance(value, bool) \
                else parse_time(value, f"--{key}")[0]
    if "since" in out and "until" in out and out["since"] > out["until"]:
        raise InputError("--since is after --until: no memory can match")
    return out


def memory_row(node: dict[str, Any]) -> dict[str, Any]:
    """A memory as ``hela memories --json`` / MCP ``memories`` show it."""
    return {"id": node["id"], "source_id": node["source_id"], "date": format_iso(node["ts"]),
            "timestamp": node["ts"], "speaker": node["speaker"], "session": node["session"], "text": node["text"],
            "access_count": node["access_count"]}


def list_memories(store: Store, space: Space, filters: dict[str, Any], limit: int | None = None
                  ) -> list[dict[str, Any]]:
    if limit is not None and limit < 1:
        raise InputError("--limit: give a number of memories >= 1")
    rows = [memory_row(n) for n in store.list_nodes(space.id, limit=limit, **filters)]
    if rows and store.has_supersessions(space.id):   # facts that change: each row's mark (None / [] without)
        marks = Marks(store.supersessions_for(r["id"] for r in rows))
        for r in rows:
            r.update(marks.fields(r["id"]))
    return rows


def select(store: Store, space: Space, ids: Sequence[int] = (), source_ids: Sequence[str] = (),
           filters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The memories a delete names: ``ids`` and ``source_ids`` (an unknown one is an :class:`InputError`
    naming it) or, without them, every memory matching ``filters`` (at least one filter)."""
    if ids or source_ids:
        if filters:
            raise InputError("give memory ids / source ids or filters, not both")
        found = store.resolve_nodes(space.id, space.name, ids, source_ids)
        rows = store.get_nodes(found)
        return [memory_row(rows[i]) for i in found]
    if not filters:
        raise InputError("name the memories to delete: ids, --source-id, or a filter (--session, --speaker, "
                         "--before, --contains)")
    return [memory_row(n) for n in store.list_nodes(space.id, **filters)]


def node_turn(n: dict[str, Any], text: str | None = None) -> Any:
    """A stored node as the :class:`~hela_cli.formats.Turn` ingest embedded (``text`` replaces its text)."""
    from hela_cli.formats import Turn

    return Turn(n["speaker"] or "", n["text"] if text is None else text, n["ts"], n["time_str"] or "",
                n["session"] or "", n["source_id"], n["role"])


def follower_vectors(store: Store, embedder: Any, space: Space, cfg: Config, ids: Sequence[int]
                     ) -> dict[int, Any]:
    """New vectors for the turns that had one of the memories ``ids`` in their embedding context (the next
    ``ingest.context_window`` turns of its session), embedded as ingest would embed them without those
    memories: a delete leaves no trace of the text in a neighbour's vector. ``embedder``: an embedder, or a
    zero-argument factory called only when there is a turn to re-embed (it may return None: none is)."""
    from hela_cli.ingest import embedding_texts

    window = cfg.ingest.context_window
    if window <= 0 or not ids:
        return {}
    gone = set(ids)
    nodes = store.get_nodes(ids)
    followers: dict[int, dict[str, Any]] = {}
    for nid in ids:
        if nid in nodes:
            for f in store.session_context(space.id, nodes[nid], 0, window, exclude=gone)[1]:
                followers[f["id"]] = f

    if not followers:
        return {}
    if callable(embedder) and not hasattr(embedder, "embed"):   # a factory: load the model only when needed
        embedder = embedder()
        if embedder is None:
            return {}
    texts = []
    for f in followers.values():
        prev = store.session_context(space.id, f, window, 0, exclude=gone)[0]
        turns = [*(node_turn(n) for n in prev), node_turn(f)]
        texts.extend(embedding_texts(turns, [len(turns) - 1], embedder, cfg))
    if not texts:
        return {}
    return dict(zip(followers, embedder.embed(texts)))


def delete(store: Store, space: Space, ids: Sequence[int] = (), source_ids: Sequence[str] = (),
           filters: dict[str, Any] | None = None, confirm: bool = False, embedder: Any = None,
           cfg: Config | None = None) -> dict[str, Any]:
    """Delete memories completely (:meth:`hela_cli.store.Store.erase_nodes`). A delete by filter needs
    ``confirm`` (a refusal says how many it selects); one that selects nothing deletes nothing. With an
    ``embedder`` (and ``cfg``), the turns that had a deleted memory as embedding context are re-embedded
    without it (:func:`follower_vectors`) in the same transaction.
    Returns ``{"space", "selected": [memory rows], "deleted": [ids], "reembedded", "semantic", "asks",
    "hubs_reset", "history", "scrub", "seconds"}``."""
    t0 = time.perf_counter()
    chosen = select(store, space, ids, source_ids, filters)
    if filters and chosen and not confirm:
        raise InputError(f"this filter selects {len(chosen)} memor{'y' if len(chosen) == 1 else 'ies'} of space "
                         f"'{space.name}'; confirm to delete them (--yes / confirm: true)")
    if not chosen:
        return {"space": space.name, "selected": [], "deleted": [], "reembedded": [], "semantic": [], "asks": 0,
                "hubs_reset": 0, "history": 0, "scrub": None, "seconds": round(time.perf_counter() - t0, 3)}
    chosen_ids = [m["id"] for m in chosen]
    revectors = follower_vectors(store, embedder, space, cfg, chosen_ids) if embedder is not None and cfg else None
    rep = store.erase_nodes(space.id, chosen_ids, revectors=revectors)
    return {"space": space.name, "selected": chosen, **rep, "seconds": round(time.perf_counter() - t0, 3)}


def edit(store: Store, embedder: Embedder, space: Space, cfg: Config, text: str, node_id: int | None = None,
         source_id: str | None = None) -> dict[str, Any]:
    """Replace a memory's text (by id or source id), keeping its id, time, session, speaker and edges;
    its vector, passages, keywords and keyword-index row are rebuilt as ingest builds them, and so are
    the vectors of the turns that had it in their embedding context. The previous text goes to the
    history. One write transaction (:meth:`hela_cli.store.Store.replace_node_text`)."""
    from hela_cli.ingest import embed_passages, embedding_texts
    from hela_cli.text.keywords import keywords

    t0 = time.perf_counter()
    if not isinstance(text, str) or not text.strip():
        raise InputError("the new text is empty (to remove a memory, delete it)")
    if (node_id is None) == (source_id is None):
        raise InputError("name the memory to edit: its id or its source id")
    nid = store.resolve_nodes(space.id, space.name, [node_id] if node_id is not None else [],
                              [source_id] if source_id is not None else [])[0]
    node = store.get_node(nid)
    assert node is not None
    window = cfg.ingest.context_window
    before, after = store.session_context(space.id, node, window, window)

    turns = [*(node_turn(n) for n in before), node_turn(node, text), *(node_turn(n) for n in after)]
    me = len(before)
    idx = [me, *range(me + 1, len(turns))]   # the node, then the turns whose context held it
    vectors = embedder.embed(embedding_texts(turns, idx, embedder, cfg))
    size = cfg.ingest.passage_chars
    passages = embed_passages(embedder, [(nid, node["speaker"] or "", text)], size).get(nid) if size > 0 else None
    followers = {n["id"]: vectors[k + 1] for k, n in enumerate(after)}
    store.bind_embedder(embedder.model_id, embedder.dim)
    rep = store.replace_node_text(space.id, nid, text, keywords(text), vectors[0], passages, followers)
    return {"space": space.name, "id": nid, "source_id": node["source_id"], "text": text, **rep,
            "reembedded": [nid, *followers], "seconds": round(time.perf_counter() - t0, 3)}


#: a fact's chain of supersessions is followed this far at most (memories of the chain)
CHAIN_LIMIT = 50


def fact_chain(store: Store, node_id: int) -> list[dict[str, Any]]:
    """Facts that change: every supersession linking ``node_id`` to earlier and later memories, directly or
    through others (the fact's history), oldest first: ``[{"old", "new", "old_text", "new_text",
    "old_date", "new_date", "invalid_at", "detector", "confidence", "status", "reason"}]`` (``reason``: a
    judge's why, else None); [] for a memory without one. At most :data:`CHAIN_LIMIT` memories are followed."""
    seen, todo, rows = {int(node_id)}, [int(node_id)], {}
    while todo and len(seen) < CHAIN_LIMIT:
        found = store.supersessions_for(todo)
        todo = []
        for lst in found.values():
            for r in lst:
                rows[(r["old_id"], r["new_id"])] = r
                for nid in (r["old_id"], r["new_id"]):
                    if nid not in seen and len(seen) < CHAIN_LIMIT:
                        seen.add(nid)
                        todo.append(nid)
    nodes = store.get_nodes(sorted({i for pair in rows for i in pair}))
    out = []
    for r in sorted(rows.values(), key=lambda r: (r["invalid_at"], r["old_id"], r["new_id"])):
        old, new = nodes.get(r["old_id"]), nodes.get(r["new_id"])
        if old is None or new is None:
            continue
        out.append({"old": r["old_id"], "new": r["new_id"], "old_text": old["text"], "new_text": new["text"],
                    "old_date": format_iso(old["ts"]), "new_date": format_iso(new["ts"]),
                    "invalid_at": format_iso(r["invalid_at"]), "detector": r["detector"],
                    "confidence": r["confidence"], "status": r["status"], "reason": r.get("reason")})
    return out


def history(store: Store, space: Space, node_id: int | None = None, source_id: str | None = None
            ) -> dict[str, Any]:
    """A memory's versions, oldest first, the current one last: ``{"id", "versions": [{"version", "text",
    "speaker", "replaced", "current"}], "changes"}``; ``replaced``: when that version was replaced;
    ``changes``: the fact's supersessions (:func:`fact_chain`: which memory replaced which, from when)."""
    nid = store.resolve_nodes(space.id, space.name, [node_id] if node_id is not None else [],
                              [source_id] if source_id is not None else [])[0]
    node = store.get_node(nid)
    assert node is not None
    versions = [{"version": h["version"], "text": h["text"], "speaker": h["speaker"],
                 "replaced": format_iso(h["edited_at"]), "current": False} for h in store.node_history(nid)]
    versions.append({"version": len(versions) + 1, "text": node["text"], "speaker": node["speaker"],
                     "replaced": None, "current": True})
    return {"space": space.name, "id": nid, "source_id": node["source_id"], "date": format_iso(node["ts"]),
            "versions": versions, "changes": fact_chain(store, nid)}
