"""The fake model APIs of hela_cli.testing.agents, without the agents: what each answers to a request shaped
as its agent sends it (the scripted replies: text, Shell, ToolUse, steps), and what it records."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from hela_cli.testing.agents import (FINAL_TEXT, Shell, ToolUse, fake_gemini_api, fake_messages_api,
                                     fake_responses_api, steps, tool_rounds)


def post(url: str, body: dict[str, Any]) -> tuple[str, bytes]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=30) as r:   # no proxy
        return r.headers["content-type"], r.read()


def sse(payload: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: "):]) for line in payload.decode().splitlines() if line.startswith("data: ")]


CODEX_TOOLS = [{"type": "function", "name": "exec_command"}, {"type": "function", "name": "apply_patch"}]
CODEX_PROMPT = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}


def test_codex_default_script_runs_the_shell_then_answers():
    with fake_responses_api() as api:
        _, first = post(f"{api.url}/v1/responses", {"input": [CODEX_PROMPT], "tools": CODEX_TOOLS})
        done = sse(first)[-1]["response"]["output"]
        assert [i["type"] for i in done] == ["message", "function_call"]
        assert done[1]["name"] == "exec_command" and json.loads(done[1]["arguments"]) == {"cmd": "python3 --version"}
        after = [CODEX_PROMPT, done[1], {"type": "function_call_output", "call_id": done[1]["call_id"], "output": "3"}]
        _, second = post(f"{api.url}/v1/responses", {"input": after, "tools": CODEX_TOOLS})
        assert sse(second)[-1]["response"]["output"][0]["content"][0]["text"] == FINAL_TEXT
        # a new prompt after that turn starts the script again
        again = [*after, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "more"}]}]
        assert tool_rounds("codex", {"input": again}) == 0
    assert len(api.messages()) == 2 and "python3 --version" in api.texts()[1]


def test_codex_without_a_shell_tool_is_a_server_error_the_test_sees():
    with fake_responses_api(Shell("ls")) as api:
        with pytest.raises(urllib.error.HTTPError) as e:
            post(f"{api.url}/v1/responses", {"input": [CODEX_PROMPT], "tools": [{"name": "apply_patch"}]})
        assert e.value.code == 500 and "no shell tool" in e.value.read().decode()


def test_gemini_steps_tool_use_and_json_side_requests():
    reply = steps("gemini", ToolUse("read_file", {"absolute_path": "/x"}), "Read it.")
    with fake_gemini_api(reply) as api:
        user = {"role": "user", "parts": [{"text": "read /x"}]}
        _, first = post(f"{api.url}/v1beta/models/m:streamGenerateContent?alt=sse", {"contents": [user]})
        assert sse(first)[0]["candidates"][0]["content"]["parts"] == [
            {"functionCall": {"name": "read_file", "args": {"absolute_path": "/x"}}}]
        result = {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "x"}}}]}
        _, second = post(f"{api.url}/v1beta/models/m:generateContent",
                         {"contents": [user, {"role": "model", "parts": []}, result]})
        assert json.loads(second)["candidates"][0]["content"]["parts"] == [{"text": "Read it."}]
        _, side = post(f"{api.url}/v1beta/models/m:generateContent",
                       {"contents": [user], "generationConfig": {"responseMimeType": "application/json"}})
        assert json.loads(json.loads(side)["candidates"][0]["content"]["parts"][0]["text"])["next_speaker"] == "user"
        _, count = post(f"{api.url}/v1beta/models/m:countTokens", {"contents": [user]})
        assert json.loads(count) == {"totalTokens": 10}
    assert len(api.messages()) == 3 and len(api.requests) == 4


def test_claude_shell_streams_a_text_and_a_bash_call():
    with fake_messages_api(steps("claude", Shell("ls -la", "Looking."), "Done.")) as api:
        prompt = {"role": "user", "content": "list"}
        ctype, first = post(f"{api.url}/v1/messages", {"model": "m", "stream": True, "messages": [prompt]})
        assert ctype == "text/event-stream"
        events = sse(first)
        starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
        assert [b["type"] for b in starts] == ["text", "tool_use"] and starts[1]["name"] == "Bash"
        deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
        assert deltas[0]["text"] == "Looking." and json.loads(deltas[1]["partial_json"])["command"] == "ls -la"
        assert events[-2]["delta"]["stop_reason"] == "tool_use"
        tool = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": starts[1]["id"], "content": "ok"}]}
        _, second = post(f"{api.url}/v1/messages", {"model": "m", "messages": [prompt, {"role": "assistant",
                                                                                        "content": []}, tool]})
        assert json.loads(second)["content"] == [{"type": "text", "text": "Done."}]
    assert [json.loads(t)["messages"][-1]["role"] for t in api.texts()] == ["user", "user"]
