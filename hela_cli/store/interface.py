"""The store's declared interface: what everything above the store may call, on either engine.

:class:`StoreAPI` is a :class:`typing.Protocol` listing the methods that memory, ingest, mechanics,
maintenance, ui, bench and cli use, grouped by what they serve, with their signatures and one line each.
``Store(...)`` / ``Store.open(...)`` (:mod:`hela_cli.store`) return an object of the engine the location
names (:class:`~hela_cli.store.sqlite.SqliteStore`, :class:`~hela_cli.store.postgres.PgStore`); both
implement every member, which ``tests/test_store_contract.py`` checks (names and signatures) and then
exercises on both engines. A method an engine's code adds for itself is not part of the contract until it
is listed here; callers above the store use nothing else (the store's tests may).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Iterable, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np

from hela_cli.store.base import Space
from hela_cli.store.browse import NodeFilter


@runtime_checkable
class StoreAPI(Protocol):
    """A hela database (see the module docstring)."""

    #: where the database is, as messages name it (a file path; Postgres: host and database, no password)
    path: str

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgres"``."""

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: Any) -> None: ...

    # ---------------------------------------------------------------- connection and transactions
    def close(self) -> None: ...

    def transaction(self, space: int | None = None) -> AbstractContextManager[Any]:
        """A write transaction: all or nothing (nested: a savepoint). ``space``: the one space whose rows the
        transaction writes, if the caller knows it (Postgres then locks only that space; a SQLite file has one
        writer at a time whatever it names)."""

    def reading(self, space_id: int) -> AbstractContextManager[None]:
        """The enclosed reads of one space (a retrieval's): nothing on SQLite, where a read is a function call;
        Postgres runs them in one snapshot and reads the space's state once (``postgres/read.py``)."""

    def snapshot(self) -> AbstractContextManager[None]:
        """Reads inside see one moment of the database (a read transaction; within a caller's transaction, that
        one). ``hela export`` reads a whole space in one."""

    def checkpoint(self) -> bool:
        """Make what committed durable in the database's own files (SQLite: ``wal_checkpoint(TRUNCATE)``;
        Postgres: the server's business, True). False when a reader kept it from completing."""

    # ---------------------------------------------------------------- meta and the embedder binding
    def get_meta(self, key: str, default: str | None = None) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def embedder_info(self) -> tuple[str, int] | None: ...

    def bind_embedder(self, model_id: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different one later (vectors would not compare)."""

    # ---------------------------------------------------------------- spaces
    def get_space(self, name: str) -> Space | None: ...

    def require_space(self, name: str) -> Space: ...

    @staticmethod
    def check_space_name(name: str) -> None:
        """Raise :class:`StoreError` for a name :meth:`ensure_space` would refuse (check before writing)."""

    def ensure_space(self, name: str) -> Space: ...

    def spaces(self) -> list[dict[str, Any]]:
        """Every space with its counts, by name (code point order on both engines: sorted here, not by the
        server's collation)."""

    def refresh_space(self, space: Space) -> Space: ...

    def space_now(self, space_id: int) -> float | None:
        """The space's present: the newest memory's timestamp."""

    def rename_space(self, old: str, new: str) -> None:
        """Rename a space (its memories are keyed by the space id: nothing else changes)."""

    def drop_space(self, space_id: int) -> dict[str, Any]:
        """Delete a space and everything in it completely (:meth:`erase_nodes` for its memories, then its
        remaining records, asks, hubs, sign bits and the space row), then scrub the file."""

    def space_contents(self, space_id: int) -> dict[str, int]:
        """What a space holds: memories, edges, semantic records, hub rows, logged asks."""

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

    # ---------------------------------------------------------------- edges (Eq.1, Eq.2)
    # Every read scales the stored amplitudes with the space's own recorded decay (``spaces.decay``, issue 41),
    # never with a caller's: a write that learns passes its configured ``hebbian.decay``, and a space stored
    # under another one is rebased to it once, current weights unchanged (``edges.py``, docs/retrieval.md).
    def advance_step(self, space_id: int, decay: float) -> Space:
        """Bump the space's retrieval counter (every edge decays once), inside a transaction; ``decay``: the
        writer's ``hebbian.decay`` (a space stored under another is rebased to it first)."""

    def space_decay(self, space_id: int) -> float:
        """The decay the space's stored weights are read with (its recorded one, else the default)."""

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

    # ---------------------------------------------------------------- facts that change (supersession)
    def mark_superseded(self, space_id: int, old_id: int, new_id: int, *, invalid_at: float | None = None,
                        detector: str = "explicit", confidence: float = 1.0, status: str = "superseded"
                        ) -> dict[str, Any]:
        """Memory ``old_id`` is superseded by the later ``new_id`` of the same space (``status``
        ``"superseded"`` or ``"possible"``); :class:`InputError`, nothing written, for a bad pair."""

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

    def stale_records(self, record_ids: Iterable[int], as_of: float | None = None) -> dict[int, list[int]]:
        """Semantic records whose evidence holds a superseded memory: ``{record id: [those memories]}``."""

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

    # ---------------------------------------------------------------- re-embedding
    def reembed_target(self) -> tuple[str, int] | None:
        """The embedder a staged, unfinished re-embed is for, or None."""

    def reembed_begin(self, model_id: str, dim: int) -> int:
        """Start (or resume) staging vectors of ``model_id``; vectors staged for another model are dropped.
        Returns how many vectors were already staged for this one."""

    def reembed_staged(self, kind: str) -> dict[int, int]:
        """``{id: staged vectors}`` (node or semantic record id; several for passages) of ``kind``."""

    def reembed_nodes(self) -> list[tuple[int, int, str | None, str, str, float, str | None]]:
        """Every node as ``(id, space_id, session, speaker, text, ts, source_id)``, by space then order."""

    def reembed_passage_owners(self) -> set[int]:
        """Nodes that have passage vectors now (they get new ones; see :mod:`hela_cli.maintenance.reembed`)."""

    def reembed_semantic(self) -> list[tuple[int, str | None, str]]:
        """Every semantic record as ``(id, subject, text)``."""

    def stage_vectors(self, kind: str, rows: Iterable[tuple[int, int, np.ndarray]]) -> None:
        """Stage ``(id, part, vector)`` rows of ``kind``. Call inside :meth:`transaction`."""

    def reembed_swap(self, model_id: str, dim: int) -> dict[str, Any] | None:
        """Replace every vector with the staged one and bind ``model_id`` (``dim``), in one transaction."""

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

    # ---------------------------------------------------------------- integrity
    def integrity_problems(self) -> list[str]:
        """Cross-table consistency checks (used by tests and ``hela doctor``-style checks): the engine's own
        structural check, then :data:`SHARED_CHECKS` and the engine's table checks, each ``name: count``."""
