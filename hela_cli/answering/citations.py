"""Which retrieved memories an answer rests on (``hela ask`` prints them under the answer).

The rule, kept simple so a person can check it:

1. the answer's words are the keyword extractor's stemmed content words (:func:`hela_cli.text.keywords.keywords`:
   stop words and 1-2 letter words dropped, "painting" meets "painted") that the question does not already
   contain ("Jonas's dog is Tofu" asked "What is the name of Jonas's dog?" looks for "tofu"); all of the
   answer's words if that leaves none;
2. a memory's words are the content words of its text, its speaker and its date written as the answer
   prompt writes dates ("8 May 2023"), so a date answer cites the memories of that day;
3. a memory supports the answer by the number of answer words it contains (``overlap``);
4. citations are the memories with ``overlap > 0``, most overlap first, ties broken by retrieval rank
   (the score order of the context); when fewer than ``n`` have any overlap, the best-ranked remaining
   memories fill the list (``overlap`` 0 says so).

No model call: it is a pure function of the answer and the retrieved memories.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from hela_cli.text.keywords import _TOKEN, keywords, stem
from hela_cli.answering.prompts import format_date

__all__ = ["select_citations", "excerpt", "CITATION_COUNT"]

#: how many citations ``hela ask`` shows by default
CITATION_COUNT = 3


def _memory_words(m: Mapping[str, Any]) -> set[str]:
    date = format_date(m.get("timestamp")) if m.get("timestamp") is not None else ""
    return set(keywords(f"{m.get('text') or ''} {m.get('speaker') or ''} {date}"))


def answer_words(answer: str | None, question: str | None = None) -> set[str]:
    """The words a citation must contain: the answer's content words not already in the question."""
    words = set(keywords(answer or ""))
    new = words - set(keywords(question or ""))
    return new or words


def select_citations(answer: str | None, memories: Sequence[Mapping[str, Any]],
                     n: int = CITATION_COUNT, question: str | None = None) -> list[dict[str, Any]]:
    """The ``n`` memories that best support ``answer`` (see the module docstring for the rule).

    ``memories`` are in retrieval rank order (as ``Memory.ask`` returns them). Each citation is
    ``{id, source_id, time_str, timestamp, speaker, text, overlap, words}`` (``words``: the stemmed answer
    words it contains); fewer than ``n`` only when fewer memories were
    retrieved; none when there is no answer or ``n`` is 0."""
    if not answer or not answer.strip() or n <= 0:
        return []
    wanted = answer_words(answer, question)
    ranked = []
    for rank, m in enumerate(memories):
        found = sorted(wanted & _memory_words(m))
        ranked.append((-len(found), rank, found, m))
    ranked.sort(key=lambda x: (x[0], x[1]))
    return [{"id": m.get("id"), "source_id": m.get("source_id"), "time_str": m.get("time_str"),
             "timestamp": m.get("timestamp"), "speaker": m.get("speaker"), "text": m.get("text"),
             "overlap": len(found), "words": found}
            for _, _, found, m in ranked[:n]]


def excerpt(text: str, words: Sequence[str] | set[str], width: int) -> str:
    """``text`` on one line of at most ``width`` characters, cut with "…" markers so that the first of the
    (stemmed) ``words`` it contains is visible."""
    flat = " ".join(str(text).split())
    if width <= 1 or len(flat) <= width:
        return flat if len(flat) <= width else "…"[:width]
    wanted = set(words)
    pos = next((t.start() for t in _TOKEN.finditer(flat.lower()) if stem(t.group()) in wanted), 0)
    if pos + 20 < width - 1:  # visible from the start
        return _cut(flat, width)
    start = max(0, pos - width // 3)
    space = flat.rfind(" ", 0, start + 1)
    start = space + 1 if space >= 0 and start - space < 15 else start
    return "…" + _cut(flat[start:], width - 1)


def _cut(s: str, width: int) -> str:
    if len(s) <= width:
        return s
    cut = s[: width - 1]
    space = cut.rfind(" ")
    if space >= width * 2 // 3:
        cut = cut[:space]
    return cut.rstrip() + "…"
