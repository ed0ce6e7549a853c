"""AdminAPI: spaces and administration, one part of ``StoreAPI`` (:mod:`hela_cli.store.interface`).

The database itself: its connection and transactions, meta and the embedder binding, the spaces (create,
list, rename, drop), re-embedding's staged vectors and swap, and the integrity check. Everything that opens,
administers or checks a database uses this part.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Iterable, Protocol, runtime_checkable

import numpy as np

from hela_cli.store.base import Space


@runtime_checkable
class AdminAPI(Protocol):
    """Spaces and administration: see the module docstring."""

    # ---------------------------------------------------------------- connection and transactions
    #: where the database is, as messages name it (a file path; Postgres: host and database, no password)
    path: str

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgres"``."""

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: Any) -> None: ...

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

    def ensure_space(self, name: str, decay: float | None = None) -> Space:
        """The space, created if needed (a new one records ``decay``, its creator's ``hebbian.decay``)."""

    def only_space(self) -> str | None:
        """The name of the database's one space, or None when it has none or several."""

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

    # ---------------------------------------------------------------- integrity
    def integrity_problems(self) -> list[str]:
        """Cross-table consistency checks (used by tests and ``hela doctor``-style checks): the engine's own
        structural check, then :data:`SHARED_CHECKS` and the engine's table checks, each ``name: count``."""

    # ---------------------------------------------------------------- access tokens of a shared server
    def add_token(self, name: str, digest: str, spaces: list[str] | None, scope: str, created_at: float) -> bool:
        """Store a token's SHA-256 ``digest`` (never the token) under ``name`` with its spaces (None: every
        space) and scope (``read`` / ``write``); False, nothing written, when the name is taken."""

    def tokens(self) -> list[dict[str, Any]]:
        """Every token's row (name, digest, spaces, scope, created_at, last_used), by name."""

    def token_by_digest(self, digest: str) -> dict[str, Any] | None: ...

    def revoke_token(self, name: str) -> bool:
        """Delete the token named ``name``; False when there is none."""

    def touch_token(self, digest: str, when: float) -> None:
        """Record when a server last accepted the token."""
