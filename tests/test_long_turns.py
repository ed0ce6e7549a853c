"""Issue 44 item 1: a turn or a question of any length is stored, recalled and checked for a changed fact,
through every entry point, on both engines.

Before, keyword search built one SQL expression per query term: ``hela add`` of a turn of ~1,500 distinct
words that says what it replaced failed with ``Expression tree is too large (maximum depth 1000)`` (the
supersession detector searches with every keyword of the turn), ``hela ask`` with a long question too, and
in a hook the same failure was swallowed (the turn silently not remembered, the prompt silently without
context). Each test runs the entry point as a user meets it (``hela add`` / ``hela ingest`` processes, an MCP
server over stdio; ``hela ask`` through Typer's runner because a 50,000-word argument exceeds the operating
system's limit for one argument; the hooks' ``main`` in-process, see :func:`_hook`) with the real embedder, a 5,000-word and a 50,000-word turn, on SQLite and on Postgres. Each turn opens with a change said
outright ("We replaced Jenkins with GitHub Actions"), so the detector reads the whole turn and marks the
earlier fact.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.hooks.space import project_space
from hela_cli.memory import Memory
from tests.reliability import PY, hela, hela_env
from tests.support import call_tool, mcp_params

SIZES = [5_000, 50_000]
OLD = "Our CI runs on Jenkins with nightly builds at two in the morning."
CHANGE = "We replaced Jenkins with GitHub Actions."
QUESTION = "Which CI system runs our nightly builds?"


def filler(words: int, seed: int) -> str:
    """``words`` words of a pasted document: made-up words of 4 to 8 letters, about one distinct word in
    three (a 5,000-word text holds ~1,400 distinct keywords, a 50,000-word one ~13,000)."""
    rnd = random.Random(seed)
    cons, vowels = "bcdfghjklmnprstvz", "aeiou"
    vocab = ["".join(rnd.choice(cons) + rnd.choice(vowels) for _ in range(rnd.randint(2, 4)))
             for _ in range(max(50, words // 3))]
    return " ".join(rnd.choice(vocab) for _ in range(words))


def long_turn(words: int) -> str:
    return f"{CHANGE} Notes from the migration: {filler(words, words)}"


def long_question(words: int) -> str:
    return f"{filler(words, words + 1)} {QUESTION}"


@pytest.fixture(params=SIZES, ids=lambda n: f"{n}w")
def size(request: pytest.FixtureRequest) -> int:
    return request.param


def _seed(db: str, embedder: Any, space: str, turns: list[dict[str, Any]]) -> list[int]:
    with Memory(Config(db=db), embedder=embedder) as mem:
        return mem.add_many(space, turns)


def _state(db: str, space: str) -> tuple[list[dict[str, Any]], dict[int, list[dict[str, Any]]]]:
    """The space's memories and their supersession rows."""
    with Memory(Config(db=db)) as mem:
        st = mem.store
        nodes = list(st.iter_nodes(st.require_space(space).id))
        return nodes, st.supersessions_for([n["id"] for n in nodes])


def _replaced(db: str, space: str, words: int) -> None:
    """The long turn is stored whole and the earlier fact is marked superseded by it."""
    nodes, marks = _state(db, space)
    old = next(n for n in nodes if n["text"] == OLD)
    new = [n for n in nodes if n["text"].startswith(CHANGE)]
    assert len(new) == 1 and len(new[0]["text"].split()) > words, [n["text"][:80] for n in nodes]
    assert [(r["new_id"], r["status"]) for r in marks.get(old["id"], []) if r["old_id"] == old["id"]] \
        == [(new[0]["id"], "superseded")]


# ------------------------------------------------------------------------------------------ hela add
def test_add(backend_db, embedder, tmp_path, size):
    _seed(backend_db, embedder, "s", [{"speaker": "user", "text": OLD, "time": "2026-11-01 10:00"}])
    line = json.dumps({"speaker": "user", "text": long_turn(size), "time": "2026-11-20 10:00"})
    res = subprocess.run([PY, "-m", "hela_cli", "add", "-s", "s", "-"], input=line, text=True, capture_output=True,
                         env=hela_env(tmp_path, backend_db), timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().isdigit()
    _replaced(backend_db, "s", size)


# --------------------------------------------------------------------------------------- hela ingest
def test_ingest(backend_db, tmp_path, size):
    chat = tmp_path / "chat.jsonl"
    rows = [{"role": "user", "id": "t1", "content": OLD, "timestamp": "2026-11-01T10:00:00Z"},
            {"role": "assistant", "id": "t2", "content": "Noted.", "timestamp": "2026-11-01T10:01:00Z"},
            {"role": "user", "id": "t3", "content": long_turn(size), "timestamp": "2026-11-20T10:00:00Z"}]
    chat.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    res = hela(["ingest", str(chat), "-s", "s", "--format", "messages"], hela_env(tmp_path, backend_db), timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    _replaced(backend_db, "s", size)


# ------------------------------------------------------------------------------------ hela ask --no-llm
def test_ask_without_a_model(backend_db, embedder, tmp_path, monkeypatch, size):
    ids = _seed(backend_db, embedder, "s", [{"speaker": "user", "text": OLD, "time": "2026-11-01 10:00"},
                                            {"speaker": "user", "text": long_turn(size), "time": "2026-11-20 10:00"}])
    for key, value in hela_env(tmp_path, backend_db).items():
        if key.startswith("HELA_"):
            monkeypatch.setenv(key, value)
    res = CliRunner().invoke(app, ["ask", "--no-llm", "--json", "-s", "s", long_question(size)])
    assert res.exit_code == 0, (res.output[-2000:], res.exception)
    out = json.loads(res.stdout)
    assert {m["id"] for m in out["memories"]} >= set(ids)


# --------------------------------------------------------------------------------- MCP remember, recall
def test_mcp_remember_and_recall(backend_db, tmp_path, size):
    errlog = (tmp_path / "server.err").open("w")

    async def main() -> None:
        async with stdio_client(mcp_params(tmp_path, backend_db), errlog=errlog) as (r, w), \
                ClientSession(r, w) as s:
            await s.initialize()
            err, out = await call_tool(s, "remember", {"space": "s", "turns": [
                {"speaker": "user", "text": OLD, "time": "2026-11-01T10:00:00Z"},
                {"speaker": "user", "text": long_turn(size), "time": "2026-11-20T10:00:00Z"}]})
            assert not err and len(out["added"]) == 2, out
            err, out = await call_tool(s, "recall", {"space": "s", "query": long_question(size)})
            assert not err, out
            assert {m["text"].split(".")[0] for m in out["memories"]} >= {OLD.split(".")[0], CHANGE.split(".")[0]}

    anyio.run(main)
    errlog.close()
    _replaced(backend_db, "s", size)


# ------------------------------------------------------------------------------- hooks: prompt, capture
@pytest.fixture()
def project(tmp_path: Path, backend_db: str) -> dict[str, Any]:
    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    env = hela_env(tmp_path, backend_db, HELA_HOOKS_BUDGET_S="120", HELA_HOOKS_CAPTURE_BUDGET_S="300")
    return {"dir": proj, "db": backend_db, "space": project_space(proj), "env": env,
            "log": tmp_path / "home" / "hooks.log"}


def _hook(p: dict[str, Any], event: str, payload: dict[str, Any], monkeypatch: pytest.MonkeyPatch
          ) -> tuple[str, dict[str, Any]]:
    """``hela hook EVENT`` in-process (``hooks.process.main``): the hook's own budget applies, not the agent's
    10 s limit for a prompt, which a test machine shared by many runs cannot promise (the hook tests that
    spawn processes cover that limit)."""
    from hela_cli.hooks.process import main

    for key, value in p["env"].items():
        if key.startswith("HELA_"):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(p["dir"])
    out = io.StringIO()
    assert main([event, "--agent", "claude-code"], stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out) == 0
    return out.getvalue(), json.loads(p["log"].read_text().splitlines()[-1])


def test_hook_prompt(project, embedder, monkeypatch, size):
    _seed(project["db"], embedder, project["space"], [{"speaker": "user", "text": OLD, "time": "2026-11-01 10:00"}])
    payload = {"session_id": "now", "transcript_path": str(project["dir"] / "none.jsonl"), "cwd": str(project["dir"]),
               "hook_event_name": "UserPromptSubmit", "prompt": long_question(size)}
    out, row = _hook(project, "UserPromptSubmit", payload, monkeypatch)
    # recalled: the context it found, or nothing above the relevance floor; never an error swallowed
    assert row["result"] in ("ok", "empty") and "retrieve" in row["timings_ms"], row
    if row["result"] == "ok":
        assert "Jenkins" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def _transcript(path: Path, turns: list[tuple[str, str]]) -> None:
    lines = []
    for i, (role, text) in enumerate(turns):
        msg: dict[str, Any] = {"role": "user", "content": text} if role == "user" else {
            "id": f"msg_{i}", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
        lines.append(json.dumps({"parentUuid": None, "isSidechain": False, "type": role, "message": msg,
                                 "uuid": f"turn-{i}", "timestamp": f"2026-12-0{i + 1}T10:00:00.000Z",
                                 "cwd": str(path.parent), "sessionId": "cap"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_hook_capture(project, monkeypatch, size):
    transcript = project["dir"].parent / "session.jsonl"
    _transcript(transcript, [("user", OLD), ("assistant", "Noted: CI is Jenkins."),
                             ("user", long_turn(size)), ("assistant", "Understood.")])
    payload = {"session_id": "cap", "transcript_path": str(transcript), "cwd": str(project["dir"]),
               "hook_event_name": "Stop", "stop_hook_active": False}
    _, row = _hook(project, "Stop", payload, monkeypatch)
    assert row["result"] == "ok" and row["added"] == 4, row
    _replaced(project["db"], project["space"], size)


# ----------------------------------------------------------------------------------- the UI's search
def test_ui_search(backend_db, hash_embedder, size):
    from starlette.testclient import TestClient

    from hela_cli.store import BrowseStore, NodeFilter
    from hela_cli.text.keywords import keywords
    from hela_cli.ui.app import create_app

    cfg = Config(db=backend_db)
    with Memory(cfg, embedder=hash_embedder) as mem:
        mem.add_many("s", [{"speaker": "user", "text": OLD, "time": "2026-11-01 10:00"},
                           {"speaker": "user", "text": long_turn(size), "time": "2026-11-20 10:00"}])
    mem = Memory(cfg, store=BrowseStore.open(cfg.db, must_exist=False), embedder=hash_embedder)
    try:
        client = TestClient(create_app(mem, "t0ken", cookie="hela-ui-long"))
        assert client.get("/?token=t0ken").status_code == 200
        page = client.post("/recall", data={"space": "s", "q": long_question(size)})
        assert page.status_code == 200 and "Jenkins" in page.text
        # the search box is a GET: a URL holds ~1,000 words (HTTP clients and servers refuse longer ones);
        # the store's search under it takes any number of terms
        found = client.get("/memories", params={"space": "s", "q": f"{filler(1000, size)} jenkins"})
        assert found.status_code == 200 and "2 matching" in found.text, found.text[-2000:]
        st = mem.store
        sid = st.require_space("s").id
        f = NodeFilter(terms=[*keywords(filler(size, size)), "jenkin"])
        assert st.count_browse(sid, f) == len(st.browse_nodes(sid, f, 10)) == 2
    finally:
        mem.close()
