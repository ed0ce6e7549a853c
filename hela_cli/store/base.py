"""Shared pieces of the storage layer: tunables, the ``Space`` row, row helpers, the keyword postings' key,
length and rows (BM25 as FTS5 computed it, both engines), and the SQLite module (sqlean, which can load
sqlite-vec; the backup copy and the SQLite engine use it)."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np


try:  # an SQLite build that can load extensions (the stdlib one here cannot)
    import sqlean as sqlite3  # type: ignore[import-not-found]  # noqa: F401 - re-exported
except ImportError:  # pragma: no cover - exercised only where sqlean is missing
    import sqlite3  # type: ignore[no-redef]  # noqa: F401

BUSY_TIMEOUT_MS = 60_000
# Edge amplitudes are rebased (``amp *= factor``, ``base_step = step``) as soon as the decay factor
# ``decay ** (step - base_step)`` falls below this: amplitudes stay <= cap / REBASE_BELOW (finite for any
# finite cap) and the factor never underflows to 0, whatever the decay (0.9 ** 7100 is 0.0 in floats; a
# fixed step count could not serve every decay). Between rebases: ln(REBASE_BELOW) / ln(decay) steps
# (8,850 at 0.995, 64 at 0.5, 443k at 0.9999); a rebase rewrites the space's edges once: amortised O(1).
REBASE_BELOW = 2.0 ** -64
# An edge whose current weight falls below this is deleted (a few per learning step, see
# ``Edges.prune_edges``). Eq.4 adds ``beta * S_base(i) * w_ij`` to a node's score: with the defaults
# (beta 1, S_base <= 1 + alpha = 2) one pruned edge moves a score by < 2e-6 and 100 of them by < 2e-4,
# below the 1e-3 steps in which scores are shown and far below the gaps that order retrieved memories.
# Eq.2 / forgetting sums move by < PRUNE_WEIGHT per edge likewise. At eta 0.02 and decay 0.995 an edge
# reinforced once reaches it after ~1,980 steps without reinforcement.
PRUNE_WEIGHT = 1e-6
# Eq.1's decay a space's stored amplitudes are read with while none is recorded for it (``spaces.decay``
# NULL: a space older than migration 0016, until a configured process records its own), and a new space's:
# the default of ``hebbian.decay`` (config.py; tests/test_space_decay.py checks the two agree).
DEFAULT_DECAY = 0.995
PRUNE_PER_STEP = 256       # at most this many weak edges deleted per learning step (a step adds <= 78)
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


# Keyword search: BM25 as FTS5 computes it (k1 1.2, b 0.75; the _bm25 of store/sqlite/search.py and store/postgres/search.py), over the
# postings of ``node_terms`` with each space's own counts (``spaces.fts_docs`` / ``fts_len``).
BM25_K1 = 1.2
BM25_B = 0.75
_FTS_TOKEN = re.compile(r"\w+")


def term_key(term: str) -> str:
    """A keyword as the keyword index stores it (as FTS5's ``unicode61`` tokenizer did): case and diacritics
    folded."""
    folded = unicodedata.normalize("NFKD", term.lower())
    return "".join(c for c in folded if not unicodedata.combining(c))


def fts_length(space_id: int, keywords: Sequence[str]) -> int:
    """BM25's document length of a node: the tokens of its keywords as FTS5 counted them in the space-scoped
    document of migration 0005 (``s<space>_<keyword>``), so the lengths, and the scores, stay those of
    FTS5."""
    return sum(len(_FTS_TOKEN.findall(f"s{space_id}_{k}")) for k in keywords)


def ordered_sum(count: int, first: int) -> str:
    """SQL of the BM25 score of a group of ``(pos, c)`` rows (one per matching query term): the terms' parts
    added one by one in query order, ``c(first) + c(first + 1) + ...``, a missing term adding 0, as FTS5's
    ``bm25()`` adds them. Not ``sum()``: SQLite's sums floats with compensation (Kahan-Babuska-Neumaier) and
    Postgres' in whatever order the plan feeds it, either off by a last bit now and then."""
    return " + ".join(f"coalesce(max(CASE WHEN pos = {first + i} THEN c END), 0)" for i in range(count))


def term_rows(space_id: int, docs: dict[int, Sequence[str]]) -> tuple[list[tuple[int, str, int, int, int]], int]:
    """The ``node_terms`` rows ``(space_id, term, node_id, tf, dl)`` of nodes ``{node_id: keywords}`` and the
    sum of their lengths (what ``spaces.fts_len`` gains)."""
    rows = []
    total = 0
    for nid, kws in docs.items():
        dl = fts_length(space_id, kws)
        total += dl
        tf: dict[str, int] = {}
        for k in kws:
            if k:
                key = term_key(k)
                tf[key] = tf.get(key, 0) + 1
        rows.extend((space_id, t, nid, n, dl) for t, n in tf.items())
    return rows, total


def source_hash(source_id: str) -> str:
    """Content hash of a turn keyed by its own id (``hela add --id``, a coding agent's message id): the same id
    is the same turn, whichever path stores it (ingest of a keyed transcript, ``hela add``, a hook's capture).
    The ``add`` prefix keeps these apart from :func:`hela_cli.ingest.nodes.turn_hash`'s. Here, below ingest and
    facts, because both need it (facts tells an agent's own turns by it)."""
    return hashlib.sha256(json.dumps(["add", "id", source_id], ensure_ascii=False).encode("utf-8")).hexdigest()
