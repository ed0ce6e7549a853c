"""hela ui in a real browser: Playwright drives Debian's chromium against a real ``hela ui --no-browser``
process on 127.0.0.1, over the sample conversation embedded with the real default embedder.

Checks what a person would: a page without the token is refused, the recall view shows the memories of a
known question with the expected graph, learning happens only when asked, unknown ids give a friendly page,
the keyboard reaches everything with a visible focus, a narrow window needs no sideways scrolling.

chromium comes from Debian (``make test`` installs it when missing; Playwright's own browser download is
not used)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.store import Store
from tests.conftest import missing

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
CHROMIUM = os.environ.get("HELA_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
QUESTION = "What is the name of Jonas's dog?"

try:
    import playwright.sync_api as playwright_api
except ImportError:
    missing("playwright is not installed (it is in the test extra: pip install 'hela[test]')", module=True)
if not Path(CHROMIUM).exists():  # `make test` installs it; a bare pytest without it cannot drive a browser
    missing(f"chromium not found at {CHROMIUM}: install it (apt-get install chromium) or run `make test`",
            module=True)


def _env(tmp: Path, model_dir: Path, db: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_")}
    env.update(HELA_DB=db or str(tmp / "hela.db"), HELA_MODELS_DIR=str(model_dir), HELA_HOME=str(tmp / "home"))
    return env


@pytest.fixture(scope="module")
def server(request, tmp_path_factory, model_dir_path, embedder):
    """``hela ui --no-browser --port 0`` on a database of the sample conversation; yields (base URL, token
    URL, db path, config). The address with its token is read from the URL file the server writes.
    ``HELA_TEST_BACKEND=postgres``: the database is a fresh one on the test run's Postgres server."""
    tmp = tmp_path_factory.mktemp("ui")
    db = None
    if os.environ.get("HELA_TEST_BACKEND", "sqlite") == "postgres":
        from tests.pg_support import new_database

        db = new_database(request.getfixturevalue("pg_server"))
    env = _env(tmp, model_dir_path, db)
    subprocess.run([sys.executable, "-m", "hela_cli", "ingest", str(SAMPLE / "conversation.json")], env=env,
                   check=True, capture_output=True)
    proc = subprocess.Popen([sys.executable, "-m", "hela_cli", "ui", "--no-browser", "--port", "0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run_dir = tmp / "home" / "ui"
    deadline = time.monotonic() + 120   # a wait for start-up on a busy machine, not a timing assert
    files: list[Path] = []
    while time.monotonic() < deadline and proc.poll() is None:
        files = list(run_dir.glob("ui-*.json")) if run_dir.exists() else []
        if files:
            break
        time.sleep(0.1)
    if not files:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"hela ui did not start: {err}")
    info = json.loads(files[0].read_text())
    assert oct(files[0].stat().st_mode & 0o777) == "0o600"
    cfg = Config()
    cfg.db = env["HELA_DB"]
    yield {"embedder": embedder, "model_dir": model_dir_path, "base": info["url"].split("?")[0], "url": info["url"],
           "db": env["HELA_DB"], "home": env["HELA_HOME"], "cfg": cfg,
           "proc": proc, "token": info["url"].split("token=")[1], "url_file": files[0]}
    proc.send_signal(signal.SIGINT)   # Ctrl-C stops it
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail("hela ui did not stop on Ctrl-C")
    assert proc.returncode == 0, err
    assert not files[0].exists(), "the URL file is removed on exit"
    token = info["url"].split("token=")[1]
    assert (out + err).count(token) == 1, "--no-browser prints the address with its token, once"


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = ctx.new_page()
    pg.goto(server["url"])          # the token sets the cookie and leaves the address bar
    assert "token" not in pg.url
    yield pg
    ctx.close()


def _expected(server, question: str) -> list[dict]:
    store = Store.open(server["db"])
    store.set_query_only(True)
    mem = Memory(server["cfg"], store=store, embedder=server["embedder"])
    try:
        return mem.retrieve(question, "demo", learn=False).memories
    finally:
        mem.close()


def _step(server) -> int:
    with Store.open(server["db"]) as s:
        return s.require_space("demo").step


def test_without_the_token_the_page_is_refused(browser, server):
    ctx = browser.new_context()
    pg = ctx.new_page()
    for path in ("", "memories?space=demo", "memory/1", "static/ui.css"):
        resp = pg.goto(server["base"] + path)
        assert resp.status == 403, path
        assert "Token needed" in pg.content()
    resp = pg.goto(server["base"] + "?token=not-the-token")
    assert resp.status == 403
    ctx.close()


def test_recall_view_shows_the_memories_and_their_graph(page, server):
    step = _step(server)
    page.goto(server["base"] + "recall?space=demo")
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_role("button", name="Recall", exact=True).click()
    page.wait_for_selector("#recall-table")
    expected = _expected(server, QUESTION)
    rows = page.locator("#recall-table tbody tr")
    assert rows.count() == len(expected)
    assert [int(rows.nth(i).get_attribute("data-id")) for i in range(rows.count())] == [m["id"] for m in expected]
    # the memory that answers it (D1:4: "she's a retired racing greyhound ... Tofu") is among them
    assert any(m["source_id"] == "D1:4" for m in expected)
    assert "Tofu" in page.locator("#recall-table").inner_text()
    # graph: one node per memory, shaped by path; spreading edges between drawn nodes
    svg = page.locator("svg#recall-graph")
    for path in ("base", "hebbian", "reply", "successor"):   # each path its own kind of node
        assert {int(x) for x in svg.locator(f'a.node[data-role="{path}"]').evaluate_all(
            "els => els.map(e => e.dataset.id)")} == {m["id"] for m in expected if m["path"] == path}, path
    hebbian = {m["id"] for m in expected if m["path"] == "hebbian"}
    assert svg.locator('a.node[data-role="hebbian"] polygon').count() == len(hebbian)   # diamonds
    replies = [m for m in expected if m["path"] == "reply"]
    assert replies, "the question brings the turn that answers it (tests/test_ui.py pins it too)"
    assert svg.locator('a.node[data-role="reply"] polygon').count() == len(replies)   # hexagons
    for m in replies:
        tip = svg.locator(f'a.node[data-id="{m["id"]}"] title').text_content()
        assert "(reply: the next turn after a recalled question)" in tip and "base hit" not in tip
        assert svg.locator(f'a.node[data-id="{m["id"]}"] text').text_content() == f'{m["id"]} R'
        assert svg.locator(f'g.edge[data-kind="reply"][data-target="{m["id"]}"]').count() == 1
    drawn = {int(x) for x in svg.locator("a.node").evaluate_all("els => els.map(e => e.dataset.id)")}
    edges = {(int(a), int(b)) for a, b in svg.locator('g.edge[data-kind="spread"]').evaluate_all(
        "els => els.map(e => [e.dataset.source, e.dataset.target])")}
    assert edges and edges == {(s["id"], m["id"]) for m in expected for s in m["spread_from"] if s["id"] in drawn}
    # base hits are sized by S_base: the largest circle is the best base score
    radii = svg.locator('a.node[data-role="base"] circle').evaluate_all(
        "els => els.map(e => [e.parentNode.dataset.id, parseFloat(e.getAttribute('r'))])")
    top = max(radii, key=lambda t: t[1])[0]
    assert int(top) == max((m for m in expected if m["path"] == "base"), key=lambda m: m["base_score"])["id"]
    # scores on hover: the tooltip title and the caption
    first = svg.locator("a.node").first
    assert "S_base" in first.locator("title").text_content()
    first.hover()
    assert "S_base" in page.locator("#graph-detail").inner_text()
    assert _step(server) == step, "a plain recall writes nothing"


def test_recall_and_learn_button_learns(page, server):
    step = _step(server)
    page.goto(server["base"] + "recall?space=demo")
    page.get_by_label("Question").fill("Who taught Jonas the apple cake recipe?")
    page.get_by_role("button", name="Recall and learn").click()
    page.wait_for_selector("#recall-table")
    assert "learned" in page.locator(".summary").first.inner_text()
    assert _step(server) == step + 1


def test_unknown_ids_give_a_friendly_page(page, server):
    for path, text in [("memory/987654", "unknown memory id 987654"), ("memories?space=nobody", "unknown space"),
                       ("graph?space=demo&id=987654", "unknown memory id")]:
        resp = page.goto(server["base"] + path)
        assert resp.status == 404
        assert text in page.locator(".error").inner_text()
        assert "Traceback" not in page.content()
        page.get_by_role("link", name="Back to the spaces").click()
        page.wait_for_url(server["base"])
        assert page.get_by_role("link", name="demo").count() == 1


def test_memory_page_and_neighbourhood(page, server):
    page.goto(server["base"] + "memories?space=demo&contains=greyhound")
    page.locator("a.mem-link").first.click()
    assert "greyhound" in page.locator("blockquote.memory-text").inner_text()
    kinds = page.locator("table .kind").all_inner_texts()
    assert "conversation" in kinds
    page.get_by_role("link", name="See its neighbourhood graph").click()
    svg = page.locator("svg#hub-graph")
    assert svg.locator('a.node[data-role="centre"]').count() == 1
    assert svg.locator('g.edge[data-kind="conversation"]').count() >= 1


def test_keyboard_reaches_everything_with_visible_focus(page, server):
    page.goto(server["base"] + "recall?space=demo")
    page.keyboard.press("Tab")
    skip = page.evaluate("document.activeElement.textContent")
    assert skip == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    # tab to the question field, type, submit with Enter
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "q":
            break
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type(QUESTION)
    page.keyboard.press("Enter")
    page.wait_for_selector("#recall-table")
    # tab into the graph: a node takes focus, shows its scores in the caption, has a visible focus mark
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('svg a.node')"):
            break
    assert page.evaluate("document.activeElement.matches('svg a.node')")
    detail = page.evaluate("document.activeElement.getAttribute('data-detail')")
    assert "S_base" in detail and page.locator("#graph-detail").inner_text() == detail
    stroke = page.evaluate("getComputedStyle(document.activeElement.querySelector('.mark')).strokeWidth")
    assert float(stroke.rstrip("px")) >= 5
    # Enter follows the node's link to the memory
    nid = page.evaluate("document.activeElement.dataset.id")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/memory/{nid}")
    # ordinary links show a focus outline
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"


def test_pages_show_what_another_process_wrote(page, server):
    page.goto(server["base"] + "memories?space=demo")
    before = page.locator("#count").inner_text()
    env = {**os.environ, "HELA_DB": server["db"], "HELA_MODELS_DIR": os.environ.get("HELA_MODELS_DIR", ""),
           "HELA_HOME": server["home"]}
    env["HELA_MODELS_DIR"] = str(server["model_dir"])
    subprocess.run([sys.executable, "-m", "hela_cli", "add", "--space", "demo", "--speaker", "Maya",
                    "Jonas bought a red kayak for the lake."], env=env, check=True, capture_output=True)
    page.reload()
    assert page.locator("#count").inner_text() != before
    assert "red kayak" in page.locator("ol.memories li").first.inner_text()   # newest first


@pytest.mark.parametrize("width", [1280, 420])
def test_no_sideways_scrolling(browser, server, width):
    ctx = browser.new_context(viewport={"width": width, "height": 800})
    pg = ctx.new_page()
    pg.goto(server["url"])
    for path in (f"recall?space=demo&q={QUESTION}", "memories?space=demo", "memory/4", "graph?space=demo&id=4"):
        pg.goto(server["base"] + path)
        over = pg.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert over <= 1, f"{path} at {width}px scrolls sideways by {over}px"
    ctx.close()


def test_zz_delete_asked_from_the_page_removes_the_memory(page, server):
    """Last in the module: it removes a memory the other tests do not use."""
    page.goto(server["base"] + "memories?space=demo&contains=finally+settled")
    page.locator("a.mem-link").first.click()
    nid = page.url.rstrip("/").split("/")[-1]
    page.get_by_role("link", name="Delete…").click()
    assert "This cannot be undone" in page.content()
    page.get_by_role("button", name=f"Delete memory {nid}").click()
    page.wait_for_url("**/memories?space=demo&deleted=*")
    assert f"Memory {nid} was deleted." in page.locator(".notice").inner_text()
    with Store.open(server["db"]) as s:
        assert s.get_node(int(nid)) is None
    resp = page.goto(server["base"] + f"memory/{nid}")
    assert resp.status == 404
