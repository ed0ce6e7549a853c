"""SearchAPI: search, one part of ``StoreAPI`` (:mod:`hela_cli.store.interface`).

Candidate search for a recall: vector KNN, BM25 keyword search over the space's own statistics, passage
cosines, time windows, semantic-record KNN.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class SearchAPI(Protocol):
    """Search: see the module docstring."""

    # ---------------------------------------------------------------- search (retrieval)
    def knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Nearest nodes of the space by cosine: ``[(node_id, cosine_similarity)]``, best first."""

    def knn_among(self, space_id: int, vector: np.ndarray, k: int, allowed: set[int]) -> list[tuple[int, float]]:
        """Exact nearest of the ``allowed`` memories by cosine, best first. Up to the in-process index's limit
        (20k nodes) the space's index is used with a mask; above, the allowed vectors are read by id from
        ``node_emb`` (a filter narrows the space; a filter matching most of a large space reads most of its
        vectors: ~1 s per 100k)."""

    def keyword_search(self, space_id: int, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """Nodes of the space matching any term, ``[(node_id, bm25)]`` with bm25 >= 0, best first."""

    def keyword_search_among(self, space_id: int, terms: Sequence[str], limit: int, **filters: Any
                             ) -> list[tuple[int, float]]:
        """:meth:`keyword_search` restricted to the memories matching ``filters`` (joined in the FTS5 query, so
        the limit counts matching memories only)."""

    def term_counts(self, space_id: int, terms: Sequence[str]) -> dict[str, int]:
        """Document frequency of each keyword in the space (memories whose keywords hold it), cached per space
        until its nodes change. One FTS5 count per new term."""

    def term_postings(self, space_id: int, terms: Sequence[str], max_df: int) -> dict[str, list[int]]:
        """The memories holding each keyword, for keywords held by at most ``max_df`` memories of the space
        (rarer ones are left out after reading ``max_df + 1`` postings). One FTS5 query per term."""

    def passage_cosines(self, space_id: int, vector: np.ndarray) -> dict[int, float]:
        """``{node_id: best cosine of its passages}`` for every node of the space that has passage vectors."""

    def nodes_in_window(self, space_id: int, start: float, end: float, limit: int) -> list[int]:
        """Ids of up to ``limit`` memories of the space with ``start <= ts <= end`` (index ``nodes_space_ts``)."""

    def nodes_in_window_among(self, space_id: int, start: float, end: float, limit: int, **filters: Any) -> list[int]:
        """:meth:`nodes_in_window` among the memories matching ``filters``."""

    def semantic_knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]: ...
