"""Live turns (``hela add``, ``Memory.add``, MCP ``remember``): validated one by one, embedded as ingest
embeds them, written with their links in one transaction per call."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any, Sequence

from hela_cli.config import Config
from hela_cli.text.dates import format_iso, parse_time
from hela_cli.formats import Turn
from hela_cli.ingest.embedding import embedding_texts
from hela_cli.ingest.nodes import node_row, source_hash
from hela_cli.ingest.write import Entry, clean, embed, write
from hela_cli.facts.detect import Judge
from hela_cli.models import Embedder
from hela_cli.store import Store

SESSION_GAP_HOURS = 6.0  # `hela add` without --session: same session as the newest turn if within this gap
ADD_SOURCE = "hela add"  # the nodes.source of turns written by `hela add` / Memory.add


def _opt_str(obj: Any, keys: tuple[str, ...], where: str, allow_int: bool = False) -> str | None:
    from hela_cli.errors import InputError

    for key in keys:
        if key in obj and obj[key] is not None:
            v = obj[key]
            if allow_int and isinstance(v, int) and not isinstance(v, bool):
                v = str(v)
            if not isinstance(v, str):
                raise InputError(f"{where}: '{key}' must be a string, not {type(v).__name__}")
            if not v.strip():
                raise InputError(f"{where}: '{key}' is empty")
            return v
    return None


def turn_from_mapping(obj: Any, where: str) -> Turn:
    """Validate one turn given to ``add`` as a mapping: ``speaker`` or ``role``, ``text`` or ``content``,
    optional ``time`` (or ``timestamp``), ``id`` (or ``source_id``) and ``session``. Other keys are ignored.
    Raises :class:`~hela_cli.errors.InputError` naming ``where``. The session stays ``None`` when not
    given (resolved by :func:`add_turns`)."""
    from hela_cli.errors import InputError

    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object with 'text', not {type(obj).__name__}")
    text = _opt_str(obj, ("text", "content"), where)
    if text is None:
        raise InputError(f"{where}: missing 'text' (or 'content')")
    role = _opt_str(obj, ("role",), where)
    speaker = _opt_str(obj, ("speaker", "name"), where) or role or "user"
    if len(speaker) > 200:
        raise InputError(f"{where}: speaker is longer than 200 characters")
    ts, time_str = parse_time(obj.get("time", obj.get("timestamp")), where)
    source_id = _opt_str(obj, ("id", "source_id"), where, allow_int=True)
    session = _opt_str(obj, ("session",), where, allow_int=True)
    return Turn(speaker=speaker.strip(), text=text, timestamp=ts, time_str=time_str, session=session,  # type: ignore[arg-type]
                source_id=source_id, role=role)


def _add_hash(turn: Turn) -> str:
    """Content hash of an added turn: its source id when given (a retry is a duplicate, even across
    processes racing), else a random token (saying the same thing twice makes two memories). The ``add``
    prefix keeps these apart from ingest hashes."""
    import uuid

    if turn.source_id is not None:
        return source_hash(turn.source_id)
    return hashlib.sha256(json.dumps(["add", uuid.uuid4().hex], ensure_ascii=False).encode("utf-8")).hexdigest()


def add_turns(store: Store, embedder: Embedder, space: str, turns: Sequence[Turn], cfg: Config,
              judge: Judge | None = None) -> dict[str, Any]:
    """Write live turns into ``space`` (created if needed) as ingest does: the same embedding context
    (``ingest.context_window`` preceding turns of the session), keywords, keyword postings and consecutive link
    (``ingest.initial_weight``) to the newest earlier turn of the same session.

    * Session: the turn's own, else the session of the space's newest turn when the turn is at most
      ``SESSION_GAP_HOURS`` away from it in time, else a new session ``add:<UTC date-time>``.
    * A turn whose source id is already in the space (or earlier in the same call) is skipped.
    * One ``BEGIN IMMEDIATE`` transaction for the whole call (space creation included): all or nothing.
      Embedding runs before it; the duplicate check and the links are decided inside it.
    * With ``supersession.detect``, the earlier memories the new turns replace are marked in the same
      transaction (:mod:`hela_cli.facts.detect`; ``judge``: the optional chat-model judge).

    Returns ``{"space", "added": [ids], "skipped": [{"id", "source_id"}], "ids": [id per turn],
    "supersessions": [{"old", "new", "status", ...}]}`` where a skipped turn's id is the node already
    holding its source id.
    """
    t0 = time.perf_counter()
    turns = clean(turns, cfg, cfg.ingest.redact)   # private spans, then secrets: before anything is embedded
    store.check_space_name(space)
    sp = store.get_space(space)
    given = [t.source_id for t in turns if t.source_id is not None]
    known = store.ids_by_source(sp.id, given) if sp is not None and given else {}
    window, gap = cfg.ingest.context_window, SESSION_GAP_HOURS * 3600.0
    tails: dict[str, list[Turn]] = {}  # session -> its turns so far, oldest first (context window only)

    def tail(session: str) -> list[Turn]:
        if session not in tails:
            rows = store.latest_nodes(sp.id, window, session) if sp is not None and window > 0 else []
            tails[session] = [Turn(r["speaker"] or "", r["text"], r["ts"], r["time_str"] or "", session,
                                   r["source_id"]) for r in reversed(rows)]
        return tails[session]

    newest = store.latest_nodes(sp.id, 1) if sp is not None else []
    last: tuple[str | None, float] | None = (newest[0]["session"], newest[0]["ts"]) if newest else None
    new: list[int] = []      # indexes of turns to write, in order
    resolved: list[Turn] = []
    texts: list[str] = []
    seen: set[str] = set()
    for i, t in enumerate(turns):
        if t.source_id is not None and (t.source_id in known or t.source_id in seen):
            resolved.append(t)
            continue
        if t.source_id is not None:
            seen.add(t.source_id)
        session = t.session
        if session is None:
            if last is not None and last[0] and abs(t.timestamp - last[1]) <= gap:
                session = last[0]
            else:
                session = "add:" + format_iso(t.timestamp)
        t = Turn(t.speaker, t.text, t.timestamp, t.time_str, session, t.source_id, t.role)
        ctx = tail(session)
        ctx.append(t)
        del ctx[:-(window + 1)]
        texts.extend(embedding_texts(ctx, [len(ctx) - 1], embedder, cfg))
        resolved.append(t)
        new.append(i)
        last = (session, t.timestamp)
    vectors, passages = embed(embedder, texts, [resolved[i] for i in new], cfg)   # the one write path

    ids: list[int] = [known.get(t.source_id, -1) if t.source_id is not None else -1 for t in turns]
    known_space = store.get_space(space)   # a new space: its first write is database-wide
    with store.transaction(space=known_space.id if known_space is not None else None):
        sp = store.ensure_space(space, cfg.hebbian.decay)
        store.bind_embedder(embedder.model_id, embedder.dim)
        raced = store.ids_by_source(sp.id, [resolved[i].source_id for i in new if resolved[i].source_id])
        at = {i: k for k, i in enumerate(new)}
        write_ = [i for i in new if resolved[i].source_id not in raced]
        sessions = {resolved[i].session for i in write_}
        prev = {s: rows[0]["id"] for s in sessions if (rows := store.latest_nodes(sp.id, 1, s))}
        base_ord = store.next_ord(sp.id)
        entries = [Entry(resolved[i].session, node_row(resolved[i], base_ord + k, _add_hash(resolved[i]), ADD_SOURCE),
                         vectors[at[i]], passages.get(at[i])) for k, i in enumerate(write_)]
        wrote = write(store, sp, entries, prev, cfg, judge=judge, keyword_links=True)
        new_ids, found = wrote.ids, wrote.found
        added = [nid for nid in new_ids if nid != -1]
        for i, nid in zip(write_, new_ids):
            if nid != -1:
                ids[i] = nid
    known.update(raced)
    for i, t in enumerate(turns):  # duplicates: the node that holds the id (an earlier turn of this call too)
        if ids[i] == -1 and t.source_id is not None:
            ids[i] = known.get(t.source_id) or next(
                (ids[j] for j in range(i) if turns[j].source_id == t.source_id and ids[j] != -1), -1)
    fresh_idx = {i for i, n in zip(write_, new_ids) if n != -1}
    skipped = [{"id": ids[i], "source_id": t.source_id} for i, t in enumerate(turns) if i not in fresh_idx]
    return {"space": space, "added": added, "skipped": skipped, "ids": ids,
            "supersessions": [{"old": f.old_id, "new": f.new_id, "status": f.status, "detector": f.detector,
                               "confidence": f.confidence} for f in found],
            "seconds": round(time.perf_counter() - t0, 3)}
