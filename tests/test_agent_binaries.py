"""hela's real hooks in the real Codex CLI and Gemini CLI binaries, offline (tests/agents_support.py): ``hela
hooks install codex|gemini --scope project`` in a git project, then two headless sessions against a fake
model API (Codex: a Responses API model provider; Gemini: ``GOOGLE_GEMINI_BASE_URL``), ``HOME`` and hela's
database in a temporary folder.

Session 1 states a fact, pastes a key and runs a shell command: hela's capture hook stores the fact, never the
key, and the transcript the agent wrote parses as the format hela reads (so a format change of a new agent
version fails here). Session 2, a new session, asks about the fact: the request the fake model receives
carries it, put there by hela's start or prompt hook; what hela injected is never stored as a memory.
The binaries are ``make agents``'s pinned versions; without one the test skips, and fails under CI.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from hela_cli.formats import detect_format, parse_file
from tests.agents_support import (FINAL_TEXT, captured, codex_session, gemini_session, hook_log, install_hooks,
                                  require_agent, wait_for_log)
from tests.conftest import REPO
from tests.reliability import db_state, hela_env

FACT = "Our deploy bucket is called frosty-otter-assets and it lives in eu-west-3."
KEY = "sk-proj-" + "Qm4vTz8" * 6   # made up, in the OpenAI key format
PROMPT = f"Remember this for later: {FACT} My OpenAI key for the tests is {KEY}. Which Python do we run?"
QUESTION = "What is our deploy bucket called, and where does it live?"
HEADERS = ("Memories from earlier sessions", "hela memory of this project")   # hela's context, as injected


def _setup(tmp_path: Path, agent: str) -> dict[str, Any]:
    binary = require_agent({"codex": "codex", "gemini": "gemini"}[agent])
    proj = tmp_path / "shop"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    db = tmp_path / "hela.db"
    # budgets raised: on a busy shared machine the 2 s default is missed (test_hooks_run checks the budget)
    henv = hela_env(tmp_path, db, HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_CAPTURE_BUDGET_S="120")
    installed = install_hooks(agent, proj, henv)
    assert Path(installed["path"]).is_relative_to(proj)
    return {"agent": agent, "binary": binary, "proj": proj, "db": db, "hela_home": tmp_path / "home",
            "home": tmp_path / "agent-home",
            "env": {k: v for k, v in henv.items() if k.startswith(("HELA_", "PYTHON"))}}


def _new_session(s: dict[str, Any], before: set[str]) -> str:
    starts = [r["session"] for r in hook_log(s["hela_home"])
              if r.get("agent") == s["agent"] and r.get("event") == "SessionStart" and r.get("session")]
    new = [sid for sid in starts if sid not in before]
    assert new, hook_log(s["hela_home"])[-6:]
    return new[-1]


def _remember_then_recall(s: dict[str, Any], session: Callable[..., Any], events: dict[str, str]) -> str:
    """Both sessions and the checks they share; session 1's id."""
    res, api = session(s["binary"], s["home"], s["proj"], PROMPT, env=s["env"])
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    assert FINAL_TEXT in res.stdout, res.stdout[-2000:]
    assert any(PROMPT in t for t in api.texts())
    sid1 = _new_session(s, set())
    rows = wait_for_log(s["hela_home"], captured(sid1))
    mine = {(r["event"], r["result"]) for r in rows if r.get("session") == sid1}
    assert (events["start"], "empty") in mine, mine          # a new project: nothing to brief yet
    assert (events["capture"], "ok") in mine, rows[-8:]      # the turn was captured by hela's capture hook
    assert not [r for r in rows if r.get("result") == "error"], rows

    con = sqlite3.connect(s["db"])
    texts = [t for (t,) in con.execute("SELECT text FROM nodes")]
    con.close()
    assert any("frosty-otter-assets" in t for t in texts) and any("[REDACTED:" in t for t in texts), texts
    assert any(t.startswith("[tool] ") and "python3 --version" in t for t in texts), texts
    for path in (s["db"], Path(f"{s['db']}-wal")):
        if path.exists():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in (s["hela_home"] / "hooks.log").read_text()

    res, api = session(s["binary"], s["home"], s["proj"], QUESTION, reply="It is frosty-otter-assets in eu-west-3.",
                       env=s["env"])
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    asked = [t for t in api.texts() if QUESTION in t]
    assert asked and "frosty-otter-assets" in asked[0], api.texts()[:1]   # the fact reached the model
    assert any(h in asked[0] for h in HEADERS), asked[0][:3000]          # ... through hela
    assert KEY not in api.text()
    sid2 = _new_session(s, {sid1})
    rows = wait_for_log(s["hela_home"], captured(sid2))
    injected = [r for r in rows if r.get("session") == sid2 and r.get("event") in (events["start"], events["prompt"])
                and r.get("result") == "ok"]
    assert injected, rows[-8:]     # hela's start brief or prompt recall printed what reached the model
    con = sqlite3.connect(s["db"])
    texts = [t for (t,) in con.execute("SELECT text FROM nodes")]
    con.close()
    assert any(QUESTION in t for t in texts)                             # session 2 was captured too
    assert not [t for t in texts if any(h in t for h in HEADERS)], texts  # never what hela injected
    assert KEY not in repr(db_state(s["db"]))
    return sid1


def _check_transcript(path: Path, fmt: str) -> None:
    """Session 1's transcript, read by the parser ``hela ingest`` and the hooks use."""
    assert detect_format(path) == fmt
    [conv] = parse_file(path)
    texts = [t.text for t in conv.turns]
    assert texts[0] == PROMPT and texts[-1] == FINAL_TEXT, texts
    assert any(t.startswith("[tool] ") and "python3 --version" in t for t in texts), texts


def test_codex_hooks_remember_across_sessions(tmp_path: Path) -> None:
    s = _setup(tmp_path, "codex")
    sid1 = _remember_then_recall(s, codex_session, {"start": "SessionStart", "prompt": "UserPromptSubmit",
                                                    "capture": "Stop"})
    [rollout] = list((s["home"] / ".codex" / "sessions").rglob(f"rollout-*{sid1}.jsonl"))
    _check_transcript(rollout, "codex")


def test_gemini_hooks_remember_across_sessions(tmp_path: Path) -> None:
    s = _setup(tmp_path, "gemini")
    _remember_then_recall(s, gemini_session, {"start": "SessionStart", "prompt": "BeforeAgent",
                                              "capture": "AfterAgent"})
    chats = [p for p in (s["home"] / ".gemini" / "tmp").rglob("session-*.json*") if PROMPT in p.read_text()]
    assert len(chats) == 1, chats
    _check_transcript(chats[0], "gemini")


@pytest.mark.parametrize("agent, variable", [("claude", "CLAUDE_CODE_VERSION"), ("codex", "CODEX_VERSION"),
                                             ("gemini", "GEMINI_CLI_VERSION")])
def test_the_binaries_are_the_pinned_versions(agent: str, variable: str) -> None:
    """``make agents`` installed the version the Makefile pins (a test above passing with another version
    says nothing about the pinned one)."""
    binary = require_agent(agent)
    pinned = re.search(rf"^{variable} \?= (\S+)$", (REPO / "Makefile").read_text(), re.M).group(1)
    res = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert re.search(rf"(^|\s){re.escape(pinned)}(\s|$)", res.stdout), \
        f"{binary} is {res.stdout.strip()!r}, the Makefile pins {pinned}: rm -rf .agents && make agents"
