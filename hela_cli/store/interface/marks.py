"""MarksAPI: marks (facts that change), one part of ``StoreAPI`` (:mod:`hela_cli.store.interface`).

Facts that change: which memory a later one superseded, from when and by which detector; the marks
recall reads as of a time, and the semantic records they make stale.
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol, runtime_checkable


@runtime_checkable
class MarksAPI(Protocol):
    """Marks: see the module docstring."""

    # ---------------------------------------------------------------- facts that change (supersession)
    def mark_superseded(self, space_id: int, old_id: int, new_id: int, *, invalid_at: float | None = None,
                        detector: str = "explicit", confidence: float = 1.0, status: str = "superseded",
                        reason: str | None = None) -> dict[str, Any]:
        """Memory ``old_id`` is superseded by the later ``new_id`` of the same space (``status``
        ``"superseded"`` or ``"possible"``; ``reason``: a judge's why); :class:`InputError`, nothing written,
        for a bad pair."""

    def unmark_superseded(self, space_id: int, old_id: int, new_id: int | None = None) -> int:
        """Remove the mark(s) of ``old_id`` (the one naming ``new_id`` when given); the rows removed."""

    def supersessions_for(self, node_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
        """The supersession rows naming any of ``node_ids``, either side: ``{node id: [row, ...]}``."""

    def space_supersessions(self, space_id: int) -> list[dict[str, Any]]: ...

    def has_supersessions(self, space_id: int) -> bool:
        """Whether the space has any supersession mark (a recall reads marks only then)."""

    def count_supersessions(self, space_id: int) -> int: ...

    def restore_supersessions(self, space_id: int, rows: Iterable[dict[str, Any]]) -> int:
        """Inside a write transaction: exported rows (ids of this database) written back."""

    def undecided_supersessions(self, space_id: int, limit: int = 50) -> list[dict[str, Any]]:
        """The ``possible`` marks no judge has decided yet (the deferred change judge's questions)."""

    def stale_records(self, record_ids: Iterable[int], as_of: float | None = None) -> dict[int, list[int]]:
        """Semantic records whose evidence holds a superseded memory: ``{record id: [those memories]}``."""
