"""Consolidation's bookkeeping: per-hub state (cluster distilled, step, status) and the space's
consolidated step."""

from __future__ import annotations

import json
from typing import Any, Sequence


class Hubs:
    """``hubs`` rows and ``spaces.consolidated_step``."""

    def hub_state(self, space_id: int) -> dict[int, dict[str, Any]]:
        return {r["node_id"]: {"cluster": json.loads(r["cluster"]), "distilled_step": r["distilled_step"],
                               "status": r["status"]}
                for r in self._dicts("SELECT * FROM hubs WHERE space_id = ?", (space_id,))}

    def set_hub_state(self, space_id: int, node_id: int, cluster: Sequence[int], step: int, status: str) -> None:
        """Record a hub's consolidation state; nothing for a hub forgotten meanwhile (checked in the write),
        nor for a cluster holding a memory deleted meanwhile (``hela delete``)."""
        if self.deleted_ids(cluster):
            return
        self.db.execute("INSERT INTO hubs(node_id, space_id, cluster, distilled_step, status) SELECT ?,?,?,?,? "
                        "WHERE EXISTS (SELECT 1 FROM nodes WHERE id=?) "
                        "ON CONFLICT(node_id) DO UPDATE SET cluster=excluded.cluster, "
                        "distilled_step=excluded.distilled_step, status=excluded.status",
                        (node_id, space_id, json.dumps(list(cluster)), step, status, node_id))

    def set_consolidated_step(self, space_id: int, step: int) -> None:
        self.db.execute("UPDATE spaces SET consolidated_step=? WHERE id=?", (step, space_id))
