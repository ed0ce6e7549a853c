"""What the hook tests share: a git project whose space holds memories of an earlier session, and a real
``hela hook`` process run on it (tests/test_hooks_run.py, test_hooks_process.py, test_hooks_server.py)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from hela_cli.config import Config
from hela_cli.hooks.space import project_space
from hela_cli.memory import Memory
from tests.reliability import PY, hela_env

#: a Claude Code transcript recorded from the real binary (tests/data/agents/)
TRANSCRIPT = Path(__file__).resolve().parent / "data" / "agents" / "claude-code" / "session.jsonl"

FACTS = [("user", "The staging database listens on port 6543 because 5432 belongs to the legacy billing service."),
         ("assistant", "Noted: staging Postgres is on port 6543, not 5432."),
         ("user", "We deploy the api with blue-green releases behind the nginx ingress."),
         ("assistant", "Understood, blue-green deploys through nginx.")]
PROMPT = "which port does the staging database use?"


@pytest.fixture()
def project(tmp_path, embedder):
    """A git project whose space already holds a few memories of an earlier session, and the env of a hook."""
    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    db = tmp_path / "hela.db"
    space = project_space(proj)
    with Memory(Config(db=str(db)), embedder=embedder) as mem:
        mem.add_many(space, [{"speaker": s, "text": t, "session": "earlier-session", "id": f"m{i}",
                              "time": f"2026-11-0{i + 1} 10:00"} for i, (s, t) in enumerate(FACTS)])
    # the 2 s default budget is a latency goal a busy shared test machine can miss: these tests are about
    # behaviour, so they allow more (test_time_budget_spent_prints_nothing checks the budget itself)
    env = hela_env(tmp_path, db, HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_CAPTURE_BUDGET_S="120")
    return {"dir": proj, "db": db, "space": space, "env": env, "home": tmp_path / "home"}


def hook(project: dict[str, Any], event: str, payload: Any, agent: str = "claude-code", *extra: str,
         env: dict[str, str] | None = None, raw: bytes | None = None) -> tuple[subprocess.CompletedProcess, list]:
    """Run ``hela hook EVENT --agent AGENT`` with ``payload`` on stdin; the process and the new log lines."""
    log = project["home"] / "hooks.log"
    before = log.read_text().splitlines() if log.exists() else []
    data = raw if raw is not None else json.dumps(payload).encode()
    res = subprocess.run([PY, "-m", "hela_cli", "hook", event, "--agent", agent, *extra], input=data,
                         capture_output=True, env=env or project["env"], cwd=str(project["dir"]), timeout=120)
    after = log.read_text().splitlines() if log.exists() else []
    return res, [json.loads(line) for line in after[len(before):]]


def child_line(project: dict[str, Any], pid: int, timeout: float = 120) -> dict[str, Any]:
    """The log line of the detached child ``pid`` (waits for it)."""
    log = project["home"] / "hooks.log"
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for line in log.read_text().splitlines():
            row = json.loads(line)
            if row.get("detached") and row.get("pid") == pid:
                return row
        time.sleep(0.1)
    raise AssertionError(f"no log line of the detached child {pid}")


def base(project: dict[str, Any], event: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": "sess-now", "transcript_path": str(project["dir"] / "none.jsonl"),
            "cwd": str(project["dir"]), "hook_event_name": event, **fields}


def context_of(res: subprocess.CompletedProcess, event: str) -> str:
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == event
    return out["hookSpecificOutput"]["additionalContext"]
