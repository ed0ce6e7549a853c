"""The storage layer: one SQLite file. ALL SQL of hela lives in this module.

* sqlite-vec ``vec0`` tables hold node and semantic-record vectors (partitioned by space, cosine).
* FTS5 holds node keywords for keyword candidates (BM25).
* ``edges`` holds undirected Hebbian edges, one row per pair ``a < b``. The current weight is
  ``amp * decay ** (step - base_step)`` with the space's retrieval counter ``step``: a retrieval decays
  every edge by bumping ``step`` (O(1)); see :mod:`hela_cli.dynamics`.
* Named, ordered migrations are applied under ``BEGIN IMMEDIATE``; WAL, ``busy_timeout``,
  ``synchronous=NORMAL``; the file is created user-only (0600).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from hela_cli.errors import StoreError
from hela_cli.paths import ensure_private_dir

try:  # an SQLite build that can load extensions (the stdlib one here cannot)
    import sqlean as sqlite3  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - exercised only where sqlean is missing
    import sqlite3  # type: ignore[no-redef]

BUSY_TIMEOUT_MS = 60_000
REBASE_EXPONENT = 20_000  # rebase edge amplitudes when step - base_step exceeds this
CACHE_KIB = 65_536         # page cache per connection (SQLite default: 2 MiB)
ROW_CACHE_MAX = 50_000     # per space and kind: immutable node fields / vectors kept by retrieval
MMAP_BYTES = 1 << 30       # read through a memory map: random row reads without a syscall each


# ----------------------------------------------------------------------------------- migrations
def _script(db: "sqlite3.Connection", sql: str) -> None:
    """Run a migration script statement by statement (``executescript`` would COMMIT the transaction)."""
    for stmt in sql.split(";"):
        if stmt.strip():
            db.execute(stmt)


def _m1_core(db: "sqlite3.Connection") -> None:
    _script(db, 
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE spaces(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at REAL NOT NULL,
            step INTEGER NOT NULL DEFAULT 0,        -- retrieval counter (Eq.1 global decay)
            base_step INTEGER NOT NULL DEFAULT 0,   -- step at which edge amplitudes were last rebased
            consolidated_step INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE nodes(
            id INTEGER PRIMARY KEY,
            space_id INTEGER NOT NULL REFERENCES spaces(id),
            text TEXT NOT NULL,
            speaker TEXT,
            role TEXT,
            ts REAL NOT NULL,                       -- UTC epoch seconds
            time_str TEXT,                          -- the original date string
            keywords TEXT NOT NULL DEFAULT '',      -- space-separated stemmed keywords
            source_id TEXT,                         -- e.g. LoCoMo dia_id
            session TEXT,
            ord INTEGER NOT NULL,                   -- order within the space
            hash TEXT NOT NULL,                     -- content hash (idempotent ingest)
            source TEXT,                            -- file it came from
            access_count INTEGER NOT NULL DEFAULT 0,
            last_access REAL,
            created_at REAL NOT NULL,
            UNIQUE(space_id, hash)
        );
        CREATE INDEX nodes_space_ord ON nodes(space_id, ord);
        CREATE INDEX nodes_space_source ON nodes(space_id, source_id);
        CREATE TABLE edges(
            a INTEGER NOT NULL,
            b INTEGER NOT NULL,
            space_id INTEGER NOT NULL,
            amp REAL NOT NULL,                      -- weight = amp * decay^(step - base_step)
            PRIMARY KEY(a, b),
            CHECK(a < b),
            CHECK(amp >= 0)
        ) WITHOUT ROWID;
        CREATE INDEX edges_b ON edges(b);
        CREATE INDEX edges_space ON edges(space_id);
        CREATE VIRTUAL TABLE node_fts USING fts5(space, keywords, tokenize='unicode61');
        """
    )


def _m2_semantic(db: "sqlite3.Connection") -> None:
    _script(db, 
        """
        CREATE TABLE semantic(
            id INTEGER PRIMARY KEY,
            space_id INTEGER NOT NULL REFERENCES spaces(id),
            kind TEXT NOT NULL CHECK(kind IN ('trait', 'fact', 'knowledge')),
            subject TEXT,
            text TEXT NOT NULL,
            confidence REAL,
            date TEXT,                               -- absolute date for facts, e.g. 7 May 2023
            hub_id INTEGER,                          -- node whose cluster produced it
            forgotten_evidence INTEGER NOT NULL DEFAULT 0,  -- evidence turns since forgotten
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX semantic_space ON semantic(space_id);
        CREATE TABLE semantic_evidence(
            semantic_id INTEGER NOT NULL REFERENCES semantic(id) ON DELETE CASCADE,
            node_id INTEGER NOT NULL,
            PRIMARY KEY(semantic_id, node_id)
        ) WITHOUT ROWID;
        CREATE INDEX semantic_evidence_node ON semantic_evidence(node_id);
        CREATE TABLE hubs(
            node_id INTEGER PRIMARY KEY,
            space_id INTEGER NOT NULL,
            cluster TEXT NOT NULL,                   -- JSON list of node ids distilled
            distilled_step INTEGER NOT NULL,
            status TEXT NOT NULL                     -- ok | failed: reason
        );
        CREATE TABLE asks(
            id INTEGER PRIMARY KEY,
            space_id INTEGER NOT NULL,
            question TEXT NOT NULL,
            answer TEXT,
            memories TEXT NOT NULL,                  -- JSON list of node ids
            step INTEGER NOT NULL,
            created_at REAL NOT NULL
        );
        """
    )


def _m3_nodes_version(db: "sqlite3.Connection") -> None:
    # bumped on every insert/delete of a space's nodes: in-process vector indexes know when to reload
    db.execute("ALTER TABLE spaces ADD COLUMN nodes_version INTEGER NOT NULL DEFAULT 0")


def _m4_node_emb(db: "sqlite3.Connection") -> None:
    # A plain copy of each node's float32 vector keyed by node id. vec0 answers KNN well but a lookup by id
    # reads its whole 1024-vector chunk (0.3-0.5 ms per id, and an IN (...) list scans: 0.9 s for 100 ids
    # at 1M nodes); retrieval needs the exact vectors of keyword- and spreading-reached nodes by id, and
    # the in-process index loads whole spaces. Costs 4*dim bytes per node.
    _script(db, """
        CREATE TABLE node_emb(
            node_id INTEGER PRIMARY KEY,
            space_id INTEGER NOT NULL,
            embedding BLOB NOT NULL
        );
        CREATE INDEX node_emb_space ON node_emb(space_id, node_id);
        CREATE INDEX nodes_space_ts ON nodes(space_id, ts);
        """)
    if db.execute("SELECT count(*) FROM sqlite_master WHERE name='node_vec'").fetchone()[0]:
        db.execute("INSERT INTO node_emb(node_id, space_id, embedding) "
                   "SELECT node_id, space_id, embedding FROM node_vec")


def _m5_fts_space_terms(db: "sqlite3.Connection") -> None:
    # Keyword search scoped to a space by its terms ("s<space>_<term>") instead of a space column: an
    # AND with a column token that every node of the space carries walked the whole space's posting list
    # (2 ms at 10k, 23 ms at 100k nodes, growing linearly); scoped terms cost only their own postings.
    db.execute("DROP TABLE node_fts")
    db.execute(f"CREATE VIRTUAL TABLE node_fts USING fts5(terms, tokenize=\"{FTS_TOKENIZER}\")")
    db.execute("INSERT INTO node_fts(rowid, terms) SELECT id, CASE WHEN keywords = '' THEN '' ELSE "
               "'s' || space_id || '_' || replace(keywords, ' ', ' s' || space_id || '_') END FROM nodes")


FTS_TOKENIZER = "unicode61 tokenchars '_'"

MIGRATIONS: list[tuple[str, Callable[["sqlite3.Connection"], None]]] = [
    ("0001_core", _m1_core),
    ("0002_semantic", _m2_semantic),
    ("0003_nodes_version", _m3_nodes_version),
    ("0004_node_emb", _m4_node_emb),
    ("0005_fts_space_terms", _m5_fts_space_terms),
]
SCHEMA_VERSION = len(MIGRATIONS)


# ----------------------------------------------------------------------------------- records
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


# ----------------------------------------------------------------------------------- store
class Store:
    """A hela database. ``Store(":memory:")`` gives a throw-away in-memory one (tests)."""

    def __init__(self, path: str | Path = ":memory:", vector_cache: bool = False):
        """``vector_cache``: keep each space's vectors in memory for KNN at any size (long-lived processes;
        see :mod:`hela_cli.vector_index`). Off: spaces up to 20k nodes still use the exact in-process index,
        larger ones are searched by sqlite-vec (best for one-shot CLI calls: nothing to load)."""
        self.path = str(path)
        self._in_tx = False
        self.vector_cache = vector_cache
        self._indexes: dict[int, tuple[int, Any]] = {}
        self._sizes: dict[int, tuple[int, int]] = {}
        self._caches: dict[tuple[int, str], tuple[int, dict[int, Any]]] = {}
        if self.path != ":memory:":
            p = Path(self.path).expanduser()
            if p.is_dir():
                raise StoreError(f"{p}: is a directory, not a database file")
            ensure_private_dir(p.parent)
            if not p.exists():
                try:
                    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o600)
                    os.close(fd)
                except OSError as e:
                    raise StoreError(f"{p}: cannot create database ({e.strerror})") from None
            self.path = str(p)
        old_umask = os.umask(0o077)  # -wal / -shm files are user-only too
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                                      check_same_thread=False)
            self.db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._load_vec()
            if self.path != ":memory:":
                self._set_wal()
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            self.db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as e:
            with contextlib.suppress(Exception):
                self.db.close()
            raise StoreError(f"{self.path}: not a usable hela database ({e})") from None
        finally:
            os.umask(old_umask)

    def _set_wal(self) -> None:
        """``PRAGMA journal_mode=WAL``, retried: switching a new file to WAL needs an exclusive lock and SQLite
        answers SQLITE_BUSY at once instead of waiting ``busy_timeout`` (several processes opening the same
        new database together got 'database is locked')."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        delay = 0.002
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as e:
                if not ("locked" in str(e) or "busy" in str(e).lower()) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(2 * delay, 0.05)

    @classmethod
    def memory(cls) -> "Store":
        return cls(":memory:")

    def _load_vec(self) -> None:
        import sqlite_vec

        try:
            self.db.enable_load_extension(True)
            sqlite_vec.load(self.db)
            self.db.enable_load_extension(False)
        except AttributeError:  # pragma: no cover
            raise StoreError("this Python's sqlite3 cannot load extensions; install hela with its "
                             "dependencies (sqlean-py)") from None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---------------------------------------------------------------- transactions
    @contextlib.contextmanager
    def transaction(self) -> Iterator["sqlite3.Connection"]:
        """A write transaction (``BEGIN IMMEDIATE``): all or nothing. Nested calls join the outer one."""
        if self._in_tx:
            yield self.db
            return
        self.db.execute("BEGIN IMMEDIATE")
        self._in_tx = True
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")
        finally:
            self._in_tx = False

    def _migrate(self) -> None:
        def applied() -> int:
            row = self.db.execute(
                "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='migrations'").fetchone()
            if not row[0]:
                return 0
            return self.db.execute("SELECT count(*) FROM migrations").fetchone()[0]

        if applied() == SCHEMA_VERSION:
            return
        with self.transaction():
            self.db.execute("CREATE TABLE IF NOT EXISTS migrations("
                            "id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at REAL NOT NULL)")
            done = [r[0] for r in self.db.execute("SELECT name FROM migrations ORDER BY id")]
            known = [name for name, _ in MIGRATIONS]
            if len(done) > len(known) or done != known[: len(done)]:
                raise StoreError(
                    f"{self.path}: database schema is newer than this hela understands "
                    f"({len(done)} migrations, this version knows {len(known)}); upgrade hela")
            for i, (name, fn) in enumerate(MIGRATIONS[len(done):], start=len(done) + 1):
                fn(self.db)
                self.db.execute("INSERT INTO migrations(id, name, applied_at) VALUES (?,?,?)",
                                (i, name, time.time()))
            self._set_meta("schema_version", str(SCHEMA_VERSION))

    def applied_migrations(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM migrations ORDER BY id")]

    # ---------------------------------------------------------------- meta / embedder
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT INTO meta(key, value) VALUES (?, ?) "
                        "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (key, value))

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction():
            self._set_meta(key, value)

    def embedder_info(self) -> tuple[str, int] | None:
        model, dim = self.get_meta("embed_model"), self.get_meta("embed_dim")
        return (model, int(dim)) if model and dim else None

    def bind_embedder(self, model_id: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different one later (vectors would not compare)."""
        info = self.embedder_info()
        if info is not None:
            if info != (model_id, dim):
                raise StoreError(
                    f"{self.path}: this database was built with embedder '{info[0]}' ({info[1]}-d); "
                    f"the configured embedder is '{model_id}' ({dim}-d). Use the same embedder or a "
                    f"new --db file")
            return
        if not isinstance(dim, int) or dim <= 0:
            raise StoreError(f"invalid embedding dimension {dim!r}")
        with self.transaction():
            if self.embedder_info() is None:  # another process may have won the race
                self._set_meta("embed_model", model_id)
                self._set_meta("embed_dim", str(dim))
                for table, key in (("node_vec", "node_id"), ("semantic_vec", "semantic_id")):
                    self.db.execute(
                        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
                        f"{key} INTEGER PRIMARY KEY, space_id INTEGER partition key, "
                        f"embedding float[{dim}] distance_metric=cosine)")
        self.bind_embedder(model_id, dim)

    # ---------------------------------------------------------------- spaces
    def get_space(self, name: str) -> Space | None:
        row = self.db.execute("SELECT id, name, step, base_step, consolidated_step FROM spaces "
                              "WHERE name=?", (name,)).fetchone()
        return Space(*row) if row else None

    def require_space(self, name: str) -> Space:
        sp = self.get_space(name)
        if sp is None:
            names = [s["name"] for s in self.spaces()]
            hint = f" (spaces: {', '.join(names[:10])})" if names else " (the database has no spaces yet)"
            raise StoreError(f"unknown space '{name}'{hint}")
        return sp

    @staticmethod
    def check_space_name(name: str) -> None:
        """Raise :class:`StoreError` for a name :meth:`ensure_space` would refuse (check before writing)."""
        if not isinstance(name, str) or not name or len(name) > 200 or any(ord(c) < 32 for c in name):
            shown = repr(name) if len(repr(name)) <= 60 else repr(name)[:57] + "..."
            raise StoreError(f"invalid space name {shown} (1-200 characters, no control characters)")

    def ensure_space(self, name: str) -> Space:
        self.check_space_name(name)
        sp = self.get_space(name)
        if sp is None:
            with self.transaction():
                self.db.execute("INSERT OR IGNORE INTO spaces(name, created_at) VALUES (?, ?)",
                                (name, time.time()))
            sp = self.get_space(name)
        assert sp is not None
        return sp

    def spaces(self) -> list[dict[str, Any]]:
        rows = self.db.execute(
            """SELECT s.id, s.name, s.step,
                      (SELECT count(*) FROM nodes n WHERE n.space_id = s.id),
                      (SELECT count(*) FROM edges e WHERE e.space_id = s.id),
                      (SELECT count(*) FROM semantic m WHERE m.space_id = s.id),
                      (SELECT min(ts) FROM nodes n WHERE n.space_id = s.id),
                      (SELECT max(ts) FROM nodes n WHERE n.space_id = s.id)
               FROM spaces s ORDER BY s.name""").fetchall()
        return [dict(id=r[0], name=r[1], steps=r[2], nodes=r[3], edges=r[4], semantic=r[5],
                     first_ts=r[6], last_ts=r[7]) for r in rows]

    def space_now(self, space_id: int) -> float | None:
        """The space's present: the newest memory's timestamp."""
        return self.db.execute("SELECT max(ts) FROM nodes WHERE space_id=?", (space_id,)).fetchone()[0]

    # ---------------------------------------------------------------- nodes
    def existing_hashes(self, space_id: int, hashes: Iterable[str]) -> dict[str, int]:
        """``{hash: node_id}`` for the given content hashes already stored in the space."""
        hashes = list(hashes)
        found: dict[str, int] = {}
        for i in range(0, len(hashes), 500):
            chunk = hashes[i:i + 500]
            q = ",".join("?" * len(chunk))
            found.update((h, nid) for h, nid in self.db.execute(
                f"SELECT hash, id FROM nodes WHERE space_id=? AND hash IN ({q})", (space_id, *chunk)))
        return found

    def next_ord(self, space_id: int) -> int:
        return self.db.execute("SELECT coalesce(max(ord), -1) + 1 FROM nodes WHERE space_id=?",
                               (space_id,)).fetchone()[0]

    def insert_nodes(self, space_id: int, rows: list[dict[str, Any]], vectors: np.ndarray) -> list[int]:
        """Insert nodes with their vectors and FTS entries. Call inside :meth:`transaction`.

        Rows whose hash already exists in the space are skipped (returned id is -1).
        """
        assert self._in_tx, "insert_nodes must run inside a transaction"
        ids: list[int] = []
        now = time.time()
        for row, vec in zip(rows, vectors):
            cur = self.db.execute(
                "INSERT OR IGNORE INTO nodes(space_id, text, speaker, role, ts, time_str, keywords, "
                "source_id, session, ord, hash, source, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (space_id, row["text"], row.get("speaker"), row.get("role"), row["ts"], row.get("time_str"),
                 " ".join(row.get("keywords", [])), row.get("source_id"), row.get("session"), row["ord"],
                 row["hash"], row.get("source"), now))
            if cur.rowcount == 0:
                ids.append(-1)
                continue
            nid = cur.lastrowid
            ids.append(nid)
            blob = _blob(vec)
            self.db.execute("INSERT INTO node_vec(node_id, space_id, embedding) VALUES (?, ?, ?)",
                            (nid, space_id, blob))
            self.db.execute("INSERT INTO node_emb(node_id, space_id, embedding) VALUES (?, ?, ?)",
                            (nid, space_id, blob))
            self.db.execute("INSERT INTO node_fts(rowid, terms) VALUES (?, ?)",
                            (nid, _fts_terms(space_id, row.get("keywords", []))))
        if any(i != -1 for i in ids):
            self.db.execute("UPDATE spaces SET nodes_version = nodes_version + 1 WHERE id=?", (space_id,))
        return ids

    def get_nodes(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        ids = list(ids)
        out: dict[int, dict[str, Any]] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            q = ",".join("?" * len(chunk))
            for r in self.db.execute(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE id IN ({q})", chunk):
                out[r[0]] = _node(r)
        return out

    def node_features(self, ids: Iterable[int], space_id: int | None = None) -> dict[int, dict[str, Any]]:
        """The fields retrieval scores by (``ts``, ``speaker``, ``keywords``): lighter than :meth:`get_nodes`.

        With ``space_id`` the answer is also kept in a per-space cache (these fields never change; the
        cache is dropped when the space's nodes change), so repeated retrievals in one process read
        each node once."""
        ids = list(ids)
        cache = self._space_cache(space_id, "features")
        missing = [i for i in ids if i not in cache] if cache is not None else ids
        out: dict[int, dict[str, Any]] = {}
        for i in range(0, len(missing), 500):
            chunk = missing[i:i + 500]
            q = ",".join("?" * len(chunk))
            for nid, ts, speaker, kws in self.db.execute(
                    f"SELECT id, ts, speaker, keywords FROM nodes WHERE id IN ({q})", chunk):
                out[nid] = {"ts": ts, "speaker": speaker, "keywords": kws.split() if kws else []}
        if cache is None:
            return out
        if len(cache) + len(out) <= ROW_CACHE_MAX:
            cache.update(out)
        return {i: cache[i] if i in cache else out[i] for i in ids if i in cache or i in out}

    def _space_cache(self, space_id: int | None, kind: str) -> dict[int, Any] | None:
        """A per-space cache of immutable per-node data, emptied when the space's ``nodes_version`` moves."""
        if space_id is None:
            return None
        version = self._nodes_version(space_id)
        entry = self._caches.get((space_id, kind))
        if entry is None or entry[0] != version:
            entry = (version, {})
            self._caches[(space_id, kind)] = entry
        return entry[1]

    def get_node(self, node_id: int) -> dict[str, Any] | None:
        return self.get_nodes([node_id]).get(node_id)

    def iter_nodes(self, space_id: int) -> Iterator[dict[str, Any]]:
        for r in self.db.execute(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE space_id=? ORDER BY ord",
                                 (space_id,)):
            yield _node(r)

    def count_nodes(self, space_id: int) -> int:
        return self.db.execute("SELECT count(*) FROM nodes WHERE space_id=?", (space_id,)).fetchone()[0]

    def node_vectors(self, ids: Sequence[int], space_id: int | None = None) -> dict[int, np.ndarray]:
        """Stored float32 vectors by node id (cached per space like :meth:`node_features` with ``space_id``)."""
        ids = list(ids)
        cache = self._space_cache(space_id, "vectors")
        missing = [i for i in ids if i not in cache] if cache is not None else ids
        out: dict[int, np.ndarray] = {}
        for i in range(0, len(missing), 500):
            chunk = missing[i:i + 500]
            q = ",".join("?" * len(chunk))
            for nid, blob in self.db.execute(
                    f"SELECT node_id, embedding FROM node_emb WHERE node_id IN ({q})", chunk):
                out[nid] = np.frombuffer(blob, dtype=np.float32)
        if cache is None:
            return out
        if len(cache) + len(out) <= ROW_CACHE_MAX:
            cache.update(out)
        return {i: cache[i] if i in cache else out[i] for i in ids if i in cache or i in out}

    def knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Nearest nodes of the space by cosine: ``[(node_id, cosine_similarity)]``, best first."""
        if k <= 0:
            return []
        if self.embedder_info() is not None and (self.vector_cache or self._small_space(space_id)):
            index = self._vector_index(space_id)
            if index.exact:
                return index.knn(vector, k)
            # quantized index: it proposes k + 20 ids; the stored float32 vectors give the exact cosines
            # and the final top k (int8 rounding can swap near-ties at the border)
            hits = index.knn(vector, k + 20)
            vecs = self.node_vectors([nid for nid, _ in hits], space_id)
            q = np.asarray(vector, dtype=np.float32)
            exact = [(nid, float(np.dot(vecs[nid], q))) for nid, _ in hits if nid in vecs]
            return sorted(exact, key=lambda t: (-t[1], t[0]))[:k]
        rows = self.db.execute(
            "SELECT node_id, distance FROM node_vec WHERE embedding MATCH ? AND k = ? AND space_id = ?",
            (_blob(vector), int(k), space_id)).fetchall()
        return [(nid, 1.0 - dist) for nid, dist in rows]

    def _nodes_version(self, space_id: int) -> int:
        row = self.db.execute("SELECT nodes_version FROM spaces WHERE id=?", (space_id,)).fetchone()
        return row[0] if row else -1

    def _small_space(self, space_id: int) -> bool:
        """Spaces up to ``EXACT_LIMIT`` nodes use the in-process index even without ``vector_cache``: there it
        is exact (same results as sqlite-vec), loads in milliseconds and answers in ~2 ms instead of ~16."""
        from hela_cli.vector_index import EXACT_LIMIT

        version = self._nodes_version(space_id)
        cached = self._sizes.get(space_id)
        if cached is None or cached[0] != version:
            cached = (version, self.count_nodes(space_id))
            self._sizes[space_id] = cached
        return cached[1] <= EXACT_LIMIT

    def _vector_index(self, space_id: int) -> Any:
        from hela_cli.vector_index import VectorIndex

        version = self._nodes_version(space_id)
        cached = self._indexes.get(space_id)
        if cached is None or cached[0] != version:
            info = self.embedder_info()
            assert info is not None
            rows = self.db.execute("SELECT node_id, embedding FROM node_emb WHERE space_id = ? ORDER BY node_id",
                                   (space_id,))
            cached = (version, VectorIndex.from_rows(rows, info[1]))
            self._indexes[space_id] = cached
        return cached[1]

    def keyword_search(self, space_id: int, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """Nodes of the space matching any term, ``[(node_id, bm25)]`` with bm25 >= 0, best first."""
        terms = [t for t in dict.fromkeys(terms) if t]
        if not terms or limit <= 0:
            return []
        query = " OR ".join(_fts_phrase(f"s{space_id}_{t}") for t in terms)
        rows = self.db.execute(
            "SELECT rowid, -bm25(node_fts) AS score FROM node_fts WHERE node_fts MATCH ? "
            "ORDER BY bm25(node_fts) LIMIT ?", (query, int(limit))).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def touch_nodes(self, ids: Sequence[int], when: float) -> None:
        """Record an access (inside a transaction)."""
        self.db.executemany("UPDATE nodes SET access_count = access_count + 1, last_access = ? WHERE id = ?",
                            [(when, i) for i in ids])

    # ---------------------------------------------------------------- edges
    def edge_factor(self, space: Space, decay: float) -> float:
        """``decay ** (step - base_step)``: multiply a stored amplitude by this for the current weight."""
        return decay ** (space.step - space.base_step)

    def neighbours(self, space: Space, node_ids: Sequence[int], decay: float,
                   min_weight: float = 0.0) -> dict[int, list[tuple[int, float]]]:
        """Current-weight neighbours of each node: ``{node: [(neighbour, weight), ...]}``."""
        factor = self.edge_factor(space, decay)
        out: dict[int, list[tuple[int, float]]] = {n: [] for n in node_ids}
        ids = list(node_ids)
        for i in range(0, len(ids), 400):
            chunk = ids[i:i + 400]
            q = ",".join("?" * len(chunk))
            for a, b, amp in self.db.execute(
                    f"SELECT a, b, amp FROM edges WHERE a IN ({q}) UNION ALL "
                    f"SELECT a, b, amp FROM edges WHERE b IN ({q})", (*chunk, *chunk)):
                w = amp * factor
                if w < min_weight:
                    continue
                if a in out:
                    out[a].append((b, w))
                if b in out and a != b:
                    out[b].append((a, w))
        return out

    def edges_among(self, space: Space, node_ids: Sequence[int], decay: float) -> dict[tuple[int, int], float]:
        """Current weights of the edges whose both ends are in ``node_ids`` (a small set): ``{(a, b): w}``, a < b."""
        ids = sorted(set(node_ids))
        if len(ids) < 2:
            return {}
        factor = self.edge_factor(space, decay)
        q = ",".join("?" * len(ids))
        return {(a, b): amp * factor for a, b, amp in self.db.execute(
            f"SELECT a, b, amp FROM edges WHERE a IN ({q}) AND b IN ({q})", (*ids, *ids))}

    def edge_weight(self, space: Space, a: int, b: int, decay: float) -> float:
        a, b = min(a, b), max(a, b)
        row = self.db.execute("SELECT amp FROM edges WHERE a=? AND b=?", (a, b)).fetchone()
        return row[0] * self.edge_factor(space, decay) if row else 0.0

    def set_edges(self, space: Space, weights: dict[tuple[int, int], float], decay: float) -> None:
        """Write current weights for pairs (inside a transaction; ``space`` must be fresh)."""
        factor = self.edge_factor(space, decay)
        self.db.executemany(
            "INSERT INTO edges(a, b, space_id, amp) VALUES (?,?,?,?) "
            "ON CONFLICT(a, b) DO UPDATE SET amp = excluded.amp",
            [(min(a, b), max(a, b), space.id, w / factor) for (a, b), w in weights.items() if a != b])

    def advance_step(self, space_id: int, decay: float) -> Space:
        """Bump the space's retrieval counter (every edge decays once). Inside a transaction.

        Rebases amplitudes when the exponent grows large, so ``amp`` never overflows (amortised O(1)).
        """
        self.db.execute("UPDATE spaces SET step = step + 1 WHERE id=?", (space_id,))
        sp = self._space_by_id(space_id)
        if sp.step - sp.base_step >= REBASE_EXPONENT:
            factor = decay ** (sp.step - sp.base_step)
            self.db.execute("UPDATE edges SET amp = amp * ? WHERE space_id=?", (factor, space_id))
            self.db.execute("DELETE FROM edges WHERE space_id=? AND amp < 1e-12", (space_id,))
            self.db.execute("UPDATE spaces SET base_step = step WHERE id=?", (space_id,))
            sp = self._space_by_id(space_id)
        return sp

    def _space_by_id(self, space_id: int) -> Space:
        row = self.db.execute("SELECT id, name, step, base_step, consolidated_step FROM spaces WHERE id=?",
                              (space_id,)).fetchone()
        return Space(*row)

    def refresh_space(self, space: Space) -> Space:
        return self._space_by_id(space.id)

    def edge_strengths(self, space: Space, decay: float) -> dict[int, tuple[float, int]]:
        """Eq.2 inputs for every node with edges: ``{node: (sum of current weights, degree)}``."""
        factor = self.edge_factor(space, decay)
        rows = self.db.execute(
            """SELECT n, sum(amp), count(*) FROM (
                   SELECT a AS n, amp FROM edges WHERE space_id = :s
                   UNION ALL SELECT b AS n, amp FROM edges WHERE space_id = :s)
               GROUP BY n""", {"s": space.id}).fetchall()
        return {n: (total * factor, deg) for n, total, deg in rows}

    def all_edges(self, space: Space, decay: float) -> list[tuple[int, int, float]]:
        factor = self.edge_factor(space, decay)
        return [(a, b, amp * factor) for a, b, amp in
                self.db.execute("SELECT a, b, amp FROM edges WHERE space_id=? ORDER BY a, b", (space.id,))]

    def count_edges(self, space_id: int) -> int:
        return self.db.execute("SELECT count(*) FROM edges WHERE space_id=?", (space_id,)).fetchone()[0]

    # ---------------------------------------------------------------- deletion (forgetting)
    def delete_nodes(self, ids: Sequence[int]) -> None:
        """Remove nodes with their vectors, FTS entries and edges; count forgotten semantic evidence.

        Call inside a transaction.
        """
        assert self._in_tx, "delete_nodes must run inside a transaction"
        if ids:
            q = ",".join("?" * len(ids))
            self.db.execute(f"UPDATE spaces SET nodes_version = nodes_version + 1 WHERE id IN "
                            f"(SELECT DISTINCT space_id FROM nodes WHERE id IN ({q}))", list(ids))
        for nid in ids:
            self.db.execute("UPDATE semantic SET forgotten_evidence = forgotten_evidence + 1 "
                            "WHERE id IN (SELECT semantic_id FROM semantic_evidence WHERE node_id=?)", (nid,))
            self.db.execute("DELETE FROM semantic_evidence WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM edges WHERE a=? OR b=?", (nid, nid))
            self.db.execute("DELETE FROM node_vec WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM node_emb WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM node_fts WHERE rowid=?", (nid,))
            self.db.execute("DELETE FROM hubs WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM nodes WHERE id=?", (nid,))

    # ---------------------------------------------------------------- semantic records
    def insert_semantic(self, space_id: int, kind: str, subject: str | None, text: str,
                        confidence: float | None, date: str | None, hub_id: int | None,
                        evidence: Sequence[int], vector: np.ndarray) -> int:
        assert self._in_tx, "insert_semantic must run inside a transaction"
        now = time.time()
        cur = self.db.execute(
            "INSERT INTO semantic(space_id, kind, subject, text, confidence, date, hub_id, created_at, "
            "updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (space_id, kind, subject, text, confidence, date, hub_id, now, now))
        sid = cur.lastrowid
        self.db.execute("INSERT INTO semantic_vec(semantic_id, space_id, embedding) VALUES (?,?,?)",
                        (sid, space_id, _blob(vector)))
        self.add_evidence(sid, evidence)
        return sid

    def add_evidence(self, semantic_id: int, node_ids: Sequence[int]) -> None:
        self.db.executemany("INSERT OR IGNORE INTO semantic_evidence(semantic_id, node_id) VALUES (?, ?)",
                            [(semantic_id, n) for n in node_ids])
        self.db.execute("UPDATE semantic SET updated_at=? WHERE id=?", (time.time(), semantic_id))

    def semantic_knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        rows = self.db.execute(
            "SELECT semantic_id, distance FROM semantic_vec WHERE embedding MATCH ? AND k = ? AND space_id = ?",
            (_blob(vector), int(k), space_id)).fetchall()
        return [(sid, 1.0 - d) for sid, d in rows]

    def get_semantic(self, ids: Sequence[int] | None = None, space_id: int | None = None) -> list[dict[str, Any]]:
        cols = "id, space_id, kind, subject, text, confidence, date, hub_id, forgotten_evidence, created_at, updated_at"
        if ids is not None:
            ids = list(ids)
            if not ids:
                return []
            rows = self.db.execute(f"SELECT {cols} FROM semantic WHERE id IN ({','.join('?' * len(ids))})",
                                   ids).fetchall()
            order = {i: n for n, i in enumerate(ids)}
            rows.sort(key=lambda r: order[r[0]])
        else:
            rows = self.db.execute(f"SELECT {cols} FROM semantic WHERE space_id=? ORDER BY id", (space_id,)).fetchall()
        names = [c.strip() for c in cols.split(",")]
        out = [dict(zip(names, r)) for r in rows]
        evidence: dict[int, list[int]] = {rec["id"]: [] for rec in out}
        found = list(evidence)
        for i in range(0, len(found), 500):  # one query per 500 records, not one per record
            chunk = found[i:i + 500]
            for sid, nid in self.db.execute(
                    f"SELECT semantic_id, node_id FROM semantic_evidence WHERE semantic_id IN "
                    f"({','.join('?' * len(chunk))}) ORDER BY node_id", chunk):
                evidence[sid].append(nid)
        for rec in out:
            rec["evidence"] = evidence[rec["id"]]
        return out

    def semantic_citing(self, node_id: int) -> list[int]:
        return [r[0] for r in self.db.execute(
            "SELECT semantic_id FROM semantic_evidence WHERE node_id=? ORDER BY semantic_id", (node_id,))]

    def semantic_vector(self, semantic_id: int) -> np.ndarray | None:
        row = self.db.execute("SELECT embedding FROM semantic_vec WHERE semantic_id=?", (semantic_id,)).fetchone()
        return np.frombuffer(row[0], dtype=np.float32) if row else None

    def count_semantic(self, space_id: int) -> int:
        return self.db.execute("SELECT count(*) FROM semantic WHERE space_id=?", (space_id,)).fetchone()[0]

    # ---------------------------------------------------------------- hubs bookkeeping
    def hub_state(self, space_id: int) -> dict[int, dict[str, Any]]:
        return {r[0]: {"cluster": json.loads(r[1]), "distilled_step": r[2], "status": r[3]}
                for r in self.db.execute("SELECT node_id, cluster, distilled_step, status FROM hubs "
                                         "WHERE space_id=?", (space_id,))}

    def set_hub_state(self, space_id: int, node_id: int, cluster: Sequence[int], step: int, status: str) -> None:
        self.db.execute("INSERT INTO hubs(node_id, space_id, cluster, distilled_step, status) VALUES (?,?,?,?,?) "
                        "ON CONFLICT(node_id) DO UPDATE SET cluster=excluded.cluster, "
                        "distilled_step=excluded.distilled_step, status=excluded.status",
                        (node_id, space_id, json.dumps(list(cluster)), step, status))

    def set_consolidated_step(self, space_id: int, step: int) -> None:
        self.db.execute("UPDATE spaces SET consolidated_step=? WHERE id=?", (step, space_id))

    # ---------------------------------------------------------------- integrity
    def integrity_problems(self) -> list[str]:
        """Cross-table consistency checks (used by tests and ``hela doctor``-style checks)."""
        problems = []
        ok = self.db.execute("PRAGMA integrity_check").fetchone()[0]
        if ok != "ok":
            problems.append(f"integrity_check: {ok}")
        checks = {
            "nodes without vector": "SELECT count(*) FROM nodes n WHERE NOT EXISTS "
                                    "(SELECT 1 FROM node_vec v WHERE v.node_id = n.id)",
            "vectors without node": "SELECT count(*) FROM node_vec v WHERE NOT EXISTS "
                                    "(SELECT 1 FROM nodes n WHERE n.id = v.node_id)",
            "nodes without stored vector": "SELECT count(*) FROM nodes n WHERE NOT EXISTS "
                                           "(SELECT 1 FROM node_emb v WHERE v.node_id = n.id)",
            "stored vectors without node": "SELECT count(*) FROM node_emb v WHERE NOT EXISTS "
                                           "(SELECT 1 FROM nodes n WHERE n.id = v.node_id)",
            "fts rows without node": "SELECT count(*) FROM node_fts f WHERE NOT EXISTS "
                                     "(SELECT 1 FROM nodes n WHERE n.id = f.rowid)",
            "edges with missing node": "SELECT count(*) FROM edges e WHERE NOT EXISTS (SELECT 1 FROM nodes n "
                                       "WHERE n.id = e.a) OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.b)",
            "negative or non-finite weights": "SELECT count(*) FROM edges WHERE NOT (amp >= 0 AND amp < 1e300)",
            "evidence with missing node": "SELECT count(*) FROM semantic_evidence s WHERE NOT EXISTS "
                                          "(SELECT 1 FROM nodes n WHERE n.id = s.node_id)",
        }
        if self.embedder_info() is None:
            checks = {k: v for k, v in checks.items() if "vector" not in k}
        for name, sql in checks.items():
            n = self.db.execute(sql).fetchone()[0]
            if n:
                problems.append(f"{name}: {n}")
        return problems

