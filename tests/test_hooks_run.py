"""``hela hook EVENT``: every event of the three agents with their documented payloads, and every bad input
(exit 0, nothing on stdout, nothing stored, one hook-log line). Each hook is a real ``hela`` process, as the
agents run it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from hela_cli.config import Config
from hela_cli.hooks.agents import AGENTS
from tests.hooks_support import PROMPT, base, child_line, context_of, hook, project  # noqa: F401 - the fixture
from tests.reliability import PY, db_state, file_digest

# ------------------------------------------------------------------------------------------ start / prompt
@pytest.mark.parametrize("agent", list(AGENTS))
def test_session_start_brief(project, agent):
    payload = base(project, "SessionStart", source="startup")
    if agent == "gemini":
        payload["timestamp"] = "2026-12-04T10:00:00.000Z"
    res, lines = hook(project, "SessionStart", payload, agent)
    text = context_of(res, "SessionStart")
    assert "Recent sessions:" in text and "port 6543" in text and "[#1]" in text
    assert f"hela memories -s {project['space']}" in text
    assert len(text) // 4 <= Config().hooks.start_tokens
    assert lines[-1]["result"] == "ok" and lines[-1]["space"] == project["space"] and len(lines) == 1


@pytest.mark.parametrize("agent, event", [("claude-code", "UserPromptSubmit"), ("codex", "UserPromptSubmit"),
                                          ("gemini", "BeforeAgent")])
def test_prompt_recall_logs_what_it_injected_and_learns_nothing_yet(project, agent, event):
    before = db_state(project["db"])
    res, lines = hook(project, event, base(project, event, prompt=PROMPT), agent)
    text = context_of(res, event)
    assert "port 6543" in text and "[#1 2026-11-01 user]" in text
    assert "blue-green" not in text   # below the relevance floor: no padding
    entry = lines[-1]
    assert entry["result"] == "ok" and entry["recall_id"] and set(entry["memories"]) <= {1, 2, 3, 4}
    after = db_state(project["db"])
    assert len(after["asks"]) == len(before["asks"]) + 1   # the recall the reply's echo will name (hooks.feedback)
    assert after["edges"] == before["edges"] and after["meta"] == before["meta"]   # no Eq.1 at the prompt
    con = sqlite3.connect(project["db"])
    kind, memories = con.execute("SELECT kind, memories FROM asks ORDER BY id DESC LIMIT 1").fetchone()
    con.close()
    assert kind == "recall" and json.loads(memories) == entry["memories"]   # learnt from the injected only


def test_prompt_nothing_relevant_or_trivial_prints_nothing(project):
    for prompt in ("ok", "yes, go on", "What is a good recipe for banana bread with walnuts?"):
        before = db_state(project["db"])
        res, lines = hook(project, "UserPromptSubmit", base(project, "UserPromptSubmit", prompt=prompt))
        assert res.returncode == 0 and res.stdout == b"", res.stdout
        assert lines[-1]["result"] == "empty"
        assert db_state(project["db"]) == before   # no recall logged, nothing learnt


def test_prompt_of_the_current_session_is_not_repeated(project):
    payload = base(project, "UserPromptSubmit", prompt=PROMPT, session_id="earlier-session")
    res, lines = hook(project, "UserPromptSubmit", payload)
    assert res.stdout == b"" and lines[-1]["result"] == "empty"


def test_secret_in_prompt_is_redacted_before_the_asks_log(project):
    key = "sk-ant-api03-" + "Zq7" * 12
    res, lines = hook(project, "UserPromptSubmit", base(project, "UserPromptSubmit", prompt=f"{PROMPT} my key is {key}"))
    assert "port 6543" in context_of(res, "UserPromptSubmit")
    assert key.encode() not in project["db"].read_bytes()
    assert key not in repr(db_state(project["db"]))
    assert key not in (project["home"] / "hooks.log").read_text()


def test_pinned_space_and_no_database(project, tmp_path):
    res, lines = hook(project, "UserPromptSubmit", base(project, "UserPromptSubmit", prompt=PROMPT), "claude-code",
                      "--space", "elsewhere")
    assert res.stdout == b"" and lines[-1]["result"] == "empty" and lines[-1]["space"] == "elsewhere"
    env = {**project["env"], "HELA_DB": str(tmp_path / "none" / "missing.db")}
    res, lines = hook(project, "SessionStart", base(project, "SessionStart", source="startup"), env=env)
    assert res.stdout == b"" and lines[-1]["result"] == "empty"
    assert not (tmp_path / "none").exists()   # no database created to find out


# ------------------------------------------------------------------------------------------ failures: fail open
BAD = [
    ("empty stdin", "UserPromptSubmit", None, b"", "empty stdin"),
    ("not JSON", "UserPromptSubmit", None, b"{not json", "not JSON"),
    ("JSON list", "SessionStart", None, b"[1, 2]", "not an object"),
    ("prompt not a string", "UserPromptSubmit", {"prompt": 42}, None, "'prompt' is int"),
    ("no prompt", "UserPromptSubmit", {}, None, "no 'prompt'"),
    ("unknown event", "PostToolUse", {"prompt": PROMPT}, None, "unknown event 'PostToolUse'"),
    ("transcript missing", "Stop", {"transcript_path": "/nonexistent/t.jsonl"}, None, "transcript not found"),
    ("no transcript path", "SessionEnd", {"transcript_path": None}, None, "no 'transcript_path'"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_fails_open(project, case):
    _name, event, fields, raw, needle = case
    before = (file_digest(project["db"]), db_state(project["db"]))
    payload = base(project, event, **(fields or {}))
    res, lines = hook(project, event, payload, raw=raw)
    assert res.returncode == 0 and res.stdout == b"", (res.stdout, res.stderr)
    assert b"Traceback" not in res.stderr
    assert len(lines) == 1 and lines[0]["result"] == "error" and needle in lines[0]["detail"], lines
    assert (file_digest(project["db"]), db_state(project["db"])) == before


def test_unknown_agent_and_bad_arguments(project):
    res, lines = hook(project, "SessionStart", base(project, "SessionStart"), "cursor")
    assert res.returncode == 0 and res.stdout == b"" and "unknown agent 'cursor'" in lines[0]["detail"]
    res, lines = hook(project, "SessionStart", base(project, "SessionStart"), "claude-code", "--bogus")
    assert res.returncode == 0 and res.stdout == b"" and "unknown arguments" in lines[0]["detail"]


@pytest.mark.parametrize("what", ["directory", "garbage", "model missing", "bad config"])
def test_database_or_model_broken_fails_open(project, tmp_path, what):
    env = dict(project["env"])
    if what == "directory":
        (tmp_path / "dir.db").mkdir()
        env["HELA_DB"] = str(tmp_path / "dir.db")
    elif what == "garbage":
        (tmp_path / "garbage.db").write_bytes(b"this is not a database" * 100)
        env["HELA_DB"] = str(tmp_path / "garbage.db")
    elif what == "model missing":
        env["HELA_MODELS_DIR"] = str(tmp_path / "no-models")
    else:
        (tmp_path / "bad.yaml").write_text("hooks:\n  budget_s: [1\n")
        env["HELA_CONFIG"] = str(tmp_path / "bad.yaml")
    before = (file_digest(project["db"]), db_state(project["db"]))
    for event, fields in (("SessionStart", {"source": "startup"}), ("UserPromptSubmit", {"prompt": PROMPT})):
        res, lines = hook(project, event, base(project, event, **fields), env=env)
        assert res.returncode == 0 and res.stdout == b"", res.stdout
        assert b"Traceback" not in res.stderr
        assert len(lines) == 1 and lines[0]["result"] == "error", lines
    assert (file_digest(project["db"]), db_state(project["db"])) == before


def test_time_budget_spent_prints_nothing(project):
    env = {**project["env"], "HELA_HOOKS_BUDGET_S": "0.01"}
    before = db_state(project["db"])
    res, lines = hook(project, "UserPromptSubmit", base(project, "UserPromptSubmit", prompt=PROMPT), env=env)
    assert res.returncode == 0 and res.stdout == b""
    assert lines[-1]["result"] == "timeout" and "budget of 0.01 s" in lines[-1]["detail"]
    assert db_state(project["db"]) == before


def test_hook_through_typer_with_global_db(project):
    """``hela --db PATH hook ...`` (global options first) goes through the Typer app, same result."""
    env = {k: v for k, v in project["env"].items() if k != "HELA_DB"}
    res = subprocess.run([PY, "-m", "hela_cli", "--db", str(project["db"]), "hook", "UserPromptSubmit"],
                         input=json.dumps(base(project, "UserPromptSubmit", prompt=PROMPT)).encode(),
                         capture_output=True, env=env, cwd=str(project["dir"]), timeout=120)
    assert "port 6543" in context_of(res, "UserPromptSubmit")


def test_plain_prompt_redaction_skips_the_detector_import():
    """detect-secrets' plugins only run on text with a key-like run of characters (a third of a prompt
    hook's CPU is their import); what they alone would catch is still caught."""
    code = ("import sys; from hela_cli.text.redact import redact; "
            "assert redact('which port does staging use? see src/app/main.py line 12') == "
            "'which port does staging use? see src/app/main.py line 12'; "
            "assert 'detect_secrets' not in sys.modules; "
            "out = redact('twilio SK' + '0123456789abcdef' * 2 + ' end'); "
            "assert 'REDACTED' in out, out; assert 'detect_secrets' in sys.modules")
    res = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


# ------------------------------------------------------------------------------------------ recorded payloads
AGENT_DATA = Path(__file__).resolve().parent / "data" / "agents"
TRANSCRIPTS = {"claude-code": "session.jsonl", "codex": "rollout-*.jsonl", "gemini": "session-*.jsonl"}


def recorded(agent: str) -> list[tuple[str, Path]]:
    """(event, file) of every hook payload the real binary wrote whose event hela installs."""
    return [(p.stem.split("-", 1)[1], p) for p in sorted((AGENT_DATA / agent / "hooks").glob("*.json"))
            if AGENTS[agent].role(p.stem.split("-", 1)[1])]


@pytest.mark.parametrize("agent", list(AGENTS))
def test_every_recorded_event_of_the_real_agents(project, tmp_path, agent):
    """The stdin JSON each real binary gave its hooks, in its order (paths moved to this test's copies):
    start and prompt events answer with their own event name or nothing, captures store the transcript's
    turns once, none of them fails."""
    transcript = tmp_path / "transcripts" / agent / "t.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(next((AGENT_DATA / agent).glob(TRANSCRIPTS[agent])).read_bytes())
    events = recorded(agent)
    # "path": PreToolUse (Claude Code, Codex) / AfterTool (Gemini) of the recorded shell call: no file, nothing
    assert {AGENTS[agent].role(e) for e, _ in events} == {"start", "prompt", "capture", "path"}
    for event, path in events:
        payload = json.loads(path.read_text())
        assert payload["hook_event_name"] == event
        payload.update(transcript_path=str(transcript), cwd=str(project["dir"]))
        res, lines = hook(project, event, payload, agent)
        assert res.returncode == 0, res.stderr
        if lines and lines[0].get("child"):   # SessionEnd: the agent allows 1.5-3 s, a child captures (also
            assert event == "SessionEnd" and len(lines) == 1, lines   # when start-up spent those: timeout)
            assert lines[0]["result"] in ("detached", "timeout"), lines
            lines = [child_line(project, lines[0]["child"])]
        assert len(lines) == 1 and lines[0]["result"] in ("ok", "empty"), (event, lines)
        role = AGENTS[agent].role(event)
        if role == "path":
            assert res.stdout == b"" and lines[0]["detail"] == "no file in the tool call"
        if res.stdout:
            assert role in ("start", "prompt")
            assert json.loads(res.stdout)["hookSpecificOutput"]["hookEventName"] == event
    con = sqlite3.connect(project["db"])
    stored = con.execute("SELECT text FROM nodes WHERE session != 'earlier-session'").fetchall()
    asked = con.execute("SELECT question FROM asks").fetchall()
    con.close()
    assert not any("MARKER" in q for (q,) in asked)   # Gemini's prompt carries the start context: not a query
    assert any("kestrel" in t for (t,) in stored) and not any("sk-proj-abcDEF" in t for (t,) in stored)
    assert b"sk-proj-abcDEF" not in project["db"].read_bytes()
    assert not any("MARKER" in t for (t,) in stored)   # the context hooks injected is never stored


def test_context_an_agent_put_into_the_prompt_is_not_the_query():
    from hela_cli.hooks.context import user_prompt

    assert user_prompt("<hook_context>MARKER-SessionStart-CONTEXT</hook_context>\n\nWhich port?") == "Which port?"
    assert user_prompt("a <system-reminder>x\ny</system-reminder> b") == "a  b"
    assert user_prompt("  plain <b>text</b> ") == "plain <b>text</b>"
