"""RecordsAPI: semantic records and consolidation, one part of ``StoreAPI`` (:mod:`hela_cli.store.interface`).

Semantic records distilled by consolidation, their evidence, and consolidation's per-hub state.
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class RecordsAPI(Protocol):
    """Semantic records and consolidation: see the module docstring."""

    # ---------------------------------------------------------------- semantic records and consolidation
    def insert_semantic(self, space_id: int, kind: str, subject: str | None, text: str,
                        confidence: float | None, date: str | None, hub_id: int | None,
                        evidence: Sequence[int], vector: np.ndarray) -> int: ...

    def add_evidence(self, semantic_id: int, node_ids: Sequence[int]) -> None:
        """Link evidence turns, inside the write transaction. A turn forgotten since consolidation read its
        cluster gets no link (nothing may dangle); it is counted in ``forgotten_evidence`` instead."""

    def get_semantic(self, ids: Sequence[int] | None = None, space_id: int | None = None) -> list[dict[str, Any]]:
        """Records by id (in that order; the retrieval path, hand-written reads) or a whole space's records
        (inspect / export), each with its ``evidence`` node ids."""

    def semantic_citing(self, node_id: int) -> list[int]: ...

    def semantic_vector(self, semantic_id: int) -> np.ndarray | None: ...

    def count_semantic(self, space_id: int) -> int: ...

    def hub_state(self, space_id: int) -> dict[int, dict[str, Any]]: ...

    def set_hub_state(self, space_id: int, node_id: int, cluster: Sequence[int], step: int, status: str) -> None:
        """Record a hub's consolidation state; nothing for a hub forgotten meanwhile (checked in the write), nor
        for a cluster holding a memory deleted meanwhile (``hela delete``)."""

    def set_consolidated_step(self, space_id: int, step: int) -> None: ...

    # ---------------------------------------------------------------- session gists a model wrote
    def set_session_gist(self, space_id: int, session: str, text: str, turns: int, model: str | None,
                         evidence: Sequence[int]) -> None: ...

    def session_gists(self, space_id: int, sessions: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``{session: {"text", "turns", "model", "evidence", "created_at"}}`` of those that have one."""

    def count_session(self, space_id: int, session: str) -> int: ...
