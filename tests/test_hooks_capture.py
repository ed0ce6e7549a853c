"""Capture hooks: the turns of an agent's transcript not stored yet become memories (real ``hela hook``
processes; the Claude Code transcript recorded from the real binary by the formats tests)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from hela_cli.hooks.space import project_space
from tests.reliability import PY, db_state, file_digest, hela_env

FIXTURE = Path(__file__).resolve().parent / "data" / "agents" / "claude-code" / "session.jsonl"
SECRETS = ("sk-proj-abcDEF123",)   # the fixture's key (its prose "password is ..." is not a pattern)


@pytest.fixture()
def proj(tmp_path, model_dir_path):
    d = tmp_path / "proj"
    d.mkdir()
    subprocess.run(["git", "init", "-q", str(d)], check=True)
    transcript = tmp_path / "t" / "session.jsonl"
    transcript.parent.mkdir()
    shutil.copy(FIXTURE, transcript)
    env = hela_env(tmp_path, tmp_path / "hela.db", HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_CAPTURE_BUDGET_S="120")
    return {"dir": d, "db": tmp_path / "hela.db", "env": env, "log": tmp_path / "home" / "hooks.log",
            "transcript": transcript, "space": project_space(d)}


def capture(p: dict[str, Any], event: str = "Stop", agent: str = "claude-code", session: str = "sess-1",
            **env: str) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    payload = {"session_id": session, "transcript_path": str(p["transcript"]), "cwd": str(p["dir"]),
               "hook_event_name": event, "stop_hook_active": False, "last_assistant_message": "done"}
    res = subprocess.run([PY, "-m", "hela_cli", "hook", event, "--agent", agent], input=json.dumps(payload).encode(),
                         capture_output=True, env={**p["env"], **env}, cwd=str(p["dir"]), timeout=300)
    assert res.returncode == 0 and res.stdout == b"", (res.stdout, res.stderr)
    return res, json.loads(p["log"].read_text().splitlines()[-1])


def nodes(p: dict[str, Any]) -> list[tuple]:
    con = sqlite3.connect(p["db"])
    try:
        return con.execute("SELECT source_id, session, speaker, text FROM nodes ORDER BY id").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("event", ["Stop", "PreCompact", "SessionEnd"])
def test_capture_stores_new_turns_once_redacted(proj, event):
    _, row = capture(proj, event)
    assert row["result"] == "ok" and row["space"] == proj["space"] and row["added"] == row["turns"] > 0
    rows = nodes(proj)
    assert len(rows) == row["added"]
    assert {r[1] for r in rows} == {"sess-1"}                                 # session = the agent's id
    assert any(r[3].startswith("[tool] Bash: python3 --version") for r in rows)   # a call: one short line
    assert any("deploy target is kestrel" in r[3] for r in rows)
    assert any("[REDACTED:" in r[3] for r in rows)
    for secret in SECRETS:
        assert secret.encode() not in proj["db"].read_bytes()
        assert secret not in repr(db_state(proj["db"]))
    before = db_state(proj["db"])
    _, again = capture(proj, event)                                            # idempotent
    assert again["result"] == "empty" and db_state(proj["db"]) == before


def test_partial_last_line_loses_nothing(proj):
    full = proj["transcript"].read_text()
    lines = full.splitlines(keepends=True)
    last = next(i for i in range(len(lines) - 1, -1, -1) if '"type": "user"' in lines[i].replace('":"', '": "')
                or '"type":"user"' in lines[i] or '"type":"assistant"' in lines[i] or '"type": "assistant"' in lines[i])
    proj["transcript"].write_text("".join(lines[:last]) + lines[last][:len(lines[last]) // 2])
    _, first = capture(proj)
    assert first["result"] == "ok"
    proj["transcript"].write_text(full)                                        # the agent finished the line
    _, second = capture(proj)
    assert second["result"] == "ok" and second["added"] == second["turns"] - first["added"] >= 1
    ids = [r[0] for r in nodes(proj)]
    assert len(ids) == len(set(ids)) == second["turns"]


def test_tool_calls_can_be_left_out(proj):
    _, row = capture(proj, HELA_HOOKS_TOOL_CALLS="false")
    assert row["result"] == "ok" and not [r for r in nodes(proj) if r[3].startswith("[tool]")]


def test_large_capture_goes_to_a_detached_child(proj):
    _, row = capture(proj, HELA_HOOKS_CAPTURE_INLINE="2")
    assert row["result"] == "detached" and row["new"] > 2 and row["child"]
    end = time.time() + 180
    while time.time() < end:
        last = json.loads(proj["log"].read_text().splitlines()[-1])
        if last.get("result") != "detached":
            break
        time.sleep(0.3)
    assert last["result"] == "ok" and last["added"] == row["new"], last
    assert len(nodes(proj)) == row["new"]


def test_capture_budget_spent_stores_nothing(proj):
    capture(proj, session="warm-up")                     # the database and space exist
    before = (file_digest(proj["db"]), db_state(proj["db"]))
    proj["transcript"].write_text(proj["transcript"].read_text().replace("kestrel", "osprey"))
    _, row = capture(proj, session="other", HELA_HOOKS_CAPTURE_BUDGET_S="0.01")
    assert row["result"] == "timeout"
    assert db_state(proj["db"]) == before[1]


def test_unreadable_transcript_fails_open(proj):
    proj["transcript"].write_bytes(b'{"type": "user", "uuid": 5}\n' + b"\xff\xfe garbage\n")
    _, row = capture(proj)
    assert row["result"] == "error" and str(proj["transcript"]) in row["detail"]
    assert not proj["db"].exists()
