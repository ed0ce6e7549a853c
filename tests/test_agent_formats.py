"""Coding-agent transcripts (issue 32): Claude Code, Codex CLI and Gemini CLI session files, read from real ones.

Each fixture under ``tests/data/agents/<agent>/`` was written by the real binary, run offline twice in one
session (the second run resuming it) against a small fake API that answered the first prompt with a text
and a shell tool call, then a text; the second prompt pastes a made-up OpenAI key:

* ``claude-code/session.jsonl``: Claude Code 2.1.197, ``claude -p`` then ``claude -p -c`` (Messages API);
  ``claude-code/hooks/`` the stdin JSON of every hook event (Claude Code wrote the markers into the
  transcript as ``hook_additional_context`` attachment records);
* ``codex/rollout-*.jsonl``: Codex CLI 0.171.0, ``codex exec`` then ``codex exec resume --last`` (Responses
  API); ``codex/hooks/`` holds the stdin JSON of every hook event of those runs (hooks that only dump their
  stdin, trusted as ``codex/setup/config.toml`` shows; SessionStart and UserPromptSubmit answered with a
  ``MARKER-...-CONTEXT`` additionalContext, which Codex wrote into the rollout as developer messages);
* ``gemini/session-*.jsonl``: Gemini CLI 0.61.0, ``gemini -p`` then ``gemini --resume latest -p`` (Gemini
  API); ``gemini/hooks/`` the same dumps (Gemini put the markers into the user's message as
  ``<hook_context>``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hela_cli.errors import InputError
from hela_cli.formats import detect_format, parse_file, session_files

DATA = Path(__file__).parent / "data" / "agents"
CLAUDE = DATA / "claude-code" / "session.jsonl"
CODEX = next((DATA / "codex").glob("rollout-*.jsonl"))
GEMINI = next((DATA / "gemini").glob("session-*.jsonl"))
AGENTS = [("claude_code", CLAUDE), ("codex", CODEX), ("gemini", GEMINI)]
FIRST_PROMPT = "Which Python version does this project use? Our deploy target is kestrel."
KEY = "sk-proj-abcDEF1234567890ghiJKL0987654321mnoPQR"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, records: list[dict], tail: str = "\n") -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + tail, encoding="utf-8")
    return path


def test_claude_code_real_transcript() -> None:
    assert detect_format(CLAUDE) == "claude_code"
    [conv] = parse_file(CLAUDE)
    assert conv.keyed and conv.name is None
    records = _lines(CLAUDE)
    session = records[0]["sessionId"]
    by_uuid = {r["uuid"]: r for r in records if "uuid" in r}
    texts = [t.text for t in conv.turns]
    assert texts[0] == "Which Python version does this project use? Our deploy target is kestrel."
    assert "[tool] Bash: python3 --version" in texts            # a tool call: one short line
    assert not any("Python 3.11" in t for t in texts)           # its output: not stored by default
    assert "[result] `python3 --version` exit 0" in texts        # its outcome is
    assert not any("wants the project's Python version" in t for t in texts)   # thinking: not stored
    for t in conv.turns:
        rec = by_uuid[t.source_id]                              # keyed by the line's own uuid
        role = "tool" if t.text.startswith("[result]") else rec["type"]
        assert t.session == session and role == t.role == t.speaker
        assert t.time_str == rec["timestamp"]
    assert [t.timestamp for t in conv.turns] == sorted(t.timestamp for t in conv.turns)
    assert {t.role for t in conv.turns} == {"user", "assistant", "tool"}


def test_claude_code_tool_output_kept_when_asked() -> None:
    [conv] = parse_file(CLAUDE, tool_output_chars=8)
    outputs = [t for t in conv.turns if t.role == "tool"]
    assert outputs and all(t.text == "[result] `python3 --version` exit 0\n[tool output] Python 3 …" for t in outputs)


def test_claude_code_partial_last_line_is_left_for_later(tmp_path: Path) -> None:
    whole = CLAUDE.read_text(encoding="utf-8")
    [full] = parse_file(CLAUDE)
    # the file cut in the middle of its last message line: every whole line is read, no error
    cut = whole[:whole.index(full.turns[-1].source_id) + 10]
    f = tmp_path / "s.jsonl"
    f.write_text(cut, encoding="utf-8")
    [part] = parse_file(f)
    assert [t.source_id for t in part.turns] == [t.source_id for t in full.turns[:-1]]
    # the same cut with a newline after it is a broken file, named by its line
    f.write_text(cut + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"s\.jsonl: line \d+: invalid JSON"):
        parse_file(f)


def test_claude_code_skips_bookkeeping(tmp_path: Path) -> None:
    base = next(r for r in _lines(CLAUDE) if r.get("type") == "user")
    def user(uuid: str, content, **extra) -> dict:
        return {**base, "uuid": uuid, "message": {"role": "user", "content": content}, **extra}
    records = [
        user("u1", "Keep this one"),
        user("u2", "a subagent's prompt", isSidechain=True),
        user("u3", "<command-name>/clear</command-name>"),
        user("u4", "Caveat: The messages below were generated by the user while running local commands.",
             isMeta=True),
        user("u5", "This session is being continued from a previous conversation...", isCompactSummary=True),
        user("u6", [{"type": "text", "text": "<system-reminder>\nctx\n</system-reminder>"},
                    {"type": "text", "text": "And this one"}]),
        user("u7", "[Request interrupted by user]"),
        {**base, "uuid": "a1", "type": "assistant",
         "message": {"role": "assistant", "model": "<synthetic>",
                     "content": [{"type": "text", "text": "No response requested."}]}},
        {"type": "summary", "summary": "Fix the build", "leafUuid": "u6"},
    ]
    [conv] = parse_file(_write(tmp_path / "s.jsonl", records))
    assert [(t.source_id, t.text) for t in conv.turns] == [("u1", "Keep this one"), ("u6", "And this one")]


@pytest.mark.parametrize("record,where", [
    ({"type": "user", "sessionId": "s", "uuid": "x", "message": "hi"}, "line 2: 'message' must be an object"),
    ({"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}}, "line 2: missing 'uuid'"),
    ({"type": "user", "sessionId": "s", "uuid": "x", "timestamp": "yesterday-ish",
      "message": {"role": "user", "content": "hi"}}, "line 2: 'timestamp'"),
])
def test_claude_code_bad_records_named(tmp_path: Path, record: dict, where: str) -> None:
    first = {"type": "user", "sessionId": "s", "uuid": "u0", "timestamp": "2026-12-01T10:00:00Z",
             "message": {"role": "user", "content": "hello"}}
    f = _write(tmp_path / "bad.jsonl", [first, record])
    with pytest.raises(InputError) as e:
        parse_file(f)
    assert str(e.value).startswith(f"{f}: {where}")


def test_directory_input_every_session_idempotent(tmp_path: Path, make_memory, hash_embedder) -> None:
    proj = tmp_path / "projects" / "-home-me-api"
    proj.mkdir(parents=True)
    shutil.copy(CLAUDE, proj / "83001b6d.jsonl")
    other = [dict(r, sessionId="other-session", uuid=f"o-{r['uuid']}") if "uuid" in r else r
             for r in _lines(CLAUDE)]
    _write(proj / "second.jsonl", other)
    (proj / "notes.txt").write_text("not a session", encoding="utf-8")
    (tmp_path / "projects" / ".hidden.jsonl").write_text("{", encoding="utf-8")
    assert [p.name for p in session_files(tmp_path / "projects")] == ["83001b6d.jsonl", "second.jsonl"]

    n = len(parse_file(CLAUDE)[0].turns)
    mem = make_memory(embedder=hash_embedder)
    first = mem.ingest([tmp_path / "projects"], space="code")
    assert first["nodes_added"] == 2 * n and first["skipped_duplicates"] == 0
    again = mem.ingest([tmp_path / "projects"], space="code")
    assert again["nodes_added"] == 0 and again["skipped_duplicates"] == 2 * n
    sessions = {r["session"] for r in mem.memories("code", limit=None)}
    assert sessions == {_lines(CLAUDE)[0]["sessionId"], "other-session"}


def test_keyed_turns_are_one_memory_whichever_path_stores_them(tmp_path: Path, make_memory, hash_embedder) -> None:
    [conv] = parse_file(CLAUDE)
    mem = make_memory(embedder=hash_embedder)
    first = conv.turns[0]   # the capture path (hela add with the message uuid) stored one turn first
    mem.add("code", first.text, speaker="user", role="user", time=first.timestamp, session=first.session,
            source_id=first.source_id)
    rep = mem.ingest([CLAUDE], space="code")
    assert rep["nodes_added"] == len(conv.turns) - 1 and rep["skipped_duplicates"] == 1
    # a transcript resumed into a new file repeats the earlier messages with their uuids: nothing twice
    copy = tmp_path / "resumed.jsonl"
    shutil.copy(CLAUDE, copy)
    assert mem.ingest([copy], space="code")["nodes_added"] == 0


def test_empty_directory_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(InputError, match="a directory without session files"):
        session_files(tmp_path / "d")


# --------------------------------------------------------------------------- the three agents alike


@pytest.mark.parametrize("fmt,path", AGENTS)
def test_agent_transcript_turns(fmt: str, path: Path) -> None:
    assert detect_format(path) == fmt
    [conv] = parse_file(path)
    assert conv.keyed and len({t.source_id for t in conv.turns}) == len(conv.turns)
    assert len({t.session for t in conv.turns}) == 1
    texts = [t.text for t in conv.turns]
    assert texts[0] == FIRST_PROMPT
    assert any(t.startswith("[tool] ") and "python3 --version" in t for t in texts)
    assert any(KEY in t for t in texts) and any("kestrel" in t for t in texts if t != FIRST_PROMPT)
    assert not any("Python 3.1" in t for t in texts)                 # tool output: not stored by default
    assert not any("MARKER-" in t or "hook_context" in t for t in texts)   # what hooks injected: never
    assert not any(t.startswith(("<environment_context>", "<session_context>", "<skills_instructions>"))
                   for t in texts)                                   # the agent's own context
    assert [t.timestamp for t in conv.turns] == sorted(t.timestamp for t in conv.turns)
    assert {t.role for t in conv.turns} == {"user", "assistant", "tool"}
    # the command's outcome is a turn of its own, without the output
    assert [t.text for t in conv.turns if t.role == "tool"] == ["[result] `python3 --version` exit 0"]
    [kept] = parse_file(path, tool_output_chars=200)
    assert any(t.role == "tool" and "Python 3.1" in t.text for t in kept.turns)


@pytest.mark.parametrize("fmt,path", AGENTS)
def test_agent_transcript_read_while_written(tmp_path: Path, fmt: str, path: Path) -> None:
    """Every prefix of the file cut mid-line reads without error, and its turns are a prefix of the whole
    file's (nothing lost, nothing keyed differently) - as a capture hook reading a transcript the agent is
    still writing sees it (the format named, as the hook does: auto-detection needs one whole line)."""
    whole = path.read_text(encoding="utf-8")
    [full] = parse_file(path)
    keys = [t.source_id for t in full.turns]
    f = tmp_path / path.name
    cuts = sorted({i for i, c in enumerate(whole) if c == "\n"} | {len(whole) // 3, len(whole) // 2})
    for cut in cuts:
        f.write_text(whole[:cut + 1] if whole[cut:cut + 1] == "\n" else whole[:cut], encoding="utf-8")
        try:
            convs = parse_file(f, fmt)   # as a hook reads it: the agent's format named
        except InputError as e:
            assert "no complete JSON line" in str(e) or "no Gemini CLI chat record" in str(e) \
                or "file is empty" in str(e), str(e)
            continue
        if "\n" not in whole[:cut].strip():   # the first line not yet whole: nothing yet, no error
            assert convs and not any(c.turns for c in convs)
        got = [t.source_id for c in convs for t in c.turns]
        assert set(got) <= set(keys), (cut, set(got) - set(keys))


@pytest.mark.parametrize("fmt,path", AGENTS)
def test_agent_ingest_redacted_idempotent(fmt: str, path: Path, make_memory, hash_embedder) -> None:
    mem = make_memory(embedder=hash_embedder)
    first = mem.ingest([path], space="code", redact=True)
    [conv] = parse_file(path)
    assert first["nodes_added"] == len(conv.turns)
    assert mem.ingest([path], space="code", redact=True)["nodes_added"] == 0
    stored = [m["text"] for m in mem.memories("code", limit=None)]
    assert any("OPENAI_API_KEY=[REDACTED:openai-key]" in t for t in stored)
    assert not any(KEY in t for t in stored)


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_recorded_hook_payloads(agent: str) -> None:
    """The hook payloads recorded from the real binaries: the fields ``hela hook`` reads."""
    payloads = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((DATA / agent / "hooks").glob("*.json"))]
    events = [p["hook_event_name"] for p in payloads]
    start, prompt, capture = (("SessionStart", "BeforeAgent", "AfterAgent") if agent == "gemini"
                              else ("SessionStart", "UserPromptSubmit", "Stop"))
    assert {start, prompt, capture, "SessionEnd"} <= set(events)
    transcript = {"claude-code": CLAUDE, "codex": CODEX, "gemini": GEMINI}[agent]
    for p in payloads:
        assert p["session_id"] and p["cwd"] and p["transcript_path"].endswith(".jsonl")
        if agent != "claude-code":   # the Claude Code fixture keeps the transcript's name: session.jsonl
            assert Path(p["transcript_path"]).name == transcript.name
    assert [p["source"] for p in payloads if p["hook_event_name"] == start] == ["startup", "resume"]
    assert any(p.get("prompt", "").endswith(FIRST_PROMPT) for p in payloads if p["hook_event_name"] == prompt)
    last = [p for p in payloads if p["hook_event_name"] == capture][-1]
    assert "kestrel" in last.get("last_assistant_message", last.get("prompt_response", ""))


def test_gemini_single_document_form(tmp_path: Path) -> None:
    """Gemini CLI before 0.61 saved a chat as one JSON document ``{sessionId, projectHash, ..., messages}``;
    built here from the real 0.61 log (its first record plus its messages), it reads to the same turns."""
    records = _lines(GEMINI)
    doc = dict(records[0])
    doc["messages"] = [r for r in records if "id" in r and "type" in r]
    f = tmp_path / "session-2026-12-04T17-05-c1b524a3.json"
    f.write_text(json.dumps(doc), encoding="utf-8")
    assert detect_format(f) == "gemini"
    [conv] = parse_file(f)
    [log] = parse_file(GEMINI)
    assert [t.text for t in conv.turns] == [t.text for t in log.turns]
    assert [t.source_id for t in conv.turns] == [t.source_id for t in log.turns]
