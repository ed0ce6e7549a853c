"""BrowseAPI: browsing (``hela ui``), one part of ``StoreAPI`` (:mod:`hela_cli.store.interface`).

`hela ui`'s reads: paginated filtered lists, a memory's edges by part, semantic pages; read-only
connections.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from hela_cli.store.base import Space
from hela_cli.store.browse import NodeFilter


@runtime_checkable
class BrowseAPI(Protocol):
    """Browsing: see the module docstring."""

    # ---------------------------------------------------------------- browsing (hela ui)
    def browse_nodes(self, space_id: int, f: NodeFilter, limit: int, offset: int = 0,
                     newest_first: bool = True) -> list[dict[str, Any]]:
        """One page of the space's memories matching ``f``: by conversation order (newest first by default), or,
        with keyword ``terms``, best BM25 match first (the engine's keyword index: :meth:`_browse_by_terms`).
        LIMIT / OFFSET in SQL."""

    def count_browse(self, space_id: int, f: NodeFilter) -> int:
        """How many memories of the space match ``f`` (with ``terms``: :meth:`_count_by_terms`)."""

    def node_edges(self, space: Space, node_id: int) -> list[tuple[int, float, float]]:
        """The memory's edges as ``[(other, fixed prior, learned weight now)]``; current weight = the sum."""

    def edge_parts(self, space: Space, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], tuple[float, float]]:
        """``{(a, b): (fixed prior, learned weight now)}`` for the pairs that have an edge (keys ``a < b``)."""

    def semantic_page(self, space_id: int, limit: int, offset: int = 0) -> list[int]:
        """Ids of one page of the space's semantic records (newest first)."""

    def set_query_only(self, on: bool) -> None:
        """``PRAGMA query_only``: with it on, this connection refuses every write (a browser reads the file
        other processes write; only an explicit learning recall turns it off for its own transaction)."""
