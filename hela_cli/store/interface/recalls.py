"""RecallsAPI: the asks log and feedback, one part of ``StoreAPI`` (:mod:`hela_cli.store.interface`).

The asks log: each learning recall or ask (the recall id feedback names), the feedback marked on it, and
the use traces read back from it.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class RecallsAPI(Protocol):
    """The asks log and feedback: see the module docstring."""

    # ---------------------------------------------------------------- the asks log and feedback
    def log_ask(self, space_id: int, question: str, answer: str | None, memories: Sequence[int], step: int, *,
                kind: str = "ask", retrieval: Sequence[dict[str, Any]] | None = None,
                vector: np.ndarray | None = None, keep_recalls: int = 0) -> int | None:
        """Record one ask or recall, as `llm` logs prompts; returns its id (the recall id feedback names).
        ``retrieval``: the retrieved set as the feedback rule reads it (``[{id, base, path, from}]``);
        ``vector``: the query vector (with feedback, the row becomes a use trace). Nothing is logged (None) when
        one of its memories was deleted meanwhile (``hela delete``: the answer may restate it). ``keep_recalls``
        > 0: recalls that never got feedback are kept for the space's newest ``keep_recalls`` of them (pruned
        every :data:`PRUNE_EVERY` rows; asks and recalls with feedback stay)."""

    def asks(self, space_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """The space's most recent asks and recalls, newest first (JSON columns decoded)."""

    def get_ask(self, ask_id: int) -> dict[str, Any] | None:
        """One row of the asks log by id (JSON columns decoded), or None."""

    def latest_ask(self, space_id: int) -> dict[str, Any] | None:
        """The space's most recent ask or recall, or None."""

    def mark_feedback(self, ask_id: int, used: Sequence[int], when: float) -> bool:
        """Record the feedback of one recall inside the write transaction; False if it already has feedback
        (checked in the write, so two processes cannot both apply feedback to one recall)."""

    def use_traces(self, space_id: int, limit: int = 5000) -> tuple[np.ndarray, list[list[int]]]:
        """The space's use traces, newest first (at most ``limit``): recalls with feedback and a query vector.
        Returns ``(vectors (n, dim) float32, used ids per trace)``; an empty (0, 0) matrix when there are none."""
