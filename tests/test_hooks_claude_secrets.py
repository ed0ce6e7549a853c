"""A database password never reaches hela's database through a real Claude Code session (issue 40), offline
(tests/agents_support.py): the scripted model runs ``export PGPASSWORD=...`` and a ``psql`` with a libpq
keyword string holding a password; hela's hooks capture both tool calls, and neither password is in any
table, in the bytes of the database file or its WAL, or in the hook log."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.agents_support import ToolUse, claude_env, fake_messages_api, require_claude, run_claude
from tests.reliability import PY, db_state, hela_env

ENV_PW = "Xy9pgEnvPass41"             # made up
CONN_PW = "Qw8psqlConnPw73"           # made up
EXPORT = f"export PGPASSWORD={ENV_PW}"
PSQL = f'psql "host=127.0.0.1 port=9 user=app dbname=shop password={CONN_PW}" -c "select 1" || true'


def _results(body: dict[str, Any]) -> set[str]:
    return {b.get("tool_use_id") for m in body.get("messages") or [] if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"}


def model(body: dict[str, Any]) -> str | ToolUse:
    """The scripted model: the export, then the psql, then a text."""
    done = _results(body)
    if "toolu_export" not in done:
        return ToolUse("Bash", {"command": EXPORT, "description": "Set the password"}, id="toolu_export")
    if "toolu_psql" not in done:
        return ToolUse("Bash", {"command": PSQL, "description": "Check the database"}, id="toolu_psql")
    return "The shop database is checked."


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
    res = subprocess.run([PY, "-m", "hela_cli", "hooks", "install", "claude-code", "--scope", "project", "--json"],
                         cwd=str(proj), env=henv, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    log = tmp_path / "home" / "hooks.log"
    with fake_messages_api(model) as api:
        env = claude_env(tmp_path / "claude-home", api, **{k: v for k, v in henv.items()
                                                           if k.startswith(("HELA_", "PYTHON"))})
        out = run_claude(claude, "Connect to the shop database and check it answers.", proj, env, 300,
                         "--allowedTools", "Bash")
        assert out.returncode == 0, (out.stdout, out.stderr)
        assert {"toolu_export", "toolu_psql"} <= set().union(*(_results(b) for b in api.messages()))
    deadline = time.time() + 180   # the capture may still run after claude exits (a hang guard, not a timing)
    while True:
        rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        if any(r.get("role") == "capture" and r.get("result") == "ok" for r in rows) or time.time() > deadline:
            break
        time.sleep(0.5)
    assert not [r for r in rows if r.get("result") in ("error", "timeout")], rows

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    texts = [t for (t,) in con.execute("SELECT text FROM nodes")]
    con.close()
    # both commands were captured (the check below can fail), with the passwords replaced
    assert any("export PGPASSWORD=[REDACTED:password]" in t for t in texts), texts
    assert any("password=[REDACTED:password]" in t and "psql" in t for t in texts), texts
    for pw in (ENV_PW, CONN_PW):
        assert _tables_holding(db, pw) == [], pw
        assert pw not in repr(db_state(db))
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-journal")):
            if path.exists():
                assert pw.encode() not in path.read_bytes(), (pw, path)
        assert pw not in log.read_text()
