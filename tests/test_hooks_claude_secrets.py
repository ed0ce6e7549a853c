"""A database password never reaches hela's database through a real Claude Code session (issue 40), offline
(tests/agents_support.py): the scripted model runs ``export PGPASSWORD=...`` and a ``psql`` with a libpq
keyword string holding a password; hela's hooks capture both tool calls, and neither password is in any
table, in the bytes of the database file or its WAL, or in the hook log."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

from typing import Any

from tests.agents_support import ToolUse, claude_session, hook_log, install_hooks, require_claude, wait_for_log
from tests.reliability import db_state, hela_env

ENV_PW = "Xy9pgEnvPass41"             # made up
CONN_PW = "Qw8psqlConnPw73"           # made up
EXPORT = f"export PGPASSWORD={ENV_PW}"
PSQL = f'psql "host=127.0.0.1 port=9 user=app dbname=shop password={CONN_PW}" -c "select 1" || true'


def _results(body: dict[str, Any]) -> set[str]:
    return {b.get("tool_use_id") for m in body.get("messages") or [] if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"}


def model(body: dict[str, Any]) -> str | ToolUse:
    """The scripted model: the export, then the psql, then a text. By the ids of the tool results the request
    carries (Claude Code leaves earlier rounds out of a request: counting them does not work)."""
    done = _results(body)
    if "toolu_psql" in done:
        return "The shop database is checked."
    if "toolu_export" in done:
        return ToolUse("Bash", {"command": PSQL, "description": "Check the database"}, id="toolu_psql")
    return ToolUse("Bash", {"command": EXPORT, "description": "Set the password"}, id="toolu_export")


def _tables_holding(db: Path, needle: str) -> list[str]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60)
    try:
        found = []
        for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            try:
                rows = con.execute(f'SELECT * FROM "{t}"').fetchall()
            except sqlite3.OperationalError:   # a virtual table sqlite3 cannot read (vec0): its bytes below
                continue
            if any(needle in str(v) for row in rows for v in row):
                found.append(t)
        return found
    finally:
        con.close()


def test_claude_session_stores_no_database_password(tmp_path):
    claude = require_claude()
    proj = tmp_path / "shop"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    db = tmp_path / "hela.db"
    henv = hela_env(tmp_path, db, HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_CAPTURE_BUDGET_S="120")
    install_hooks("claude-code", proj, henv)
    res, api = claude_session(claude, tmp_path / "claude-home", proj, "Connect to the shop database and check it.", model,
                              env={k: v for k, v in henv.items() if k.startswith(("HELA_", "PYTHON"))},
                              args=("--allowedTools", "Bash"))
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert "toolu_psql" in set().union(*(_results(b) for b in api.messages()))   # both commands ran
    home = tmp_path / "home"
    rows = wait_for_log(home, lambda rows: any(r.get("role") == "capture" and r.get("result") == "ok" for r in rows))
    assert not [r for r in rows if r.get("result") in ("error", "timeout")], rows

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    texts = [t for (t,) in con.execute("SELECT text FROM nodes")]
    con.close()
    # both commands were captured (the check below can fail), with the passwords replaced
    assert any("export PGPASSWORD=[REDACTED:password]" in t for t in texts), texts
    assert any("password=[REDACTED:password]" in t and "psql" in t for t in texts), texts
    log = (home / "hooks.log").read_text()
    assert hook_log(home)
    for pw in (ENV_PW, CONN_PW):
        assert _tables_holding(db, pw) == [], pw
        assert pw not in repr(db_state(db))
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-journal")):
            if path.exists():
                assert pw.encode() not in path.read_bytes(), (pw, path)
        assert pw not in log
