"""hela ui: editing and deleting a memory from its page, each after a confirmation (TestClient, hash
embedder), and a POST from another site's page refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.store import BrowseStore, Store
from hela_cli.ui.app import create_app

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


@pytest.fixture()
def ui(backend_db, hash_embedder):
    cfg = Config()
    cfg.db = backend_db   # a SQLite file, then a Postgres database (tests/pg_support.py)
    mem = Memory(cfg, store=BrowseStore.open(cfg.db, must_exist=False), embedder=hash_embedder)
    mem.ingest([SAMPLE / "conversation.json"])
    client = TestClient(create_app(mem, "tok", cookie="c"))
    assert client.get("/?token=tok").status_code == 200
    yield client, mem
    mem.close()


def test_delete_asks_first_then_removes_the_memory(ui):
    client, mem = ui
    page = client.get("/memory/5").text
    assert 'href="/memory/5/delete"' in page
    confirm = client.get("/memory/5/delete")
    assert confirm.status_code == 200 and "This cannot be undone" in confirm.text and "Tofu! That is the best name." in confirm.text
    assert mem.store.get_node(5) is not None                     # asking is not deleting
    # a POST without the confirmation field only shows the question again
    assert "This cannot be undone" in client.post("/memory/5/delete", data={}).text
    assert mem.store.get_node(5) is not None
    r = client.post("/memory/5/delete", data={"confirm": "1"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/memories?space=demo&deleted=5"
    assert mem.store.get_node(5) is None
    listing = client.get(r.headers["location"]).text
    assert "Memory 5 was deleted." in listing and "82 matching memories" in listing
    assert 'href="/memory/5"' not in listing
    gone = client.get("/memory/5")
    assert gone.status_code == 404 and "unknown memory id 5" in gone.text
    assert client.post("/memory/5/delete", data={"confirm": "1"}).status_code == 404
    # the connection is read-only again
    with pytest.raises(Exception, match="readonly|read-only"):
        with mem.store.transaction():
            mem.store.advance_step(mem.store.require_space("demo").id, 0.995)


def test_edit_shows_old_and_new_then_saves_with_history(ui):
    client, mem = ui
    form = client.get("/memory/5/edit").text
    assert "<textarea" in form and "Tofu! That is the best name." in form
    new = "Tofu! Best name ever <3 & she looks calm."
    review = client.post("/memory/5/edit", data={"text": new}).text
    assert "with this one?" in review and "Tofu! Best name ever &lt;3 &amp; she looks calm." in review
    assert mem.store.get_node(5)["text"] == "Tofu! That is the best name. She looks so calm."
    r = client.post("/memory/5/edit", data={"text": new, "confirm": "1"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/memory/5?edited=1"
    assert mem.store.get_node(5)["text"] == new
    page = client.get(r.headers["location"]).text
    assert "Saved:" in page and "Earlier texts" in page and "Tofu! That is the best name. She looks so calm." in page
    empty = client.post("/memory/5/edit", data={"text": "  ", "confirm": "1"})
    assert empty.status_code == 400 and "the new text is empty" in empty.text


def test_a_write_from_another_site_is_refused(ui):
    client, mem = ui
    r = client.post("/memory/5/delete", data={"confirm": "1"}, headers={"origin": "http://evil.example"})
    assert r.status_code == 403 and mem.store.get_node(5) is not None
    ok = client.post("/memory/5/delete", data={"confirm": "1"}, headers={"origin": "http://testserver"},
                     follow_redirects=False)
    assert ok.status_code == 303 and mem.store.get_node(5) is None
