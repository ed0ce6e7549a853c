"""What every engine's connection shares: meta, the embedder binding, spaces, id lists, the search state.

The engine packages (:mod:`hela_cli.store.sqlite.connection`, :mod:`hela_cli.store.postgres.connection`)
open the database and own what differs: the driver, transactions and write locks, migrations, and the
vector tables an embedder binding creates (:meth:`Connection._create_vector_tables`). Everything here is
plain SQL both engines run (``?`` placeholders; the Postgres connection translates them), reached through
``self.db`` (``execute`` / ``executemany``) and the engine's :class:`~hela_cli.store.dialect.Dialect`.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Callable, Iterator, Sequence

from hela_cli.errors import StoreError
from hela_cli.store.base import Space
from hela_cli.store.dialect import Dialect
from hela_cli.store.search_state import SearchState

#: a progress callback: one line of text about a long step (a migration, a first index build); the store
#: prints nothing itself, the CLI passes one that writes to stderr
Progress = Callable[[str], None]


class Connection:
    """Meta, the embedder binding, spaces and the helpers every query uses (both engines)."""

    dialect: Dialect
    db: Any
    path: str
    progress: Progress | None = None
    _in_tx = False

    def _init_state(self, *, progress: Progress | None, vector_cache: bool, sign_index_min: int,
                    sign_rescore: int, vector_cache_auto: int) -> None:
        """The per-connection settings and in-process state both engines keep (their ``__init__`` calls it)."""
        self._in_tx = False
        self.progress = progress
        self.vector_cache = vector_cache
        self.sign_index_min = sign_index_min
        self.sign_rescore = sign_rescore
        self.vector_cache_auto = vector_cache_auto
        self.search_state = SearchState()

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgres"``."""
        return self.dialect.name

    def _report(self, line: str) -> None:
        """Tell the caller's progress callback (if any) about a long step."""
        if self.progress is not None:
            self.progress(line)

    # the search state's parts under the names the search code uses (one object: ``search_state``)
    _searches = property(lambda self: self.search_state.searches)
    _indexes = property(lambda self: self.search_state.indexes)
    _sizes = property(lambda self: self.search_state.sizes)
    _caches = property(lambda self: self.search_state.caches)
    _hnsw = property(lambda self: self.search_state.hnsw)

    @property
    def _signs(self) -> dict[int, tuple[int, Any]]:
        return self.search_state.signs

    @_signs.setter
    def _signs(self, value: dict[int, tuple[int, Any]]) -> None:
        self.search_state.signs = value

    def held_index(self, space_id: int) -> Any | None:
        """The in-process vector index this process holds for the space, or None (see ``search_state``)."""
        return self.search_state.held_index(space_id)

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.db.close()

    # ---------------------------------------------------------------- transactions and reads
    @contextlib.contextmanager
    def reading(self, space_id: int) -> Iterator[None]:
        """The enclosed reads of one space (a retrieval's): nothing on SQLite, where a read is a function
        call; Postgres runs them in one snapshot and reads the space's state once (``postgres/read.py``)."""
        yield

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        """The enclosed reads in one snapshot (the dialect's ``begin_read``: a read transaction on SQLite,
        ``REPEATABLE READ`` on Postgres), or in the caller's transaction when one is open."""
        if self._in_tx or self.db.in_transaction:
            yield
            return
        self.db.execute(self.dialect.begin_read)
        try:
            yield
        finally:
            with contextlib.suppress(StoreError):   # a read-only snapshot: nothing to lose
                self.db.execute("COMMIT")

    def require_transaction(self, what: str) -> None:
        """Raise :class:`StoreError` unless a write transaction is open (a programming error, but one that
        must not silently write outside a transaction when Python runs with ``-O``)."""
        if not self._in_tx:
            raise StoreError(f"internal error: {what} must run inside Store.transaction()")

    def select_in(self, sql: str, ids: Sequence[Any], params: Sequence[Any] = ()) -> Iterator[tuple]:
        """Rows of ``sql`` whose ``{ids}`` placeholder is an ``IN`` list of ``ids``, 500 at a time.

        Hand-written on purpose: an ``IN (?, ...)`` list read 400 ids in 338 us where
        ``IN (SELECT value FROM json_each(?))`` took 513 us (100k-row table); retrieval reads ~150-200
        rows by id per ask. Chunks keep every statement under SQLite's variable limit."""
        ids = list(ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            yield from self.db.execute(sql.format(ids=",".join("?" * len(chunk))), (*params, *chunk))

    def _dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """The rows of ``sql`` as dicts keyed by column name (both drivers name columns in ``description``)."""
        cur = self.db.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    # ---------------------------------------------------------------- meta / embedder
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                        "value = excluded.value", (key, value))

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
                    f"the configured embedder is '{model_id}' ({dim}-d). Use the same embedder, a "
                    f"new --db file, or `hela reembed` to move this file to the configured one")
            return
        if not isinstance(dim, int) or dim <= 0:
            raise StoreError(f"invalid embedding dimension {dim!r}")
        with self.transaction():
            if self.embedder_info() is None:  # another process may have won the race
                self._set_meta("embed_model", model_id)
                self._set_meta("embed_dim", str(dim))
                self._create_vector_tables(dim)
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

    def ensure_space(self, name: str, decay: float | None = None) -> Space:
        """The space ``name``, created if needed; a new one records ``decay`` (its creator's ``hebbian.decay``,
        the one its weights will be learned under; None: the default) as its Eq.1 decay."""
        self.check_space_name(name)
        sp = self.get_space(name)
        if sp is None:
            with self.transaction():
                if decay is None:
                    self.db.execute("INSERT INTO spaces(name, created_at) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
                                    (name, time.time()))
                else:
                    self.db.execute("INSERT INTO spaces(name, created_at, decay) VALUES (?, ?, ?) "
                                    "ON CONFLICT(name) DO NOTHING", (name, time.time(), float(decay)))
            sp = self.get_space(name)
        if sp is None:  # pragma: no cover - a concurrent delete of the space
            raise StoreError(f"space '{name}' vanished while being created")
        return sp

    def only_space(self) -> str | None:
        """The name of the database's one space, or None when it has none or several (commands without
        ``--space`` use it: a single space is the default where there is one)."""
        rows = self.db.execute("SELECT name FROM spaces ORDER BY id LIMIT 2").fetchall()
        return rows[0][0] if len(rows) == 1 else None

    def spaces(self) -> list[dict[str, Any]]:
        """Every space with its counts, by name (code point order on both engines: sorted here, not by the
        server's collation)."""
        rows = self._dicts(
            """SELECT s.id, s.name, s.step AS steps,
                      (SELECT count(*) FROM nodes n WHERE n.space_id = s.id) AS nodes,
                      (SELECT count(*) FROM edges e WHERE e.space_id = s.id) AS edges,
                      (SELECT count(*) FROM semantic m WHERE m.space_id = s.id) AS semantic,
                      (SELECT min(ts) FROM nodes n WHERE n.space_id = s.id) AS first_ts,
                      (SELECT max(ts) FROM nodes n WHERE n.space_id = s.id) AS last_ts
               FROM spaces s""")
        return sorted(rows, key=lambda r: r["name"])

    def space_now(self, space_id: int) -> float | None:
        """The space's present: the newest memory's timestamp."""
        return self.db.execute("SELECT max(ts) FROM nodes WHERE space_id=?", (space_id,)).fetchone()[0]
