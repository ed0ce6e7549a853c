"""Hebbian edges: one row per undirected pair ``a < b``; current weight ``prior + amp * decay ** (step - base_step)``.

``prior`` is a fixed weight that Eq.1's decay does not erode (ingest links with ``ingest.fixed_links``:
consecutive turns, cold-start keyword links); ``amp`` holds what Eq.1 learned (and, without fixed links,
the ingest links too, decaying like learned weight as in the paper).

Invariants kept here:

* ``decay`` is the space's own (``spaces.decay``, migration 0016; issue 41), never a reader's or a writer's:
  the read methods take none. A write that learns names the writer's configured decay, which only a space
  with none recorded takes; a space that has one keeps learning under it, and the writer says so once
  (issue 44). Only :meth:`Edges.set_space_decay` (``hela spaces decay``) changes it, by a rebase (current
  weights computed with the stored decay, stored again at ``base_step = step``: unchanged);
* the factor ``decay ** (step - base_step)`` never falls below ``REBASE_BELOW``: every write path
  (:meth:`Edges.advance_step`, :meth:`Edges.set_edges`) rebases first when it would, so amplitudes stay
  finite and no write divides by an underflowed 0;
* readers take the space's ``step`` / ``base_step`` pair and its decay from the database in the same
  snapshot as the amplitudes they scale (a read transaction), never from a possibly stale :class:`Space`
  object: a rebase committed by another process between the two reads cannot mix an old factor with new
  amplitudes;
* an edge is written only if both of its nodes exist in the space, checked inside the write transaction
  (a node forgotten by another process since it was retrieved gets no edge);
* edges whose current weight is below ``PRUNE_WEIGHT`` are deleted, at most ``PRUNE_PER_STEP`` per
  learning step (bounded work; see ``base.PRUNE_WEIGHT`` for why that cannot change a ranking noticeably).
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from hela_cli.errors import StoreError
from hela_cli.store.base import DEFAULT_DECAY, PRUNE_PER_STEP, PRUNE_WEIGHT, REBASE_BELOW, Space


class Edges:
    """Edge reads and writes, the space's retrieval counter, amplitude rebasing and pruning."""

    # ---------------------------------------------------------------- factor
    def _decay_state(self, space_id: int) -> tuple[int, float | None]:
        """``(step - base_step, the space's stored decay or None)`` read now (call inside :meth:`_snapshot`)."""
        row = self.db.execute("SELECT step - base_step, decay FROM spaces WHERE id=?", (space_id,)).fetchone()
        return (row[0], row[1]) if row else (0, None)

    @staticmethod
    def _scale(exponent: int, decay: float | None) -> float:
        """``decay ** exponent``; a decay not recorded yet reads as ``DEFAULT_DECAY``."""
        return (DEFAULT_DECAY if decay is None else decay) ** exponent if exponent > 0 else 1.0

    def _factor(self, space_id: int) -> float:
        """``decay ** (step - base_step)`` with the space's own decay and the pair read now (call inside
        :meth:`_snapshot`)."""
        return self._scale(*self._decay_state(space_id))

    def _write_factor(self, space_id: int, decay: float) -> float:
        """The factor for a write that learns (inside a transaction), under the space's own decay. ``decay``
        is the writer's ``hebbian.decay``: a space with no decay recorded, or no learned weight yet, takes it; a
        space that has both keeps its own (issue 44: two writers configured differently, a server and a hook, rebased the whole space on each
        other's writes, back and forth), and the writer says so once per space (one line to the progress
        callback). Changing a space's decay is an explicit step (:meth:`set_space_decay`, ``hela spaces
        decay``). Rebases (under the space's decay) when the factor is below ``REBASE_BELOW``."""
        exponent, stored = self._decay_state(space_id)
        # not recorded (a space older than migration 0016): this writer's decay is its own; nothing learned
        # yet (no amplitude depends on a decay: a space created without one): it takes the writer's, silently
        if stored is None or (stored != decay and self.db.execute(
                "SELECT 1 FROM edges WHERE space_id=? AND amp > 0 LIMIT 1", (space_id,)).fetchone() is None):
            self.db.execute("UPDATE spaces SET decay=? WHERE id=?", (decay, space_id))
            self._recorded_decay(space_id, decay)
            stored = decay
        elif stored != decay:
            self._tell_decay(space_id, stored, decay)
        factor = self._scale(exponent, stored)
        if factor >= REBASE_BELOW:
            return factor
        self._rebase(space_id, factor, stored)
        return 1.0

    def _recorded_decay(self, space_id: int, decay: float) -> None:
        """A hook for an engine that keeps the space's decay for the open transaction (Postgres)."""

    def _tell_decay(self, space_id: int, stored: float, configured: float) -> None:
        """One line, once per space and connection: the space keeps its decay, not the configured one."""
        told = self.__dict__.setdefault("_decay_told", set())
        if space_id in told:
            return
        told.add(space_id)
        name = self.db.execute("SELECT name FROM spaces WHERE id=?", (space_id,)).fetchone()[0]
        self._report(f"space '{name}' learns under its own hebbian.decay {stored:g}, not this configuration's "
                     f"{configured:g} (to change the space's: hela spaces decay {name} {configured:g})")

    def set_space_decay(self, space_id: int, decay: float) -> int:
        """Change the space's Eq.1 decay to ``decay`` (``hela spaces decay``), in its own transaction: the
        current weights are computed with the stored decay and stored again as amplitudes at ``base_step =
        step`` (unchanged for every reader); from then on each learning step decays by ``decay``. Returns how
        many edges hold learned weight. Raises :class:`StoreError` for a decay outside (0, 1]."""
        if not (0.0 < decay <= 1.0) or not math.isfinite(decay):
            raise StoreError(f"hebbian.decay must be in (0, 1], got {decay!r}")
        with self.transaction(space=space_id):
            exponent, stored = self._decay_state(space_id)
            return self._rebase(space_id, self._scale(exponent, stored), decay)

    def _rebase(self, space_id: int, factor: float, decay: float) -> int:
        """``amp *= factor``, ``base_step = step`` and the stored decay set to ``decay`` (inside a
        transaction); learned-only edges left below ``PRUNE_WEIGHT`` are deleted. Returns how many edges hold
        learned weight."""
        learned = self.db.execute("UPDATE edges SET amp = amp * ? WHERE space_id=? AND amp > 0",
                                  (factor, space_id)).rowcount
        self.db.execute("DELETE FROM edges WHERE space_id=? AND prior = 0 AND amp < ?", (space_id, PRUNE_WEIGHT))
        self.db.execute("UPDATE spaces SET base_step = step, decay = ? WHERE id=?", (decay, space_id))
        return learned

    def space_decay(self, space_id: int) -> float:
        """The decay the space's stored weights are read with: its recorded ``hebbian.decay``, or
        ``DEFAULT_DECAY`` while none is recorded."""
        stored = self._decay_state(space_id)[1]
        return DEFAULT_DECAY if stored is None else stored

    def record_decay(self, decay: float) -> int:
        """Spaces with no decay recorded (older than migration 0016) take ``decay``: the opening process's
        ``hebbian.decay``, the one it read and learned them with until now. One read when there are none
        (every open after the first); a database that cannot be written now (read-only, locked) keeps them
        unrecorded (read with ``DEFAULT_DECAY``) for the next process. Returns how many spaces."""
        if self.db.execute("SELECT 1 FROM spaces WHERE decay IS NULL LIMIT 1").fetchone() is None:
            return 0
        try:
            with self.transaction():
                return self.db.execute("UPDATE spaces SET decay=? WHERE decay IS NULL", (decay,)).rowcount
        except StoreError:
            return 0

    # ---------------------------------------------------------------- edges
    def edge_factor(self, space: Space) -> float:
        """``decay ** (step - base_step)`` as stored now (the space's decay): multiply an amplitude by this for
        the current weight."""
        with self._snapshot():
            return self._factor(space.id)

    def neighbours(self, space: Space, node_ids: Sequence[int], *,
                   min_weight: float = 0.0) -> dict[int, list[tuple[int, float]]]:
        """Current-weight neighbours of each node: ``{node: [(neighbour, weight), ...]}``."""
        out: dict[int, list[tuple[int, float]]] = {n: [] for n in node_ids}
        ids = list(node_ids)
        # An edge between two of the given nodes comes back from both halves of the query (and from two
        # chunks when its ends fall in different ones): each edge is counted once (Eq.4 sums over
        # neighbours, not over query rows).
        edges: dict[tuple[int, int], float] = {}
        with self._snapshot():
            factor = self._factor(space.id)
            for i in range(0, len(ids), 400):
                chunk = ids[i:i + 400]
                q = ",".join("?" * len(chunk))
                for a, b, amp, prior in self.db.execute(
                        f"SELECT a, b, amp, prior FROM edges WHERE a IN ({q}) UNION ALL "
                        f"SELECT a, b, amp, prior FROM edges WHERE b IN ({q})", (*chunk, *chunk)):
                    edges[(a, b)] = prior + amp * factor
        for (a, b), w in edges.items():
            if w < min_weight:
                continue
            if a in out:
                out[a].append((b, w))
            if b in out and a != b:
                out[b].append((a, w))
        return out

    def edges_among(self, space: Space, node_ids: Sequence[int]) -> dict[tuple[int, int], float]:
        """Current weights of the edges whose both ends are in ``node_ids`` (a small set): ``{(a, b): w}``, a < b."""
        ids = sorted(set(node_ids))
        if len(ids) < 2:
            return {}
        with self._snapshot():
            factor = self._factor(space.id)
            return {(a, b): prior + amp * factor for a, b, amp, prior in self._edges_among_ids(ids)}

    def _edges_among_ids(self, ids: list[int]) -> list[tuple[int, int, float, float]]:
        """``(a, b, amp, prior)`` of the edges whose both ends are in ``ids`` (sorted, distinct). Bounded
        whatever their number: up to 400 ids one ``a IN (...) AND b IN (...)`` statement (the retrieval's
        dozen, the UI's graphs); more, the edges of 500 smaller ends at a time, filtered here."""
        if len(ids) <= 400:
            q = ",".join("?" * len(ids))
            return self.db.execute(f"SELECT a, b, amp, prior FROM edges WHERE a IN ({q}) AND b IN ({q})",
                                   (*ids, *ids)).fetchall()
        among = set(ids)
        return [r for r in self.select_in("SELECT a, b, amp, prior FROM edges WHERE a IN ({ids})", ids)
                if r[1] in among]

    def edge_weight(self, space: Space, a: int, b: int) -> float:
        a, b = min(a, b), max(a, b)
        with self._snapshot():
            row = self.db.execute("SELECT amp, prior FROM edges WHERE a=? AND b=?", (a, b)).fetchone()
            return row[1] + row[0] * self._factor(space.id) if row else 0.0

    @staticmethod
    def _edge_amps(weights: dict[tuple[int, int], float], factor: float) -> dict[tuple[int, int], float]:
        """``{(min, max): amplitude}`` of the weights at the current decay ``factor`` (a pair given twice keeps
        its last weight; self-pairs skipped); a weight that is not a finite non-negative number is refused."""
        amps: dict[tuple[int, int], float] = {}
        for (a, b), w in weights.items():
            if a == b:
                continue
            amp = w / factor
            if not (amp >= 0 and math.isfinite(amp)):
                raise StoreError(f"edge ({a}, {b}): weight {w!r} is not a finite non-negative number")
            amps[(min(a, b), max(a, b))] = amp
        return amps

    def set_edges(self, space: Space, weights: dict[tuple[int, int], float], decay: float) -> None:
        """Write current weights for pairs, inside a write transaction. A pair whose node is gone (or in
        another space) is skipped: the check runs in the transaction, so no edge can dangle. An edge with a
        fixed ``prior`` keeps it; its decaying part becomes ``max(0, weight - prior)``."""
        self.require_transaction("set_edges")
        factor = self._write_factor(space.id, decay)
        rows = [(a, b, space.id, amp, a, space.id, b, space.id, factor)
                for (a, b), amp in self._edge_amps(weights, factor).items()]
        self.db.executemany(
            "INSERT INTO edges(a, b, space_id, amp) SELECT ?, ?, ?, ? "
            "WHERE EXISTS (SELECT 1 FROM nodes WHERE id=? AND space_id=?) "
            "AND EXISTS (SELECT 1 FROM nodes WHERE id=? AND space_id=?) "
            f"ON CONFLICT(a, b) DO UPDATE SET amp = {self.dialect.greatest}(0.0, excluded.amp - edges.prior / ?)", rows)

    def set_priors(self, space: Space, weights: dict[tuple[int, int], float]) -> None:
        """Give pairs a fixed prior weight (at least ``w``: an existing larger prior stays), inside a write
        transaction; what Eq.1 learned on the edge is kept on top. Pairs whose node is gone are skipped."""
        self.require_transaction("set_priors")
        rows = []
        for (a, b), w in weights.items():
            if a == b:
                continue
            if not (w >= 0 and math.isfinite(w)):
                raise StoreError(f"edge ({a}, {b}): prior {w!r} is not a finite non-negative number")
            a, b = min(a, b), max(a, b)
            rows.append((a, b, space.id, w, a, space.id, b, space.id))
        self.db.executemany(
            "INSERT INTO edges(a, b, space_id, amp, prior) SELECT ?, ?, ?, 0.0, ? "
            "WHERE EXISTS (SELECT 1 FROM nodes WHERE id=? AND space_id=?) "
            "AND EXISTS (SELECT 1 FROM nodes WHERE id=? AND space_id=?) "
            f"ON CONFLICT(a, b) DO UPDATE SET prior = {self.dialect.greatest}(edges.prior, excluded.prior)", rows)

    def pair_weights(self, space: Space,
                     pairs: Iterable[tuple[int, int]]) -> dict[tuple[int, int], tuple[float, float]]:
        """``{(a, b): (prior, current weight)}`` (a < b) of the existing edges among ``pairs``: one read per 500
        smaller ends instead of a query per pair (ingest writes links for every batch)."""
        want = {(min(a, b), max(a, b)) for a, b in pairs if a != b}
        if not want:
            return {}
        with self._snapshot():
            factor = self._factor(space.id)
            return {(a, b): (prior, prior + amp * factor) for a, b, amp, prior in self.select_in(
                "SELECT a, b, amp, prior FROM edges WHERE a IN ({ids})", sorted({a for a, _ in want}))
                if (a, b) in want}

    def edge_prior(self, space: Space, a: int, b: int) -> float:
        a, b = min(a, b), max(a, b)
        row = self.db.execute("SELECT prior FROM edges WHERE a=? AND b=?", (a, b)).fetchone()
        return row[0] if row else 0.0

    def edge_priors(self, space: Space) -> dict[tuple[int, int], float]:
        """``{(a, b): prior}`` of the space's edges with a fixed prior weight."""
        return {(a, b): p for a, b, p in self.db.execute(
            "SELECT a, b, prior FROM edges WHERE space_id=? AND prior > 0", (space.id,))}

    def advance_step(self, space_id: int, decay: float) -> Space:
        """Bump the space's retrieval counter (every edge decays once), inside a transaction.

        Rebases amplitudes when the factor gets small (amortised O(1)) and prunes at most
        ``PRUNE_PER_STEP`` edges that became negligible.
        """
        self.require_transaction("advance_step")
        self.db.execute("UPDATE spaces SET step = step + 1 WHERE id=?", (space_id,))
        self._write_factor(space_id, decay)
        self.prune_edges(space_id)
        return self._space_by_id(space_id)

    def prune_edges(self, space_id: int, *, limit: int | None = None) -> int:
        """Delete up to ``limit`` edges whose current weight is below ``PRUNE_WEIGHT`` (inside a
        transaction). Reads only the pruned rows through the ``(space_id, amp)`` index. Returns how many."""
        self.require_transaction("prune_edges")
        limit = PRUNE_PER_STEP if limit is None else limit
        factor = self._factor(space_id)
        if factor <= 0 or limit <= 0:  # factor 0: unreachable after _write_factor
            return 0
        cur = self.db.execute(
            "DELETE FROM edges WHERE (a, b) IN (SELECT a, b FROM edges WHERE space_id=? AND prior = 0 AND amp < ? "
            "LIMIT ?)",
            (space_id, PRUNE_WEIGHT / factor, limit))
        return cur.rowcount

    def _space_by_id(self, space_id: int) -> Space:
        row = self.db.execute("SELECT id, name, step, base_step, consolidated_step FROM spaces WHERE id=?",
                              (space_id,)).fetchone()
        return Space(*row)

    def refresh_space(self, space: Space) -> Space:
        return self._space_by_id(space.id)

    def edge_strengths(self, space: Space, *, with_priors: bool = False) -> dict[int, tuple[float, int]]:
        """Eq.2 inputs for every node with edges: ``{node: (sum of current weights, degree)}``. Fixed priors
        count only ``with_priors``: Eq.2 hubs measure what use taught (without fixed links, the decaying
        ingest links count, as in the paper); forgetting's "weak" criterion counts them (a memory linked into
        its conversation is not weak)."""
        with self._snapshot():
            factor = self._factor(space.id)
            # "AS ends": PostgreSQL before 16 refuses a subquery in FROM without an alias
            rows = self.db.execute(
                f"""SELECT n, {self.dialect.fsum.format("amp")}, count(*), {self.dialect.fsum.format("prior")} FROM (
                       SELECT a AS n, amp, prior FROM edges WHERE space_id = :s
                       UNION ALL SELECT b AS n, amp, prior FROM edges WHERE space_id = :s) AS ends
                   GROUP BY n""", {"s": space.id}).fetchall()
        return {n: (total * factor + (prior if with_priors else 0.0), deg) for n, total, deg, prior in rows}

    def all_edges(self, space: Space) -> list[tuple[int, int, float]]:
        with self._snapshot():
            factor = self._factor(space.id)
            return [(a, b, prior + amp * factor) for a, b, amp, prior in self.db.execute(
                "SELECT a, b, amp, prior FROM edges WHERE space_id=? ORDER BY a, b", (space.id,))]

    def count_edges(self, space_id: int) -> int:
        return self.db.execute("SELECT count(*) FROM edges WHERE space_id=?", (space_id,)).fetchone()[0]
