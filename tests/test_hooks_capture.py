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
from tests.reliability import PY, db_state, hela_env

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
    row = json.loads(p["log"].read_text().splitlines()[-1])
    if event == "SessionEnd" and row.get("child"):   # the agents allow it 1.5-3 s: a child captures (also when
        assert row["result"] in ("detached", "timeout"), row   # a busy machine spent those in start-up)
        row = child_row(p, row["child"])
    return res, row


def child_row(p: dict[str, Any], pid: int, timeout: float = 180) -> dict[str, Any]:
    """The hook-log line of the detached child ``pid`` (waits for it)."""
    end = time.time() + timeout
    while time.time() < end:
        rows = [json.loads(line) for line in p["log"].read_text().splitlines()]
        found = [r for r in rows if r.get("detached") and r.get("pid") == pid]
        if found:
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"no log line of the detached child {pid}")


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


def test_capture_budget_spent_hands_the_work_to_a_child(proj):
    """An inline capture stopped at its budget commits nothing; a detached child (no budget) then stores
    the turns, once."""
    _, row = capture(proj, HELA_HOOKS_CAPTURE_BUDGET_S="0.01")
    assert row["result"] == "timeout" and row["child"] and "detached child" in row["detail"]
    end = time.time() + 180
    while time.time() < end:
        last = json.loads(proj["log"].read_text().splitlines()[-1])
        if last.get("result") != "timeout":
            break
        time.sleep(0.3)
    assert last["result"] == "ok" and last["added"] == last["turns"], last
    ids = [r[0] for r in nodes(proj)]
    assert len(ids) == len(set(ids)) == last["turns"]


def test_unreadable_transcript_fails_open(proj):
    proj["transcript"].write_bytes(b'{"type": "user", "uuid": 5}\n' + b"\xff\xfe garbage\n")
    _, row = capture(proj)
    assert row["result"] == "error" and str(proj["transcript"]) in row["detail"]
    assert not proj["db"].exists()


def test_feedback_reinforces_the_injected_memories_the_answer_echoes(proj, embedder):
    """hooks.feedback on: the prompt hook keeps what it injected, the Stop capture reports the memories the
    final message echoes through reinforce (the asks row gets its `used`)."""
    from hela_cli.config import Config
    from hela_cli.memory import Memory

    facts = ["The staging database listens on port 6543 because 5432 belongs to the billing service.",
             "Our deploy bucket is frosty-otter-assets in eu-west-3.",
             "The nightly job rebuilds the search index at 02:00 with reindex.py."]
    with Memory(Config(db=str(proj["db"])), embedder=embedder) as mem:
        ids = mem.add_many(proj["space"], [{"speaker": "user", "text": t, "session": "old", "id": f"f{i}"}
                                           for i, t in enumerate(facts)])
    env = {**proj["env"], "HELA_HOOKS_FEEDBACK": "true", "HELA_HOOKS_PROMPT_MIN_SCORE": "0"}
    payload = {"session_id": "sess-1", "cwd": str(proj["dir"]), "hook_event_name": "UserPromptSubmit",
               "prompt": "Where do the staging database and the deploy bucket live?"}
    res = subprocess.run([PY, "-m", "hela_cli", "hook", "UserPromptSubmit"], input=json.dumps(payload).encode(),
                         capture_output=True, env=env, cwd=str(proj["dir"]), timeout=300)
    prompt_row = json.loads(proj["log"].read_text().splitlines()[-1])
    assert res.returncode == 0 and prompt_row["result"] == "ok" and ids[1] in prompt_row["memories"], prompt_row
    stop = {"session_id": "sess-1", "transcript_path": str(proj["transcript"]), "cwd": str(proj["dir"]),
            "hook_event_name": "Stop", "last_assistant_message": "It is the bucket frosty-otter-assets, region eu-west-3."}
    subprocess.run([PY, "-m", "hela_cli", "hook", "Stop"], input=json.dumps(stop).encode(), capture_output=True,
                   env=env, cwd=str(proj["dir"]), timeout=300, check=True)
    row = json.loads(proj["log"].read_text().splitlines()[-1])
    assert row["result"] == "ok" and row["feedback"]["echoed"] == [ids[1]], row
    con = sqlite3.connect(proj["db"])
    used = con.execute("SELECT used FROM asks WHERE id = ?", (prompt_row["recall_id"],)).fetchone()[0]
    con.close()
    assert json.loads(used) == [ids[1]]
    assert not list((proj["log"].parent / "hooks-state").glob("*.json"))   # given once, then forgotten
