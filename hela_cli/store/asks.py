"""The asks log: each ask's question, answer, the memories it rested on and the step, as `llm` logs
prompts (``answer.log``)."""

from __future__ import annotations

import json
import time
from typing import Any, Sequence


class AsksLog:
    """``asks`` rows, newest first per space."""

    def log_ask(self, space_id: int, question: str, answer: str | None, memories: Sequence[int],
                step: int) -> int | None:
        """Record one ask (``answer.log``), as `llm` logs prompts; returns its id. Nothing is logged (None)
        when one of its memories was deleted meanwhile (``hela delete``: the answer may restate it)."""
        with self.transaction():
            if memories and self.deleted_ids(memories):
                return None
            return self.sdb["asks"].insert({"space_id": space_id, "question": question, "answer": answer,
                                            "memories": json.dumps(list(memories)), "step": step,
                                            "created_at": time.time()}).last_pk

    def asks(self, space_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """The space's most recent asks, newest first (``memories`` decoded)."""
        rows = list(self.sdb["asks"].rows_where("space_id = ?", [space_id], order_by="created_at desc, id desc",
                                                limit=limit))
        for r in rows:
            r["memories"] = json.loads(r["memories"])
        return rows
