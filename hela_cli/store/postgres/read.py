"""Fewer round trips on Postgres: a retrieval's reads in one snapshot, and the Eq.1 write's bookkeeping.

Every statement is a round trip to the server (on SQLite it is a function call), so the Postgres store
folds what a retrieval asks again and again (counted per retrieval by ``benchmarks/speed/pg_roundtrips.py``;
docs/benchmarks/speed.md, "Postgres: per-space write lock, round trips per recall, latency at 10k / 100k / 1M"):

* :meth:`PgReads.reading` runs a retrieval's reads in one ``REPEATABLE READ`` read-only snapshot whose
  first statement also reads the space's state (``nodes_version``, the lazy-decay exponent
  ``step - base_step`` and the space's stored decay, the newest memory's time, the semantic record count, the embedder binding, whether
  use traces exist). Inside the snapshot nothing of that can change, so the caches' version checks, Eq.1's
  factor, ``space_now``, ``count_semantic`` and ``embedder_info`` answer from it instead of a statement
  each (7 version checks alone per retrieval before). The reads are also consistent with each other now;
* ``select_in`` sends one ``= ANY(array)`` statement instead of ``IN (?, ?, ...)`` lists in chunks of 500:
  one statement text whatever the number of ids, so psycopg prepares it after a few uses;
* in a write transaction, :meth:`advance_step` takes the step pair from its ``UPDATE ... RETURNING`` and
  keeps the exponent for the rest of the transaction (the space is locked: only this transaction moves
  it; a rebase sets it to 0, a rolled-back savepoint forgets it), so Eq.1's decay factor is not read again
  by the pruning, ``edges_among`` and ``set_edges``.

The SQL and the arithmetic are the shared mixins' (``edges.py``, ``nodes.py``): only where the numbers come
from changes, so the results are SQLite's (the LoCoMo parity run and ``tests/test_postgres.py`` check it).
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator, Sequence

from hela_cli.errors import StoreError
from hela_cli.store.base import Space

_IN_IDS = re.compile(r"\b(NOT\s+)?IN\s*\(\s*\{ids\}\s*\)", re.IGNORECASE)

# The space's state, read by the statement that opens a retrieval's snapshot ({sid}: an int, written in:
# BEGIN and this go in one round trip through libpq's simple protocol, which takes no parameters).
_STATE_SQL = """SELECT s.nodes_version, s.step - s.base_step, s.decay,
       (SELECT max(ts) FROM nodes WHERE space_id = s.id),
       (SELECT count(*) FROM semantic WHERE space_id = s.id),
       (SELECT value FROM meta WHERE key = 'embed_model'),
       (SELECT value FROM meta WHERE key = 'embed_dim'),
       EXISTS (SELECT 1 FROM asks WHERE space_id = s.id AND used IS NOT NULL AND used != '[]'
               AND vector IS NOT NULL)
FROM spaces s WHERE s.id = {sid}"""


class PgReads:
    """The round-trip savings of the Postgres store (mixed in before the shared mixins)."""

    _memo: dict[str, Any] | None = None       # the open reading snapshot's space state
    _hnsw_wanted: set[int] | None = None      # spaces whose HNSW index a snapshot could not build

    # ---------------------------------------------------------------- one snapshot per retrieval
    @contextlib.contextmanager
    def reading(self, space_id: int) -> Iterator[None]:
        """The enclosed reads of one space in one snapshot, with the space's state read once (see the
        module). Inside a transaction (or another snapshot) it adds nothing."""
        if self._in_tx or self._memo is not None or self.db.in_transaction:
            yield
            return
        sid = int(space_id)
        cur = self.db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; " + _STATE_SQL.format(sid=sid))
        cur.nextset()
        row = cur.fetchone()
        if row is None:   # no such space: every read falls through to its own statement
            self.db.execute("COMMIT")
            yield
            return
        self._memo = {"space": sid, "version": row[0], "decay_state": (row[1], row[2]), "now": row[3],
                      "semantic": row[4], "embedder": (row[5], int(row[6])) if row[5] and row[6] else None,
                      "traces": row[7]}
        try:
            yield
        except BaseException:
            # a failed statement aborts the snapshot: its COMMIT rolls back, and with it a SET made inside
            # (``hnsw.ef_search``): forget the value this process believes is set
            self.__dict__.pop("_ef", None)
            raise
        finally:
            self._memo = None
            with contextlib.suppress(StoreError):
                self.db.execute("COMMIT")
        for wanted in sorted(self._hnsw_wanted or ()):   # outside the snapshot: CREATE INDEX CONCURRENTLY
            self._hnsw_wanted.discard(wanted)
            info = self.embedder_info()
            if info is not None:
                self._ensure_hnsw(wanted, info[1])

    def _state(self, space_id: int | None, key: str) -> tuple[bool, Any]:
        m = self._memo
        if m is not None and space_id is not None and m["space"] == int(space_id):
            return True, m[key]
        return False, None

    def _nodes_version(self, space_id: int) -> int:
        known, value = self._state(space_id, "version")
        return value if known else super()._nodes_version(space_id)  # type: ignore[misc]

    def space_now(self, space_id: int) -> float | None:
        known, value = self._state(space_id, "now")
        return value if known else super().space_now(space_id)  # type: ignore[misc]

    def count_semantic(self, space_id: int) -> int:
        known, value = self._state(space_id, "semantic")
        return value if known else super().count_semantic(space_id)  # type: ignore[misc]

    def embedder_info(self) -> tuple[str, int] | None:
        if self._memo is not None:
            return self._memo["embedder"]
        return super().embedder_info()  # type: ignore[misc]

    def use_traces(self, space_id: int, limit: int = 5000) -> Any:
        known, value = self._state(space_id, "traces")
        if known and not value:
            import numpy as np

            return np.zeros((0, 0), dtype=np.float32), []
        return super().use_traces(space_id, limit)  # type: ignore[misc]

    def _ensure_hnsw(self, space_id: int, dim: int) -> bool:
        """As :meth:`PgSearch._ensure_hnsw`; inside a reading snapshot (where ``CREATE INDEX CONCURRENTLY``
        cannot run) the build is put off to the snapshot's end and this search scans exactly."""
        if self._memo is not None and not self._hnsw.get(space_id):
            if self.db.execute("SELECT 1 FROM pg_indexes WHERE indexname = ?",
                               (f"node_emb_hnsw_{int(space_id)}",)).fetchone():
                self._hnsw[space_id] = True
                return True
            if self._hnsw_wanted is None:
                self._hnsw_wanted = set()
            self._hnsw_wanted.add(int(space_id))
            return False
        return super()._ensure_hnsw(space_id, dim)  # type: ignore[misc]

    # ---------------------------------------------------------------- ids as one array
    def select_in(self, sql: str, ids: Sequence[Any], params: Sequence[Any] = ()) -> Iterator[tuple]:
        """As :meth:`Connection.select_in` in one statement: ``col IN ({ids})`` becomes ``col = ANY(?)``
        (``NOT IN``: ``<> ALL``) with the ids as one array parameter."""
        ids = list(ids)
        if not ids:
            return iter(())
        if sql.count("{ids}") != 1:  # pragma: no cover - every caller has one list
            return super().select_in(sql, ids, params)  # type: ignore[misc]
        text = _IN_IDS.sub(lambda m: "<> ALL(?)" if m.group(1) else "= ANY(?)", sql)
        return iter(self.db.execute(text, (*params, ids)).fetchall())

    # ---------------------------------------------------------------- Eq.1's write: the step pair kept
    def _tx_exponents(self) -> dict[int, tuple[int, float | None]]:
        """``{space id: (step - base_step, stored decay)}`` known in the open write transaction (emptied by
        :meth:`PgConnection.transaction` when it ends or a savepoint rolls back)."""
        return self._tx_exp

    def _decay_state(self, space_id: int) -> tuple[int, float | None]:
        state = self._tx_exponents().get(int(space_id)) if self._in_tx else None
        if state is None:
            known, state = self._state(space_id, "decay_state")
            if not known:
                return super()._decay_state(space_id)  # type: ignore[misc]
        return state

    def _recorded_decay(self, space_id: int, decay: float) -> None:
        state = self._tx_exponents().get(int(space_id))
        if state is not None:   # a space without a decay (or a learned weight) took the writer's
            self._tx_exponents()[int(space_id)] = (state[0], decay)

    def _rebase(self, space_id: int, factor: float, decay: float) -> int:
        learned = super()._rebase(space_id, factor, decay)  # type: ignore[misc]
        if int(space_id) in self._tx_exponents():   # base_step = step
            self._tx_exponents()[int(space_id)] = (0, decay)
        return learned

    def advance_step(self, space_id: int, decay: float) -> Space:
        """As :meth:`Edges.advance_step` (the step, the rebase, the pruning), with the step pair read by the
        ``UPDATE`` itself and kept for the transaction."""
        self.require_transaction("advance_step")
        row = self.db.execute("UPDATE spaces SET step = step + 1 WHERE id=? RETURNING id, name, step, base_step, "
                              "consolidated_step, decay", (space_id,)).fetchone()
        if row is None:
            raise StoreError(f"unknown space id {space_id}")
        exps = self._tx_exponents()
        exps[int(space_id)] = (row[2] - row[3], row[5])
        self._write_factor(space_id, decay)
        self.prune_edges(space_id)
        return Space(row[0], row[1], row[2], row[2] - exps[int(space_id)][0], row[4])

    # ---------------------------------------------------------------- Eq.1's write: one statement per kind
    def set_edges(self, space: Space, weights: dict[tuple[int, int], float], decay: float) -> None:
        """As :meth:`Edges.set_edges` (same checks, same weights) in one ``INSERT ... SELECT FROM unnest``
        instead of one statement per pair (78 for a 13-memory retrieval). A pair given twice (``(a, b)`` and
        ``(b, a)``) keeps its last weight, as the statements in turn did."""
        self.require_transaction("set_edges")
        factor = self._write_factor(space.id, decay)
        amps = self._edge_amps(weights, factor)  # type: ignore[attr-defined]
        if not amps:
            return
        self.db.execute(
            "INSERT INTO edges(a, b, space_id, amp) SELECT u.a, u.b, ?, u.amp "
            "FROM unnest(?::bigint[], ?::bigint[], ?::float8[]) AS u(a, b, amp) "
            "WHERE EXISTS (SELECT 1 FROM nodes WHERE id = u.a AND space_id = ?) "
            "AND EXISTS (SELECT 1 FROM nodes WHERE id = u.b AND space_id = ?) "
            "ON CONFLICT(a, b) DO UPDATE SET amp = greatest(0.0, excluded.amp - edges.prior / ?)",
            (space.id, [a for a, _ in amps], [b for _, b in amps], list(amps.values()), space.id, space.id, factor))

    def touch_nodes(self, ids: Sequence[int], when: float) -> None:
        """As :meth:`Nodes.touch_nodes` in one statement (an id given twice counts twice, as before)."""
        ids = [int(i) for i in ids]
        if ids:
            self.db.execute("UPDATE nodes SET access_count = access_count + c.n, last_access = ? FROM "
                            "(SELECT id, count(*) AS n FROM unnest(?::bigint[]) AS u(id) GROUP BY id) AS c "
                            "WHERE nodes.id = c.id", (when, ids))
