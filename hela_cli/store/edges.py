"""Hebbian edges: one row per undirected pair ``a < b``; current weight ``amp * decay ** (step - base_step)``."""

from __future__ import annotations

from typing import Sequence



from hela_cli.store.base import REBASE_EXPONENT, Space


class Edges:
    """Edge reads and writes, the space's retrieval counter and amplitude rebasing."""

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

