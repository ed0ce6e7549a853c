"""MemoriesAPI: memories, one part of ``StoreAPI`` (:mod:`hela_cli.store.interface`).

Memories (nodes): writing them at ingest, reading them back by id, filter or session, and correcting them
(complete deletion, a new text, the file scrubbed after).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class MemoriesAPI(Protocol):
    """Memories: see the module docstring."""

    # ---------------------------------------------------------------- nodes (ingest)
    def existing_hashes(self, space_id: int, hashes: Iterable[str]) -> dict[str, int]:
        """``{hash: node_id}`` for the given content hashes already stored in the space."""

    def ids_by_source(self, space_id: int, source_ids: Iterable[str]) -> dict[str, int]:
        """``{source_id: node_id}`` for the given source ids already stored in the space (``hela add --id``)."""

    def latest_nodes(self, space_id: int, n: int = 1, session: str | None = None) -> list[dict[str, Any]]:
        """The space's ``n`` newest nodes by ``ord`` (of one ``session`` when given), newest first."""

    def next_ord(self, space_id: int) -> int: ...

    def insert_nodes(self, space_id: int, rows: list[dict[str, Any]], vectors: np.ndarray) -> list[int]:
        """Insert nodes with their vectors and keyword rows. Call inside :meth:`transaction`."""

    def insert_passages(self, space_id: int, passages: dict[int, np.ndarray]) -> None:
        """Store passage vectors ``{node_id: (n, dim) array}`` (replacing a node's earlier ones). Call inside
        :meth:`transaction`."""

    def long_nodes_without_passages(self, space_id: int, min_chars: int) -> list[tuple[int, str, str]]:
        """``[(node_id, speaker, text)]`` of the space's turns longer than ``min_chars`` with no passage
        vectors."""

    def keyword_docs(self, space_id: int) -> dict[int, tuple[str | None, list[str]]]:
        """``{node: (session, keywords)}`` for every node of the space (cold-start keyword links)."""

    def node_sessions(self, ids: Iterable[int]) -> dict[int, str | None]: ...

    def node_derived(self, space_id: int, kind: str, ids: Iterable[int],
                     compute: Callable[[list[int]], dict[int, Any]]) -> dict[int, Any]:
        """``compute(missing ids)`` per node, cached per space and ``kind`` until the space's nodes change."""

    def next_turns(self, space_id: int, ids: Iterable[int]) -> dict[int, int]:
        """``{node: the next turn of its session}`` for the given nodes that have one (the reply to a turn)."""

    def consecutive_pairs(self, space_id: int) -> list[tuple[int, int]]:
        """``(earlier, next)`` node ids of consecutive turns of each session, in ``ord`` order (the conversation
        links ingest makes)."""

    def touch_nodes(self, ids: Sequence[int], when: float) -> None:
        """Record an access (inside a transaction)."""

    def delete_nodes(self, ids: Sequence[int]) -> None:
        """Remove nodes with their vectors, keyword index rows, passages, edges and hub rows; count the semantic
        evidence they leave behind. Call inside a transaction."""

    # ---------------------------------------------------------------- node reads
    def get_node(self, node_id: int) -> dict[str, Any] | None: ...

    def get_nodes(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]: ...

    def node_features(self, ids: Iterable[int], space_id: int | None = None) -> dict[int, dict[str, Any]]:
        """The fields retrieval scores by (``ts``, ``speaker``, ``keywords``): lighter than :meth:`get_nodes`."""

    def node_vectors(self, ids: Sequence[int], space_id: int | None = None) -> dict[int, np.ndarray]:
        """Stored float32 vectors by node id (cached per space like :meth:`node_features` with ``space_id``)."""

    def iter_nodes(self, space_id: int) -> Iterator[dict[str, Any]]:
        """Every node of the space in conversation order, with every column of ``nodes`` (read from the table
        itself, so export carries columns that later migrations add), ``keywords`` as a list."""

    def count_nodes(self, space_id: int) -> int: ...

    def speaker_counts(self, space_id: int) -> dict[str, int]:
        """``{speaker: number of memories}`` of the space, cached per space until its nodes change."""

    def list_nodes(self, space_id: int, *, limit: int | None = None, **filters: Any) -> list[dict[str, Any]]:
        """The space's memories matching ``filters`` (:func:`filter_clause`), newest first (by time, then
        conversation order), at most ``limit``."""

    def filtered_ids(self, space_id: int, **filters: Any) -> list[int]:
        """Ids of the space's memories matching ``filters`` (recall filters: candidate selection)."""

    def resolve_nodes(self, space_id: int, space_name: str, ids: Sequence[int] = (),
                      source_ids: Sequence[str] = ()) -> list[int]:
        """The node ids of ``ids`` and ``source_ids`` in the space, in the order given; an unknown one is an
        :class:`InputError` naming it (nothing is changed)."""

    def session_context(self, space_id: int, node: dict[str, Any], before: int, after: int,
                        exclude: Iterable[int] = ()) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Up to ``before`` turns of the node's session preceding it (oldest first) and up to ``after``
        following it (in order), leaving out the nodes ``exclude``: an edit re-embeds the node with its
        preceding context as ingest does, and the turns that had the node as context."""

    def node_history(self, node_id: int) -> list[dict[str, Any]]:
        """Earlier texts of a memory, oldest first: ``[{"version", "text", "speaker", "edited_at"}]``
        (``edited_at``: when that text was replaced)."""

    def node_space_name(self, node_id: int) -> str | None: ...

    def node_space_names(self, node_ids: Sequence[int]) -> dict[int, str]:
        """``{node id: its space's name}`` for those of ``node_ids`` that exist, in one query per 500 ids."""

    def node_positions(self, ids: list[int] | set[int]) -> dict[int, tuple[str, int]]:
        """``{node: (session or '', ord)}``."""

    def turns_between(self, space_id: int, session: str, lo: int, hi: int) -> bool:
        """Whether the session has a turn strictly between conversation positions ``lo`` and ``hi``: a range of
        the ``(space_id, ord)`` index, as long as the gap between the two turns (one row for consecutive turns),
        never the whole space."""

    def changed_since(self, ids: Iterable[int], since: float) -> list[int]:
        """Those of ``ids`` deleted or edited at or after ``since`` (epoch seconds): a writer that read them
        before must not write what it derived from them (call inside its write transaction)."""

    # ---------------------------------------------------------------- correcting memory
    def erase_nodes(self, space_id: int, ids: Sequence[int], scrub: bool = True,
                    revectors: dict[int, np.ndarray] | None = None) -> dict[str, Any]:
        """Delete the memories ``ids`` of the space completely (see the module docstring), in one write
        transaction (a savepoint inside the caller's), then, with ``scrub`` and outside any transaction,
        :meth:`scrub` the file of their texts. The public complete-deletion path (``hela delete``, ``spaces
        drop``, an import cleaning up). Ids of other spaces or unknown ids are ignored."""

    def replace_node_text(self, space_id: int, node_id: int, text: str, keywords: Sequence[str],
                          vector: np.ndarray, passages: np.ndarray | None,
                          followers: dict[int, np.ndarray] | None = None) -> dict[str, Any]:
        """Replace a memory's text in one write transaction, keeping its id, time, session, speaker and edges:
        the previous text goes to ``history`` with its secrets redacted; the row's text and keywords, its vector
        (``node_emb``, ``node_vec``, sign bits), passage vectors and FTS row are replaced; ``followers`` (node ->
        vector) are turns re-embedded because their embedding context held the old text. What was derived from the
        old text (semantic records citing it, asks-log rows holding it) is deleted as by a delete. Then the old
        text is scrubbed from the file bytes except where history keeps it."""

    def scrub(self, texts: Sequence[str]) -> dict[str, Any]:
        """Make deleted ``texts`` leave the file bytes (call after the deleting transaction committed):
        checkpoint (TRUNCATE), search the database file and WAL for their probes (those no remaining row holds),
        ``VACUUM`` when one is found, search again. ``{"checkpointed", "vacuumed", "verified", "probes",
        "seconds"}``; ``verified`` False only when a probe is still in the bytes after all that (a reader held
        the WAL the whole busy timeout)."""
