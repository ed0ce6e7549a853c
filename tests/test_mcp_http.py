"""``hela mcp --http``: a real server process on 127.0.0.1 (free port), driven by the official SDK's
streamable HTTP client. With the token the tools work (remember, then recall); without it or with a wrong
one the HTTP answer is 401 and nothing is written; two client sessions at once lose nothing; a
non-loopback bind without a token is refused; the token never shows in the server's output (access log
included) except in the single print of a generated one.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import stat
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from hela_cli.config import Config
from hela_cli.errors import InputError
from hela_cli.mcp_server.access import ALL, Verifier
from hela_cli.mcp_server.http import client_config, is_loopback, parse_address, resolve_token, url_for
from hela_cli.mcp_server.tools import build_server
from tests.http_support import Session, free_port, refused, start
from tests.reliability import hela, hela_env
from tests.support import MCP_TURNS as TURNS

TOKEN = "test-token-" + "x7Qp2" * 6
TOOLS = {"remember", "recall", "ask", "reinforce", "forget", "spaces", "hubs", "memories", "update", "delete"}
@pytest.fixture(scope="module")
def shared(tmp_path_factory, model_dir_path) -> Any:
    """One server with the token from the environment, shared by the tests of this module that need models."""
    server = start(tmp_path_factory.mktemp("mcp-http"), HELA_MCP_TOKEN=TOKEN)
    yield server
    server.stop()
    assert TOKEN not in server.output()


def count_nodes(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute("SELECT count(*) FROM nodes").fetchone()[0]


def space_row(db: Path, space: str) -> tuple[int, int]:
    """(memories, step counter) of a space, read from the database file."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        sid, step = con.execute("SELECT id, step FROM spaces WHERE name = ?", (space,)).fetchone()
        return con.execute("SELECT count(*) FROM nodes WHERE space_id = ?", (sid,)).fetchone()[0], step


# ------------------------------------------------------------------------------------- real server, real models
def test_tools_with_token(shared):
    async def main() -> None:
        async with Session(shared.url, TOKEN) as c:
            stdio_tools = {t.name for t in await build_server(Config(db=str(shared.db))).list_tools()}
            assert {t.name for t in (await c.s.list_tools()).tools} == stdio_tools >= TOOLS
            out = await c.call("remember", {"space": "pets", "turns": TURNS})
            assert len(out["added"]) == 3 and out["skipped"] == []
            out = await c.call("recall", {"space": "pets", "query": "What is the name of Alice's cat?"})
            found = [m["source_id"] for m in out["memories"]]
            assert set(found) == {"m1", "m2", "m3"} and found[0] in ("m1", "m3")
        async with Session(shared.url, TOKEN) as c:  # a second client sees what the first wrote
            spaces = {s["name"]: s for s in (await c.call("spaces", {}))["spaces"]}
            assert spaces["pets"]["nodes"] == 3 and spaces["pets"]["retrievals"] == 1

    anyio.run(main)
    assert TOKEN not in shared.output()


def test_no_or_wrong_token_gets_401_and_writes_nothing(shared):
    before = count_nodes(shared.db)
    assert refused(shared.url, None) == [401]
    assert refused(shared.url, "not-the-token-" + "a" * 30) == [401]
    assert refused(shared.url, TOKEN + "x") == [401]
    assert refused(shared.url, TOKEN[:-1]) == [401]
    assert refused(shared.url, TOKEN, scheme="Basic") == [401]

    # inside an open session: the same remember is refused with a wrong token, then runs with the right one
    statuses: list[int] = []

    async def main() -> None:
        async with Session(shared.url, TOKEN, statuses) as c:
            c.http.headers["Authorization"] = "Bearer wrong-" + TOKEN
            mark = len(statuses)
            args = {"space": "guarded", "turns": [{"text": "the safe code is in the blue notebook"}]}
            with pytest.raises(MCPError):
                await c.s.call_tool("remember", args)
            assert statuses[mark:] and set(statuses[mark:]) == {401}  # the POST (and a GET stream retry)
            assert count_nodes(shared.db) == before
            c.http.headers["Authorization"] = f"Bearer {TOKEN}"
            assert len((await c.call("remember", args))["added"]) == 1

    anyio.run(main)
    assert count_nodes(shared.db) == before + 1

    # a raw request: 401 with the SDK's bearer error, and the access log records it (without the token)
    r = httpx2.post(shared.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                    headers={"Authorization": "Bearer nope-nope-nope-nope", "Accept": "application/json, "
                             "text/event-stream"})
    assert r.status_code == 401 and r.json()["error"] == "invalid_token"
    assert r.headers["www-authenticate"].startswith("Bearer ")
    out = shared.output()
    assert '"POST /mcp HTTP/1.1" 401' in out
    assert TOKEN not in out and "Traceback" not in out


def test_two_clients_at_once_lose_nothing(shared):
    n = 6
    inflight, peak = [0], [0]

    async def client(tag: str) -> list[int]:
        ids = []
        async with Session(shared.url, TOKEN) as c:
            for i in range(n):
                inflight[0] += 1
                peak[0] = max(peak[0], inflight[0])
                out = await c.call("remember", {"space": "team", "turns": [
                    {"speaker": tag, "text": f"{tag} note {i}: the {tag} project milestone {i} is due", "id": f"{tag}-{i}"}]})
                ids += out["added"]
                out = await c.call("recall", {"space": "team", "query": f"{tag} project milestone {i}"})
                inflight[0] -= 1
                assert out["memories"]
        return ids

    async def main() -> dict[str, list[int]]:
        results: dict[str, list[int]] = {}

        async def run(tag: str) -> None:
            results[tag] = await client(tag)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "ana")
            tg.start_soon(run, "ben")
        return results

    results = anyio.run(main)
    assert peak[0] == 2  # both sessions had calls outstanding at the same time
    all_ids = results["ana"] + results["ben"]
    assert len(all_ids) == 2 * n and len(set(all_ids)) == 2 * n
    nodes, step = space_row(shared.db, "team")
    assert nodes == 2 * n and step == 2 * n  # every turn stored once, one step per learning recall

    async def check() -> None:
        async with Session(shared.url, TOKEN) as c:
            out = await c.call("recall", {"space": "team", "query": "ben project milestone 3", "learn": False})
            assert "ben-3" in [m["source_id"] for m in out["memories"]]

    anyio.run(check)


# ------------------------------------------------------------------------------------- no models needed
def test_generated_token_printed_once_and_kept_private(tmp_path):
    server = start(tmp_path / "a")
    try:
        path = server.home / "mcp-token"
        token = path.read_text().strip()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        out = server.output()
        assert out.count(token) == 1
        config = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
        entry = config["mcpServers"]["hela"]
        assert entry["url"] == server.url and entry["headers"]["Authorization"] == f"Bearer {token}"
        assert refused(server.url, None) == [401]

        async def main() -> None:
            async with Session(server.url, token) as c:
                assert await c.call("spaces", {}) == {"spaces": []}

        anyio.run(main)
    finally:
        server.stop()
    out = server.output()
    assert out.count(token) == 1 and '"POST /mcp HTTP/1.1" 401' in out and '"POST /mcp HTTP/1.1" 200' in out
    assert server.proc.returncode == 130  # Ctrl-C: graceful shutdown, then the CLI's 'interrupted'

    # a restart on the same data dir uses the saved token and does not print it
    again = start(tmp_path / "a")
    again.stop()
    assert path.read_text().strip() == token and token not in again.output()
    assert "saved in" in again.output()


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_ctrl_c_is_exit_130_whatever_sigint_disposition_was_inherited(tmp_path, sigint):
    """A background job of a script (or a CI runner) starts hela with SIGINT ignored; uvicorn still stops
    on it, and the stop is a Ctrl-C: 'interrupted', exit 130 (it was 0: uvicorn re-raised the signal into
    the inherited SIG_IGN)."""
    server = start(tmp_path, sigint=sigint, HELA_MCP_TOKEN=TOKEN)
    assert refused(server.url, None) == [401]   # it serves (so uvicorn's own handlers are in place)
    server.stop()
    assert server.proc.returncode == 130, server.output()
    assert server.output().rstrip().endswith("interrupted")


def test_non_loopback_without_token_is_refused(tmp_path):
    port = free_port()
    env = hela_env(tmp_path)
    r = hela(["mcp", "--http", f"0.0.0.0:{port}"], env, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"error: refusing to serve on 0.0.0.0:{port} (not a loopback address) without a token: give --token-file "
        "PATH, set HELA_MCP_TOKEN, or make client tokens with `hela tokens add`"]
    assert not (tmp_path / "home" / "mcp-token").exists()
    with socket.socket() as s:  # nothing listens there
        assert s.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.parametrize("args, message", [
    (["--http", "localhost"], "--http 'localhost': give HOST:PORT, e.g. 127.0.0.1:8765"),
    (["--http", "127.0.0.1:99999"], "--http '127.0.0.1:99999': give HOST:PORT, e.g. 127.0.0.1:8765"),
    (["--token-file", "t"], "--token-file needs --http HOST:PORT (the stdio server takes no token)"),
])
def test_bad_http_flags(tmp_path, args, message):
    r = hela(["mcp", *args], hela_env(tmp_path), timeout=120)
    assert (r.returncode, r.stderr.strip().splitlines()) == (2, [f"error: {message}"])


def test_token_file_errors_never_show_the_token(tmp_path):
    short = tmp_path / "short"
    short.write_text("tiny-secret\n")
    missing = tmp_path / "missing"
    for path, why in ((short, "the token is shorter than 16 characters"),
                      (missing, "cannot read the token (No such file or directory)")):
        r = hela(["mcp", "--http", "127.0.0.1:1", "--token-file", str(path)], hela_env(tmp_path), timeout=120)
        assert (r.returncode, r.stderr.strip().splitlines()) == (2, [f"error: --token-file {path}: {why}"])
        assert "tiny-secret" not in r.stderr + r.stdout
    r = hela(["mcp", "--http", "127.0.0.1:1"], hela_env(tmp_path, HELA_MCP_TOKEN="has a space in it ok"),
             timeout=120)
    assert r.returncode == 2 and "has a space" not in r.stderr
    assert r.stderr.strip() == "error: environment HELA_MCP_TOKEN: the token must be printable ASCII without spaces"


def test_busy_port_is_one_line(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = hela(["mcp", "--http", f"127.0.0.1:{port}"], hela_env(tmp_path, HELA_MCP_TOKEN=TOKEN), timeout=120)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
        assert r.stderr.startswith(f"error: --http 127.0.0.1:{port}: cannot listen there (")
        r = hela(["mcp", "--http", f"127.0.0.1:{port}"], hela_env(tmp_path), timeout=120)  # no token given
        assert r.returncode == 2 and "cannot listen there" in r.stderr
    assert not (tmp_path / "home" / "mcp-token").exists()  # a token that was never shown is not kept


# ------------------------------------------------------------------------------------- pure logic
def test_parse_address_and_loopback():
    assert parse_address("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_address("[::1]:8765") == ("::1", 8765)
    assert parse_address("example.org:80") == ("example.org", 80)
    for bad in ("8765", ":8765", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:http"):
        with pytest.raises(InputError):
            parse_address(bad)
    assert is_loopback("127.0.0.1") and is_loopback("127.8.9.1") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("192.168.1.4")
    assert not is_loopback("localhost")  # names are resolved before this check
    assert url_for("::1", 9) == "http://[::1]:9/mcp"
    assert client_config("u", "t")["mcpServers"]["hela"]["headers"] == {"Authorization": "Bearer t"}


def test_token_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    f = tmp_path / "tok"
    f.write_text("from-the-file-0123456789\nsecond line ignored\n")
    env = {"HELA_MCP_TOKEN": "from-the-env-0123456789"}
    assert resolve_token(str(f), False, "x", env).value == "from-the-file-0123456789"
    t = resolve_token(None, False, "x", env)
    assert (t.value, t.generated) == ("from-the-env-0123456789", False) and t.value not in repr(t)
    with pytest.raises(InputError, match="refusing to serve on 10.0.0.2:80"):
        resolve_token(None, False, "10.0.0.2:80", {})
    assert not (tmp_path / "home").exists()
    gen = resolve_token(None, True, "x", {})
    assert gen.generated and len(gen.value) >= 40
    assert (tmp_path / "home" / "mcp-token").read_text() == gen.value + "\n"
    again = resolve_token(None, True, "x", {})
    assert again.value == gen.value and not again.generated


def test_server_token_verifier(tmp_path):
    v = Verifier(TOKEN, str(tmp_path / "none.db"))
    assert v.grant(TOKEN) is ALL

    async def main() -> None:
        ok = await v.verify_token(TOKEN)
        assert ok is not None and ok.token != TOKEN and TOKEN not in repr(ok)
        for wrong in ("", TOKEN[:-1], TOKEN + "x", TOKEN.upper(), "é" + TOKEN, "\udcff"):
            assert await v.verify_token(wrong) is None

    anyio.run(main)
    v.close()
    assert not (tmp_path / "none.db").exists()   # checking tokens creates no database


def test_accepted_connections_get_tcp_nodelay():
    """asyncio (as uvicorn runs it) sets TCP_NODELAY on accepted sockets only when the listening socket says
    TCP; without it every response body waited ~40 ms for the client's delayed ACK."""
    import asyncio

    from hela_cli.mcp_server.http import _listen

    sock = _listen(socket.AF_INET, "127.0.0.1", free_port(), "test")
    seen: list[int] = []

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: Any) -> None:
            seen.append(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname())
            while not seen:
                await asyncio.sleep(0.01)
            writer.close()

    asyncio.run(main())
    assert seen == [1]
