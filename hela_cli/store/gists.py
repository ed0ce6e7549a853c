"""Session gists a chat model wrote (issue 46): one row per session of a space, written by the deferred
batched model work (:mod:`hela_cli.mechanics.judge`) at a session's end, read by the session brief, which
never waits for a model. A gist is derived text: deleting any memory of its session deletes it
(:meth:`~hela_cli.store.nodes.Nodes.delete_nodes`), and so does dropping the space.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterable, Sequence

#: the table (migration SQLite 0020_session_gists / Postgres 0010_session_gists)
SESSION_GISTS_SQL = """
    CREATE TABLE session_gists(
        space_id {int} NOT NULL,
        session TEXT NOT NULL,
        text TEXT NOT NULL,
        turns {int} NOT NULL,
        model TEXT,
        evidence TEXT NOT NULL,
        created_at {real} NOT NULL,
        PRIMARY KEY(space_id, session)
    )
"""


class Gists:
    """The model-written gists of a space's sessions."""

    def set_session_gist(self, space_id: int, session: str, text: str, turns: int, model: str | None,
                         evidence: Sequence[int]) -> None:
        """Write (or replace) the gist of ``session``: ``turns`` = the session's memories it was written from."""
        self.db.execute(
            "INSERT INTO session_gists(space_id, session, text, turns, model, evidence, created_at) "
            "VALUES (?,?,?,?,?,?,?) ON CONFLICT(space_id, session) DO UPDATE SET text = excluded.text, "
            "turns = excluded.turns, model = excluded.model, evidence = excluded.evidence, "
            "created_at = excluded.created_at",
            (space_id, session, text, int(turns), model, json.dumps([int(i) for i in evidence]), time.time()))

    def session_gists(self, space_id: int, sessions: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``{session: {"text", "turns", "model", "evidence", "created_at"}}`` of those that have one."""
        names = sorted({s for s in sessions if s})
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(names), 500):
            chunk = names[i:i + 500]
            for s, text, turns, model, ev, at in self.db.execute(
                    f"SELECT session, text, turns, model, evidence, created_at FROM session_gists WHERE space_id = ? "
                    f"AND session IN ({','.join('?' * len(chunk))})", (space_id, *chunk)):
                out[s] = {"text": text, "turns": turns, "model": model, "evidence": json.loads(ev), "created_at": at}
        return out

    def count_session(self, space_id: int, session: str) -> int:
        return self.db.execute("SELECT count(*) FROM nodes WHERE space_id = ? AND session = ?",
                               (space_id, session)).fetchone()[0]

    def _forget_session_gists(self, node_ids: Sequence[int]) -> None:
        """Inside a transaction, before the nodes go: the gists of their sessions."""
        for sid, session in {(r[0], r[1]) for r in self.select_in(
                "SELECT DISTINCT space_id, session FROM nodes WHERE session IS NOT NULL AND id IN ({ids})",
                list(node_ids))}:
            self.db.execute("DELETE FROM session_gists WHERE space_id = ? AND session = ?", (sid, session))
