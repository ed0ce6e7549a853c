"""The code both engines share, composed into one base, and the hooks each engine must supply.

:class:`StoreCore` is every shared module's class (nodes, keyword postings, edges, semantic records, hubs,
the asks log, passages, supersessions, access tokens, correcting, copying, backup, browsing, integrity, re-embedding, and the shared
connection API)
and nothing engine-specific: all their SQL is plain SQL both engines run, written once, with the few
spellings that differ taken from the engine's :class:`~hela_cli.store.dialect.Dialect`. What differs
beyond spelling (the driver, transactions and migrations, vector and keyword search, the bulk load of new
rows, the engine's own index rows of a node, byte-level deletion) is declared below as abstract methods;
an engine package (:mod:`hela_cli.store.sqlite`, :mod:`hela_cli.store.postgres`) supplies them in a few
classes listed before :class:`StoreCore` in its store class, so an engine that lacks one cannot be
instantiated (``TypeError`` at the first ``Store(...)``, not a failure when the missing piece first runs).
What callers above the store may use is :class:`hela_cli.store.interface.StoreAPI`.
"""

from __future__ import annotations

import abc
import contextlib
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hela_cli.store.asks import AsksLog
from hela_cli.store.backup import Backup
from hela_cli.store.browse import Browse
from hela_cli.store.connection import Connection
from hela_cli.store.correct import Correct, FilteredSearch
from hela_cli.store.edges import Edges
from hela_cli.store.gists import Gists
from hela_cli.store.hubs import Hubs
from hela_cli.store.integrity import Integrity
from hela_cli.store.keywords import Keywords
from hela_cli.store.nodes import Nodes
from hela_cli.store.passages import Passages
from hela_cli.store.reembed import Reembed
from hela_cli.store.semantic import Semantic
from hela_cli.store.supersession import Supersession
from hela_cli.store.tokens import Tokens
from hela_cli.store.transfer import Transfer


class StoreCore(Correct, FilteredSearch, Transfer, Nodes, Keywords, Passages, Edges, Semantic, Supersession, Gists, Hubs,
                AsksLog, Reembed, Integrity, Backup, Browse, Tokens, Connection, abc.ABC):
    """The shared store; an engine's class is ``EnginePieces..., StoreCore``."""

    # ---------------------------------------------------------------- connection, transactions, migrations
    @abc.abstractmethod
    def transaction(self, space: int | None = None) -> contextlib.AbstractContextManager[Any]:
        """A write transaction (all or nothing; nested: a savepoint). ``space``: the one space it writes."""

    @abc.abstractmethod
    def _migrate(self) -> None:
        """Bring the schema up to date (run by the constructor)."""

    @abc.abstractmethod
    def applied_migrations(self) -> list[str]:
        """Names of the migrations applied, in order."""

    @abc.abstractmethod
    def _table_exists(self, name: str) -> bool: ...

    @abc.abstractmethod
    def _create_vector_tables(self, dim: int) -> None:
        """Inside the embedder binding's transaction: the engine's vector tables for ``dim``-d vectors."""

    # ---------------------------------------------------------------- nodes: bulk load, engine index rows
    @abc.abstractmethod
    def _load_nodes(self, space_id: int, fresh: dict[str, tuple[dict[str, Any], np.ndarray]], now: float
                    ) -> dict[str, int]:
        """Write new node rows (by hash) with their vectors and keyword index; ``{hash: node id}``."""

    @abc.abstractmethod
    def _forget_nodes(self, space_id: int, ids: Sequence[int]) -> None:
        """Drop the engine's own index rows of nodes about to be deleted (after the version bump; SQLite: the
        sqlite-vec rows and sign bits)."""

    @abc.abstractmethod
    def _signs_after_write(self, space_id: int, add: Any = None, remove: Sequence[int] = ()) -> None:
        """Keep a persisted vector index current through a node write (SQLite's sign bits; else nothing)."""

    @abc.abstractmethod
    def _put_semantic_vector(self, semantic_id: int, space_id: int, vector: np.ndarray) -> None: ...

    @abc.abstractmethod
    def _replace_vectors(self, dim: int) -> None:
        """Inside ``reembed_swap``: every node and semantic vector from ``reembed_stage`` (new width ``dim``)."""

    @abc.abstractmethod
    def _after_load(self) -> None:
        """Bookkeeping after rows were written with explicit ids (``hela copy``)."""

    # ---------------------------------------------------------------- search
    @abc.abstractmethod
    def node_vectors(self, ids: Sequence[int], space_id: int | None = None) -> dict[int, np.ndarray]: ...

    @abc.abstractmethod
    def knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]: ...

    @abc.abstractmethod
    def knn_among(self, space_id: int, vector: np.ndarray, k: int, allowed: set[int]) -> list[tuple[int, float]]: ...

    @abc.abstractmethod
    def vector_index_kind(self, space_id: int) -> str: ...

    @abc.abstractmethod
    def _space_size(self, space_id: int) -> int: ...

    @abc.abstractmethod
    def semantic_knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]: ...

    @abc.abstractmethod
    def semantic_vector(self, semantic_id: int) -> np.ndarray | None: ...

    @abc.abstractmethod
    def _index_terms(self, space_id: int, docs: dict[int, Sequence[str]]) -> None:
        """Keyword postings of new nodes ``{node_id: keywords}`` and the space's BM25 counts (in bulk)."""

    # ---------------------------------------------------------------- edits, deletion, bytes
    @abc.abstractmethod
    def _write_vectors(self, space_id: int, vectors: dict[int, np.ndarray], now: float) -> None: ...

    @abc.abstractmethod
    def _signs_replace(self, space_id: int, vectors: dict[int, np.ndarray]) -> None: ...

    @abc.abstractmethod
    def checkpoint(self) -> bool: ...

    @abc.abstractmethod
    def scrub(self, texts: Sequence[str]) -> dict[str, Any]:
        """After a deleting transaction committed: make the deleted texts leave the engine's bytes."""

    # ---------------------------------------------------------------- backup, browsing, integrity
    @abc.abstractmethod
    def _write_copy(self, tmp: Path, dest: Path) -> None:
        """A snapshot of every space into the SQLite file ``tmp`` (``backup_to``)."""

    @abc.abstractmethod
    def _change_token(self) -> Any: ...

    @abc.abstractmethod
    def set_query_only(self, on: bool) -> None: ...

    @abc.abstractmethod
    def _engine_integrity(self) -> list[str]: ...

    @abc.abstractmethod
    def _engine_checks(self) -> dict[str, str]: ...


#: the abstract hooks, by name (tests check that every engine supplies each in its own package)
ENGINE_HOOKS = tuple(sorted(StoreCore.__abstractmethods__))

__all__ = ["ENGINE_HOOKS", "StoreCore"]
