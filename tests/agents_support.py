"""Running the real coding agents offline in tests: the binaries ``make agents`` installs (npm, pinned, into the
git-ignored ``.agents/`` folder) against the fake model APIs of :mod:`hela_cli.testing.agents`.

* :func:`require_agent` (``claude``, ``codex``, ``gemini``) / :func:`require_claude`: the binary, else the test
  skips when the environment variable ``CI`` is unset and fails in CI (a missing binary there is a broken
  build).
* :func:`install_hooks`: ``hela hooks install AGENT --scope project`` in a project, as a user runs it.
* :func:`claude_session`, :func:`codex_session`, :func:`gemini_session`: one headless session of the agent
  with a scripted model (a text, :class:`Shell`, :class:`ToolUse`, or :func:`steps` of them); each returns
  the finished process and the fake API with the requests it received.
* :func:`hook_log` / :func:`wait_for_log` / :func:`captured`: the hook log's rows, polled until a session's
  capture is done (a capture may still run, detached, after the agent exits).

For example, a session whose model first runs a command, then answers (a hook on the tool call can then
be checked in the request that follows it)::

    res, api = codex_session(require_agent("codex"), home, project, "Why does foo.py fail?",
                             steps("codex", Shell("cat foo.py"), "Done."), env=hela_vars)
    assert res.returncode == 0 and "..." in api.texts()[1]   # the request after the tool ran

Used by tests/test_hooks_claude.py, tests/test_mcp_claude.py and tests/test_agent_binaries.py
(tests/test_agent_fakes.py checks the fakes themselves).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from hela_cli.testing.agents import (FINAL_TEXT, FakeAPI, Shell, ToolUse, agent_binary, claude_env, claude_session,
                                     codex_env, codex_session, fake_gemini_api, fake_messages_api, fake_responses_api,
                                     gemini_env, gemini_session, run_claude, steps, tool_rounds)
from tests.conftest import REPO, missing
from tests.reliability import PY

AGENTS_DIR = REPO / ".agents"

__all__ = ["AGENTS_DIR", "FINAL_TEXT", "FakeAPI", "Shell", "ToolUse", "claude_env", "claude_session", "codex_env",
           "codex_session", "fake_gemini_api", "fake_messages_api", "fake_responses_api", "gemini_env",
           "gemini_session", "captured", "hook_log", "install_hooks", "require_agent", "require_claude", "run_claude", "steps",
           "tool_rounds", "wait_for_log"]


def require_agent(name: str) -> Path:
    """The ``claude`` / ``codex`` / ``gemini`` binary, or skip (no ``CI``) / fail (in CI) with the reason."""
    path, why = agent_binary(name, AGENTS_DIR)
    if path is None:
        missing(why)
    return path


def require_claude() -> Path:
    return require_agent("claude")


def install_hooks(agent: str, project: Path, env: dict[str, str]) -> dict[str, Any]:
    """``hela hooks install AGENT --scope project --json`` run in ``project`` with ``env`` (hela's own:
    ``HELA_HOME``, ``HELA_DB``, ...); the install's JSON."""
    res = subprocess.run([PY, "-m", "hela_cli", "hooks", "install", agent, "--scope", "project", "--json"],
                         cwd=str(project), env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def hook_log(hela_home: Path) -> list[dict[str, Any]]:
    """The rows of the hook log in ``hela_home`` (none before the first hook ran)."""
    path = hela_home / "hooks.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_for_log(hela_home: Path, pred: Callable[[list[dict[str, Any]]], bool],
                 timeout: float = 180) -> list[dict[str, Any]]:
    """Poll the hook log until ``pred(rows)`` holds or ``timeout`` passed; the rows."""
    end = time.time() + timeout
    while True:
        rows = hook_log(hela_home)
        if pred(rows) or time.time() > end:
            return rows
        time.sleep(0.5)


def captured(sid: str) -> Callable[[list[dict[str, Any]]], bool]:
    """A :func:`wait_for_log` predicate: a capture of session ``sid`` ended ``ok`` or ``empty``, and every
    capture of it handed to a detached child (``detached``, or a ``timeout`` with a ``child``) has a later
    result of its own."""
    def done(rows: list[dict[str, Any]]) -> bool:
        mine = [r for r in rows if r.get("session") == sid and r.get("role") == "capture"]
        return (any(r.get("result") in ("ok", "empty") for r in mine)
                and all(any(r2.get("time", 0) > r.get("time", 0) and r2.get("result") != "detached"
                            and not r2.get("child") for r2 in mine)
                        for r in mine if r.get("result") == "detached" or r.get("child")))
    return done
