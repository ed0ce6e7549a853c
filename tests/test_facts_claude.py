"""Facts that change (issue 38) with the real Claude Code binary, offline (tests/agents_support.py).

Hooks: session 1 states a fact, session 2 changes it, the change is marked with ``hela supersede`` between
sessions (the explicit path), session 3 asks: the request the model receives carries the new fact, and the
old one only with its mark ``(superseded by #N, DATE)``.

MCP: the same two facts written with ``hela add`` / ``hela add --supersedes``; Claude Code calls hela's
``recall`` over HTTP: the tool result lists the new fact above the old one, and the old one carries the
marks as fields.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess

from tests.agents_support import ToolUse, fake_messages_api, require_claude
from tests.reliability import PY, hela, hela_env
from tests.test_hooks_claude import captured, session, setup, wait_for  # noqa: F401 - the fixture
from tests.test_mcp_claude import TOKEN, ask_claude, http_server, result_text, tool_results

OLD = "Context for later: our model server is vLLM 0.6 behind nginx, and the GPU box is called orca."
NEW = "Update: we replaced vLLM with SGLang last week because of the prefix cache; orca still hosts it."
QUESTION = "Which inference server does our model run on now?"
OLD_WORDS = "vLLM 0.6 behind nginx"


def _ids(db) -> tuple[int, int]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT id, text FROM nodes WHERE speaker = 'user' OR role = 'user'").fetchall()
    finally:
        con.close()
    old = next(i for i, t in rows if OLD_WORDS in t)
    new = next(i for i, t in rows if "SGLang" in t)
    return old, new


def test_three_sessions_the_changed_fact_comes_marked(setup):  # noqa: F811 - the fixture
    with fake_messages_api("Noted.") as api:
        _, sid1 = session(setup, api, OLD)
    wait_for(setup, captured(sid1))
    with fake_messages_api("Noted, SGLang now.") as api:
        _, sid2 = session(setup, api, NEW)
    wait_for(setup, captured(sid2))
    old, new = _ids(setup["db"])
    marked = subprocess.run([PY, "-m", "hela_cli", "supersede", str(old), str(new), "--json"], env=setup["henv"],
                            cwd=str(setup["proj"]), capture_output=True, text=True, timeout=120)
    assert marked.returncode == 0, marked.stderr
    assert json.loads(marked.stdout)["mark"]["status"] == "superseded"

    with fake_messages_api("SGLang, on orca.") as api:
        _, sid3 = session(setup, api, QUESTION)
        texts = api.texts()
    main = [t for t in texts if QUESTION in t]
    assert main, texts[:1]
    sent = "\n".join(texts)
    assert "SGLang" in main[0]                       # the new fact is in the request
    lines = [line for line in sent.splitlines() if OLD_WORDS in line]
    assert lines, main[0][:3000]                     # history stays: the old fact is recalled ...
    mark = re.compile(rf"\(superseded by #{new}, \d{{4}}-\d{{2}}-\d{{2}}\)")
    assert all(mark.search(line) for line in lines), lines   # ... and only with its mark
    rows = wait_for(setup, captured(sid3))
    prompt = next(r for r in rows if r.get("session") == sid3 and r["event"] == "UserPromptSubmit")
    assert prompt["result"] == "ok" and new in prompt["memories"], prompt


RECALL = "mcp__hela__recall"
RECALL_ID = "toolu_hela_recall_facts"
ANSWER = "SGLang."


def _agent(body):
    if any(r.get("tool_use_id") == RECALL_ID for r in tool_results(body)):
        return ANSWER
    if RECALL in [t.get("name") for t in body.get("tools") or []]:
        return ToolUse(RECALL, {"space": "proj", "query": QUESTION}, id=RECALL_ID)
    return "hela's tools were not offered."


def test_mcp_recall_returns_the_marks_as_fields(tmp_path):
    claude = require_claude()
    db, token_file = tmp_path / "shared.db", tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    env = hela_env(tmp_path, db)
    first = hela(["add", "-s", "proj", "--time", "2024-05-01", OLD], env)
    assert first.returncode == 0, first.stderr
    old = int(first.stdout.strip())
    second = hela(["add", "-s", "proj", "--time", "2024-06-01", "--supersedes", str(old), NEW], env)
    assert second.returncode == 0, second.stderr
    new = int(second.stdout.strip())
    with http_server(tmp_path, db, token_file) as (url, _), fake_messages_api(_agent) as api:
        res = ask_claude(claude, tmp_path, api, ["--transport", "http", "hela", url,
                                                  "--header", f"Authorization: Bearer {TOKEN}"])
        assert res.returncode == 0, res.stderr
        results = {b["tool_use_id"]: b for body in api.messages() for b in tool_results(body)}
    out = json.loads(result_text(results[RECALL_ID]))
    got = {m["id"]: m for m in out["memories"]}
    ids = [m["id"] for m in out["memories"]]
    assert new in got and ids.index(new) < ids.index(old), ids
    assert (got[old]["superseded_by"], got[old]["supersession_status"], got[old]["mark"]) == \
        (new, "superseded", f"(superseded by #{new}, 2024-06-01)")
    assert got[old]["invalid_at"].startswith("2024-06-01") and got[new]["supersedes"] == [old]
    assert got[new]["superseded_by"] is None and got[new]["mark"] is None
