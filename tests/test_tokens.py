"""Tokens per client, scoped to spaces (issue 44, item 6), and the shared server's body limits (item 3).

Real processes throughout: ``hela tokens`` on the command line, ``hela mcp --http`` on 127.0.0.1 driven by
the official SDK's streamable HTTP client, on SQLite and on the test run's Postgres. Two clients holding
tokens for different spaces each see, write and delete only their own; a read-only token's writes are
refused with one clear line; a revoked token is refused on its next request; no token shows in the
server's output, a settings file, or the database (which holds its SHA-256 only). A chunked body and an
oversized one get 413 before they are read; a hook is answered while a tool call holds the server.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from hela_cli.errors import AccessDenied, InputError
from hela_cli.mcp_server import access
from hela_cli.store import Store
from tests.hooks_support import PROMPT, TRANSCRIPT, base, context_of, hook, project  # noqa: F401 - the fixture
from tests.reliability import PY, hela, hela_env
from tests.http_support import READY, Session, free_port, refused, start

SERVER_TOKEN = "server-token-" + "Kq4v9" * 6
TURN = "the {space} team decided to ship the {thing} on Friday"


def add_token(db: str, env: dict[str, str], name: str, *args: str) -> str:
    r = hela(["--db", db, "tokens", "add", name, *args], env, timeout=120)
    assert r.returncode == 0, r.stderr
    token = r.stdout.strip()
    assert re.fullmatch(r"hela_[A-Za-z0-9_-]{43}", token) and token not in r.stderr
    return token


async def tool_error(c: Session, name: str, args: dict[str, Any]) -> str:
    res = await c.s.call_tool(name, args)
    assert res.is_error, res.content[0].text
    return res.content[0].text


def database_bytes(db: str) -> bytes:
    """Every byte of a SQLite database (the file, its WAL); on Postgres every row of every hela table, as text."""
    if not db.startswith("postgresql://"):
        return b"".join(p.read_bytes() for p in Path(db).parent.glob(Path(db).name + "*"))
    import psycopg

    with psycopg.connect(db, autocommit=True) as con:
        tables = [r[0] for r in con.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return "\n".join(str(con.execute(f'SELECT * FROM "{t}"').fetchall()) for t in tables).encode()


# ----------------------------------------------------------------------------------- the command line, no server
def test_tokens_commands_store_only_the_hash(backend_db, tmp_path):
    env = hela_env(tmp_path)
    db = backend_db
    ana = add_token(db, env, "ana", "--space", "web", "--space", "web")
    ci = add_token(db, env, "ci", "-s", "web", "-s", "api", "--read-only")
    r = hela(["--db", db, "tokens", "add", "all", "--all-spaces", "--json"], env, timeout=120)
    assert r.returncode == 0, r.stderr
    every = json.loads(r.stdout)
    assert (every["spaces"], every["scope"]) == (None, "write") and every["token"].startswith("hela_")

    r = hela(["--db", db, "tokens", "list", "--json"], env, timeout=120)
    rows = {row["name"]: row for row in json.loads(r.stdout)}
    assert set(rows) == {"ana", "ci", "all"} and rows["ana"]["spaces"] == ["web"]
    assert (rows["ci"]["spaces"], rows["ci"]["scope"], rows["ci"]["last_used"]) == (["web", "api"], "read", None)
    table = hela(["--db", db, "tokens", "list"], env, timeout=120)
    assert table.returncode == 0 and "ci" in table.stdout and "web, api" in table.stdout
    for token in (ana, ci, every["token"]):
        assert token not in r.stdout + table.stdout + table.stderr

    # the database holds the SHA-256 of each token, never the token
    stored = database_bytes(db)
    for token in (ana, ci, every["token"]):
        assert token.encode() not in stored and token[5:25].encode() not in stored
        assert hashlib.sha256(token.encode()).hexdigest().encode() in stored

    # bad input: one line, exit 2, nothing written
    for args, message in (
            (["add", "ana", "-s", "x"], "a token named 'ana' exists already (hela tokens revoke ana first)"),
            (["add", "bo b", "-s", "x"], "token name 'bo b': 1-64 letters, digits, '.', '_', '-' or '@', starting "
                                         "with a letter or digit"),
            (["add", "bob"], "give the spaces this token may use: --space NAME (repeat it), or --all-spaces"),
            (["add", "bob", "-s", "x", "--all-spaces"], "give --space NAME (one or more) or --all-spaces, not both"),
            (["add", "bob", "-s", ""], "--space: invalid space name '' (1-200 characters, no control characters)"),
            (["revoke", "nobody"], "no token named 'nobody' (hela tokens list shows them)")):
        r = hela(["--db", db, "tokens", *args], env, timeout=120)
        assert (r.returncode, r.stdout, r.stderr.strip().splitlines()) == (2, "", [f"error: {message}"]), args
    r = hela(["--db", db, "tokens", "revoke", "ci"], env, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "revoked token 'ci'"
    with Store.open(db) as s:
        assert [row["name"] for row in s.tokens()] == ["all", "ana"]


def test_tokens_help_explains_it(tmp_path):
    r = hela(["tokens", "--help"], hela_env(tmp_path), timeout=120)
    text = " ".join(r.stdout.split())
    assert r.returncode == 0
    for phrase in ("prints a new token once", "stores only its SHA-256 hash", "read-only token cannot remember",
                   "refuses it from its next request", "never sees a space outside its list"):
        assert phrase in text, phrase


def test_the_docs_token_commands_run_as_written(tmp_path):
    """docs/sharing.md's block of `hela tokens` commands, each line run as written (in a fresh folder)."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "sharing.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Tokens per client"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    lines = [ln.split("  #")[0].strip() for ln in block.splitlines() if ln.strip()]
    assert len(lines) == 5 and all(ln.startswith("hela --db team.db tokens ") for ln in lines)
    env = hela_env(tmp_path)
    outs = []
    for ln in lines:
        r = hela(ln.split()[1:], env, timeout=120, cwd=tmp_path)
        assert r.returncode == 0, (ln, r.stderr)
        outs.append(r.stdout)
    assert "ci-bot" in outs[3] and "webapp, api" in outs[3]
    with Store.open(str(tmp_path / "team.db")) as s:
        assert [row["name"] for row in s.tokens()] == ["ana-laptop", "ben-laptop"]


# ----------------------------------------------------------------------------------- pure logic
def test_grant_checks():
    g = access.Grant("ana", frozenset({"web"}), False)
    g.check_space("web")
    for space in ("api", "", None, 3):
        with pytest.raises(AccessDenied):
            g.check_space(space)
    with pytest.raises(AccessDenied, match="token 'ana' is read-only: remember needs a token with write access"):
        g.check_write("remember")
    assert g.visible(["api", "web", "x"]) == ["web"]
    assert access.Grant.from_claims(g.claims()) == g and access.Grant.from_claims({}) is None
    access.ALL.check_space("anything")
    access.ALL.check_write("delete")
    assert AccessDenied("x").exit_code == 77
    with pytest.raises(InputError):
        access.check_name("-leading-dash")


def test_verifier_reads_the_database_on_every_request(tmp_path):
    db = str(tmp_path / "v.db")
    with Store.open(db, must_exist=False) as s:
        token, row = access.add(s, "ana", ["web"])
    v = access.Verifier(SERVER_TOKEN, db)
    try:
        assert v.grant(SERVER_TOKEN) is access.ALL
        g = v.grant(token)
        assert (g.name, g.spaces, g.write) == ("ana", frozenset({"web"}), True)
        assert v.grant(token + "x") is None and v.grant("hela_" + "A" * 43) is None and v.grant("") is None
        with Store.open(db) as s:
            access.revoke(s, "ana")
        assert v.grant(token) is None   # the next check already refuses it
    finally:
        v.close()


# ----------------------------------------------------------------------------------- a real server, real models
def test_two_clients_each_see_write_and_delete_only_their_own(backend_db, tmp_path, model_dir_path):
    db = backend_db
    env = hela_env(tmp_path)
    ana = add_token(db, env, "ana", "--space", "web")
    ben = add_token(db, env, "ben", "--space", "api")
    cat = add_token(db, env, "cat", "--space", "web", "--read-only")
    server = start(tmp_path / "srv", db=db, HELA_MCP_TOKEN=SERVER_TOKEN)
    try:
        async def main() -> None:
            async with Session(server.url, ana) as a, Session(server.url, ben) as b, Session(server.url, cat) as c:
                web = await a.call("remember", {"space": "web", "turns": [
                    {"text": TURN.format(space="web", thing="login page"), "id": "w1"},
                    {"text": TURN.format(space="web", thing="dark mode"), "id": "w2"}]})
                api = await b.call("remember", {"space": "api", "turns": [
                    {"text": TURN.format(space="api", thing="rate limiter"), "id": "a1"}]})
                assert len(web["added"]) == 2 and len(api["added"]) == 1

                # each lists and recalls only its own
                assert [s["name"] for s in (await a.call("spaces", {}))["spaces"]] == ["web"]
                assert [s["name"] for s in (await b.call("spaces", {}))["spaces"]] == ["api"]
                assert [s["name"] for s in (await c.call("spaces", {}))["spaces"]] == ["web"]
                found = await a.call("recall", {"space": "web", "query": "what ships on Friday?"})
                assert {m["source_id"] for m in found["memories"]} == {"w1", "w2"}
                denied = "token 'ana' has no access to space 'api'"
                for name, args in (("recall", {"query": "rate limiter"}), ("memories", {}), ("hubs", {}),
                                   ("remember", {"turns": [{"text": "planted by ana"}]}),
                                   ("delete", {"ids": api["added"]}), ("update", {"id": api["added"][0], "text": "x"}),
                                   ("reinforce", {"used": api["added"]}), ("forget", {"apply": True}),
                                   ("ask", {"question": "what ships?"})):
                    assert await tool_error(a, name, {"space": "api", **args}) == denied, name
                assert await tool_error(b, "memories", {"space": "web"}) == "token 'ben' has no access to space 'web'"
                # a space that does not exist is refused the same way (nothing says whether it exists)
                assert await tool_error(a, "recall", {"space": "nope", "query": "x"}) == \
                    "token 'ana' has no access to space 'nope'"

                # ben cannot delete ana's memory by naming his own space with her id
                await b.s.call_tool("delete", {"space": "api", "ids": [web["added"][0]]})
                assert len((await a.call("memories", {"space": "web"}))["memories"]) == 2
                # ana deletes her own
                out = await a.call("delete", {"space": "web", "ids": [web["added"][1]]})
                assert out["deleted"] == [web["added"][1]]

                # the read-only token reads, never writes, and its recalls do not learn
                before = (await c.call("spaces", {}))["spaces"][0]["retrievals"]
                got = await c.call("recall", {"space": "web", "query": "login page"})
                assert [m["source_id"] for m in got["memories"]] == ["w1"] and got["recall_id"] is None
                assert (await c.call("spaces", {}))["spaces"][0]["retrievals"] == before
                for name, args in (("remember", {"turns": [{"text": "x"}]}), ("delete", {"ids": web["added"]}),
                                   ("remember", {"turns": [{"text": "now y", "supersedes": web["added"][:1]}]}),
                                   ("reinforce", {"used": web["added"][:1]}), ("update", {"id": web["added"][0],
                                                                                           "text": "y"}),
                                   ("forget", {"apply": True})):
                    what = "forget with apply" if name == "forget" else name
                    assert await tool_error(c, name, {"space": "web", **args}) == \
                        f"token 'cat' is read-only: {what} needs a token with write access", name
                assert (await c.call("forget", {"space": "web"}))["applied"] is False   # a dry run reads

                # the server token still opens every space
                async with Session(server.url, SERVER_TOKEN) as s:
                    assert {x["name"] for x in (await s.call("spaces", {}))["spaces"]} == {"web", "api"}

                # revoked while its session is open: refused on the next request
                r = hela(["--db", db, "tokens", "revoke", "ana"], env, timeout=120)
                assert r.returncode == 0, r.stderr
                with pytest.raises(MCPError):
                    await a.s.call_tool("recall", {"space": "web", "query": "login"})
                await b.call("spaces", {})   # the others still work

        anyio.run(main)
        assert refused(server.url, ana) == [401]
        r = hela(["--db", db, "tokens", "list", "--json"], env, timeout=120)
        used = {row["name"]: row["last_used"] for row in json.loads(r.stdout)}
        assert set(used) == {"ben", "cat"} and all(used.values())
    finally:
        server.stop()
    out = server.output()
    assert "Traceback" not in out and '"POST /mcp HTTP/1.1" 401' in out
    stored = database_bytes(db)
    for token in (ana, ben, cat, SERVER_TOKEN):
        assert token not in out and token.encode() not in stored
    for token in (ben, cat):
        assert hashlib.sha256(token.encode()).hexdigest().encode() in stored
    with Store.open(db) as s:   # ben's write and ana's delete are the only changes
        assert [n["source_id"] for n in s.list_nodes(s.require_space("web").id)] == ["w1"]
        assert [n["source_id"] for n in s.list_nodes(s.require_space("api").id)] == ["a1"]


# ----------------------------------------------------------------------------------- bodies, no models
def _raw(port: int, head: str, body: bytes = b"") -> tuple[int, bytes]:
    """Send ``head`` (and ``body``, possibly short of what the head announces); the status of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(head.encode("latin-1") + body)
        data = b""
        while True:   # the answer says Connection: close
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ", 2)[1]), data


@pytest.mark.parametrize("path", ["/hook", "/mcp"])
def test_chunked_and_oversized_bodies_get_413_before_they_are_read(tmp_path, path):
    server = start(tmp_path, HELA_MCP_TOKEN=SERVER_TOKEN)
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    auth = f"Authorization: Bearer {SERVER_TOKEN}\r\nContent-Type: application/json\r\n" \
           f"Accept: application/json, text/event-stream\r\n"
    try:
        # chunked: one chunk sent, the rest never comes; the answer does not wait for it
        status, _ = _raw(port, f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}"
                               f"Transfer-Encoding: chunked\r\n\r\n", b"10\r\n{\"event\": \"x\",  \r\n")
        assert status == 413
        # 100 MB announced, 1 KiB sent: refused without reading it
        status, data = _raw(port, f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}"
                                  f"Content-Length: 100000000\r\n\r\n", b"x" * 1024)
        assert status == 413 and b"request body over" in data
        # and without a token too (nothing is read for anyone)
        status, _ = _raw(port, f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                               f"Content-Length: 100000000\r\n\r\n")
        assert status == 413
        # the server still serves
        status, _ = _raw(port, f"POST /hook HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 2\r\n\r\n", b"{}")
        assert status == 401
    finally:
        server.stop()
    assert "Traceback" not in server.output() and SERVER_TOKEN not in server.output()


# ----------------------------------------------------------------------------------- hooks beside tool calls
class _HeldChat(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that answers once the test lets it (``release``)."""

    arrived = threading.Event()
    release = threading.Event()

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).arrived.set()
        type(self).release.wait(120)
        body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Friday"},
                                        "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_hook_is_answered_while_a_tool_call_holds_the_server(tmp_path, model_dir_path):
    from hela_cli.paths import db_identity

    chat = ThreadingHTTPServer(("127.0.0.1", 0), _HeldChat)
    threading.Thread(target=chat.serve_forever, daemon=True).start()
    db = tmp_path / "srv" / "shared.db"
    server = start(tmp_path / "srv", HELA_MCP_TOKEN=SERVER_TOKEN,
                   HELA_MODELS_CHAT=f"openai:held@http://127.0.0.1:{chat.server_address[1]}/v1")
    try:
        async def main() -> None:
            import httpx2

            async with Session(server.url, SERVER_TOKEN) as c:
                await c.call("remember", {"space": "web", "turns": [{"text": TURN.format(space="web", thing="x")}]})
                order: list[str] = []

                async def ask() -> None:
                    await c.call("ask", {"space": "web", "question": "When does it ship?"})
                    order.append("ask")

                async with anyio.create_task_group() as tg:
                    tg.start_soon(ask)
                    await anyio.to_thread.run_sync(_HeldChat.arrived.wait, 120)   # the ask holds the tools now
                    body = {"event": "UserPromptSubmit", "agent": "claude-code", "space": "web", "hooks": {},
                            "payload": {"session_id": "s1", "prompt": "when does the web team ship?",
                                        "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit"},
                            "db": db_identity(str(db))}
                    async with httpx2.AsyncClient(timeout=120) as h:
                        r = await h.post(server.url[: -len("/mcp")] + "/hook", json=body,
                                         headers={"Authorization": f"Bearer {SERVER_TOKEN}"})
                    order.append("hook")
                    assert r.status_code == 200 and "error" not in r.json(), r.text
                    _HeldChat.release.set()
                assert order == ["hook", "ask"]

        anyio.run(main)
    finally:
        _HeldChat.release.set()
        server.stop()
        chat.shutdown()
        chat.server_close()


# ----------------------------------------------------------------------------------- hela ui with client tokens
def test_ui_shows_a_client_token_only_its_spaces(backend_db, hash_embedder):
    from starlette.testclient import TestClient

    from hela_cli.config import Config
    from hela_cli.memory import Memory
    from hela_cli.store import BrowseStore
    from hela_cli.ui.app import create_app

    cfg = Config()
    cfg.db = backend_db
    mem = Memory(cfg, store=BrowseStore.open(cfg.db, must_exist=False), embedder=hash_embedder)
    web = mem.add_many("web", [{"text": TURN.format(space="web", thing=t), "id": t} for t in ("login", "search")])
    api = mem.add_many("api", [{"text": TURN.format(space="api", thing="quota"), "id": "quota"}])
    web_ids, api_ids = web, api
    tokens = {}
    for name, spaces, ro in (("ana", ["web"], False), ("cat", ["web"], True)):
        tokens[name], _ = access.add(mem.store, name, spaces, read_only=ro)
    clients = access.Verifier(None, cfg.db)
    app = create_app(mem, "session-token-for-the-ui", cookie="c", clients=clients)
    try:
        ana, cat = TestClient(app), TestClient(app)
        assert ana.get(f"/?token={tokens['ana']}").status_code == 200
        assert cat.get(f"/?token={tokens['cat']}").status_code == 200
        home = ana.get("/").text
        assert "space=web" in home and "space=api" not in home
        assert ana.get("/memories?space=web").status_code == 200
        for path in ("/memories?space=api", "/hubs?space=api", "/semantic?space=api", "/recall?space=api&q=quota",
                     "/heatmap?space=api", f"/graph?space=api&id={api_ids[0]}"):
            r = ana.get(path)
            assert r.status_code == 403 and "token &#39;ana&#39; has no access to space &#39;api&#39;" in r.text, path
        assert ana.get(f"/memory/{api_ids[0]}").status_code == 404
        assert ana.post(f"/memory/{api_ids[0]}/delete", data={"confirm": "1"}).status_code == 404
        assert ana.post("/recall", data={"space": "api", "q": "quota", "learn": "1"}).status_code == 403
        # the read-only token reads, and neither edits nor deletes; its recall does not learn
        assert cat.get(f"/memory/{web_ids[0]}").status_code == 200
        r = cat.post(f"/memory/{web_ids[0]}/edit", data={"text": "changed", "confirm": "1"})
        assert r.status_code == 403 and "read-only" in r.text
        assert cat.post(f"/memory/{web_ids[0]}/delete", data={"confirm": "1"}).status_code == 403
        step = mem.store.require_space("web").step
        assert cat.post("/recall", data={"space": "web", "q": "login", "learn": "1"}).status_code == 200
        assert mem.store.require_space("web").step == step
        # ana may delete in her space
        assert ana.post(f"/memory/{web_ids[1]}/delete", data={"confirm": "1"}, follow_redirects=False
                        ).status_code == 303
        assert mem.store.get_node(web_ids[1]) is None and mem.store.get_node(api_ids[0]) is not None
        # revoked: the next request is refused
        with Store.open(cfg.db) as other:   # another process's connection, as `hela tokens revoke`
            access.revoke(other, "ana")
        assert ana.get("/memories?space=web").status_code == 403
        assert cat.get("/memories?space=web").status_code == 200
    finally:
        clients.close()
        mem.close()


# ----------------------------------------------------------------------------------- the hooks' fast path
def test_hooks_fast_path_with_client_tokens(project, tmp_path):
    import subprocess

    db, env = str(project["db"]), project["env"]
    ana = add_token(db, env, "ana", "--space", project["space"])
    ben = add_token(db, env, "ben", "--space", "elsewhere")
    cat = add_token(db, env, "cat", "--space", project["space"], "--read-only")
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    number = port.getsockname()[1]
    port.close()
    log = tmp_path / "server.out"
    with log.open("w") as f:
        proc = subprocess.Popen([PY, "-m", "hela_cli", "mcp", "--http", f"127.0.0.1:{number}"], env=env,
                                stdout=f, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{number}"
    try:
        while "serving the hela tools" not in log.read_text():
            assert proc.poll() is None, log.read_text()
            threading.Event().wait(0.1)
        seen = []
        for n, (token, server) in enumerate(((ana, "ok"), (ben, "refused"), (cat, "refused"))):
            payload = base(project, "UserPromptSubmit", prompt=PROMPT, session_id=f"sess-{n}")
            res, lines = hook(project, "UserPromptSubmit", payload,
                              env={**env, "HELA_HOOKS_SERVER": url, "HELA_MCP_TOKEN": token})
            assert lines[-1]["server"] == server and lines[-1]["result"] == "ok", lines
            assert "port 6543" in context_of(res, "UserPromptSubmit")   # in-process when refused
            seen.append((res.stdout + res.stderr).decode("utf-8", "replace"))
        # a capture: the server would read the transcript at the client's path on its own disk; refused, the
        # hook captures in-process
        transcript = tmp_path / "t" / "session.jsonl"
        transcript.parent.mkdir()
        shutil.copy(TRANSCRIPT, transcript)
        payload = base(project, "Stop", session_id="sess-c", transcript_path=str(transcript))
        res, lines = hook(project, "Stop", payload, env={**env, "HELA_HOOKS_SERVER": url, "HELA_MCP_TOKEN": ana})
        assert lines[-1]["server"] == "refused" and lines[-1]["result"] == "ok" and lines[-1]["added"] > 0, lines
        # hooks install with a client token in the environment: the settings file never holds it
        user = {**env, "HOME": str(tmp_path / "user"), "HELA_MCP_TOKEN": ana}
        res = hela(["hooks", "install", "claude-code", "--server", url], env=user, cwd=project["dir"])
        assert res.returncode == 0, res.stderr
        settings = (tmp_path / "user" / ".claude" / "settings.json").read_text()
        status = hela(["hooks", "status"], env=user, cwd=project["dir"])
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    out = log.read_text()
    assert '"POST /hook HTTP/1.1" 403' in out and '"POST /hook HTTP/1.1" 200' in out
    hooks_log = (project["home"] / "hooks.log").read_text()
    for token in (ana, ben, cat):
        for text in (settings, status.stdout + status.stderr, out, hooks_log, *seen):
            assert token not in text


def test_another_address_serves_with_client_tokens_only(tmp_path):
    """No --token-file, no HELA_MCP_TOKEN, not loopback: refused while the database holds no client token;
    with one, the server starts for client tokens only (no server token is generated or accepted)."""
    import subprocess

    db = str(tmp_path / "team.db")
    env = hela_env(tmp_path)
    token = add_token(db, env, "ana", "--space", "web")
    port = free_port()
    log = tmp_path / "server.out"
    with log.open("w") as f:
        proc = subprocess.Popen([PY, "-m", "hela_cli", "mcp", "--http", f"0.0.0.0:{port}", "--db", db], env=env,
                                stdout=f, stderr=subprocess.STDOUT)
    try:
        while READY not in log.read_text():
            assert proc.poll() is None, log.read_text()
            threading.Event().wait(0.1)
        assert "(client tokens only: hela tokens list)" in log.read_text()
        url = f"http://127.0.0.1:{port}/mcp"

        async def main() -> None:
            async with Session(url, token) as c:
                assert await c.call("spaces", {}) == {"spaces": []}

        anyio.run(main)
        assert refused(url, "x" * 40) == [401]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert not (tmp_path / "home" / "mcp-token").exists() and token not in log.read_text()
