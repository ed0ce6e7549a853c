"""``hela mcp`` through the official SDK's stdio client: a real server process, real models.

List tools, remember three turns, recall them with ids and dates, ask for an answer with its memories,
share the database with a CLI process, and get tool errors (never a dead server, never a traceback) for
bad arguments, an unknown space and a model fault.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from tests.reliability import PY, hela, hela_env
from tests.support import MCP_TURNS as TURNS, NET_TRAP, call_tool, mcp_params






def test_mcp_session(tmp_path):
    db = tmp_path / "mcp.db"
    errlog = (tmp_path / "server.err").open("w")

    async def main() -> None:
        async with stdio_client(mcp_params(tmp_path, db), errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"remember", "recall", "ask", "reinforce", "forget", "spaces", "hubs", "memories",
                                  "update", "delete"}
            assert {"space", "query", "k", "learn", "explain"} <= set(tools["recall"].input_schema["properties"])
            assert tools["remember"].input_schema["required"] == ["space", "turns"]

            assert await call_tool(s, "spaces", {}) == (False, {"spaces": []})
            assert not db.exists()  # listing does not create the database

            err, out = await call_tool(s, "remember", {"space": "pets", "turns": TURNS})
            assert not err and len(out["added"]) == 3 and out["skipped"] == []
            ids = dict(zip(["m1", "m2", "m3"], out["added"]))
            err, out = await call_tool(s, "remember", {"space": "pets", "turns": TURNS[:1]})
            assert out == {"space": "pets", "added": [], "skipped": [{"id": ids["m1"], "source_id": "m1"}]}

            err, out = await call_tool(s, "recall", {"space": "pets", "query": "What is the name of Alice's cat?",
                                                 "learn": False})
            assert not err
            found = {m["source_id"]: m for m in out["memories"]}
            assert set(found) == {"m1", "m2", "m3"}
            assert out["memories"][0]["source_id"] in ("m1", "m3")
            assert found["m1"]["id"] == ids["m1"] and found["m1"]["date"] == "2024-05-01T10:00:00Z"
            assert found["m1"]["speaker"] == "Alice" and found["m1"]["path"] in ("base", "hebbian")
            assert isinstance(found["m1"]["score"], float)
            err, out = await call_tool(s, "recall", {"space": "pets", "query": "marathon", "explain": True, "k": 1})
            assert not err and out["memories"][0]["source_id"] == "m2" and "cos" in out["memories"][0]
            # k=1: one memory by base activation first; the m flipped slots are 'hebbian' only when the spreading
            # bonus brought a memory in (not so here: the space's 3 memories hold them by base activation)
            assert out["memories"][0]["path"] == "base" and len(out["memories"]) == 3
            assert all(m["path"] == "base" for m in out["memories"])
            steps = (await call_tool(s, "spaces", {}))[1]["spaces"][0]["retrievals"]
            assert steps == 1  # learn=false did not count, the default learns

            # a CLI process writes to the same database while the server holds it open
            cli = hela(["add", "-s", "pets", "--speaker", "Bob", "--time", "2024-05-01T10:03:00Z",
                        "My sister Clara lives in Lyon"], hela_env(tmp_path, db))
            assert cli.returncode == 0, cli.stderr
            err, out = await call_tool(s, "recall", {"space": "pets", "query": "Where does Clara live?"})
            assert out["memories"][0]["id"] == int(cli.stdout)

            err, out = await call_tool(s, "ask", {"space": "pets", "question": "What is the name of Alice's cat?"})
            assert not err and isinstance(out["answer"], str) and out["answer"].strip()
            assert ids["m1"] in [m["id"] for m in out["memories"]]

            err, out = await call_tool(s, "forget", {"space": "pets"})
            assert not err and out["applied"] is False and out["removed"] == 0 and out["nodes"] == 4
            err, out = await call_tool(s, "hubs", {"space": "pets", "top": 3})
            assert not err and isinstance(out["hubs"], list)

            # errors: one line, the CLI's message, and the server answers afterwards
            err, msg = await call_tool(s, "recall", {"space": "nope", "query": "x"})
            assert err and msg == "unknown space 'nope' (spaces: pets)"
            err, msg = await call_tool(s, "recall", {"space": "pets", "query": "x", "k": "lots"})
            assert err and msg.startswith("recall: invalid arguments: k:")
            err, msg = await call_tool(s, "remember", {"space": "pets", "turns": [{"speaker": "Bob"}]})
            assert err and msg.startswith("remember: invalid arguments: turns.0.text:")
            err, msg = await call_tool(s, "remember", {"space": "pets", "turns": [{"text": "hi", "time": "whenever-ish"}]})
            assert err and msg == "turn 1: cannot parse date/time 'whenever-ish'"
            err, msg = await call_tool(s, "ask", {"space": "pets", "question": "   "})
            assert err and msg == "the question is empty"
            err, out = await call_tool(s, "spaces", {})
            assert not err and out["spaces"][0]["nodes"] == 4

    anyio.run(main)
    errlog.close()
    assert "Traceback" not in (tmp_path / "server.err").read_text()
    assert not (tmp_path / "network.log").exists()


def test_mcp_model_fault_is_a_tool_error(tmp_path):
    db = tmp_path / "mcp.db"
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file at all")
    errlog = (tmp_path / "server.err").open("w")

    async def main() -> None:
        params = mcp_params(tmp_path, db, HELA_MODELS_EMBEDDER=str(bad))
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            for _ in range(2):  # the fault is reported each time; the server stays up
                err, msg = await call_tool(s, "remember", {"space": "x", "turns": [{"text": "hello"}]})
                assert err and str(bad) in msg
            assert await call_tool(s, "spaces", {}) == (False, {"spaces": []})

    anyio.run(main)
    errlog.close()
    assert not db.exists()
    assert "Traceback" not in (tmp_path / "server.err").read_text()


def test_network_trap_fires(tmp_path):
    """Control for the trap above: the same hook records a name lookup."""
    import subprocess

    code = NET_TRAP.replace("from hela_cli.cli import main\nmain()\n",
                            "import socket\ntry:\n    socket.getaddrinfo('localhost', 80)\nexcept OSError:\n    pass\n")
    assert code != NET_TRAP
    subprocess.run([PY, "-c", code, str(tmp_path / "network.log")], check=True, timeout=60)
    assert (tmp_path / "network.log").read_text().startswith("socket.getaddrinfo")


def test_ask_answers_before_a_due_consolidation(tmp_path, embedder, chat, monkeypatch):
    """A due auto-consolidation runs after the answer is sent (in-process SDK client); the next call waits
    for it. The fake consolidation blocks until the test has the answer: if ask waited for it, the order
    below would differ."""
    import threading

    from mcp import Client

    from hela_cli.config import Config
    from hela_cli.mcp_server.tools import build_server
    from hela_cli.memory import Memory

    server = build_server(Config(db=str(tmp_path / "c.db")))
    server.hela.memory._embedder, server.hela.memory._chat = embedder, chat
    events: list[Any] = []
    released = threading.Event()

    def fake_consolidate(self: Memory, space: str) -> dict[str, Any] | None:
        if not self.config.consolidation.auto:  # as the real one: not due when auto-consolidation is off
            return None
        events.append(("consolidated", space, released.wait(120)))
        return {"error": "model fault in the fake", "seconds": 0.0}

    monkeypatch.setattr(Memory, "consolidate_if_due", fake_consolidate)

    async def main() -> None:
        async with Client(server) as c:
            assert not (await c.call_tool("remember", {"space": "s", "turns": TURNS})).is_error
            res = await c.call_tool("ask", {"space": "s", "question": "What is the name of Alice's cat?"})
            assert not res.is_error and res.structured_content["answer"]
            events.append("answered")
            released.set()
            assert not (await c.call_tool("spaces", {})).is_error
            events.append("next call")
            await c.call_tool("ask", {"space": "s", "question": "Who runs a marathon?", "learn": False})
            await c.call_tool("spaces", {})

    anyio.run(main)
    assert events == ["answered", ("consolidated", "s", True), "next call"]
