"""Shared pieces of the storage layer: the SQLite module (sqlean, which can load sqlite-vec), tunables and
row helpers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np


try:  # an SQLite build that can load extensions (the stdlib one here cannot)
    import sqlean as sqlite3  # type: ignore[import-not-found]  # noqa: F401 - re-exported
except ImportError:  # pragma: no cover - exercised only where sqlean is missing
    import sqlite3  # type: ignore[no-redef]  # noqa: F401

BUSY_TIMEOUT_MS = 60_000
REBASE_EXPONENT = 20_000  # rebase edge amplitudes when step - base_step exceeds this
CACHE_KIB = 65_536         # page cache per connection (SQLite default: 2 MiB)
ROW_CACHE_MAX = 50_000     # per space and kind: immutable node fields / vectors kept by retrieval
MMAP_BYTES = 1 << 30       # read through a memory map: random row reads without a syscall each


@dataclass
class Space:
    id: int
    name: str
    step: int
    base_step: int
    consolidated_step: int


NODE_COLUMNS = ("id", "space_id", "text", "speaker", "role", "ts", "time_str", "keywords",
                "source_id", "session", "ord", "hash", "source", "access_count", "last_access")


def _node(row: Sequence[Any]) -> dict[str, Any]:
    d = dict(zip(NODE_COLUMNS, row))
    d["keywords"] = d["keywords"].split() if d["keywords"] else []
    return d


def _blob(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype=np.float32).tobytes()


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _fts_terms(space_id: int, keywords: Iterable[str]) -> str:
    """A node's FTS document: its keywords scoped to its space (see migration 0005)."""
    return " ".join(f"s{space_id}_{k}" for k in keywords)

