"""LinksAPI: links, one part of ``StoreAPI`` (:mod:`hela_cli.store.interface`).

Links (edges) and the Eq.1 step counter: weights read with the space's own decay, written, pruned; hub
strength (Eq.2) from them.
"""

from __future__ import annotations

from typing import Iterable, Protocol, Sequence, runtime_checkable

from hela_cli.store.base import Space


@runtime_checkable
class LinksAPI(Protocol):
    """Links: see the module docstring."""

    # ---------------------------------------------------------------- edges (Eq.1, Eq.2)
    # Every read scales the stored amplitudes with the space's own recorded decay (``spaces.decay``, issue 41),
    # never with a caller's: a write that learns passes its configured ``hebbian.decay``, which only a space
    # with none recorded takes; a space keeps its own until ``set_space_decay`` (``edges.py``, docs/retrieval.md).
    def advance_step(self, space_id: int, decay: float) -> Space:
        """Bump the space's retrieval counter (every edge decays once, by the space's decay), inside a
        transaction; ``decay``: the writer's ``hebbian.decay`` (recorded only for a space that has none)."""

    def space_decay(self, space_id: int) -> float:
        """The decay the space's stored weights are read with (its recorded one, else the default)."""

    def set_space_decay(self, space_id: int, decay: float) -> int:
        """Change the space's decay (a rebase in its own transaction: current weights unchanged); returns how
        many edges hold learned weight."""

    def record_decay(self, decay: float) -> int:
        """Spaces with no decay recorded yet take ``decay`` (the opening process's); returns how many."""

    def prune_edges(self, space_id: int, *, limit: int | None = None) -> int:
        """Delete up to ``limit`` edges whose current weight is below ``PRUNE_WEIGHT`` (inside a transaction).
        Reads only the pruned rows through the ``(space_id, amp)`` index. Returns how many."""

    def set_edges(self, space: Space, weights: dict[tuple[int, int], float], decay: float) -> None:
        """Write current weights for pairs learned under ``decay``, inside a write transaction. A pair whose node
        is gone (or in another space) is skipped: the check runs in the transaction, so no edge can dangle. An
        edge with a fixed ``prior`` keeps it; its decaying part becomes ``max(0, weight - prior)``."""

    def set_priors(self, space: Space, weights: dict[tuple[int, int], float]) -> None:
        """Give pairs a fixed prior weight (at least ``w``: an existing larger prior stays), inside a write
        transaction; what Eq.1 learned on the edge is kept on top. Pairs whose node is gone are skipped."""

    def neighbours(self, space: Space, node_ids: Sequence[int], *,
                   min_weight: float = 0.0) -> dict[int, list[tuple[int, float]]]:
        """Current-weight neighbours of each node: ``{node: [(neighbour, weight), ...]}``."""

    def edges_among(self, space: Space, node_ids: Sequence[int]) -> dict[tuple[int, int], float]:
        """Current weights of the edges whose both ends are in ``node_ids`` (a small set): ``{(a, b): w}``, a <
        b."""

    def edge_weight(self, space: Space, a: int, b: int) -> float: ...

    def edge_prior(self, space: Space, a: int, b: int) -> float: ...

    def edge_priors(self, space: Space) -> dict[tuple[int, int], float]:
        """``{(a, b): prior}`` of the space's edges with a fixed prior weight."""

    def pair_weights(self, space: Space,
                     pairs: Iterable[tuple[int, int]]) -> dict[tuple[int, int], tuple[float, float]]:
        """``{(a, b): (prior, current weight)}`` (a < b) of the existing edges among ``pairs``: one read per 500
        smaller ends instead of a query per pair (ingest writes links for every batch)."""

    def edge_strengths(self, space: Space, *, with_priors: bool = False) -> dict[int, tuple[float, int]]:
        """Eq.2 inputs for every node with edges: ``{node: (sum of current weights, degree)}``. Fixed priors
        count only ``with_priors``: Eq.2 hubs measure what use taught (without fixed links, the decaying ingest
        links count, as in the paper); forgetting's "weak" criterion counts them (a memory linked into its
        conversation is not weak)."""

    def all_edges(self, space: Space) -> list[tuple[int, int, float]]: ...

    def count_edges(self, space_id: int) -> int: ...

    def raw_edges(self, space_id: int) -> tuple[int, int, float | None, list[tuple[int, int, float, float]]]:
        """``(step, base_step, decay, [(a, b, prior, amp)])`` of the space, read in one snapshot, as stored
        (``decay`` None: none recorded yet): ``prior + amp * decay ** (step - base_step)`` is each current weight
        (export: an exact round trip)."""
