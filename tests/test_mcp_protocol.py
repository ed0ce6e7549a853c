"""``hela mcp`` on the MCP 2026-07-28 protocol revision (issue 56), with the official SDK's own client over stdio
and streamable HTTP: the client discovers the server (``server/discover``, the 2026-07-28 way in) and they
agree on 2026-07-28, then remember and recall through it; a client of the handshake (``initialize``) gets an
earlier revision, and one that asks for 2025-06-18 gets that one; the server's stderr holds no deprecation
warning of hela's making (sampling, deprecated by SEP-2577, is hela's legacy route and silenced where hela
uses it: docs/mcp.md)."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.http_support import http_client, start
from tests.support import call_tool, mcp_params

REVISION = "2026-07-28"
EARLIER = "2025-06-18"


async def _use(s: ClientSession) -> None:
    ok, _ = await call_tool(s, "remember", {"space": "p", "turns": [
        {"speaker": "user", "text": "The release train leaves every second Thursday."}]})
    assert ok is False
    ok, out = await call_tool(s, "recall", {"space": "p", "query": "when does the release train leave?"})
    assert ok is False and any("second Thursday" in m["text"] for m in out["memories"])


def test_stdio_negotiates_2026_07_28(tmp_path):
    errlog = (tmp_path / "server.err").open("w")

    async def main() -> tuple[str, str]:
        params = mcp_params(tmp_path, tmp_path / "m.db", PYTHONWARNINGS="default")
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            found = await s.discover()
            assert REVISION in found.supported_versions
            await _use(s)
            modern = s.protocol_version
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            legacy = (await s.initialize()).protocol_version
            await _use(s)
        return modern, legacy

    modern, legacy = anyio.run(main)
    assert modern == REVISION and legacy < REVISION
    errlog.close()
    err = (tmp_path / "server.err").read_text()
    assert "DeprecationWarning" not in err and "Traceback" not in err, err


def test_http_negotiates_2026_07_28_and_an_earlier_client_gets_its_own(tmp_path):
    server = start(tmp_path, PYTHONWARNINGS="default", HELA_MCP_TOKEN="protocol-test-token-0123456789abcdef")
    try:
        async def main() -> str:
            async with http_client("protocol-test-token-0123456789abcdef") as c, \
                    streamable_http_client(server.url, http_client=c) as (r, w), ClientSession(r, w) as s:
                found = await s.discover()
                assert REVISION in found.supported_versions
                await _use(s)
                return s.protocol_version

        assert anyio.run(main) == REVISION

        import httpx2

        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": EARLIER, "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}}
        r = httpx2.post(server.url, json=init, timeout=60,
                        headers={"Authorization": "Bearer protocol-test-token-0123456789abcdef",
                                 "Accept": "application/json, text/event-stream"})
        assert r.status_code == 200
        body = r.text
        data = json.loads(body.split("data:", 1)[1].strip().splitlines()[0]) if "data:" in body else r.json()
        assert data["result"]["protocolVersion"] == EARLIER
    finally:
        server.stop()
    out = server.output()
    assert "DeprecationWarning" not in out and "Traceback" not in out, out


@pytest.mark.parametrize("doc", ["docs/mcp.md"])
def test_sampling_is_documented_as_legacy_with_its_replacements(doc):
    from tests.reliability import REPO

    text = (REPO / doc).read_text(encoding="utf-8")
    assert "2026-07-28" in text and "SEP-2577" in text and "legacy" in text
    assert "agent:" in text and "openai:" in text
