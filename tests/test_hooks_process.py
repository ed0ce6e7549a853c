"""The hook as a process: a stdin never closed, a config file that never loads, the agent's own time limits,
captures piling up on a locked database, and the exit code whatever fails. Every hook here is a real
``hela hook`` process (or, where it says so, :func:`hela_cli.hooks.process.main` called in this process)."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hela_cli.hooks.agents import AGENTS
from tests.hooks_support import PROMPT, TRANSCRIPT, base, context_of, hook, project  # noqa: F401 - the fixture
from tests.reliability import PY


def log_lines(project: dict[str, Any]) -> list[dict[str, Any]]:
    path = project["home"] / "hooks.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def spawn(project: dict[str, Any], event: str, agent: str = "claude-code", env: dict[str, str] | None = None,
          **kw: Any) -> subprocess.Popen:
    return subprocess.Popen([PY, "-m", "hela_cli", "hook", event, "--agent", agent], env=env or project["env"],
                            cwd=str(project["dir"]), stdin=kw.pop("stdin", subprocess.PIPE),
                            stdout=kw.pop("stdout", subprocess.PIPE), stderr=subprocess.PIPE, **kw)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


# ------------------------------------------------------------------------------------------ stdin
def test_stdin_never_closed_fails_open(project):
    """An agent that never writes nor closes stdin: the hook gives up after STDIN_WAIT_S, exit 0, one line."""
    proc = spawn(project, "UserPromptSubmit")
    try:
        rc = proc.wait(timeout=60)
    finally:
        proc.stdin.close()
    assert rc == 0 and proc.stdout.read() == b"" and b"Traceback" not in proc.stderr.read()
    lines = log_lines(project)
    assert len(lines) == 1 and lines[0]["result"] == "error", lines
    assert "stdin not closed within 2 s (nothing read)" in lines[0]["detail"]


def test_payload_written_but_stdin_left_open_still_answers(project):
    """An agent that writes its JSON and keeps stdin open: the whole object is the payload."""
    proc = spawn(project, "UserPromptSubmit")
    proc.stdin.write(json.dumps(base(project, "UserPromptSubmit", prompt=PROMPT)).encode())
    proc.stdin.flush()
    try:
        rc = proc.wait(timeout=120)
    finally:
        proc.stdin.close()
    res = subprocess.CompletedProcess(proc.args, rc, proc.stdout.read(), proc.stderr.read())
    assert "port 6543" in context_of(res, "UserPromptSubmit")
    assert log_lines(project)[-1]["result"] == "ok"


# ------------------------------------------------------------------------------------------ a config that hangs
@pytest.mark.parametrize("agent, event", [("claude-code", "UserPromptSubmit"), ("codex", "SessionEnd")])
def test_config_that_never_loads_is_given_up_before_the_agent_kills_the_hook(project, tmp_path, agent, event):
    """A config file that blocks its reader (a FIFO nobody writes: a hung network mount) holds the hook no
    longer than the agent allows the event (UserPromptSubmit 10 s as hela installs it; Codex cuts SessionEnd
    at 3 s): it exits 0 before, having logged why."""
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    env = {**project["env"], "HELA_CONFIG": str(fifo)}
    payload = base(project, event, prompt=PROMPT, transcript_path=str(TRANSCRIPT))
    t = time.monotonic()
    res, lines = hook(project, event, payload, agent, env=env)
    took = time.monotonic() - t
    assert res.returncode == 0 and res.stdout == b"" and b"Traceback" not in res.stderr
    assert len(lines) == 1 and lines[0]["result"] == "timeout", lines
    assert "the config did not load within" in lines[0]["detail"]
    assert took < AGENTS[agent].limit(event)   # the agent's own limit: it never had to kill the hook


def test_sigterm_from_the_agent_is_logged_and_exits_0(project, tmp_path):
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    proc = spawn(project, "UserPromptSubmit", env={**project["env"], "HELA_CONFIG": str(fifo)})
    proc.stdin.write(json.dumps(base(project, "UserPromptSubmit", prompt=PROMPT)).encode())
    proc.stdin.close()
    end = time.monotonic() + 30
    while not _started(proc.pid) and time.monotonic() < end:   # the worker is blocked on the config
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0 and proc.stdout.read() == b""
    lines = log_lines(project)
    assert len(lines) == 1 and lines[0]["result"] == "timeout" and "stopped by the agent" in lines[0]["detail"]


def _started(pid: int) -> bool:
    """More than one thread: the hook's worker is running (stdin was read, the config is being loaded)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


# ------------------------------------------------------------------------------------------ pile-up
@pytest.fixture()
def locked_db(project):
    """The project's database under another process's write lock (``BEGIN EXCLUSIVE``) until released."""
    con = sqlite3.connect(project["db"], isolation_level=None, timeout=30)
    con.execute("BEGIN EXCLUSIVE")
    state = {"con": con}
    yield state
    if state["con"] is not None:
        con.execute("ROLLBACK")
        con.close()


def test_captures_do_not_pile_up_on_a_locked_database(project, tmp_path, locked_db):
    """While the database is locked: the first Stop of a session stops at its budget and hands the capture to
    one detached child, which holds the session; the next Stops of that session find it busy and start
    nothing; other sessions get a child each until ``hooks.max_detached`` are running, then none. Every
    child stops at ``hooks.detached_budget_s`` with its log line. Once the lock is gone, one more Stop stores
    the session's turns."""
    transcript = tmp_path / "t" / "session.jsonl"
    transcript.parent.mkdir()
    shutil.copy(TRANSCRIPT, transcript)
    env = {**project["env"], "HELA_HOOKS_CAPTURE_BUDGET_S": "1", "HELA_HOOKS_DETACHED_BUDGET_S": "8",
           "HELA_HOOKS_MAX_DETACHED": "2"}

    def stop(session: str, env: dict[str, str] = env) -> dict[str, Any]:
        payload = base(project, "Stop", session_id=session, transcript_path=str(transcript))
        res, lines = hook(project, "Stop", payload, env=env)
        assert res.returncode == 0 and res.stdout == b"" and len(lines) == 1, lines
        return lines[0]

    first = stop("sess-a")
    assert first["result"] == "timeout" and first["child"] and "handed to a detached child" in first["detail"]
    again = [stop("sess-a") for _ in range(3)]
    assert [r["result"] for r in again] == ["busy"] * 3 and not any(r.get("child") for r in again)
    other = stop("sess-b")
    assert other["result"] == "timeout" and other["child"]
    full = stop("sess-c")
    assert full["result"] == "timeout" and full.get("child") is None and "slot is taken" in full["detail"]
    children = [first["child"], other["child"]]
    assert sum(alive(pid) for pid in children) <= 2
    # each child stops at its budget, logged, holding nothing
    end = time.monotonic() + 120
    while any(alive(pid) for pid in children) and time.monotonic() < end:
        time.sleep(0.2)
    assert not any(alive(pid) for pid in children)
    rows = {r["pid"]: r for r in log_lines(project) if r.get("detached")}
    assert set(rows) == set(children), rows
    for pid in children:
        assert rows[pid]["result"] in ("timeout", "error"), rows[pid]
    assert "time budget of 8 s" in rows[first["child"]]["detail"] or "locked" in rows[first["child"]]["detail"]
    locked_db["con"].execute("ROLLBACK")
    locked_db["con"].close()
    locked_db["con"] = None
    done = stop("sess-a", project["env"])   # the lock is free: this capture (its usual budget) stores the turns
    assert done["result"] == "ok" and done["added"] > 0, done
    con = sqlite3.connect(project["db"])
    stored = con.execute("SELECT count(*) FROM nodes WHERE session = 'sess-a'").fetchone()[0]
    con.close()
    assert stored == done["added"]


def test_a_capture_that_finds_its_session_busy_is_taken_by_the_running_one(project, tmp_path):
    """The pending mark: a Stop that arrives while its session's capture runs leaves a mark; the running
    capture takes it after releasing the lock (here: a detached child for the new turns)."""
    from hela_cli.hooks import capture_runs

    transcript = tmp_path / "t" / "session.jsonl"
    transcript.parent.mkdir()
    shutil.copy(TRANSCRIPT, transcript)
    env = {**project["env"]}
    payload = base(project, "Stop", session_id="sess-p", transcript_path=str(transcript))
    key = capture_runs.session_key("claude-code", "sess-p", str(transcript), None)
    old = os.environ.get("HELA_HOME")
    os.environ["HELA_HOME"] = env["HELA_HOME"]
    try:
        held = capture_runs.lock_session(key)    # "another capture" holds the session
        assert held is not None
        res, lines = hook(project, "Stop", payload, env=env)
        assert lines[-1]["result"] == "busy"
        assert (capture_runs.folder() / f"{key}.pending").exists()
        capture_runs.unlock(held)
    finally:
        if old is None:
            os.environ.pop("HELA_HOME", None)
        else:
            os.environ["HELA_HOME"] = old
    res, lines = hook(project, "Stop", payload, env=env)   # takes the lock, clears the mark, captures
    assert lines[-1]["result"] == "ok" and lines[-1]["added"] > 0
    assert not (Path(env["HELA_HOME"]) / "captures" / f"{key}.pending").exists()


# ------------------------------------------------------------------------------------------ exit codes
def test_import_failure_still_exits_0(project):
    code = ("import sys; sys.modules['hela_cli.hooks.process'] = None; sys.argv = ['hela', 'hook', 'Stop']; "
            "from hela_cli.cli import main; main()")
    res = subprocess.run([PY, "-c", code], input=b"{}", capture_output=True, env=project["env"], timeout=60)
    assert res.returncode == 0 and res.stdout == b"" and b"cannot start" in res.stderr, res.stderr
    assert b"Traceback" not in res.stderr
    lines = log_lines(project)
    assert len(lines) == 1 and lines[0]["result"] == "error" and "cannot start" in lines[0]["detail"]


def test_stdout_closed_by_the_agent_still_exits_0(project):
    """The agent stopped reading (its end of the pipe closed): writing the context fails, the exit code is
    still 0 (Python would exit 120 when its final flush fails)."""
    r, w = os.pipe()
    os.close(r)
    try:
        proc = spawn(project, "UserPromptSubmit", stdout=w)
    finally:
        os.close(w)
    proc.stdin.write(json.dumps(base(project, "UserPromptSubmit", prompt=PROMPT)).encode())
    proc.stdin.close()
    assert proc.wait(timeout=120) == 0
    assert b"Traceback" not in proc.stderr.read()
    lines = log_lines(project)
    assert len(lines) == 1 and lines[0]["result"] == "error" and "BrokenPipeError" in lines[0]["detail"], lines


def test_main_in_process_returns_at_its_budget(project, tmp_path, monkeypatch):
    """``main()`` called in-process returns 0 at its budget: it never ends its caller's process."""
    from hela_cli.hooks.process import main

    for k, v in project["env"].items():
        if k.startswith("HELA_"):
            monkeypatch.setenv(k, v)
    monkeypatch.setenv("HELA_HOOKS_BUDGET_S", "0.001")
    # a handler slower than the budget whatever is imported already (with warm imports the real one can finish
    # within one GIL switch interval, before the budget is checked)
    from hela_cli.hooks import handlers

    monkeypatch.setitem(handlers.HANDLERS, "start", lambda *a: (time.sleep(0.5), ("", {"result": "empty"}))[1])
    out = io.StringIO()
    payload = json.dumps(base(project, "SessionStart", source="startup")).encode()
    assert main(["SessionStart", "--db", str(tmp_path / "none" / "x.db")], stdin=io.BytesIO(payload),
                stdout=out) == 0
    assert out.getvalue() == "" and log_lines(project)[-1]["result"] == "timeout"
    assert sys.exc_info() == (None, None, None)   # still here


# ------------------------------------------------------------------------------------------ installed timeouts
def test_installed_timeouts_fit_what_each_agent_allows(tmp_path, monkeypatch):
    """No entry asks an agent for more than it gives the event (Codex CLI clamps SessionEnd to 3 s and warns
    at every start otherwise); the hook's own limit is never above the entry's timeout."""
    from hela_cli.hooks.install import install

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / ".codex"))
    want = {"claude-code": {"SessionEnd": 2}, "codex": {"SessionEnd": 3}, "gemini": {"SessionEnd": 2000}}
    for name, agent in AGENTS.items():
        rep = install(name, "user", cwd=tmp_path, prefix=["hela"])
        hooks = json.loads(Path(rep["path"]).read_text())["hooks"]
        for event in agent.events:
            timeout = hooks[event][0]["hooks"][0]["timeout"]
            role = agent.role(event)
            assert timeout == want[name].get(event, {"start": 10, "prompt": 10, "capture": 60, "path": 10}[role]
                                            * agent.timeout_unit), (name, event, timeout)
            assert agent.limit(event) * agent.timeout_unit <= timeout


def test_a_detached_child_keeps_whole_chunks_when_stopped(project, tmp_path):
    """A detached capture child commits every CHILD_CHUNK turns: stopped at its budget it keeps what it
    committed (whole chunks), and the next capture stores the rest, once."""
    from hela_cli.hooks.capture_runs import CHILD_CHUNK

    n = 3 * CHILD_CHUNK + 10
    path = tmp_path / "long.jsonl"
    with path.open("w") as f:
        for i in range(n):
            role = "user" if i % 2 == 0 else "assistant"
            content = f"step {i}: we moved module m{i} to package p{i % 7}"
            f.write(json.dumps({"type": role, "uuid": f"u{i}", "sessionId": "sess-long", "isSidechain": False,
                                "timestamp": f"2026-11-20T10:{i // 60:02d}:{i % 60:02d}.000Z",
                                "message": {"role": role, "content": content if role == "user"
                                            else [{"type": "text", "text": content}]}}) + "\n")
    payload = base(project, "Stop", session_id="sess-long", transcript_path=str(path))
    env = {**project["env"], "HELA_HOOKS_DETACHED_BUDGET_S": "6"}
    res = subprocess.run([PY, "-m", "hela_cli", "hook", "Stop", "--detached"], input=json.dumps(payload).encode(),
                         env=env, cwd=str(project["dir"]), capture_output=True, timeout=300)
    assert res.returncode == 0 and res.stdout == b""
    con = sqlite3.connect(project["db"])
    stored = con.execute("SELECT count(*) FROM nodes WHERE session = 'sess-long'").fetchone()[0]
    con.close()
    row = log_lines(project)[-1]
    assert row["detached"] and (row["result"] == "timeout" and stored % CHILD_CHUNK == 0 or
                                row["result"] == "ok" and stored == n), (row, stored)
    if row["result"] == "timeout":
        assert "committed are kept" in row["detail"]
    res, lines = hook(project, "Stop", payload, env={**project["env"], "HELA_HOOKS_CAPTURE_INLINE": "100000"})
    assert lines[-1]["result"] in ("ok", "empty") and lines[-1].get("added", 0) == n - stored, lines
    con = sqlite3.connect(project["db"])
    ids = [r[0] for r in con.execute("SELECT source_id FROM nodes WHERE session = 'sess-long'")]
    con.close()
    assert len(ids) == len(set(ids)) == n
