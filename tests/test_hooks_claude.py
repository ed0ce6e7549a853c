"""End to end with the real Claude Code binary, offline (tests/agents_support.py): ``hela hooks install
claude-code --scope project`` in a git project, then ``claude -p`` sessions against a fake Messages API.

Session 1 states a fact and pastes an API key; session 2 asks about the fact: the request the API receives
carries the fact, injected by hela's hooks; the key is in no table, not in the database file's bytes and not
in the hook log; a second capture of session 1 adds nothing. With the database made unwritable a session
still completes and ``hela hooks status`` reports the failure. A session running ``export PGPASSWORD=...``
and ``psql "... password=..."`` stores neither password. A fact changed in a later session comes to the
third session marked ``(superseded by #N, DATE)``, marked by hand (``hela supersede``) or detected at capture.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.agents_support import (ToolUse, captured, claude_env, fake_messages_api, hook_log, require_claude,
                                  run_claude, wait_for_log)
from tests.reliability import PY, db_state, hela_env

FACT = "Our deploy bucket is called frosty-otter-assets and it lives in eu-west-3."
KEY = "sk-proj-" + "Qm4vTz8" * 6   # made up, in the OpenAI key format
QUESTION = "What is our deploy bucket called, and where does it live?"


@pytest.fixture()
def setup(tmp_path):
    claude = require_claude()
    proj = tmp_path / "shop"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    db = tmp_path / "hela.db"
    # budgets raised: on a busy shared machine the 2 s default is missed (test_hooks_run checks the budget)
    henv = hela_env(tmp_path, db, HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_CAPTURE_BUDGET_S="120")
    res = subprocess.run([PY, "-m", "hela_cli", "hooks", "install", "claude-code", "--scope", "project", "--json"],
                         cwd=str(proj), env=henv, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    installed = json.loads(res.stdout)
    assert installed["path"] == str(proj / ".claude" / "settings.json")
    return {"claude": claude, "proj": proj, "db": db, "henv": henv, "home": tmp_path / "claude-home",
            "log": tmp_path / "home" / "hooks.log"}


def log_rows(setup: dict[str, Any]) -> list[dict[str, Any]]:
    return hook_log(setup["log"].parent)


def wait_for(setup: dict[str, Any], pred: Any, timeout: float = 180) -> list[dict[str, Any]]:
    """Poll the hook log until ``pred(rows)`` holds (a capture may still be running after claude exits)."""
    return wait_for_log(setup["log"].parent, pred, timeout)


def session(setup: dict[str, Any], api: Any, prompt: str) -> tuple[subprocess.CompletedProcess, str]:
    env = claude_env(setup["home"], api, **{k: v for k, v in setup["henv"].items() if k.startswith(("HELA_", "PYTHON"))})
    res = run_claude(setup["claude"], prompt, setup["proj"], env, 300)
    assert res.returncode == 0, (res.stdout, res.stderr)
    rows = log_rows(setup)
    sid = next(r["session"] for r in reversed(rows) if r.get("event") == "SessionStart")
    return res, sid


def test_two_sessions_remember_the_fact_never_the_key(setup):
    with fake_messages_api("Noted, I will remember that.") as api:
        _, sid1 = session(setup, api, f"Remember this for later: {FACT} Also, my OpenAI key is {KEY} for the tests.")
    rows = wait_for(setup, captured(sid1))
    events = {(r["event"], r["result"]) for r in rows if r.get("session") == sid1}
    assert ("SessionStart", "empty") in events          # a new project: nothing to brief yet
    assert any(e == "Stop" and res == "ok" for e, res in events), events   # the turn was captured
    assert not [r for r in rows if r.get("result") in ("error", "timeout")], rows

    con = sqlite3.connect(setup["db"])
    texts = [t for (t,) in con.execute("SELECT text FROM nodes")]
    con.close()
    assert any("frosty-otter-assets" in t for t in texts) and any("[REDACTED:" in t for t in texts), texts
    for path in (setup["db"], Path(str(setup["db"]) + "-wal")):
        if path.exists():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in repr(db_state(setup["db"]))
    assert KEY not in setup["log"].read_text()

    with fake_messages_api("It is frosty-otter-assets in eu-west-3.") as api:
        _, sid2 = session(setup, api, QUESTION)
        first = api.texts()[0] if api.texts() else ""
        main = [t for t in api.texts() if QUESTION in t]
    assert sid2 != sid1
    assert main and "frosty-otter-assets" in main[0], first[:2000]
    assert "Memories from earlier sessions" in main[0] or "hela memory of this project" in main[0]
    assert KEY not in "".join(api.texts())
    rows = wait_for(setup, captured(sid2))
    start = next(r for r in rows if r.get("session") == sid2 and r["event"] == "SessionStart")
    prompt = next(r for r in rows if r.get("session") == sid2 and r["event"] == "UserPromptSubmit")
    # the brief brought the fact (session 1's task in its gist); the prompt recall does not repeat a memory
    # the session was already shown (once per session at most)
    assert start["result"] == "ok" and start["memories"], (start, prompt)
    assert prompt["result"] in ("ok", "empty") and not set(start["memories"]) & set(prompt.get("memories") or [])

    # a second capture of session 1's transcript adds nothing
    transcript = next(setup["home"].glob(f".claude/projects/*/{sid1}.jsonl"))
    before = db_state(setup["db"])
    payload = {"session_id": sid1, "transcript_path": str(transcript), "cwd": str(setup["proj"]),
               "hook_event_name": "SessionEnd", "reason": "other"}
    res = subprocess.run([PY, "-m", "hela_cli", "hook", "SessionEnd", "--agent", "claude-code"],
                         input=json.dumps(payload).encode(), env=setup["henv"], cwd=str(setup["proj"]),
                         capture_output=True, timeout=120)
    assert res.returncode == 0 and res.stdout == b""
    end = log_rows(setup)[-1]
    assert end["result"] in ("detached", "timeout") and end["child"]   # Claude Code allows SessionEnd 1.5 s:
    # a detached child captures (handed over at once, or at the limit when start-up took it all)
    rows = wait_for(setup, lambda rows: any(r.get("pid") == end["child"] for r in rows))
    assert next(r for r in rows if r.get("pid") == end["child"])["result"] == "empty"
    assert db_state(setup["db"]) == before


@contextlib.contextmanager
def unwritable(db: Path) -> Iterator[str]:
    """The database file made unwritable: immutable (``chattr +i``, which also stops root), else read-only
    permissions for a user other than root; as root without chattr, held under another process's write lock
    (the writes then wait and fail)."""
    res = subprocess.run(["chattr", "+i", str(db)], capture_output=True)
    if res.returncode == 0:
        try:
            yield "immutable"
        finally:
            subprocess.run(["chattr", "-i", str(db)], check=True)
        return
    if os.geteuid() != 0:
        mode = db.stat().st_mode
        db.chmod(0o444)
        db.parent.chmod(0o555)
        try:
            yield "read-only"
        finally:
            db.parent.chmod(0o755)
            db.chmod(mode)
        return
    con = sqlite3.connect(db, timeout=60)
    con.execute("BEGIN EXCLUSIVE")
    try:
        yield "locked"
    finally:
        con.rollback()
        con.close()


def test_unwritable_database_session_completes_status_reports(setup):
    with fake_messages_api("Noted.") as api:
        _, sid1 = session(setup, api, f"Remember: {FACT}")
    wait_for(setup, captured(sid1))
    before = db_state(setup["db"])
    env = {**setup["henv"], "HELA_HOOKS_BUDGET_S": "5", "HELA_HOOKS_CAPTURE_BUDGET_S": "5"}
    with unwritable(setup["db"]) as how:
        with fake_messages_api("Sure.") as api:
            res = run_claude(setup["claude"], QUESTION, setup["proj"],
                             claude_env(setup["home"], api, **{k: v for k, v in env.items()
                                                              if k.startswith(("HELA_", "PYTHON"))}), 300)
            assert api.texts(), "the session never reached the API"
        assert res.returncode == 0, (how, res.stdout, res.stderr)
        assert res.stdout.strip() == "Sure."
        # a capture past its budget handed its work to a detached child: it must fail too, before the
        # database is writable again
        wait_for(setup, lambda rows: all(any(r2.get("time", 0) > r["time"] and r2.get("session") == r.get("session")
                                                 and r2.get("role") == "capture" and r2.get("result") != "timeout"
                                                 for r2 in rows)
                                         for r in rows if r.get("result") == "timeout" and r.get("child")))
    rows = log_rows(setup)
    failures = [r for r in rows if r.get("result") in ("error", "timeout")]
    assert failures, (how, rows[-6:])
    assert db_state(setup["db"]) == before
    st = subprocess.run([PY, "-m", "hela_cli", "hooks", "status", "--json"], cwd=str(setup["proj"]),
                        env=setup["henv"], capture_output=True, text=True, timeout=120)
    assert st.returncode == 0, st.stderr
    inst = next(i for i in json.loads(st.stdout)["installs"] if i["agent"] == "claude-code" and i["scope"] == "project")
    assert inst["installed"]
    reported = [e["last_failure"] for e in inst["events"] if e["last_failure"]]
    assert reported and {r["result"] for r in reported} <= {"error", "timeout"}


# --------------------------------------------------------------------------- a database password (issue 40)
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


def test_a_database_password_is_stored_nowhere(setup):
    """The scripted model runs ``export PGPASSWORD=...`` and a ``psql`` with a libpq keyword string holding a
    password (issue 40): hela's hooks capture both tool calls, neither password is in any table, in the bytes
    of the database file or its WAL, or in the hook log."""
    db = setup["db"]
    with fake_messages_api(model) as api:
        res = run_claude(setup["claude"], "Connect to the shop database and check it.", setup["proj"],
                         claude_env(setup["home"], api, **{k: v for k, v in setup["henv"].items()
                                                          if k.startswith(("HELA_", "PYTHON"))}),
                         300, "--allowedTools", "Bash")
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert "toolu_psql" in set().union(*(_results(b) for b in api.messages()))   # both commands ran
    rows = wait_for(setup, lambda rows: any(r.get("role") == "capture" and r.get("result") == "ok" for r in rows))
    assert not [r for r in rows if r.get("result") in ("error", "timeout")], rows

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    texts = [t for (t,) in con.execute("SELECT text FROM nodes")]
    con.close()
    # both commands were captured (the check below can fail), with the passwords replaced
    assert any("export PGPASSWORD=[REDACTED:password]" in t for t in texts), texts
    assert any("password=[REDACTED:password]" in t and "psql" in t for t in texts), texts
    log = setup["log"].read_text()
    for pw in (ENV_PW, CONN_PW):
        assert _tables_holding(db, pw) == [], pw
        assert pw not in repr(db_state(db))
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-journal")):
            if path.exists():
                assert pw.encode() not in path.read_bytes(), (pw, path)
        assert pw not in log


# ------------------------------------------------------------------------------------------ recall by file
REASON = "floats lose cents on refunds"
API_PY = "def refund(amount):\n    return float(amount)\n"


def _script(path: str, tag: str, prompt_word: str, edit: dict[str, str], final: str) -> Any:
    """A fake model that reads ``path``, edits it, then says ``final``; other requests (Claude Code's own side
    calls) get a short text."""
    def reply(body: dict[str, Any]) -> Any:
        done = _results(body)
        if f"toolu_edit_{tag}" in done:
            return final
        if f"toolu_read_{tag}" in done:
            return ToolUse("Edit", {"file_path": path, **edit}, id=f"toolu_edit_{tag}")
        if body.get("tools") and prompt_word in json.dumps(body.get("messages")):
            return ToolUse("Read", {"file_path": path}, id=f"toolu_read_{tag}")
        return "ok"

    return reply


def test_edit_of_a_file_brings_the_reason_stated_in_an_earlier_session(setup):
    """Session 1 edits billing/api.py and says why; in session 2 the model's Edit of that file makes hela's
    PreToolUse hook inject the reason before the edit runs: the request after the tool call carries it (the
    start brief and the prompt recall are off here, so only the recall by file can bring it)."""
    api = setup["proj"] / "billing" / "api.py"
    api.parent.mkdir()
    api.write_text(API_PY)
    path = str(api)
    env_keys = ("HELA_", "PYTHON")
    with fake_messages_api(_script(path, "one", "Decimal", {"old_string": "float(amount)", "new_string": "Decimal(amount)"},
                                   f"Switched billing/api.py to Decimal because {REASON}.")) as api1:
        env = claude_env(setup["home"], api1, **{k: v for k, v in setup["henv"].items() if k.startswith(env_keys)})
        res = run_claude(setup["claude"], "Use Decimal for refunds in billing/api.py.", setup["proj"], env, 300,
                         "--permission-mode", "acceptEdits")
        assert res.returncode == 0, (res.stdout, res.stderr)
    assert "Decimal(amount)" in api.read_text()   # the scripted Edit ran
    sid1 = next(r["session"] for r in reversed(log_rows(setup)) if r.get("event") == "SessionStart")
    wait_for(setup, captured(sid1))

    quiet = {**setup["henv"], "HELA_HOOKS_START_TOKENS": "0", "HELA_HOOKS_PROMPT_MIN_SCORE": "99"}
    with fake_messages_api(_script(path, "two", "rounding", {"old_string": "Decimal(amount)",
                                                             "new_string": "Decimal(amount).quantize(Decimal('0.01'))"},
                                   "Rounded.")) as api2:
        env = claude_env(setup["home"], api2, **{k: v for k, v in quiet.items() if k.startswith(env_keys)})
        res = run_claude(setup["claude"], "Add rounding to the refund function.", setup["proj"], env, 300,
                         "--permission-mode", "acceptEdits")
        assert res.returncode == 0, (res.stdout, res.stderr)
        bodies = api2.messages()
    before = [json.dumps(b) for b in bodies if "toolu_read_two" in _results(b)
              and "toolu_edit_two" not in _results(b)]
    after = [json.dumps(b) for b in bodies if "toolu_edit_two" in _results(b)]
    assert before and after, [(_results(b), str(b)[:200]) for b in bodies]
    assert REASON not in before[0]                     # not in the context before the edit was asked for
    assert "PreToolUse:Edit hook additional context" in after[0] and REASON in after[0], after[0][-3000:]
    assert "quantize" in api.read_text()
    rows = log_rows(setup)
    sid2 = next(r["session"] for r in reversed(rows) if r.get("event") == "SessionStart")
    path_rows = [r for r in rows if r.get("session") == sid2 and r.get("event") == "PreToolUse"]
    assert [r["result"] for r in path_rows] == ["ok"] and path_rows[0]["tokens"] > 0 and path_rows[0]["memories"]


# ------------------------------------------------------------------------------------------ facts that change
CHANGED_OLD = "Context for later: our model server is vLLM 0.6 behind nginx, and the GPU box is called orca."
CHANGED_NEW = "Update: we replaced vLLM with SGLang last week because of the prefix cache; orca still hosts it."
CHANGED_QUESTION = "Which inference server does our model run on now?"
CHANGED_OLD_WORDS = "vLLM 0.6 behind nginx"


def _lines(texts: list[str]) -> list[str]:
    """The lines of the requests' text (``api.texts()`` are JSON: a newline inside a string is ``\\n``)."""
    return [line for t in texts for line in re.split(r"\n|\\n", t)]


def _ids(db) -> tuple[int, int]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT id, text FROM nodes WHERE speaker = 'user' OR role = 'user'").fetchall()
    finally:
        con.close()
    old = next(i for i, t in rows if CHANGED_OLD_WORDS in t)
    new = next(i for i, t in rows if "SGLang" in t)
    return old, new


def _two_sessions(setup: dict[str, Any], new_prompt: str) -> tuple[int, int]:
    """Session 1 states the fact, session 2 changes it (``new_prompt``); both captured. The two memories' ids."""
    with fake_messages_api("Noted.") as api:
        _, sid1 = session(setup, api, CHANGED_OLD)
    wait_for(setup, captured(sid1))
    with fake_messages_api("Noted, SGLang now.") as api:
        _, sid2 = session(setup, api, new_prompt)
    wait_for(setup, captured(sid2))
    return _ids(setup["db"])


def _third_session(setup: dict[str, Any], new: int) -> tuple[list[str], list[dict[str, Any]], str]:
    """Session 3 asks which server: the request carries the new fact, and every line holding the old fact
    carries its mark ``(superseded by #new, DATE)``. The request texts, the hook log after its capture, its id."""
    with fake_messages_api("SGLang, on orca.") as api:
        _, sid3 = session(setup, api, CHANGED_QUESTION)
        texts = api.texts()
    main = [t for t in texts if CHANGED_QUESTION in t]
    assert main, texts[:1]
    assert "SGLang" in main[0]                       # the new fact is in the request
    lines = [line for line in _lines(texts) if "vLLM 0.6" in line]
    assert lines, main[0][:3000]                     # history stays: the old fact is recalled ...
    mark = re.compile(rf"\(superseded by #{new}, \d{{4}}-\d{{2}}-\d{{2}}\)")
    assert all(mark.search(line) for line in lines), lines   # ... and only with its mark
    return texts, wait_for(setup, captured(sid3)), sid3


def test_three_sessions_the_changed_fact_comes_marked(setup):
    """Facts that change (issue 38): session 1 states a fact, session 2 changes it, the change is marked with
    `hela supersede` between sessions (the explicit path), session 3 asks: the request carries the new fact,
    and the old one only with its mark `(superseded by #N, DATE)`."""
    old, new = _two_sessions(setup, CHANGED_NEW)
    marked = subprocess.run([PY, "-m", "hela_cli", "supersede", str(old), str(new), "--json"], env=setup["henv"],
                            cwd=str(setup["proj"]), capture_output=True, text=True, timeout=120)
    assert marked.returncode == 0, marked.stderr
    assert json.loads(marked.stdout)["mark"]["status"] == "superseded"

    _, rows, sid3 = _third_session(setup, new)
    prompt = next(r for r in rows if r.get("session") == sid3 and r["event"] == "UserPromptSubmit")
    start = next(r for r in rows if r.get("session") == sid3 and r["event"] == "SessionStart")
    # the new fact came through the brief (session 2's task in its gist) or the prompt recall, once
    assert new in (prompt.get("memories") or []) + (start.get("memories") or []), (start, prompt)


CHANGED_DISTRACTOR = "Unrelated: the CI runs on GitHub Actions with a self-hosted runner."


def _marks(db) -> list[tuple[int, int, str, str]]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT old_id, new_id, detector, status FROM supersessions ORDER BY old_id").fetchall()
    finally:
        con.close()


def test_three_sessions_the_change_is_detected_at_capture(setup):
    """Facts that change (issue 38), nothing marked by hand: session 2's capture detects that it replaces
    session 1's fact (``supersession.detect``, on by default), and session 3's request carries the new fact
    and the old one only with its mark. Session 2's unrelated sentence (the CI) and its continuity ("orca
    still hosts it") bring no other mark."""
    old, new = _two_sessions(setup, f"{CHANGED_NEW} {CHANGED_DISTRACTOR}")
    # the one automatic mark: old -> new, certain (a replace cue names the old value), by the model-free cue
    assert _marks(setup["db"]) == [(old, new, "cue", "superseded")]

    texts, _, _ = _third_session(setup, new)
    assert not [line for line in _lines(texts) if "GitHub Actions" in line and "superseded" in line]
    assert _marks(setup["db"]) == [(old, new, "cue", "superseded")]   # the question marks nothing


# ------------------------------------------------------------ facts that change, said the way people say them
UNNAMED_OLD = "Context for later: our team standup is at 9:30 every weekday, on Zoom."
UNNAMED_NEW = "From now on the standup is at 10:15 instead, same Zoom link."
UNNAMED_QUESTION = "What time is our team standup?"

PLAN_PROMPT = "Plan the export API of the reading app, in three short steps."
PLAN = ("Plan: 1. Version the export API with an Accept-Version header. 2. Keep the finished exports in S3 "
        "for 7 days. 3. Run the export jobs on Celery.")
REVERSAL = "Actually, drop the header versioning: put the version in the path, /v1/exports."
REVERSAL_QUESTION = "How is the export API versioned?"


def _node(db, needle: str, role: str) -> int:
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT id, text FROM nodes WHERE role = ? OR speaker = ?", (role, role)).fetchall()
    finally:
        con.close()
    return next(i for i, t in rows if needle in t)


def _three_sessions_marked(setup: dict[str, Any], first: tuple[str, str], second: tuple[str, str], old_words: str,
                           old_role: str, new_words: str, question: str) -> None:
    """Session 1 (prompt, the model's reply), session 2 (prompt, reply), both captured: the capture of session 2
    marks the memory holding ``old_words`` (said by ``old_role``) superseded by the user's turn holding
    ``new_words``; session 3 asks ``question`` and every line of its request holding ``old_words`` carries the
    mark ``(superseded by #new, DATE)``."""
    with fake_messages_api(first[1]) as api:
        _, sid1 = session(setup, api, first[0])
    wait_for(setup, captured(sid1))
    with fake_messages_api(second[1]) as api:
        _, sid2 = session(setup, api, second[0])
    wait_for(setup, captured(sid2))
    old, new = _node(setup["db"], old_words, old_role), _node(setup["db"], new_words, "user")
    assert [m for m in _marks(setup["db"]) if m[:2] == (old, new) and m[3] == "superseded"], _marks(setup["db"])
    with fake_messages_api("Noted.") as api:
        session(setup, api, question)
        texts = api.texts()
    assert [t for t in texts if question in t], texts[:1]
    lines = [line for line in _lines(texts) if old_words in line]
    assert lines, texts[-1][:3000]                   # the old fact is recalled (history stays) ...
    mark = re.compile(rf"\(superseded by #{new}, \d{{4}}-\d{{2}}-\d{{2}}\)")
    assert all(mark.search(line) for line in lines), lines   # ... and only with its mark


def test_a_change_that_does_not_name_the_old_value_reaches_the_next_session_marked(setup):
    """Issue 45: "from now on ... instead" names only the new time; the capture of session 2 marks the standup
    time of session 1 superseded (a time-of-day slot tied to the change words), and session 3 sees it marked."""
    _three_sessions_marked(setup, (UNNAMED_OLD, "Noted."), (UNNAMED_NEW, "Noted."), "9:30", "user", "10:15",
                           UNNAMED_QUESTION)


def test_the_users_reversal_of_the_assistants_plan_reaches_the_next_session_marked(setup):
    """Issue 45: in an agent session the user and the assistant speak for one project. The assistant's plan
    (session 1, a long answer read by sentence) decided header versioning; the user drops it in session 2: the
    plan is marked superseded by the user's turn and session 3 sees it marked."""
    _three_sessions_marked(setup, (PLAN_PROMPT, PLAN), (REVERSAL, "Done: the version is in the path now."),
                           "Accept-Version header", "assistant", "drop the header versioning", REVERSAL_QUESTION)


def test_two_sessions_through_the_managed_server(setup):
    """hooks.server auto, the default a user gets: the first hook of session 1 starts hela's server; session 2's
    hooks are answered by it, and the fact still reaches the model; the server is stopped afterwards."""
    setup = {**setup, "henv": {**setup["henv"], "HELA_HOOKS_SERVER": "auto"}}
    try:
        with fake_messages_api("Noted, I will remember that.") as api:
            _, sid1 = session(setup, api, f"Remember this for later: {FACT}")
        rows = wait_for(setup, captured(sid1))
        assert any(r.get("session") == sid1 and str(r.get("server", "")).endswith("started") for r in rows), rows
        with fake_messages_api("It is frosty-otter-assets in eu-west-3.") as api:
            _, sid2 = session(setup, api, QUESTION)
            main = [t for t in api.texts() if QUESTION in t]
        assert main and "frosty-otter-assets" in main[0]
        rows = wait_for(setup, captured(sid2))
        mine = [r for r in rows if r.get("session") == sid2]
        start = next(r for r in mine if r["event"] == "SessionStart")
        prompt = next(r for r in mine if r["event"] == "UserPromptSubmit")
        assert start["server"] == "managed" and prompt["server"] == "managed", mine
        assert any(r["event"] == "Stop" and r.get("server") == "managed" for r in mine), mine
        assert not [r for r in rows if r.get("result") in ("error", "timeout")], rows
    finally:
        res = subprocess.run([PY, "-m", "hela_cli", "hooks", "stop", "--json"], env=setup["henv"],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and json.loads(res.stdout)["stopped"], res.stdout + res.stderr
