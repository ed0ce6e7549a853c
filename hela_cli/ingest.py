"""Ingest: parse transcripts, embed turns, store nodes and initial edges.

* Every file is parsed and validated completely before anything is written (bad input writes nothing).
* Idempotent: a node's content hash (session, position, speaker, time, text) is unique per space, so the
  same file ingested twice adds nothing, and an interrupted ingest can simply be re-run.
* Atomic per batch: each batch of turns is one ``BEGIN IMMEDIATE`` transaction (nodes, vectors, FTS rows,
  edges); a crash leaves only whole batches. Embedding happens outside the write transaction.
* Links: consecutive turns of a session (``ingest.initial_weight``) in each batch's transaction; cold-start
  keyword links between sessions (``ingest.keyword_links``) in one transaction after a space's last batch
  (a crash before it leaves those turns without keyword links: ``hela link`` adds them). With
  ``ingest.fixed_links`` both are fixed priors that Eq.1's decay leaves alone.
* Long turns: the full text is stored and shown; the *embedding* sees the first
  ``ingest.max_turn_chars`` characters of each turn, and the whole embedding text (the turn with its
  preceding turn) is built within ``ingest.embed_tokens`` embedder tokens, the turn itself first (see
  :func:`embedding_text`). The summary counts the turns whose embedding does not see them whole
  (``embedding_truncated``; cut by ``max_turn_chars`` or by the token budget).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from hela_cli.config import Config
from hela_cli.dates import format_iso, parse_time  # noqa: F401  (parse_time: re-exported for callers)
from hela_cli.dynamics import hebbian_update, keyword_partners
from hela_cli.formats import Conversation, Turn, parse_file
from hela_cli.keywords import keywords
from hela_cli.models import Embedder
from hela_cli.store import Store

Progress = Callable[[int, int], None]


def turn_hash(turn: Turn, position: int) -> str:
    payload = json.dumps([turn.session, position, turn.speaker, turn.timestamp, turn.source_id, turn.text],
                         ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def embedding_text(turns: Sequence[Turn], i: int, window: int, max_chars: int, budget: int = 0,
                   count: Callable[[str], int] | None = None) -> str:
    """What the embedder sees for turn ``i``: up to ``window`` preceding turns of the same session as
    context, then the turn itself, one "Speaker: text" line each, every turn cut to its first
    ``max_chars`` characters.

    With a token ``budget`` (> 0) and ``count`` (text -> tokens the embedder sees, special tokens
    included) the text fits in ``budget`` tokens and the turn itself has priority: it gets what it needs
    (its first ``max_chars`` characters; a turn over the budget keeps its start, cut between words), and
    the preceding turns share what is left, nearest first, each keeping its *end* (the words right
    before the turn: at most its last ``max_chars`` characters) with its "Speaker:" label; a preceding
    turn that does not fit at all is left out, and so are the ones before it. When everything fits (and no
    turn is over ``max_chars``) the text is the same as without a budget. ``budget`` 0: no budget (the
    embedder's window cuts the text's end, which can cut the turn itself after a long preceding turn)."""
    def line(t: Turn) -> str:
        return f"{t.speaker}: {t.text[:max_chars]}"

    context = []
    j = i - 1
    while j >= 0 and len(context) < window and turns[j].session == turns[i].session:
        context.append(turns[j])  # nearest first
        j -= 1
    if budget <= 0 or count is None:
        return "\n".join([*(line(t) for t in reversed(context)), line(turns[i])])
    own = line(turns[i])
    if count(own) > budget:
        return _fit(own, lambda x: count(x) <= budget, keep_end=False)
    kept: list[str] = []  # context lines, nearest first
    for t in context:
        def fits(x: str) -> bool:
            return count("\n".join([x, *reversed(kept), own])) <= budget

        label, end = f"{t.speaker}: ", t.text[-max_chars:]
        if fits(label + end):
            kept.append(label + end)
            continue
        tail = _fit(end, lambda x: fits(label + x), keep_end=True)
        if tail:
            kept.append(label + tail)
        break
    return "\n".join([*reversed(kept), own])


LONG_WORD = 32  # characters: a "word" this long (a URL, a script written without spaces) may be cut inside


def _fit(text: str, fits: Callable[[str], bool], keep_end: bool) -> str:
    """The longest start (or end, ``keep_end``) of ``text`` that ``fits``, cut between words. The first
    word left out is cut between characters instead when it is longer than ``LONG_WORD`` characters (a
    URL, a script written without spaces) or when no word fits whole. ``fits`` must grow with the text
    (binary search); "" when nothing fits."""
    words = list(re.finditer(r"\S+", text))
    if not words:
        return ""
    if keep_end:  # candidate cuts, from the shortest piece to the longest
        words = words[::-1]
        order, piece = [w.start() for w in words], (lambda c: text[c:].strip())
    else:
        order, piece = [w.end() for w in words], (lambda c: text[:c].strip())
    k = _longest(order, lambda c: fits(piece(c)))
    if k == len(order) - 1:
        return piece(order[k])
    nxt = words[0 if k is None else k + 1]  # the first word that did not fit whole
    if k is None or nxt.end() - nxt.start() > LONG_WORD:
        inner = list(range(nxt.end() - 1, nxt.start(), -1) if keep_end else range(nxt.start() + 1, nxt.end()))
        j = _longest(inner, lambda c: fits(piece(c)))
        if j is not None:
            return piece(inner[j])
    return "" if k is None else piece(order[k])


def _longest(cands: list[int], ok: Callable[[int], bool]) -> int | None:
    """Index of the last candidate (ordered from shortest to longest piece) for which ``ok`` holds, by
    binary search; None when even the first fails."""
    lo, hi, best = 0, len(cands) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(cands[mid]):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


_WORDPIECE = re.compile(r"\w+|[^\w\s]")


def token_counter(embedder: Any) -> Callable[[str], int]:
    """The embedder's token count (``count_tokens``), or, for an embedder without one, an estimate
    (words and punctuation marks, plus 2 special tokens)."""
    count = getattr(embedder, "count_tokens", None)
    return count if callable(count) else (lambda text: len(_WORDPIECE.findall(text)) + 2)


def embed_budget(embedder: Any, cfg: Config) -> int:
    """The token budget of an embedding text: ``ingest.embed_tokens``, at most the embedder's window."""
    cap = int(getattr(embedder, "n_ctx", 0) or 0)
    budget = cfg.ingest.embed_tokens
    return min(budget, cap) if budget > 0 and cap > 0 else budget


def embedding_texts(turns: Sequence[Turn], idx: Sequence[int], embedder: Any, cfg: Config) -> list[str]:
    """:func:`embedding_text` of the turns ``idx`` with the configured context rule and budget."""
    budget, count = embed_budget(embedder, cfg), token_counter(embedder)
    return [embedding_text(turns, i, cfg.ingest.context_window, cfg.ingest.max_turn_chars, budget, count)
            for i in idx]


_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+|\n+")


def split_passages(text: str, size: int) -> list[str]:
    """Passages of at most ``size`` characters that together cover ``text``: sentences (and lines) packed
    greedily in order; a sentence longer than ``size`` is cut at spaces (or hard, without one).
    Empty list when the text is not longer than ``size`` (a short turn needs no passages)."""
    text = text.strip()
    if size <= 0 or len(text) <= size:
        return []
    pieces: list[str] = []
    for sent in (x.strip() for x in _SENTENCE_END.split(text)):
        while len(sent) > size:
            cut = sent.rfind(" ", 0, size + 1)
            cut = cut if cut > size // 2 else size
            pieces.append(sent[:cut].strip())
            sent = sent[cut:].strip()
        if sent:
            pieces.append(sent)
    out: list[str] = []
    for piece in pieces:
        if out and len(out[-1]) + 1 + len(piece) <= size:
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def embed_passages(embedder: Embedder, items: Sequence[tuple[int, str, str]], size: int) -> dict[int, Any]:
    """Passage vectors ``{node_id: (n, dim) array}`` for ``(node_id, speaker, text)`` items longer than
    ``size``; each passage is embedded as "Speaker: passage" (the turn's own line format)."""
    texts: list[str] = []
    owners: list[int] = []
    for nid, speaker, text in items:
        for part in split_passages(text, size):
            texts.append(f"{speaker}: {part}" if speaker else part)
            owners.append(nid)
    if not texts:
        return {}
    vecs = embedder.embed(texts)
    out: dict[int, list[Any]] = {}
    for nid, v in zip(owners, vecs):
        out.setdefault(nid, []).append(v)
    return {nid: np.stack(v) for nid, v in out.items()}


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
        with store.transaction():
            store.insert_passages(sp.id, vecs)
    return len(todo)


def parse_all(paths: Sequence[str | Path], fmt: str = "auto") -> list[Conversation]:
    """Parse every file first; any error aborts before a single write."""
    convs: list[Conversation] = []
    for p in paths:
        convs.extend(parse_file(p, fmt))
    return convs


def ingest_conversations(store: Store, embedder: Embedder, convs: Sequence[Conversation], cfg: Config,
                         space: str | None = None, progress: Progress | None = None) -> dict[str, Any]:
    t0 = time.perf_counter()
    for conv in convs:  # a bad space name must fail before the first conversation is written
        store.check_space_name(space or conv.name or "default")
    store.bind_embedder(embedder.model_id, embedder.dim)
    total = sum(len(c.turns) for c in convs)
    done = added = skipped = truncated = 0
    spaces: dict[str, int] = {}
    new_ids: dict[str, list[int]] = {}   # space -> nodes added (cold-start keyword links after the last batch)
    for conv in convs:
        name = space or conv.name or "default"
        sp = store.ensure_space(name)
        hashes = [turn_hash(t, i) for i, t in enumerate(conv.turns)]
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
            vectors = embedder.embed(texts) if new else None
            passages = embed_passages(embedder, [(i, conv.turns[i].speaker, conv.turns[i].text) for i in new],
                                      cfg.ingest.passage_chars) if cfg.ingest.passage_chars > 0 else {}
            rows = []
            for n, i in enumerate(new):
                t = conv.turns[i]
                rows.append(dict(text=t.text, speaker=t.speaker, role=t.role, ts=t.timestamp, time_str=t.time_str,
                                 keywords=keywords(t.text), source_id=t.source_id, session=t.session,
                                 ord=base_ord + i, hash=hashes[i], source=conv.source))
            with store.transaction():
                ids = store.insert_nodes(sp.id, rows, vectors) if rows else []
                id_of = dict(zip(new, ids))
                if passages:
                    store.insert_passages(sp.id, {id_of[i]: v for i, v in passages.items() if id_of[i] != -1})
                raced = [hashes[i] for i, n in id_of.items() if n == -1]
                if raced:  # another process stored these turns since we looked: link to its nodes
                    existing.update(store.existing_hashes(sp.id, raced))
                    id_of = {i: n for i, n in id_of.items() if n != -1}
                links: dict[tuple[int, int], float] = {}
                for i in idx:
                    nid = id_of[i] if i in id_of else existing[hashes[i]]
                    if nid == -1:
                        continue
                    session = conv.turns[i].session
                    if session in prev_id and i in id_of:  # link consecutive turns of a session
                        links[(prev_id[session], nid)] = cfg.ingest.initial_weight
                    prev_id[session] = nid
                fresh = store.refresh_space(sp)
                if links:
                    write_links(store, fresh, links, cfg)
                if cfg.ingest.associate:
                    keep = [k for k, n in enumerate(ids) if n != -1]  # keep ids and vectors aligned
                    _associate(store, fresh, [ids[k] for k in keep], vectors[keep] if keep else [], cfg)
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
            "seconds": round(time.perf_counter() - t0, 3)}


def link_keywords(store: Store, space: str, cfg: Config, node_ids: Sequence[int] | None = None) -> int:
    """Cold-start associations: prior edges from ``node_ids`` (default: every memory of the space, the
    one-off step for a space ingested without them) to their ``ingest.keyword_links`` best partners in other
    sessions by shared rare keywords (:func:`hela_cli.dynamics.keyword_partners`), each at weight
    ``ingest.keyword_link_weight`` (a fixed prior with ``ingest.fixed_links``). An existing edge keeps its
    weight if it is already heavier, so running it again changes nothing but links decayed since. One
    write transaction. Returns the edges written."""
    ic, h = cfg.ingest, cfg.hebbian
    if ic.keyword_links <= 0 or ic.keyword_link_weight <= 0:
        return 0
    sp = store.require_space(space)
    n = store.count_nodes(sp.id)
    if node_ids is None or len(node_ids) * 20 > n:   # most of the space is new: read every memory's keywords
        docs = store.keyword_docs(sp.id)
        pairs = keyword_partners(docs, docs if node_ids is None else node_ids, ic.keyword_links,
                                 ic.keyword_link_min_score)
    else:   # a few new turns (`hela add`): only the memories sharing one of their rare keywords, via FTS5
        cap = max(2, int(math.sqrt(n)))
        mine = {i: f["keywords"] for i, f in store.node_features(node_ids).items()}
        postings = store.term_postings(sp.id, sorted({t for kws in mine.values() for t in kws}), cap)
        holders: dict[int, list[str]] = {}
        for t, ids in postings.items():
            for i in ids:
                holders.setdefault(i, []).append(t)
        sessions = store.node_sessions(set(holders) | set(mine))
        docs = {i: (sessions.get(i), holders.get(i, [])) for i in set(holders) | set(mine) if i in sessions}
        pairs = keyword_partners(docs, node_ids, ic.keyword_links, ic.keyword_link_min_score, max_df=cap, n=n)
    if not pairs:
        return 0
    with store.transaction():
        fresh = store.refresh_space(sp)
        have = store.pair_weights(fresh, pairs, h.decay)
        part = 0 if ic.fixed_links else 1   # what a link must exceed: the fixed prior, else the current weight
        updates = {p: ic.keyword_link_weight for p in pairs
                   if have.get((min(p), max(p)), (0.0, 0.0))[part] < ic.keyword_link_weight}
        if updates:
            write_links(store, fresh, updates, cfg)
    return len(updates)


def write_links(store: Store, space: Any, links: dict[tuple[int, int], float], cfg: Config) -> None:
    """Write ingest links (inside a transaction): fixed priors with ``ingest.fixed_links`` (Eq.1's decay
    leaves them alone; what use adds decays on top), else plain edge weights that decay like learned
    weight (the paper)."""
    if cfg.ingest.fixed_links:
        # an edge that already weighs something (a link written before fixed links, or learned weight) keeps
        # its total: the prior takes the link's part, only the excess stays as decaying learned weight
        weights = store.pair_weights(space, links, cfg.hebbian.decay)
        now = {p: w for p in links if (w := weights.get((min(p), max(p)), (0.0, 0.0))[1]) > 0}
        store.set_priors(space, links)
        if now:
            store.set_edges(space, {p: max(w, links[p]) for p, w in now.items()}, cfg.hebbian.decay)
    else:
        store.set_edges(space, links, cfg.hebbian.decay)


def link_conversation(store: Store, space: str, cfg: Config) -> int:
    """The conversation links of an existing space (consecutive turns of a session, ``ingest.initial_weight``)
    written again as ingest writes them now: with ``ingest.fixed_links`` they become fixed priors (a space
    ingested before fixed links, whose links Eq.1's decay has been eroding). Returns the pairs whose
    weight was below ``initial_weight``."""
    sp = store.require_space(space)
    w0, decay = cfg.ingest.initial_weight, cfg.hebbian.decay
    with store.transaction():
        fresh = store.refresh_space(sp)
        consecutive = store.consecutive_pairs(sp.id)
        have = store.pair_weights(fresh, consecutive, decay)
        pairs = {}
        for p in consecutive:
            prior, weight = have.get((min(p), max(p)), (0.0, 0.0))
            if weight < w0 or (cfg.ingest.fixed_links and prior < w0):
                pairs[p] = w0
        if pairs:
            write_links(store, fresh, pairs, cfg)
    return len(pairs)


def _associate(store: Store, space: Any, new_ids: list[int], vectors: Any, cfg: Config) -> None:
    """Association on ingest (the paper's future work against cold start): a new turn co-activates with
    its top-r most similar *earlier* memories above a similarity floor (Eq.1 update, no global decay)."""
    r, floor, h = cfg.ingest.associate_top, cfg.ingest.associate_min_sim, cfg.hebbian
    updates: dict[tuple[int, int], float] = {}
    for nid, vec in zip(new_ids, vectors):
        hits = [(o, s) for o, s in store.knn(space.id, vec, r + 1) if o < nid and s >= floor][:r]
        for other, _ in hits:
            pair = (min(nid, other), max(nid, other))
            current = updates.get(pair, store.edge_weight(space, pair[0], pair[1], h.decay))
            updates[pair] = hebbian_update(current, h.eta, 1.0, h.cap)
    if updates:
        store.set_edges(space, updates, h.decay)


# ----------------------------------------------------------------------------------- add (live turns)
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

    key = ["add", "id", turn.source_id] if turn.source_id is not None else ["add", uuid.uuid4().hex]
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8")).hexdigest()


def add_turns(store: Store, embedder: Embedder, space: str, turns: Sequence[Turn], cfg: Config) -> dict[str, Any]:
    """Write live turns into ``space`` (created if needed) as ingest does: the same embedding context
    (``ingest.context_window`` preceding turns of the session), keywords, FTS row and consecutive link
    (``ingest.initial_weight``) to the newest earlier turn of the same session.

    * Session: the turn's own, else the session of the space's newest turn when the turn is at most
      ``SESSION_GAP_HOURS`` away from it in time, else a new session ``add:<UTC date-time>``.
    * A turn whose source id is already in the space (or earlier in the same call) is skipped.
    * One ``BEGIN IMMEDIATE`` transaction for the whole call (space creation included): all or nothing.
      Embedding runs before it; the duplicate check and the links are decided inside it.

    Returns ``{"space", "added": [ids], "skipped": [{"id", "source_id"}], "ids": [id per turn]}`` where a
    skipped turn's id is the node already holding its source id.
    """
    t0 = time.perf_counter()
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
    bs = max(1, cfg.ingest.batch_size)
    vectors = [v for s in range(0, len(texts), bs) for v in embedder.embed(texts[s:s + bs])]

    ids: list[int] = [known.get(t.source_id, -1) if t.source_id is not None else -1 for t in turns]
    added: list[int] = []
    with store.transaction():
        sp = store.ensure_space(space)
        store.bind_embedder(embedder.model_id, embedder.dim)
        raced = store.ids_by_source(sp.id, [resolved[i].source_id for i in new if resolved[i].source_id])
        write = [i for i in new if resolved[i].source_id not in raced]
        vec_of = dict(zip(new, vectors))
        sessions = {resolved[i].session for i in write}
        prev = {s: rows[0]["id"] for s in sessions if (rows := store.latest_nodes(sp.id, 1, s))}
        base_ord = store.next_ord(sp.id)
        rows = [dict(text=resolved[i].text, speaker=resolved[i].speaker, role=resolved[i].role,
                     ts=resolved[i].timestamp, time_str=resolved[i].time_str, keywords=keywords(resolved[i].text),
                     source_id=resolved[i].source_id, session=resolved[i].session, ord=base_ord + k,
                     hash=_add_hash(resolved[i]), source=ADD_SOURCE) for k, i in enumerate(write)]
        new_ids = store.insert_nodes(sp.id, rows, [vec_of[i] for i in write]) if rows else []
        links: dict[tuple[int, int], float] = {}
        for i, nid in zip(write, new_ids):
            if nid == -1:  # cannot happen under the write lock; kept safe
                continue
            ids[i] = nid
            added.append(nid)
            session = resolved[i].session
            if session in prev:
                links[(prev[session], nid)] = cfg.ingest.initial_weight
            prev[session] = nid
        fresh = store.refresh_space(sp)
        if links:
            write_links(store, fresh, links, cfg)
        if cfg.ingest.associate and added:
            import numpy as np

            _associate(store, fresh, added, np.asarray([vec_of[i] for i, n in zip(write, new_ids) if n != -1]), cfg)
        if cfg.ingest.keyword_links > 0 and added:   # same transaction (a savepoint): all or nothing
            link_keywords(store, space, cfg, added)
    known.update(raced)
    for i, t in enumerate(turns):  # duplicates: the node that holds the id (an earlier turn of this call too)
        if ids[i] == -1 and t.source_id is not None:
            ids[i] = known.get(t.source_id) or next(
                (ids[j] for j in range(i) if turns[j].source_id == t.source_id and ids[j] != -1), -1)
    fresh_idx = {i for i, n in zip(write, new_ids) if n != -1}
    skipped = [{"id": ids[i], "source_id": t.source_id} for i, t in enumerate(turns) if i not in fresh_idx]
    return {"space": space, "added": added, "skipped": skipped, "ids": ids,
            "seconds": round(time.perf_counter() - t0, 3)}
