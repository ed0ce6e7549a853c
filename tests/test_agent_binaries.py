"""The Codex CLI and Gemini CLI binaries, run offline against fake APIs (tests/agent_fakes.py): what they
write today is what the parsers read (the fixtures under tests/data/agents/ were recorded this way), and
their hooks receive the payload fields ``hela hook`` reads. Skipped when the binary is not installed
(``HELA_TEST_CODEX`` / ``HELA_TEST_GEMINI``, or ``.agents/node_modules/.bin/``: ``npm install --prefix .agents
@openai/codex @google/gemini-cli``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hela_cli.formats import detect_format, parse_file
from tests.agent_fakes import FINAL_TEXT, agent_binary, fake_gemini_api, fake_responses_api

PROMPT = "Which Python version does this project use? Our deploy target is kestrel."
KEY = "sk-proj-abcDEF1234567890ghiJKL0987654321mnoPQR"

# a hook that dumps its stdin JSON to DIR/NN-EVENT.json and answers the start and prompt events with a marker
DUMP = """import json, pathlib, sys
d = pathlib.Path(sys.argv[1]); event = sys.argv[2]
n = len(list(d.iterdir()))
(d / f"{n:02d}-{event}.json").write_text(sys.stdin.read())
if event in ("SessionStart", "UserPromptSubmit", "BeforeAgent"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": f"MARKER-{event}"}}))
"""


def _hooks(tmp: Path, events: list[str], **extra: object) -> tuple[dict, Path]:
    dumps = tmp / "dumps"
    dumps.mkdir()
    script = tmp / "dump.py"
    script.write_text(DUMP, encoding="utf-8")
    hooks = {e: [{"hooks": [{"type": "command", "command": f"{sys.executable} {script} {dumps} {e}", **extra}]}]
             for e in events}
    return hooks, dumps


def _payloads(dumps: Path) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(dumps.iterdir())]


def _check_transcript(path: Path, fmt: str) -> None:
    assert detect_format(path) == fmt
    [conv] = parse_file(path)
    texts = [t.text for t in conv.turns]
    assert texts[0] == PROMPT and texts[-1] == FINAL_TEXT
    assert any(t.startswith("[tool] ") and "python3 --version" in t for t in texts)
    assert any(KEY in t for t in texts)
    assert not any("MARKER-" in t for t in texts)   # what the hooks injected is never a memory


def test_codex_exec_offline(tmp_path: Path) -> None:
    codex = agent_binary("codex")
    if codex is None:
        pytest.skip("codex not installed (HELA_TEST_CODEX or .agents/node_modules/.bin/codex)")
    home, proj = tmp_path / "home", tmp_path / "proj"
    (home / ".codex").mkdir(parents=True)
    proj.mkdir()
    hooks, dumps = _hooks(tmp_path, ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
                                     "SessionEnd"], timeout=30)
    (home / ".codex" / "hooks.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    with fake_responses_api() as api:
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-5-codex"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
            f'base_url = "{api.url}/v1"\nwire_api = "responses"\nenv_key = "FAKE_API_KEY"\n\n'
            '[features]\nhooks = true\n',
            encoding="utf-8")
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(home / ".codex"), "FAKE_API_KEY": "x"}
        for args in (["exec", PROMPT], ["exec", "resume", "--last", f"Thanks. Note OPENAI_API_KEY={KEY} for staging."]):
            # hooks that are not managed run only when trusted; --dangerously-bypass-hook-trust for this run
            r = subprocess.run([str(codex), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
                                *args[1:]], cwd=proj, env=env, capture_output=True, text=True, timeout=180)
            assert r.returncode == 0, r.stderr[-2000:]
        assert "MARKER-SessionStart" in api.text() and "MARKER-UserPromptSubmit" in api.text()
    [rollout] = list((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    _check_transcript(rollout, "codex")
    payloads = _payloads(dumps)
    events = [p["hook_event_name"] for p in payloads]
    assert {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"} <= set(events)
    for p in payloads:
        assert p["transcript_path"] == str(rollout) and p["cwd"] == str(proj) and p["session_id"]
    assert [p["last_assistant_message"] for p in payloads if p["hook_event_name"] == "Stop"][-1] == FINAL_TEXT


def test_gemini_offline(tmp_path: Path) -> None:
    gemini = agent_binary("gemini")
    if gemini is None:
        pytest.skip("gemini not installed (HELA_TEST_GEMINI or .agents/node_modules/.bin/gemini)")
    home, proj = tmp_path / "home", tmp_path / "proj"
    (home / ".gemini").mkdir(parents=True)
    (proj / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}), encoding="utf-8")
    hooks, dumps = _hooks(tmp_path, ["SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"], timeout=30000)
    (proj / ".gemini" / "settings.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    with fake_gemini_api() as api:
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "GEMINI_API_KEY": "x",
               "GOOGLE_GEMINI_BASE_URL": api.url, "GEMINI_CLI_TRUST_WORKSPACE": "true"}
        for args in (["-p", PROMPT], ["--resume", "latest", "-p", f"Thanks. Note OPENAI_API_KEY={KEY} for staging."]):
            r = subprocess.run([str(gemini), *args, "--yolo"], cwd=proj, env=env, capture_output=True, text=True,
                               timeout=180)
            assert r.returncode == 0, r.stderr[-2000:]
        assert "MARKER-SessionStart" in api.text() and "MARKER-BeforeAgent" in api.text()
    payloads = _payloads(dumps)
    chat = Path(payloads[0]["transcript_path"])   # the hooks name it (Gemini may write other chats beside it)
    assert chat.is_relative_to(home / ".gemini" / "tmp") and chat.name.startswith("session-"), \
        sorted(p.name for p in (home / ".gemini" / "tmp").rglob("session-*"))
    _check_transcript(chat, "gemini")
    assert {"SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"} <= {p["hook_event_name"] for p in payloads}
    for p in payloads:
        assert p["transcript_path"] == str(chat) and p["session_id"]
    assert [p["prompt_response"] for p in payloads if p["hook_event_name"] == "AfterAgent"][-1].endswith(FINAL_TEXT)
