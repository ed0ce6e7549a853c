"""Access tokens of a shared server (``hela tokens``, ``hela mcp --http``): the SQL both engines share.

A row of ``tokens`` is one client's token: its ``name`` (unique), the SHA-256 ``digest`` of the token (the
token itself is never given to the store: :mod:`hela_cli.mcp_server.access` hashes it first), the spaces it
may use (``spaces``: a JSON array of space names; NULL: every space), its ``scope`` (``read`` or ``write``),
when it was made and when a server last accepted it. Revoking deletes the row. Space names are kept as
names, so a token can name a space nobody has written yet; renaming a space does not carry its tokens over
(the token no longer reaches the renamed space until it is given the new name).
"""

from __future__ import annotations

import json
from typing import Any

#: the table (migration SQLite 0019_tokens / Postgres 0009_tokens; ``{real}``: the engine's type)
TOKENS_SQL = """
    CREATE TABLE tokens(
        name TEXT PRIMARY KEY,
        digest TEXT NOT NULL UNIQUE,
        spaces TEXT,
        scope TEXT NOT NULL CHECK (scope IN ('read', 'write')),
        created_at {real} NOT NULL,
        last_used {real}
    )
"""

SCOPES = ("read", "write")
_COLUMNS = ("name", "digest", "spaces", "scope", "created_at", "last_used")


def _row(r: Any) -> dict[str, Any]:
    out = dict(zip(_COLUMNS, r))
    out["spaces"] = None if out["spaces"] is None else json.loads(out["spaces"])
    return out


class Tokens:
    """``tokens`` rows (see the module docstring). Each write is one statement (atomic on both engines) and
    touches no space's rows, so it takes no space lock."""

    def add_token(self, name: str, digest: str, spaces: list[str] | None, scope: str, created_at: float) -> bool:
        """Store a token's digest under ``name``; False (nothing written) when ``name`` is taken."""
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}, not {scope!r}")
        cur = self.db.execute(
            "INSERT INTO tokens(name, digest, spaces, scope, created_at) VALUES (?,?,?,?,?) "
            "ON CONFLICT(name) DO NOTHING",
            (name, digest, None if spaces is None else json.dumps(list(spaces)), scope, float(created_at)))
        return cur.rowcount == 1

    def tokens(self) -> list[dict[str, Any]]:
        """Every token's row, by name (the digest included: callers show it to nobody)."""
        return [_row(r) for r in self.db.execute(f"SELECT {', '.join(_COLUMNS)} FROM tokens ORDER BY name")]

    def token_by_digest(self, digest: str) -> dict[str, Any] | None:
        r = self.db.execute(f"SELECT {', '.join(_COLUMNS)} FROM tokens WHERE digest = ?", (digest,)).fetchone()
        return None if r is None else _row(r)

    def revoke_token(self, name: str) -> bool:
        """Delete the token named ``name``; False when there is none."""
        return self.db.execute("DELETE FROM tokens WHERE name = ?", (name,)).rowcount == 1

    def touch_token(self, digest: str, when: float) -> None:
        """Record that a server accepted the token at ``when`` (a revoked token: nothing)."""
        self.db.execute("UPDATE tokens SET last_used = ? WHERE digest = ? AND (last_used IS NULL OR last_used < ?)",
                        (float(when), digest, float(when)))
