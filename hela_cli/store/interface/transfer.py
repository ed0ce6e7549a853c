"""TransferAPI: transfer, one part of ``StoreAPI`` (:mod:`hela_cli.store.interface`).

A database or a space leaving or entering: `hela backup`, the restore half of `hela import`, `hela copy`'s
whole-space dump and load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class TransferAPI(Protocol):
    """Transfer: see the module docstring."""

    # ---------------------------------------------------------------- backup, export, import, copy
    def backup_to(self, dest: str | Path, force: bool = False) -> dict[str, Any]:
        """Write a consistent copy of the whole database to ``dest`` (user-only), checked before it is moved
        into place. ``dest`` must not exist unless ``force`` (then it is replaced, atomically)."""

    def passage_vectors(self, ids: Sequence[int]) -> dict[int, list[np.ndarray]]:
        """``{node_id: [passage vectors in order]}`` of the given nodes that have passage vectors."""

    def restore_node_state(self, rows: Iterable[tuple[int, int, float | None]]) -> None:
        """``(node_id, access_count, last_access)`` as exported (inside the write transaction)."""

    def restore_edges(self, space_id: int, rows: Sequence[tuple[int, int, float, float]]) -> None:
        """``(a, b, prior, amp)`` written as given (a < b; both nodes of the space, checked by the caller, and
        by the transaction's foreign data: a missing node is an error, not a skip)."""

    def restore_counters(self, space_id: int, step: int, base_step: int, consolidated_step: int,
                         decay: float | None = None) -> None:
        """The space's retrieval counter, last rebase, consolidated step and Eq.1 decay, as exported."""

    def restore_semantic(self, space_id: int, rec: dict[str, Any], evidence: Sequence[int],
                         vector: np.ndarray) -> int:
        """One semantic record with its times, forgotten-evidence count, evidence links and vector."""

    def restore_hub(self, space_id: int, node_id: int, cluster: Sequence[int], step: int, status: str) -> None: ...

    def space_dump(self, name: str) -> dict[str, Any]:
        """Everything of space ``name``: counters, nodes with vectors, edges (raw amplitudes and priors),
        passages, semantic records with vectors and evidence, hub state, the asks log, edit history."""

    def space_load(self, dump: dict[str, Any]) -> dict[str, int]:
        """Write a :meth:`space_dump` as a new space (refused if the space exists here with memories)."""
