"""hela ui without a browser: the page handlers through Starlette's TestClient on the sample conversation
(hash embedder: no model), the token gate, the browse queries of the store, the start-up checks of the
command (a database that is not hela's: one line, exit 2, file untouched)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from hela_cli.cli import app as cli_app
from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.store import BrowseStore, NodeFilter, Store, database_kind
from hela_cli.ui import graph, views
from hela_cli.ui.app import create_app

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
TOKEN = "t0ken-for-tests"
runner = CliRunner()


@pytest.fixture()
def ui(backend_db, hash_embedder):
    """A TestClient on the sample conversation (space ``demo``, 83 memories), already past the token gate."""
    cfg = Config()
    cfg.db = backend_db   # a SQLite file, then a Postgres database (tests/pg_support.py)
    mem = Memory(cfg, store=BrowseStore.open(cfg.db, must_exist=False), embedder=hash_embedder)
    mem.ingest([SAMPLE / "conversation.json"])
    client = TestClient(create_app(mem, TOKEN, cookie="hela-ui-test"))
    assert client.get(f"/?token={TOKEN}").status_code == 200
    yield client, mem
    mem.close()


def learn(mem: Memory, question: str) -> None:
    """A learning retrieval from the test itself (the app keeps its connection read-only)."""
    mem.store.set_query_only(False)
    try:
        mem.retrieve(question, "demo", learn=True)
    finally:
        mem.store.set_query_only(True)


# ----------------------------------------------------------------------------------- token gate
def test_token_gate(tmp_path, hash_embedder):
    cfg = Config()
    cfg.db = str(tmp_path / "g.db")
    mem = Memory(cfg, store=Store.open(cfg.db, must_exist=False), embedder=hash_embedder)
    client = TestClient(create_app(mem, TOKEN, cookie="hela-ui-9"))
    for path in ("/", "/memories?space=x", "/static/ui.css", "/memory/1", "/nowhere"):
        r = client.get(path)
        assert r.status_code == 403 and "Token needed" in r.text, path
    assert client.get("/?token=wrong").status_code == 403
    assert client.post("/recall", data={"space": "x", "q": "y", "learn": "1"}).status_code == 403
    r = client.get(f"/memories?space=demo&token={TOKEN}&page=2", follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == "/memories?space=demo&page=2"   # the token leaves the address bar
    cookie = r.headers["set-cookie"]
    assert cookie.startswith("hela-ui-9=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert TOKEN not in cookie and "Domain" not in cookie             # a session id, host-only: never the token
    assert client.get("/").status_code == 200                        # the session opens every page now
    foreign = client.post("/recall", data={"space": "demo", "q": "y", "learn": "1"},
                          headers={"origin": "http://evil.example"})
    assert foreign.status_code == 403                                 # a write from another site's page
    assert client.get("/static/ui.css").status_code == 200
    mem.close()


def test_hostile_pages_get_nothing(tmp_path, hash_embedder):
    """issue 57: the cookie was the token (a local server on another port received it), the page could be
    framed (one click on an invisible frame deleted a memory), `//evil.example/?token=` redirected there, and a
    GET of /recall learned with --learn."""
    cfg = Config()
    cfg.db = str(tmp_path / "h.db")
    mem = Memory(cfg, store=Store.open(cfg.db, must_exist=False), embedder=hash_embedder)
    mem.add("demo", "Tofu the dog likes apple cake.", speaker="ana")
    client = TestClient(create_app(mem, TOKEN, cookie="hela-ui-7", learn_default=True))
    from hela_cli.ui.app import TokenGate

    async def app(scope, receive, send):   # the gate alone, with the raw path a browser sends for //evil.example/
        raise AssertionError("not reached")
    sent = []

    async def send(m):
        sent.append(m)
    import asyncio

    gate = TokenGate(app, lambda t: object() if t == TOKEN else None, "c")
    asyncio.run(gate({"type": "http", "method": "GET", "path": "//evil.example/", "raw_path": b"//evil.example/",
                      "query_string": f"token={TOKEN}".encode(), "headers": [], "scheme": "http",
                      "server": ("127.0.0.1", 80)}, None, send))
    loc = dict(sent[0]["headers"])[b"location"].decode()
    assert sent[0]["status"] == 303 and loc == "/evil.example/"   # a path of this page only, not another site
    client.get(f"/?token={TOKEN}")
    sid = client.cookies.get("hela-ui-7")
    assert sid and TOKEN not in sid
    for path in ("/", "/memories?space=demo", "/recall?space=demo&q=Tofu", "/nowhere"):
        r = client.get(path)
        assert r.headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert client.get("/?token=wrong").headers["x-frame-options"] == "DENY"     # the refusal too
    step = mem.store.require_space("demo").step
    assert client.get("/recall?space=demo&q=Tofu+apple+cake").status_code == 200
    assert mem.store.require_space("demo").step == step                         # a GET never learns
    other = TestClient(create_app(mem, TOKEN, cookie="hela-ui-7"))             # a session of another server
    other.cookies.set("hela-ui-7", sid)
    assert other.get("/").status_code == 403
    bare = TestClient(create_app(mem, TOKEN, cookie="hela-ui-7"))
    bare.cookies.set("hela-ui-7", TOKEN)                                        # the token as a cookie: refused
    assert bare.get("/").status_code == 403
    r = client.post("/recall", data={"space": "demo", "q": "y", "learn": "1"}, headers={"sec-fetch-site": "cross-site"})
    assert r.status_code == 403
    mem.close()


# ----------------------------------------------------------------------------------- pages
def test_spaces_and_memory_list_paginates_and_filters(ui):
    client, mem = ui
    r = client.get("/")
    assert r.status_code == 200 and 'href="/memories?space=demo"' in r.text and ">83<" in r.text
    first = client.get("/memories?space=demo")
    assert "83 matching memories" in first.text
    ids1 = re.findall(r'class="mem-link" href="/memory/(\d+)"', first.text)
    ids2 = re.findall(r'class="mem-link" href="/memory/(\d+)"', client.get("/memories?space=demo&page=2").text)
    assert len(ids1) == views.PAGE_SIZE and len(ids2) == 83 - views.PAGE_SIZE and not set(ids1) & set(ids2)
    assert int(ids1[0]) == 83                                         # newest first
    oldest = client.get("/memories?space=demo&order=oldest").text
    assert re.findall(r'href="/memory/(\d+)"', oldest)[0] == "1"
    maya = client.get("/memories?space=demo&speaker=Maya").text
    n_maya = int(re.search(r"(\d+) matching", maya).group(1))
    assert 0 < n_maya < 83 and "· Jonas ·" not in maya
    found = client.get("/memories?space=demo&contains=cardamom").text
    assert "cardamom" in found.lower() and int(re.search(r"(\d+) matching", found).group(1)) >= 1
    search = client.get("/memories?space=demo&q=Tofu+dog").text
    assert "best keyword match first" in search and "Tofu" in search
    april = client.get("/memories?space=demo&since=2024-04-01&until=2024-04-07").text
    dates = re.findall(r"(\d{4}-\d\d-\d\d) \d\d:\d\d ·", april)
    assert dates and all("2024-04-01" <= d < "2024-04-07" for d in dates)


def test_memory_page_tells_link_kinds_apart(ui):
    client, mem = ui
    store = mem.store
    sp = store.require_space("demo")
    # node 5 (D1:5): conversation links to 4 and 6 (ingest), keyword links to other sessions
    data = views.memory(store, mem.config, 5)
    kinds = {n["id"]: n["kind"] for n in data["neighbours"]}
    assert kinds[4] == "conversation" and kinds[6] == "conversation"
    assert data["previous"] == 4 and data["next"] == 6
    # keyword links join sessions: every such neighbour is in another session
    keyword = [(v, n) for v in range(1, 84) for n in views.memory(store, mem.config, v)["neighbours"]
               if n["kind"] == "keyword"]
    assert keyword
    sessions = store.node_sessions({i for v, n in keyword for i in (v, n["id"])})
    assert all(sessions[v] != sessions[n["id"]] and n["prior"] > 0 for v, n in keyword)
    # a learning recall adds learned weight; a pair linked by use only is "learned"
    learn(mem, "Tofu the dog and the cardamom apple cake")
    data = views.memory(store, mem.config, 5)
    for n in data["neighbours"]:
        assert n["weight"] == pytest.approx(n["prior"] + n["learned"], abs=1e-5)
        if n["kind"] == "learned":
            assert n["prior"] == 0 and n["learned"] > 0
    page = client.get("/memory/5").text
    assert "Tofu! That is the best name." in page and 'class="kind kind-conversation">conversation<' in page
    assert 'class="kind kind-keyword">keyword<' in client.get(f"/memory/{keyword[0][0]}").text
    assert store.refresh_space(sp).step == 1


def test_unknown_ids_and_bad_input_are_pages_with_a_link_back(ui):
    client, _ = ui
    for path, status, msg in [("/memory/99999", 404, "unknown memory id 99999"),
                              ("/memory/abc", 404, "unknown memory id"),
                              ("/memories?space=nope", 404, "unknown space &#39;nope&#39;"),
                              ("/recall?space=nope&q=x", 404, "unknown space"),
                              ("/graph?space=demo&id=424242", 404, "unknown memory id 424242"),
                              ("/memories?space=demo&since=yesterdayish", 400, "since:"),
                              ("/memories?space=demo&page=two", 400, "page: not a number"),
                              ("/no/such/page", 404, "no page at /no/such/page")]:
        r = client.get(path)
        assert r.status_code == status, path
        assert msg in r.text and 'href="/"' in r.text and "Traceback" not in r.text, path


def test_recall_page_reads_only_unless_asked_to_learn(ui):
    client, mem = ui
    store = mem.store
    sp = store.require_space("demo")
    q = "Who looked after Tofu while Jonas was hiking in Madeira?"
    before = (store.refresh_space(sp).step, store.all_edges(sp))
    r = client.get("/recall", params={"space": "demo", "q": q})
    assert r.status_code == 200 and "learning off (nothing written)" in r.text
    assert (store.refresh_space(sp).step, store.all_edges(sp)) == before
    # the page's memories are retrieve()'s, in its order
    expected = mem.retrieve(q, "demo", learn=False).memories
    rows = re.findall(r'<tr class="path-(base|hebbian|reply|successor)" data-id="(\d+)"', r.text)
    assert [(p, int(i)) for p, i in rows] == [(m["path"], m["id"]) for m in expected]
    r = client.post("/recall", data={"space": "demo", "q": q, "learn": "1"})
    assert r.status_code == 200 and "<strong>learned</strong>" in r.text
    assert store.refresh_space(sp).step == before[0] + 1
    with pytest.raises(Exception, match="readonly|read-only"):   # the connection is read-only again
        with store.transaction():
            store.advance_step(sp.id, 0.995)


def test_recall_graph_nodes_and_edges(ui):
    client, mem = ui
    q = "What is the name of Jonas's dog?"
    data = views.recall(mem, "demo", q)
    svg = graph.recall_svg(data, lambda i: f"/memory/{i}")
    by_role = {role: {int(i) for i in re.findall(rf'data-id="(\d+)" data-role="{role}"', svg)}
               for role in ("base", "hebbian", "reply", "successor", "source")}
    # each path its own kind of node: a reply brought in below its question, a successor, are no base hits
    for path in ("base", "hebbian", "reply", "successor"):
        assert by_role[path] == {m["id"] for m in data["memories"] if m["path"] == path}, path
    assert by_role["reply"], "the sample's question brings the turn that answers it"
    for i, m in enumerate(data["memories"]):   # a reply is linked to its question, the memory above it
        if m["path"] == "reply":
            assert f'data-source="{data["memories"][i - 1]["id"]}" data-target="{m["id"]}" data-kind="reply"' in svg
            assert f'#{i + 1} memory {m["id"]} (reply: the next turn after a recalled question)' in svg
    drawn = set().union(*by_role.values())
    spread = {(int(a), int(b)) for a, b in re.findall(r'data-source="(\d+)" data-target="(\d+)" data-kind="spread"', svg)}
    assert spread == {(s["id"], m["id"]) for m in data["memories"] for s in m["spread_from"] if s["id"] in drawn}
    assert spread, "the sample's conversation links spread activation"
    assert len(re.findall(r'data-kind="match"', svg)) == len(by_role["base"])
    # every memory's explain scores are in its tooltip
    m = data["memories"][0]
    assert f"S_base {m['base_score']:.3f}, cos {m['cos']:.3f}" in svg
    page = client.get("/recall", params={"space": "demo", "q": q}).text
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="graph" id="recall-graph"' in page


def test_hubs_graph_semantic_heatmap_pages(ui):
    client, mem = ui
    for q in ["Tofu the greyhound", "Tofu dog walks", "Tofu greyhound racing", "Tofu the dog"] * 3:
        learn(mem, q)
    hubs = views.hubs(mem.store, mem.store.require_space("demo"), mem.config)
    r = client.get("/hubs?space=demo")
    assert r.status_code == 200
    if hubs:
        assert f'href="/graph?space=demo&amp;id={hubs[0]["id"]}"' in r.text
    g = client.get("/graph?space=demo&id=5")
    assert g.status_code == 200 and 'id="hub-graph"' in g.text and 'data-role="centre"' in g.text
    kinds = set(re.findall(r'data-kind="(\w+)"', g.text))
    assert "conversation" in kinds and "keyword" in kinds
    assert client.get("/semantic?space=demo").status_code == 200
    h = client.get("/heatmap?space=demo&n=10")
    assert h.status_code == 200 and "hela edge weights" in h.text


def test_user_text_is_escaped(ui):
    client, mem = ui
    mem.store.set_query_only(False)
    nid = mem.add("demo", "<script>alert(1)</script> & <b>bold</b>", speaker="<i>x</i>")
    mem.store.set_query_only(True)
    page = client.get(f"/memory/{nid}").text
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<i>x</i>" not in page


# ----------------------------------------------------------------------------------- store reads
def test_browse_queries(backend_db, hash_embedder):
    cfg = Config()
    cfg.db = backend_db
    mem = Memory(cfg, store=Store.open(cfg.db, must_exist=False), embedder=hash_embedder)
    mem.ingest([SAMPLE / "conversation.json"])
    s = mem.store
    sp = s.require_space("demo")
    everything = s.browse_nodes(sp.id, NodeFilter(), 1000)
    assert len(everything) == s.count_browse(sp.id, NodeFilter()) == 83
    pages = [n["id"] for off in range(0, 83, 10) for n in s.browse_nodes(sp.id, NodeFilter(), 10, off)]
    assert pages == [n["id"] for n in everything]
    f = NodeFilter(speaker="Jonas", contains="TOFU")
    got = s.browse_nodes(sp.id, f, 100)
    assert got and len(got) == s.count_browse(sp.id, f)
    assert all(n["speaker"] == "Jonas" and "tofu" in n["text"].lower() for n in got)
    assert s.count_browse(sp.id, NodeFilter(contains="100%_")) == 0   # LIKE wildcards are literal
    f = NodeFilter(terms=("tofu",))
    assert s.count_browse(sp.id, f) == len(s.browse_nodes(sp.id, f, 1000)) == len(s.keyword_search(sp.id, ["tofu"], 1000))
    sessions = sorted({n["session"] for n in everything})
    assert len(sessions) == 4
    one = s.browse_nodes(sp.id, NodeFilter(session=sessions[0]), 1000, newest_first=False)
    pos = s.node_positions([n["id"] for n in one])
    assert [pos[n["id"]][1] for n in one] == sorted(pos[n["id"]][1] for n in one)
    assert not s.turns_between(sp.id, sessions[0], pos[one[0]["id"]][1], pos[one[1]["id"]][1])
    assert s.turns_between(sp.id, sessions[0], pos[one[0]["id"]][1], pos[one[2]["id"]][1])
    assert not s.turns_between(sp.id, sessions[1], pos[one[0]["id"]][1], pos[one[2]["id"]][1])
    mem.close()


def test_cached_strengths_match_and_follow_writes(backend_db, hash_embedder):
    cfg = Config()
    cfg.db = backend_db
    mem = Memory(cfg, store=Store.open(cfg.db, must_exist=False), embedder=hash_embedder)
    mem.ingest([SAMPLE / "conversation.json"])
    mem.retrieve("Tofu the greyhound", "demo", learn=True)
    reader = BrowseStore.open(cfg.db)
    sp = reader.require_space("demo")
    for with_priors in (False, True):
        want = mem.store.edge_strengths(sp, with_priors=with_priors)
        got = reader.edge_strengths(sp, with_priors=with_priors)
        assert got.keys() == want.keys()
        assert all(got[n][1] == want[n][1] and got[n][0] == pytest.approx(want[n][0], abs=1e-9) for n in want)
    first = reader.edge_strengths(sp)
    first_key = reader._strengths[0]
    # one read per database state: the same object while the change token stays (on Postgres the token is
    # the server's snapshot, which any transaction on the server moves, autovacuum's too)
    assert reader.edge_strengths(sp) is first or reader._strengths[0] != first_key
    mem.retrieve("the apple cake recipe with cardamom", "demo", learn=True)   # another connection writes
    after = reader.edge_strengths(sp)
    assert after is not first
    want = mem.store.edge_strengths(sp)
    assert after.keys() == want.keys() and all(after[n][0] == pytest.approx(want[n][0]) for n in want)
    reader.close()
    mem.close()


def test_database_kind(tmp_path):
    assert database_kind(tmp_path / "missing.db") == "no such file"
    (tmp_path / "junk.db").write_bytes(b"definitely not sqlite" * 100)
    assert "not an SQLite database" in database_kind(tmp_path / "junk.db")
    import sqlite3

    con = sqlite3.connect(tmp_path / "other.db")
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    assert database_kind(tmp_path / "other.db") == "not a hela database (no hela tables in it)"
    Store(tmp_path / "hela.db").close()
    assert database_kind(tmp_path / "hela.db") is None


def test_cli_refuses_a_database_that_is_not_helas(tmp_path, monkeypatch):
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    import sqlite3

    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    digest = hashlib.sha256(other.read_bytes()).hexdigest()
    for path, msg in [(other, "not a hela database"), (tmp_path / "none.db", "no database yet")]:
        r = runner.invoke(cli_app, ["--db", str(path), "ui", "--no-browser"])
        assert r.exit_code == 2, r.output
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and msg in lines[0] and str(path) in lines[0]
    assert hashlib.sha256(other.read_bytes()).hexdigest() == digest     # never migrated or written
    assert not (tmp_path / "none.db").exists()


def test_host_is_loopback_by_default():
    from hela_cli.ui.server import DEFAULT_HOST, is_loopback

    assert DEFAULT_HOST == "127.0.0.1" and is_loopback("127.0.0.1") and is_loopback("::1")
    assert is_loopback("localhost") and not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")


def test_templates_and_static_files_are_packaged():
    import fnmatch
    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    st = pyproject["tool"]["setuptools"]
    assert any(fnmatch.fnmatch("hela_cli.ui", g) for g in st["packages"]["find"]["include"])
    globs = st["package-data"]["hela_cli.ui"]
    ui_dir = Path(__file__).resolve().parents[1] / "hela_cli" / "ui"
    files = [p.relative_to(ui_dir).as_posix() for sub in ("templates", "static") for p in (ui_dir / sub).rglob("*")
             if p.is_file()]
    assert files and all(any(fnmatch.fnmatch(f, g) for g in globs) for f in files), files


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_process_on_an_explicit_non_loopback_host_still_needs_the_token(tmp_path, hash_embedder, stop):
    """`hela ui --host 0.0.0.0`: says it is reachable beyond this machine, refuses requests without the
    token, prints the token once (``--no-browser``: the address to open, on the terminal), stops on Ctrl-C
    (exit 0) or SIGTERM (143) and removes its URL file. No model is loaded until a recall."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request

    cfg = Config()
    cfg.db = str(tmp_path / "p.db")
    mem = Memory(cfg, store=Store.open(cfg.db, must_exist=False), embedder=hash_embedder)
    mem.add("demo", "a memory to serve")
    mem.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_")}
    env.update(HELA_DB=cfg.db, HELA_HOME=str(tmp_path / "home"))
    proc = subprocess.Popen([sys.executable, "-m", "hela_cli", "ui", "--no-browser", "--host", "0.0.0.0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run_dir = tmp_path / "home" / "ui"
    deadline = time.monotonic() + 120   # start-up on a busy machine: a wait, not a timing assert
    while time.monotonic() < deadline and proc.poll() is None and not list(run_dir.glob("ui-*.json")):
        time.sleep(0.05)
    files = list(run_dir.glob("ui-*.json"))
    try:
        assert files, proc.communicate(timeout=5) if proc.poll() is not None else "no URL file"
        info = json.loads(files[0].read_text())
        token = info["url"].split("token=")[1]
        base = f"http://127.0.0.1:{info['port']}/"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + "memories?space=demo")
        assert refused.value.code == 403
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        page = opener.open(base + f"memories?space=demo&token={token}").read().decode()
        assert "a memory to serve" in page
    finally:
        proc.send_signal(getattr(signal, stop))
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == (0 if stop == "SIGINT" else 128 + signal.SIGTERM), err
    assert "listening on 0.0.0.0, beyond this machine; the token is still required" in err
    assert (out + err).count(token) == 1 and f"    {info['url']}" in err.splitlines()
    if stop == "SIGINT":
        assert "hela ui: stopped" in err
    assert not files[0].exists()


def test_graph_svgs_tell_roles_and_kinds_apart_without_colour():
    import xml.etree.ElementTree as ET

    def node(i, role, **kw):
        base = {"id": i, "role": role, "rank": i, "speaker": "Ann", "text": f"<memory {i}>", "timestamp": 0.0,
                "session": "s", "score": 1.0, "base_score": 1.0 / i, "cos": 0.5, "keyword": 0.2, "time_factor": 1.0,
                "spread_bonus": 0.0, "contribution": 0.3}
        return {**base, **kw}

    data = {"question": "what & why?", "nodes": [node(1, "base"), node(2, "base"), node(3, "hebbian"),
                                                  node(4, "source"), node(5, "reply"), node(6, "successor")],
            "edges": [{"source": 1, "target": 3, "weight": 0.8, "contribution": 0.6, "prior": 0.5, "learned": 0.3},
                      {"source": 4, "target": 2, "weight": 0.2, "contribution": 0.1, "prior": 0.0, "learned": 0.2},
                      {"source": 1, "target": 5, "kind": "reply"},
                      {"source": 2, "target": 6, "kind": "successor", "status": "superseded"}]}
    svg = graph.recall_svg(data, lambda i: f"/memory/{i}")
    root = ET.fromstring(svg)   # well-formed, user text escaped
    ns = {"s": "http://www.w3.org/2000/svg"}
    shapes = {a.get("data-id"): a[1].tag.split("}")[1] for a in root.iterfind(".//s:a", ns)}
    assert shapes == {"1": "circle", "2": "circle", "3": "polygon", "4": "rect", "5": "polygon", "6": "polygon"}
    corners = {a.get("data-id"): len(a[1].get("points").split()) for a in root.iterfind(".//s:a", ns)
               if a[1].tag.endswith("polygon")}
    assert corners == {"3": 4, "5": 6, "6": 3}                        # diamond, hexagon, triangle
    tips = {a.get("data-id"): a.find("s:title", ns).text for a in root.iterfind(".//s:a", ns)}
    assert "(reply: the next turn after a recalled question)" in tips["5"] and "base hit" not in tips["5"]
    assert "(successor: replaces a recalled memory)" in tips["6"] and "base hit" not in tips["6"]
    links = {g.get("data-kind"): (g.get("data-source"), g.get("data-target"), g.find("s:line", ns).get("stroke-dasharray"))
             for g in root.iterfind(".//s:g[@data-target]", ns) if g.get("data-kind") in ("reply", "successor")}
    assert links == {"reply": ("1", "5", "9 3 2 3"), "successor": ("2", "6", "9 3 2 3")}
    assert "memory 6 replaces memory 2 (superseded)" in svg and "memory 5 answers memory 1" in svg
    # the inner ring holds the base hits only (the question's matches): the others sit further out
    cx = float(root.find(".//s:g[@data-id='q']/s:circle", ns).get("cx"))
    cy = float(root.find(".//s:g[@data-id='q']/s:circle", ns).get("cy"))

    def dist(i):
        a = root.find(f".//s:a[@data-id='{i}']", ns)
        m = a[1]
        if m.tag.endswith("circle"):
            x, y = float(m.get("cx")), float(m.get("cy"))
        else:
            pts = [tuple(map(float, p.split(","))) for p in m.get("points").split()]
            x, y = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
        return ((x - cx) ** 2 + (y - cy) ** 2) ** 0.5

    assert max(dist(1), dist(2)) < min(dist(5), dist(6)) and len(re.findall(r'data-kind="match"', svg)) == 2
    radius = {a.get("data-id"): float(a[1].get("r")) for a in root.iterfind(".//s:a", ns) if a.get("data-role") == "base"}
    assert radius["1"] > radius["2"]                                   # sized by S_base
    labels = {a.get("data-id"): a.find("s:text", ns).text for a in root.iterfind(".//s:a", ns)}
    assert labels["3"] == "3 H"                                        # the flipped path is labelled, not only coloured
    assert (labels["5"], labels["6"]) == ("5 R", "6 S")                # so are a reply and a successor
    widths = {(g.get("data-source"), g.get("data-target")): float(g.find("s:line", ns).get("stroke-width"))
              for g in root.iterfind(".//s:g[@data-kind='spread']", ns)}
    assert widths[("1", "3")] > widths[("4", "2")]                     # width follows the weight
    assert "0.80" in svg and "what &amp; why?" in svg and "<memory" not in svg

    hood = {"id": 1, "nodes": [{"id": 1, "role": "centre", "speaker": None, "text": "a", "weight": None},
                               {"id": 2, "role": "cluster", "speaker": None, "text": "b", "weight": 0.6},
                               {"id": 3, "role": "other", "speaker": None, "text": "c", "weight": 0.3},
                               {"id": 4, "role": "other", "speaker": None, "text": "d", "weight": 0.2}],
            "edges": [{"source": 1, "target": 2, "weight": 0.6, "prior": 0.5, "learned": 0.1, "kind": "conversation"},
                      {"source": 1, "target": 3, "weight": 0.3, "prior": 0.25, "learned": 0.05, "kind": "keyword"},
                      {"source": 1, "target": 4, "weight": 0.2, "prior": 0.0, "learned": 0.2, "kind": "learned"}]}
    root = ET.fromstring(graph.neighbourhood_svg(hood, lambda i: f"/graph?id={i}"))
    dash = {g.get("data-kind"): g.find("s:line", ns).get("stroke-dasharray")
            for g in root.iterfind(".//s:g[@data-kind]", ns)}
    assert dash == {"conversation": None, "keyword": "7 4", "learned": "2 3"}
    assert [c.tag.split("}")[1] for c in root.find(".//s:a[@data-role='centre']", ns)].count("circle") == 2


def test_space_names_with_url_characters(tmp_path, hash_embedder):
    cfg = Config()
    cfg.db = str(tmp_path / "n.db")
    mem = Memory(cfg, store=Store.open(cfg.db, must_exist=False), embedder=hash_embedder)
    name = "work/notes & ideas? #1 <x>"
    mem.add(name, "Ann likes sailing on the lake", speaker="Ann")
    mem.add(name, "Ann bought a new sail for the boat", speaker="Ann")
    client = TestClient(create_app(mem, TOKEN, cookie="n"))
    home = client.get(f"/?token={TOKEN}").text
    link = re.search(r'href="(/memories\?space=[^"]+)"', home).group(1).replace("&amp;", "&")
    listing = client.get(link)
    assert listing.status_code == 200 and "Ann likes sailing" in listing.text and "&lt;x&gt;" in listing.text
    for path in ("/recall", "/hubs", "/semantic", "/heatmap"):
        r = client.get(path, params={"space": name, **({"q": "sailing"} if path == "/recall" else {})})
        assert r.status_code == 200, path
    assert "Ann likes sailing" in client.get("/recall", params={"space": name, "q": "sailing"}).text
    mem.close()
