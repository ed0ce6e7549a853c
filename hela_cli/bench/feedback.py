"""Simulated feedback for the prequential benchmarks (``hela bench locomo|longmemeval --feedback ...``).

**Simulation**: these functions stand in for an agent that reports which memories it used; every table that
shows their numbers says so. Each question is retrieved and scored *before* its own feedback is applied, so
no question profits from its own answer (prequential protocol):

============  ==============================================================================================
``none``      no feedback (learning, if on, is plain co-retrieval Eq.1)
``evidence``  the gold evidence memories among those retrieved: an agent that reports what it used; it can
              only report what it was shown
``answer``    the memories :func:`hela_cli.answering.citations.select_citations` picks for the *gold* answer among the
              retrieved ones (word overlap > 0): a capable reader whose answer is right
``noisy:P``   the evidence set with a share ``P`` of its ids replaced by retrieved non-evidence memories
              (seeded per question, so a run is reproducible)
``echo``      the memories the hooks' reply echo rule (:func:`hela_cli.mechanics.feedback.echoed_memories`)
              finds in the *gold* answer taken as the agent's reply: the rule ``hooks.feedback`` runs at the
              end of a turn, fed a capable reader's reply (issue 52)
``cite``      **not a simulation**: the memories the reader's own answer cites (word overlap > 0), the signal
              ``answer.cite_feedback`` sends after a ``hela ask``; needs answers (not ``--retrieval-only``)
============  ==============================================================================================
"""

from __future__ import annotations

import random
from typing import Any, Iterable, Mapping, Sequence

from hela_cli.answering.citations import CITATION_COUNT, select_citations
from hela_cli.errors import InputError

__all__ = ["parse_feedback", "simulated_used", "EvidenceHistory"]

KINDS = ("none", "evidence", "answer", "echo", "noisy", "cite")


def parse_feedback(spec: str | None) -> tuple[str, float]:
    """``none|evidence|answer|noisy:P|cite`` -> ``(kind, P)``; :class:`InputError` for anything else."""
    s = (spec or "none").strip().lower()
    kind, _, arg = s.partition(":")
    if kind not in KINDS or (kind == "noisy") != bool(arg):
        raise InputError(f"--feedback: expected none, evidence, answer, echo, noisy:P (0 <= P <= 1) or cite, got {spec!r}")
    p = 0.0
    if kind == "noisy":
        try:
            p = float(arg)
        except ValueError:
            raise InputError(f"--feedback: noisy:P needs a number P, got {arg!r}") from None
        if not 0.0 <= p <= 1.0:
            raise InputError(f"--feedback: noisy:P needs 0 <= P <= 1, got {p}")
    return kind, p


def simulated_used(kind: str, p: float, memories: Sequence[Mapping[str, Any]], evidence: Iterable[str],
                   gold: str | None = None, question: str | None = None, seed: str = "",
                   prediction: str | None = None) -> list[int]:
    """The ids a simulated agent (or, for ``cite``, the reader's own ``prediction``) reports as used for one
    retrieval (see the module docstring)."""
    if kind == "none" or not memories:
        return []
    if kind == "cite":   # what Memory.ask sends with answer.cite_feedback
        return [c["id"] for c in select_citations(prediction, memories, question=question) if c["overlap"] > 0]
    if kind == "echo":
        if not gold:
            return []
        from hela_cli.mechanics.feedback import echoed_memories

        return echoed_memories([{"id": m["id"], "text": m["text"]} for m in memories], str(gold), prompt=question)
    ev = set(evidence)
    hits = [m["id"] for m in memories if m.get("source_id") in ev]
    if kind == "evidence":
        return hits
    if kind == "answer":
        if not gold:
            return []
        cites = select_citations(str(gold), memories, n=CITATION_COUNT, question=question)
        return [c["id"] for c in cites if c["overlap"] > 0]
    # noisy: replace round(p * len) reported ids by retrieved non-evidence memories
    others = [m["id"] for m in memories if m.get("source_id") not in ev]
    rng = random.Random(seed)
    n = min(round(p * len(hits)), len(others))
    if n <= 0:
        return hits
    drop = set(rng.sample(range(len(hits)), n))
    return [h for i, h in enumerate(hits) if i not in drop] + rng.sample(others, n)


class EvidenceHistory:
    """Per conversation: whether a question's evidence overlaps the evidence of an earlier question (where
    learning from use can help a later question at all)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def overlaps(self, evidence: Iterable[str]) -> bool:
        """Whether any of ``evidence`` was evidence of an earlier question; then remembers it."""
        ev = set(evidence)
        hit = bool(ev & self.seen)
        self.seen |= ev
        return hit
