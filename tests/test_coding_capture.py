"""What a coding session did, captured without a model (formats/agent.py, hooks/capture.py), and what the
hooks inject from it: the recall by file (hooks/context.py ``path_context``), the session gist
(hooks/gist.py), content-free turns never injected, a memory injected once per session at most, the tokens
of every injection in the hook log and in ``hela hooks status``.

The transcripts here are built record by record in each agent's own format, as the real files recorded in
tests/data/agents are (tests/test_agent_formats.py reads those)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hela_cli.formats import parse_file
from hela_cli.hooks.capture import capture_file, transcript_turns
from hela_cli.hooks.context import path_context, prompt_context, start_context
from hela_cli.hooks.gist import gist_lines, session_gist
from hela_cli.text.coding import commit_of, exit_status, first_error_line, is_decision, patch_paths
from hela_cli.text.content import is_content_free
from hela_cli.text.session_lines import is_tool_line
from tests.reliability import PY, hela_env

ROOT = "/home/dev/shop"
REASON = "We store amounts as Decimal in billing/api.py because floats lost cents on refunds."


# ------------------------------------------------------------------------------------------ pure helpers
@pytest.mark.parametrize("text", ["Noted.", "Done.", "ok", "Sure!", "Thanks!", "Got it, thanks.", "  ", "",
                                  "Let me check.", "Okay, will do.", "Perfect 👍", "yes please", "Fixed.",
                                  "Noted, I will remember that."])
def test_content_free(text):
    assert is_content_free(text)


@pytest.mark.parametrize("text", ["Noted, the bucket is frosty-otter-assets.", "Done: billing/api.py uses Decimal.",
                                  "ok, port 6543", "Use Postgres.", "Sure, let's use Decimal", "fixed `pytest -x`",
                                  REASON])
def test_not_content_free(text):
    assert not is_content_free(text)


def test_tool_line():
    assert is_tool_line("[tool] Edit: billing/api.py") and is_tool_line("[tool] Bash: pytest -x") \
        and is_tool_line("[tool] TodoWrite")
    assert not any(is_tool_line(t) for t in ("[result] `pytest -x` exit 1: E boom", "[answer] half even",
                                             "[tool output] 1 passed", REASON, "", None, "the [tool] Edit"))


def test_outcome_helpers():
    assert exit_status("Exit code 2\nE   AssertionError: cents") == 2
    assert exit_status("Chunk ID: 1\nProcess exited with code 0\nOutput:\nok") == 0
    assert exit_status("Output: boom\nExit Code: 1") == 1
    assert exit_status("no status here") is None and exit_status("x", is_error=True) == 1
    assert first_error_line("Exit code 1\n....F\nE   AssertionError: 0.1 + 0.2 != 0.3\n1 failed") \
        == "E   AssertionError: 0.1 + 0.2 != 0.3"
    assert first_error_line("Process exited with code 1\nOutput:\nsomething odd") == "something odd"
    assert patch_paths("*** Begin Patch\n*** Update File: billing/api.py\n@@\n-a\n+b\n*** Add File: b.py\n"
                       "+x\n*** End Patch") == ["billing/api.py", "b.py"]
    assert commit_of("[main 1a2b3c4] Use Decimal for amounts\n 1 file changed") == ("1a2b3c4", "Use Decimal for amounts")
    assert is_decision("Let's use Decimal here.") and is_decision("Going with SQLite instead of Redis.")
    assert not is_decision("Reading the file now.")


# ------------------------------------------------------------------------------------------ transcripts
def claude_records(session: str = "s1", decision: str = REASON) -> list[dict[str, Any]]:
    """A Claude Code session: the user asks, the agent reads and edits billing/api.py, a test run fails
    then passes, it asks a question (AskUserQuestion) the user answers, commits, states why, says "Done."."""
    n = iter(range(1000))

    def rec(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
        i = next(n)
        return {"type": kind, "sessionId": session, "uuid": f"{session}-u{i}", "cwd": ROOT,
                "timestamp": f"2026-12-0{1 if session == 's1' else 2}T10:{i:02d}:00Z",
                "message": {"role": kind, "content": content}, **extra}

    def use(tid: str, name: str, inp: dict[str, Any]) -> dict[str, Any]:
        return rec("assistant", [{"type": "tool_use", "id": tid, "name": name, "input": inp}])

    def result(tid: str, out: str, err: bool = False) -> dict[str, Any]:
        return rec("user", [{"type": "tool_result", "tool_use_id": tid, "content": out, "is_error": err}])

    return [
        rec("user", "Refunds lose cents: fix billing/api.py"),
        use("t1", "Read", {"file_path": f"{ROOT}/billing/api.py"}),
        result("t1", "1\tdef refund(x): return float(x)"),
        use("t2", "Bash", {"command": "pytest -x tests/test_refund.py"}),
        result("t2", "Exit code 1\n....F\nE   AssertionError: 9.99 != 9.98\n1 failed", err=True),
        use("t3", "Edit", {"file_path": f"{ROOT}/billing/api.py", "old_string": "float(x)", "new_string": "Decimal(x)"}),
        result("t3", "The file billing/api.py has been updated."),
        use("t4", "Bash", {"command": "pytest -x tests/test_refund.py"}),
        result("t4", "1 passed"),
        use("t5", "AskUserQuestion", {"questions": [{"question": "Round half up or half even?"}]}),
        result("t5", 'User has answered your questions: "Round half up or half even?"="half even, as the bank does".'),
        use("t6", "Bash", {"command": 'git commit -am "Use Decimal for refunds"'}),
        result("t6", "[main 1a2b3c4] Use Decimal for refunds\n 1 file changed, 2 insertions(+)"),
        rec("assistant", [{"type": "text", "text": decision}]),
        rec("user", "Thanks"),
        rec("assistant", [{"type": "text", "text": "Done."}]),
    ]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_claude_code_session_captured(tmp_path):
    [conv] = parse_file(write_jsonl(tmp_path / "s1.jsonl", claude_records()), "claude_code")
    texts = [t.text for t in conv.turns]
    assert "[tool] Read: billing/api.py" in texts and "[tool] Edit: billing/api.py" in texts   # relative paths
    assert ("[result] `pytest -x tests/test_refund.py` exit 1: E   AssertionError: 9.99 != 9.98\n"
            "[files: billing/api.py]") in texts   # a failure in the exchange that edited the file: tied to it
    assert "[result] `pytest -x tests/test_refund.py` exit 0" in texts
    assert '[result] commit 1a2b3c4 "Use Decimal for refunds" (files: billing/api.py)' in texts
    answer = next(t for t in conv.turns if t.text.startswith("[answer] "))
    assert answer.role == "user" and "half even, as the bank does" in answer.text   # the user's decision, kept
    assert REASON in texts   # names the file itself: no tag
    assert not any("float(x)" in t for t in texts)   # outputs of reads and edits: not stored


def test_decision_gets_the_files_of_its_exchange(tmp_path):
    records = claude_records(decision="Going with Decimal instead of float: floats lost cents on refunds.")
    [conv] = parse_file(write_jsonl(tmp_path / "s1.jsonl", records), "claude_code")
    said = next(t.text for t in conv.turns if t.text.startswith("Going with"))
    assert said.endswith("\n[files: billing/api.py]")
    # the user's next prompt starts another exchange: its decisions are not tagged with these files
    records += [{**records[0], "uuid": "later", "message": {"role": "user", "content": "We decided to keep the CLI in click."}}]
    [conv] = parse_file(write_jsonl(tmp_path / "s1.jsonl", records), "claude_code")
    assert next(t.text for t in conv.turns if t.source_id == "later") == "We decided to keep the CLI in click."


def test_codex_session_captured(tmp_path):
    sid = "01a24202-995a-74f2-ae31-c94a753cfbd6"
    patch = "*** Begin Patch\n*** Update File: billing/api.py\n@@\n-float\n+Decimal\n*** End Patch"

    def item(i: int, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": f"2026-12-01T10:{i:02d}:00Z", "type": "response_item", "payload": payload}

    records = [
        {"timestamp": "2026-12-01T10:00:00Z", "type": "session_meta", "payload": {"id": sid, "cwd": ROOT}},
        item(1, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix refunds"}]}),
        item(2, {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "pytest -x"}),
                 "call_id": "c1"}),
        item(3, {"type": "function_call_output", "call_id": "c1",
                 "output": "Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 1\nOutput:\nE   ZeroDivisionError\n"}),
        item(4, {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "c2"}),
        item(5, {"type": "custom_tool_call_output", "call_id": "c2", "output": "Success. Updated: billing/api.py"}),
        item(6, {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Switched to Decimal because floats lost cents."}]}),
    ]
    [conv] = parse_file(write_jsonl(tmp_path / f"rollout-x-{sid}.jsonl", records), "codex")
    texts = [t.text for t in conv.turns]
    assert "[tool] apply_patch: billing/api.py" in texts
    assert "[result] `pytest -x` exit 1: E   ZeroDivisionError\n[files: billing/api.py]" in texts
    assert "Switched to Decimal because floats lost cents.\n[files: billing/api.py]" in texts


def test_gemini_session_captured(tmp_path):
    def call(cid: str, name: str, args: dict[str, Any], out: str, status: str) -> dict[str, Any]:
        return {"id": cid, "name": name, "args": args, "status": status,
                "result": [{"functionResponse": {"id": cid, "name": name, "response": {"output": out}}}]}

    records = [
        {"sessionId": "g1", "projectHash": "h", "startTime": "2026-12-01T10:00:00Z"},
        {"id": "m1", "timestamp": "2026-12-01T10:01:00Z", "type": "user", "content": [{"text": "fix refunds"}]},
        {"id": "m2", "timestamp": "2026-12-01T10:02:00Z", "type": "gemini", "content": "Let's use Decimal, floats lose cents.",
         "toolCalls": [call("k1", "write_file", {"file_path": "/tmp/g/billing/api.py", "content": "x"}, "ok", "success"),
                       call("k2", "run_shell_command", {"command": "pytest"}, "Output: E   NameError: Decimal\nExit Code: 1",
                            "error")]},
    ]
    [conv] = parse_file(write_jsonl(tmp_path / "session-g1.jsonl", records), "gemini")
    texts = [t.text for t in conv.turns]
    assert "[tool] write_file: /tmp/g/billing/api.py" in texts   # no project folder in a Gemini chat: as given
    assert "[result] `pytest` exit 1: E   NameError: Decimal\n[files: /tmp/g/billing/api.py]" in texts
    assert "Let's use Decimal, floats lose cents.\n[files: /tmp/g/billing/api.py]" in texts


# ------------------------------------------------------------------------------------------ recall by file
@pytest.fixture()
def captured(tmp_path, monkeypatch, make_memory, hash_embedder):
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    mem = make_memory(embedder=hash_embedder)
    rep = capture_file(mem, "claude-code", write_jsonl(tmp_path / "s1.jsonl", claude_records()), "shop")
    assert rep["added"] == rep["turns"] > 10
    assert capture_file(mem, "claude-code", tmp_path / "s1.jsonl", "shop")["added"] == 0   # once
    return mem


def test_path_recall_brings_decisions_failures_commits(captured):
    text, facts = path_context(captured, "shop", [f"{ROOT}/billing/api.py"], ROOT, "s2")
    assert text.startswith("hela: what earlier sessions left about billing/api.py")
    assert REASON in text and "half even, as the bank does" in text
    assert "exit 1: E AssertionError: 9.99 != 9.98" in text and "commit 1a2b3c4" in text
    assert "[files: " not in text   # the header names the file
    assert "[tool] Edit: billing/api.py" in text
    assert "[tool] Read" not in text and "Done." not in text   # reads are weak evidence; content-free never
    assert len(facts["memories"]) <= captured.config.hooks.path_k
    assert len(text) / 4 <= captured.config.hooks.path_tokens
    # the same session does not get them twice; another session does
    assert path_context(captured, "shop", [f"{ROOT}/billing/api.py"], ROOT, "s2")[0] == ""
    assert path_context(captured, "shop", ["billing/api.py"], ROOT, "s3")[0] == text
    # a file nothing is known about, a session's own memories: nothing
    assert path_context(captured, "shop", [f"{ROOT}/README.md"], ROOT, "s4")[0] == ""
    assert path_context(captured, "shop", [f"{ROOT}/billing/api.py"], ROOT, "s1")[0] == ""


def test_path_recall_budget(captured):
    captured.config.hooks.path_tokens = 60
    text, facts = path_context(captured, "shop", ["billing/api.py"], ROOT, "s2")
    assert text and len(text) / 4 <= 60 + 1 and len(facts["memories"]) == text.count("[#")
    captured.config.hooks.path_tokens = 0
    assert path_context(captured, "shop", ["billing/api.py"], ROOT, "s3")[0] == ""


def test_content_free_never_injected(captured):
    """A content-free turn is stored, and no injection path (prompt recall, start brief, path recall) ever
    shows it, even when it is the best match."""
    captured.add_batch("shop", [{"speaker": "assistant", "text": "Noted.", "session": "s0"},
                                {"speaker": "assistant", "text": "ok", "session": "s0"}])
    stored = {m["id"]: m["text"] for m in captured.memories("shop", limit=None)}
    free = [i for i, t in stored.items() if is_content_free(t)]
    assert len(free) >= 4   # "Noted.", "ok", "Thanks", "Done."
    captured.config.hooks.prompt_min_score = -1.0
    for q, sid in (("Noted.", "p1"), ("ok done thanks", "p2"), ("refund cents Decimal", "p3")):
        text, facts = prompt_context(captured, "shop", q, sid)
        assert not set(facts["memories"]) & set(free), (q, text)
    text, _ = start_context(captured, "shop", Path("/nonexistent"), "p4")
    assert text and not any(f"#{i}]" in text for i in free)
    text, facts = path_context(captured, "shop", ["billing/api.py"], ROOT, "p5")
    assert text and not set(facts["memories"]) & set(free)


def test_memory_injected_once_per_session(captured):
    """Across the hooks of one session (start brief, prompts, file recall) a memory is injected at most once."""
    captured.config.hooks.prompt_min_score = -1.0
    seen: list[int] = []
    text, _ = start_context(captured, "shop", Path("/nonexistent"), "s9")
    seen += [int(i) for i in re.findall(r"\[#(\d+)[\] ]", text)]
    assert seen
    for q in ("refund cents Decimal", "refund cents Decimal", "pytest failed AssertionError"):
        _, facts = prompt_context(captured, "shop", q, "s9")
        seen += facts["memories"]
    _, facts = path_context(captured, "shop", ["billing/api.py"], ROOT, "s9")
    seen += facts.get("memories", [])
    assert seen and len(seen) == len(set(seen)), seen
    # after the agent compacted its context, the session may be shown them again
    from hela_cli.hooks import injected

    assert path_context(captured, "shop", ["billing/api.py"], ROOT, "s9")[0] == ""
    injected.forget(captured.config.db, "shop", "s9")
    assert path_context(captured, "shop", ["billing/api.py"], ROOT, "s9")[0] != ""


# ------------------------------------------------------------------------------------------ gist
def test_gist_of_a_session(captured):
    rows = captured.memories("shop", limit=None)[::-1]
    g = session_gist(rows, "s1")
    assert g.asked == "Refunds lose cents: fix billing/api.py"
    assert g.changed == ["billing/api.py"] and g.fixed == ["pytest -x tests/test_refund.py"] and not g.failing
    assert any("half even" in d for _, d in g.decisions) and any("Decimal" in d for _, d in g.decisions)
    lines = gist_lines(g)
    assert len(lines) <= 8 and lines[0].startswith("- ") and "asked: Refunds lose cents" in lines[0]
    assert "  changed: billing/api.py" in lines and "  failed then passed: `pytest -x tests/test_refund.py`" in lines
    text, facts = start_context(captured, "shop", Path("/nonexistent"), "s2")
    assert facts["summary"] == "extractive" and "failed then passed" in text and "committed: 1a2b3c4" in text


# ------------------------------------------------------------------------------------------ the hook process
def _hook(env: dict[str, str], cwd: Path, event: str, payload: dict[str, Any], agent: str = "claude-code"
          ) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "hela_cli", "hook", event, "--agent", agent], input=json.dumps(payload).encode(),
                          env=env, cwd=str(cwd), capture_output=True, timeout=300)


def test_pre_tool_use_hook_injects_once_and_logs_tokens(tmp_path):
    proj = tmp_path / "shop"
    (proj / "billing").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    env = hela_env(tmp_path, tmp_path / "hela.db", HELA_HOOKS_BUDGET_S="120", HELA_HOOKS_CAPTURE_BUDGET_S="300")
    records = [{**r, "cwd": str(proj)} for r in claude_records()]
    for r in records:   # the transcript was written in this project
        if r["type"] == "assistant":
            for b in r["message"]["content"]:
                if b.get("type") == "tool_use" and "file_path" in b["input"]:
                    b["input"]["file_path"] = str(proj / "billing" / "api.py")
    t1 = write_jsonl(tmp_path / "s1.jsonl", records)
    res = _hook(env, proj, "Stop", {"session_id": "s1", "transcript_path": str(t1), "cwd": str(proj)})
    assert res.returncode == 0 and res.stdout == b""
    edit = {"session_id": "s2", "transcript_path": str(tmp_path / "s2.jsonl"), "cwd": str(proj),
            "hook_event_name": "PreToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": str(proj / "billing" / "api.py"), "old_string": "a", "new_string": "b"}}
    res = _hook(env, proj, "PreToolUse", edit)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and REASON in out["additionalContext"]
    assert "half even" in out["additionalContext"]
    again = _hook(env, proj, "PreToolUse", edit)                     # the same session: already injected
    assert again.returncode == 0 and again.stdout == b""
    other = _hook(env, proj, "PreToolUse", {**edit, "tool_input": {"file_path": str(proj / "README.md")}})
    assert other.stdout == b""                                         # nothing known: nothing printed
    # Codex hands apply_patch's patch as the command; Gemini reads the file after its read_file (AfterTool)
    patch = "*** Begin Patch\n*** Update File: billing/api.py\n@@\n-a\n+b\n*** End Patch"
    cx = _hook(env, proj, "PreToolUse", {**edit, "session_id": "s3", "tool_name": "apply_patch",
                                         "tool_input": {"command": patch}}, "codex")
    assert REASON in json.loads(cx.stdout)["hookSpecificOutput"]["additionalContext"]
    gm = _hook(env, proj, "AfterTool", {**edit, "session_id": "s4", "hook_event_name": "AfterTool",
                                        "tool_name": "read_file", "tool_input": {"file_path": "billing/api.py"}},
               "gemini")
    assert json.loads(gm.stdout)["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    rows = [json.loads(line) for line in (tmp_path / "home" / "hooks.log").read_text().splitlines()]
    path_rows = [r for r in rows if r.get("role") == "path"]
    assert [r["result"] for r in path_rows] == ["ok", "empty", "empty", "ok", "ok"]
    first = path_rows[0]
    assert first["tokens"] == -(-len(out["additionalContext"]) // 4) and first["memories"]
    assert all(r["tokens"] == 0 for r in path_rows[1:3])
    st = subprocess.run([PY, "-m", "hela_cli", "hooks", "status", "--json"], env=env, cwd=str(proj),
                        capture_output=True, text=True, timeout=120)
    tokens = json.loads(st.stdout)["tokens"]
    assert tokens["claude-code"]["sessions"] == 1 and tokens["claude-code"]["total"] == first["tokens"]
    assert set(tokens) == {"claude-code", "codex", "gemini"}
    table = subprocess.run([PY, "-m", "hela_cli", "hooks", "status"], env=env, cwd=str(proj),
                           capture_output=True, text=True, timeout=120)
    assert table.returncode == 0 and "tokens injected" in table.stdout and "prompt p50/p95" in table.stdout
    # Claude Code compacted the session's context: what it was shown is gone, so it may be shown again (the
    # brief off here, else it would bring the reason first)
    start = _hook({**env, "HELA_HOOKS_START_TOKENS": "0"}, proj, "SessionStart", {"session_id": "s2", "cwd": str(proj), "source": "compact",
                                               "hook_event_name": "SessionStart"})
    assert start.returncode == 0
    assert REASON in json.loads(_hook(env, proj, "PreToolUse", edit).stdout)["hookSpecificOutput"]["additionalContext"]


def test_token_stats_per_session_and_prompt(tmp_path, monkeypatch):
    from hela_cli.hooks import log

    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    for i, (role, session, tokens) in enumerate([("start", "a", 100), ("prompt", "a", 50), ("prompt", "a", 0),
                                                 ("path", "a", 30), ("prompt", "b", 200), ("capture", "b", None)]):
        log.append({"agent": "claude-code", "event": role, "role": role, "session": session, "result": "ok",
                    **({"tokens": tokens} if tokens is not None else {})})
    log.append({"agent": "codex", "event": "UserPromptSubmit", "role": "prompt", "session": "c", "result": "ok"})
    st = log.token_stats()
    assert set(st) == {"claude-code"}   # lines without tokens (older hela) are left out
    cc = st["claude-code"]
    assert cc["sessions"] == 2 and cc["total"] == 380 and cc["by_role"] == {"start": 100, "prompt": 250, "path": 30}
    assert cc["per_session"] == {"p50": 190.0, "p95": 199.0} and cc["prompts"] == 3
    assert cc["per_prompt"] == {"p50": 50.0, "p95": 185.0}


def test_capture_keeps_outcomes_without_tool_outputs(tmp_path, make_memory, hash_embedder):
    mem = make_memory(embedder=hash_embedder)
    turns = transcript_turns("claude-code", write_jsonl(tmp_path / "s1.jsonl", claude_records()), None, mem.config)
    assert not mem.config.hooks.tool_outputs
    assert sum(t.text.startswith("[result] ") for t in turns) == 3 and sum(t.text.startswith("[answer] ") for t in turns) == 1
    mem.config.hooks.tool_calls = False
    turns = transcript_turns("claude-code", tmp_path / "s1.jsonl", None, mem.config)
    assert not any(t.text.startswith("[tool] ") for t in turns) and sum(t.text.startswith("[result] ") for t in turns) == 3


def test_install_writes_the_file_matchers(tmp_path, monkeypatch):
    from hela_cli.hooks.install import install

    monkeypatch.setenv("HOME", str(tmp_path))
    for agent, event, matcher in (("claude-code", "PreToolUse", "Edit|Write|MultiEdit|NotebookEdit"),
                                  ("codex", "PreToolUse", "apply_patch|Edit|Write"),
                                  ("gemini", "AfterTool", "read_file|replace|write_file")):
        monkeypatch.setenv("CODEX_HOME", str(tmp_path / ".codex"))
        rep = install(agent, "user", prefix=["/opt/hela/bin/hela"])
        data = json.loads(Path(rep["path"]).read_text())
        [group] = data["hooks"][event]
        assert group["matcher"] == matcher and group["hooks"][0]["command"].endswith(f"hook {event} --agent {agent}")
        assert install(agent, "user", prefix=["/opt/hela/bin/hela"])["changed"] is False   # idempotent


# ------------------------------------------------------------------------------------------ abstractive gist
from tests.model_server import SERVER_KEY, dead_url, fault_server, llama_server  # noqa: E402,F401 (fixtures)


def test_gist_abstractive_with_an_endpoint(captured, llama_server, monkeypatch):
    """With an ``openai:`` chat endpoint the brief's session gist is the model's summary (the repository's
    llama-cpp-python server with the default chat model); ``hooks.gist: extractive`` never asks it."""
    monkeypatch.setenv("HELA_API_KEY", SERVER_KEY)
    captured.config.models.chat = f"openai:smollm2@{llama_server}"
    captured.config.hooks.gist_timeout_s = 300.0
    text, facts = start_context(captured, "shop", Path("/nonexistent"), "s2")
    assert facts["summary"] == "abstractive", text
    assert "summarized by openai:smollm2" in text and "failed then passed" not in text
    captured.config.hooks.gist = "extractive"
    text, facts = start_context(captured, "shop", Path("/nonexistent"), "s3")
    assert facts["summary"] == "extractive" and "failed then passed" in text


def test_gist_falls_back_when_the_endpoint_fails(captured, fault_server, monkeypatch):
    for url in (dead_url(), f"{fault_server}/500/v1", f"{fault_server}/slow/v1"):
        captured.config.models.chat = f"openai:smollm2@{url}"
        captured.config.hooks.gist_timeout_s = 0.5
        text, facts = start_context(captured, "shop", Path("/nonexistent"), f"s-{url}")
        assert facts["summary"] == "extractive" and "failed then passed" in text, url


def test_patch_through_the_shell_is_a_change(tmp_path):
    """Codex without its apply_patch tool runs ``apply_patch <<'EOF'`` through the shell: a change of the file,
    for the capture, the gist and the recall by file."""
    patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: billing/api.py\n@@\n-a\n+b\n*** End Patch\nEOF\n"
    records = [
        {"timestamp": "2026-12-01T10:00:00Z", "type": "session_meta", "payload": {"id": "cx", "cwd": ROOT}},
        {"timestamp": "2026-12-01T10:01:00Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix refunds"}]}},
        {"timestamp": "2026-12-01T10:02:00Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": patch}), "call_id": "c1"}},
    ]
    [conv] = parse_file(write_jsonl(tmp_path / "rollout-cx.jsonl", records), "codex")
    line = conv.turns[-1].text
    assert line == "[tool] exec_command: apply_patch billing/api.py"
    g = session_gist([{"id": i, "text": t.text, "speaker": t.speaker, "date": ""} for i, t in enumerate(conv.turns)])
    assert g.changed == ["billing/api.py"]
    from hela_cli.text.session_lines import file_memory_kind

    assert file_memory_kind(line) == "change" and file_memory_kind("[tool] Read: billing/api.py") is None


def test_path_needles_and_mentions():
    from hela_cli.text.coding import mentions_path, path_needles

    # the agent ran in a folder below the project's top level: both forms are looked for
    assert path_needles("/repo/api/billing/x.py", ["/repo", "/repo/api"]) == ["api/billing/x.py", "billing/x.py"]
    assert path_needles("billing/x.py", ["/repo"]) == ["billing/x.py"]
    assert mentions_path("[tool] Edit: /tmp/p/billing/api.py", "billing/api.py")
    assert mentions_path("see `billing/api.py`.", "billing/api.py")
    assert not mentions_path("[tool] Edit: data.py", "a.py") and not mentions_path("mybilling/api.py", "billing/api.py")
    assert not mentions_path("billing/api.pyc", "billing/api.py")


def test_path_recall_from_a_subfolder(tmp_path, monkeypatch, make_memory, hash_embedder):
    """The agent ran in /home/dev/shop/svc (its transcript names files relative to it); the hook's project
    root is /home/dev/shop: the file is found through the working directory's form."""
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    mem = make_memory(embedder=hash_embedder)
    records = [{**r, "cwd": "/home/dev"} for r in claude_records()]   # paths come out as shop/billing/api.py
    capture_file(mem, "claude-code", write_jsonl(tmp_path / "s1.jsonl", records), "shop")
    assert any(m["text"] == "[tool] Edit: shop/billing/api.py" for m in mem.memories("shop", limit=None))
    text, _ = path_context(mem, "shop", ["/home/dev/shop/billing/api.py"], ["/home/dev/shop", "/home/dev"], "s2")
    assert REASON in text


def test_a_command_that_merely_passed_is_not_injected(captured):
    from hela_cli.hooks.context import injectable

    assert not injectable({"text": "[result] `pytest -x` exit 0"}) and not injectable({"text": "Done."})
    assert injectable({"text": "[result] `pytest -x` exit 1: E boom"}) and injectable({"text": REASON})
    captured.config.hooks.prompt_min_score = -1.0
    passed = {m["id"] for m in captured.memories("shop", limit=None) if m["text"].endswith(" exit 0")}
    assert passed
    _, facts = prompt_context(captured, "shop", "pytest -x tests/test_refund.py exit", "q1")
    assert facts["memories"] and not set(facts["memories"]) & passed


def test_a_changed_decision_keeps_its_mark(captured):
    """A decision superseded by a later one (issue 38) is shown with its mark by the recall by file and the gist."""
    rows = captured.memories("shop", limit=None)
    old = next(m["id"] for m in rows if m["text"] == REASON)
    rep = captured.add_batch("shop", [{"speaker": "assistant", "session": "s5", "time": "2026-12-03T10:00:00Z",
                                       "text": "We now store amounts in integer cents in billing/api.py because "
                                               "Decimal was slow in the batch job."}])
    new = rep["added"][0]
    captured.supersede(old, new, space="shop")
    text, _ = path_context(captured, "shop", ["billing/api.py"], ROOT, "s6")
    line = next(ln for ln in text.splitlines() if "floats lost cents" in ln)
    assert re.search(rf"\(superseded by #{new}, \d{{4}}-\d{{2}}-\d{{2}}\)", line), text
    assert "integer cents" in text
    brief, _ = start_context(captured, "shop", Path("/nonexistent"), "s7")
    marked = [ln for ln in brief.splitlines() if "floats lost cents" in ln]
    assert marked and all(f"(superseded by #{new}" in ln for ln in marked), brief


def test_a_bare_tool_line_is_recalled_by_file_only(captured):
    """``[tool] Edit: billing/api.py`` says the file was touched, not what happened there: the prompt recall and
    the brief never inject it, even for a prompt naming the file (the slots go to other memories); the recall by
    file does (a change of the file)."""
    rows = {m["id"]: m["text"] for m in captured.memories("shop", limit=None)}
    tools = {i for i, t in rows.items() if t.startswith("[tool] ")}
    assert {"[tool] Edit: billing/api.py", "[tool] Read: billing/api.py"} <= set(rows.values())
    captured.config.hooks.prompt_min_score = -1.0
    captured.config.hooks.relevance = False   # every candidate passes: what is tested is the tool-line filter
    for q, sid in (("What happened to billing/api.py before? Edit Read", "p1"), ("Bash pytest -x git commit", "p2")):
        text, facts = prompt_context(captured, "shop", q, sid)
        assert facts["memories"] and not set(facts["memories"]) & tools and "[tool] " not in text, (q, text)
    text, facts = prompt_context(captured, "shop", "What happened to billing/api.py before?", "p3")
    assert REASON in text or "exit 1" in text
    brief, _ = start_context(captured, "shop", Path("/nonexistent"), "p4")
    assert brief and "[tool] " not in brief
    text, facts = path_context(captured, "shop", ["billing/api.py"], ROOT, "p5")
    assert "[tool] Edit: billing/api.py" in text and set(facts["memories"]) & tools
