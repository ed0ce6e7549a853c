"""MCP sampling: ``models.chat: client`` answers and consolidates inside ``hela mcp`` with the client's model
(the SDK's in-process client with a sampling callback that answers from a script)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CreateMessageResult, ErrorData, TextContent

from hela_cli.errors import ModelError
from hela_cli.mcp_server.tools import build_server
from hela_cli.models.sampling import SamplingChat
from tests.cases import TURNS
from tests.support import small_config

REMEMBER = [{"text": t, "speaker": s, "time": ts, "session": "s1"} for s, t, ts in TURNS]


def _server(tmp_path, hash_embedder, **changes):
    cfg = small_config(**{"models.chat": "client", **changes}).replace(db=str(tmp_path / "m.db"))
    cfg.db = str(tmp_path / "m.db")
    server = build_server(cfg)
    server.hela.memory._embedder = hash_embedder
    return server


def test_ask_and_consolidation_use_the_clients_model(tmp_path, hash_embedder):
    server = _server(tmp_path, hash_embedder, **{"consolidation.auto": True, "consolidation.auto_every": 1})
    hela = server.hela
    requests: list[Any] = []

    async def sampling(context: Any, params: Any) -> CreateMessageResult:
        requests.append(params)
        if "JSON schema" in (params.system_prompt or ""):  # prompt A.1: a distillation
            schema = json.loads(params.system_prompt.split("JSON schema:\n", 1)[1])
            ids = schema["properties"]["facts"]["items"]["properties"]["evidence"]["items"]["enum"]
            reply = json.dumps({"traits": [], "knowledge": [], "facts": [
                {"subject": "Caroline", "text": "Caroline adopted the greyhound Tofu.", "date": "",
                 "evidence": ids[:1]}]})
        else:  # prompt A.2: an answer, with a follow-up the stop sequences must cut
            reply = "Answer: Tofu\nQuestion: what else?"
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=reply),
                                   model="scripted-model")

    async def main() -> None:
        async with Client(server, sampling_callback=sampling, mode="legacy") as c:
            assert not (await c.call_tool("remember", {"space": "t", "turns": REMEMBER})).is_error
            sp = hela.memory.store.require_space("t")
            ids = [n["id"] for n in hela.memory.store.iter_nodes(sp.id)]
            with hela.memory.store.transaction():  # a hub: node 0 strongly linked to nodes 4 and 6
                hela.memory.store.set_edges(sp, {(ids[0], ids[4]): 0.4, (ids[0], ids[6]): 0.3,
                                                 (ids[4], ids[6]): 0.2}, hela.memory.config.hebbian.decay)
            res = await c.call_tool("ask", {"space": "t", "question": "What is the name of Caroline's dog?"})
            assert not res.is_error, res
            assert res.structured_content["answer"] == "Tofu"
            # the consolidation that was due ran after the answer, through the client's model too
            spaces = (await c.call_tool("spaces", {})).structured_content["spaces"]
            assert spaces[0]["semantic"] >= 1

    anyio.run(main)
    answer = requests[0]
    assert answer.system_prompt.startswith("You are an AI assistant with access to conversation history")
    assert answer.messages[-1].content.text.startswith("<EPISODIC MEMORIES>")
    assert answer.temperature == 0.0 and "\nQuestion:" in answer.stop_sequences
    assert any("JSON schema" in (r.system_prompt or "") for r in requests[1:])
    assert hela.memory.chat.last_model == "scripted-model"


def test_a_client_without_sampling_gets_a_clear_tool_error(tmp_path, hash_embedder):
    server = _server(tmp_path, hash_embedder)

    async def main() -> None:
        async with Client(server, mode="legacy") as c:
            assert not (await c.call_tool("remember", {"space": "t", "turns": REMEMBER})).is_error
            res = await c.call_tool("ask", {"space": "t", "question": "Where?"})
            assert res.is_error
            assert "does not support sampling" in res.content[0].text
            assert "Traceback" not in res.content[0].text

    anyio.run(main)
    sp = server.hela.memory.store.require_space("t")
    assert server.hela.memory.store.asks(sp.id) == []  # nothing logged, nothing learnt
    assert sp.step == 0


def test_a_refused_sampling_request_is_a_tool_error_and_writes_nothing(tmp_path, hash_embedder):
    server = _server(tmp_path, hash_embedder)

    async def refuse(context: Any, params: Any) -> ErrorData:
        return ErrorData(code=-1, message="the user declined the request")

    async def main() -> None:
        async with Client(server, sampling_callback=refuse, mode="legacy") as c:
            assert not (await c.call_tool("remember", {"space": "t", "turns": REMEMBER})).is_error
            res = await c.call_tool("ask", {"space": "t", "question": "Where?"})
            assert res.is_error and "MCP client sampling failed: the user declined the request" in res.content[0].text

    anyio.run(main)
    sp = server.hela.memory.store.require_space("t")
    assert server.hela.memory.store.asks(sp.id) == [] and sp.step == 0


def test_client_outside_mcp_is_a_model_error(tmp_path, hash_embedder):
    from hela_cli.config import Config
    from hela_cli.memory import Memory

    with pytest.raises(ModelError, match="only inside `hela mcp`"):
        Memory(Config().replace(**{"models.chat": "client"})).chat  # noqa: B018
    with pytest.raises(ModelError, match="no MCP client session"):
        SamplingChat(lambda: None).generate([{"role": "user", "content": "hi"}])


def test_sampling_over_stdio_with_a_real_server_process(tmp_path, model_dir_path):
    """`hela mcp` as a process (the real embedder), an SDK stdio client lending a scripted model."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from tests.support import MCP_TURNS, mcp_params

    params = mcp_params(tmp_path, tmp_path / "s.db", HELA_MODELS_CHAT="client")
    seen: list[str] = []

    async def sampling(context: Any, p: Any) -> CreateMessageResult:
        seen.append(p.messages[-1].content.text)
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="Miso"), model="script")

    async def main() -> None:
        with open(tmp_path / "err.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), \
                    ClientSession(r, w, sampling_callback=sampling) as s:
                await s.initialize()
                assert not (await s.call_tool("remember", {"space": "a", "turns": MCP_TURNS})).is_error
                res = await s.call_tool("ask", {"space": "a", "question": "What is the name of Alice's cat?"})
                assert not res.is_error, res.content
                assert res.structured_content["answer"] == "Miso"

    anyio.run(main)
    assert len(seen) == 1 and "Miso sleeps on my keyboard" in seen[0]
    assert not (tmp_path / "network.log").exists()  # stdio: no socket, even with the client's model
