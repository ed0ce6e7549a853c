"""What the embedder sees of a turn: the turn with the end of its preceding turn within a token budget
(:func:`embedding_text`), and the passage vectors of long turns (:func:`split_passages`)."""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

from hela_cli.config import Config
from hela_cli.formats import Turn
from hela_cli.models import Embedder


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


def embedder_token_counter(embedder: Any) -> Callable[[str], int]:
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
    budget, count = embed_budget(embedder, cfg), embedder_token_counter(embedder)
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
