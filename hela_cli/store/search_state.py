"""The in-process state of vector and keyword search, held by a store as ONE object (``Store.search_state``).

What it holds is derived data a process may drop at any time (the database stays the truth): per space,
the in-process vector index with the ``nodes_version`` it matches, the loaded sign bits, the node count,
how often it was searched, Postgres' HNSW bookkeeping, and the caches of immutable per-node rows (features,
vectors, keyword document frequencies, passage matrices). ``Store.vector_index_kind(space_id)`` and
``Store.held_index(space_id)`` are the public way to ask which index a space's search uses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class SearchState:
    searches: dict[int, int] = field(default_factory=dict)                 # space -> searches so far
    signs: dict[int, tuple[int, Any]] = field(default_factory=dict)        # space -> (version, SignIndex)
    indexes: dict[int, tuple[int, Any, Any, Any]] = field(default_factory=dict)  # (version, index, embedder, stamps)
    sizes: dict[int, tuple[int, int]] = field(default_factory=dict)        # space -> (version, node count)
    caches: dict[tuple[int, str], tuple[int, dict[int, Any]]] = field(default_factory=dict)
    hnsw: dict[int, bool] = field(default_factory=dict)                    # Postgres: space has its HNSW index

    def clear(self) -> None:
        """Forget everything (after a write that changes every vector, e.g. ``hela reembed``)."""
        for d in (self.searches, self.signs, self.indexes, self.sizes, self.caches, self.hnsw):
            d.clear()

    def held_index(self, space_id: int) -> Any | None:
        """The in-process vector index this process holds for the space (it may be stale), or None."""
        entry = self.indexes.get(space_id)
        return entry[1] if entry is not None else None
