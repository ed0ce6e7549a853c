"""Private spans (issue 56): text between ``<private>`` and ``</private>`` (or ``ingest.private_tag``) is in no
byte of the database, the hook log or the brief, through every entry point: ``hela add``, ``hela ingest`` (a
text file and a Claude Code transcript, where a parser cuts tool outputs), MCP ``remember``, a hook's capture
and prompt, ``hela import``, a recall's question."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.text.private import strip_private, strip_raw
from tests.hooks_support import base, child_line, hook, project  # noqa: F401 - the fixture
from tests.reliability import hela, hela_env

SECRET = "Zebulon-Quartz-71"   # a word nothing else in the suite says


def _clean(*paths: Path) -> None:
    for p in paths:
        for f in [p, *(p.parent.glob(p.name + "-*"))] if p.is_file() else sorted(p.rglob("*")):
            if f.is_file():
                data = f.read_bytes()
                assert SECRET.encode() not in data and SECRET[:8].encode() not in data, f


def test_the_span_rules():
    assert strip_private(f"a <private>{SECRET}</private> b") == "a [private] b"
    assert strip_private(f"a <Private reason='x'>\n{SECRET}\n</PRIVATE> b") == "a [private] b"
    assert strip_private(f"kept <private>{SECRET} and the rest, never closed") == "kept [private]"
    assert strip_private(f"<secret>{SECRET}</secret> <private>x</private>", "secret") == \
        "[private] <private>x</private>"
    assert strip_private("no tags at all < 3") == "no tags at all < 3"
    raw = json.dumps({"text": f"x <private>{SECRET} \"q\"</private> y"})
    assert SECRET not in strip_raw(raw) and json.loads(strip_raw(raw))["text"] == "x [private] y"


def test_every_cli_entry_point(tmp_path, model_dir_path):
    db = tmp_path / "hela.db"
    env = hela_env(tmp_path, db)
    r = hela(["add", "-s", "p", "--speaker", "ana", f"the deploy key is <private>{SECRET}</private> now"], env)
    assert r.returncode == 0, r.stderr
    rows = json.dumps({"speaker": "bo", "text": f"<private>{SECRET}</private>lunch at noon"})
    r = subprocess.run(r.args[:-5] + ["add", "-s", "p", "-"], input=rows + "\n", text=True, capture_output=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    notes = tmp_path / "notes.txt"
    notes.write_text(f"ana: we moved the cron job\nbo: fine <private>\n{SECRET}\n</private> by me\n")
    r = hela(["ingest", str(notes), "--space", "p"], env)
    assert r.returncode == 0, r.stderr
    big = "word " * 200   # a tool output longer than the parser keeps: the span sits across its cut
    transcript = tmp_path / "session.jsonl"
    recs = [{"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-12-01T10:00:00Z",
             "message": {"role": "user", "content": f"remember the port is 6543 <private>{SECRET}</private>"}},
            {"type": "user", "uuid": "u2", "sessionId": "s1", "timestamp": "2026-12-01T10:00:05Z",
             "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                      "content": big + f"<private>{SECRET}</private>"}]}}]
    transcript.write_text("\n".join(json.dumps(x) for x in recs) + "\n")
    r = hela(["ingest", str(transcript), "--space", "p"], {**env, "HELA_INGEST_TOOL_OUTPUT_CHARS": "300"})
    assert r.returncode == 0, r.stderr
    r = hela(["ask", f"where is the cron job? <private>{SECRET}</private>", "-s", "p", "--no-llm"], env)
    assert r.returncode == 0, r.stderr
    r = hela(["memories", "-s", "p"], env)
    assert "[private]" in r.stdout and SECRET not in r.stdout
    _clean(db, tmp_path / "home")


def test_remember_and_import(tmp_path, embedder, cfg):
    from hela_cli.maintenance import exporting
    from hela_cli.mcp_server.tools import HelaServer, TurnIn

    cfg.db = str(tmp_path / "a.db")
    server = HelaServer(cfg)
    server.remember("p", [TurnIn(text=f"call me <private>{SECRET}</private> later", speaker="ana")])
    mem = server.memory
    assert SECRET not in json.dumps(mem.memories("p"))
    exp = exporting.export_json(mem.store, mem.store.require_space("p"), mem.config, vectors=True)
    mem.close()
    exp["nodes"][0]["text"] += f" <private>{SECRET}</private>"   # an export written by hand or elsewhere
    f = tmp_path / "e.json"
    f.write_text(json.dumps(exp))
    with Memory(Config(db=str(tmp_path / "b.db")), embedder=embedder) as mem:
        mem.import_export(f, space="q")
    _clean(tmp_path / "a.db", tmp_path / "b.db")


def test_hooks_capture_prompt_and_brief(project):  # noqa: F811 - the fixture
    transcript = project["dir"] / "t.jsonl"
    recs = [{"type": "user", "uuid": "v1", "sessionId": "cap", "timestamp": "2026-12-01T10:00:00Z", "cwd": str(project["dir"]),
             "message": {"role": "user", "content": f"the staging token lives in vault <private>{SECRET}</private>"}},
            {"type": "assistant", "uuid": "v2", "sessionId": "cap", "timestamp": "2026-12-01T10:00:09Z", "cwd": str(project["dir"]),
             "message": {"role": "assistant", "content": [{"type": "text", "text": f"Noted <private>{SECRET}"}]}}]
    transcript.write_text("\n".join(json.dumps(x) for x in recs) + "\n")
    res, lines = hook(project, "SessionEnd", base(project, "SessionEnd", session_id="cap",
                                                  transcript_path=str(transcript)))
    assert res.returncode == 0 and lines[-1]["result"] in ("ok", "detached"), lines
    if lines[-1]["result"] == "detached":
        assert child_line(project, lines[-1]["child"])["result"] == "ok"
    res, lines = hook(project, "UserPromptSubmit", base(project, "UserPromptSubmit", session_id="later",
                                                        prompt=f"where is the staging token? <private>{SECRET}</private>"))
    assert res.returncode == 0
    res, _ = hook(project, "SessionStart", base(project, "SessionStart", session_id="later2", source="startup"))
    assert res.returncode == 0 and SECRET.encode() not in res.stdout
    import sqlite3

    con = sqlite3.connect(project["db"])
    stored = [t for (t,) in con.execute("SELECT text FROM nodes WHERE text LIKE '%vault%' OR text LIKE 'Noted [%'")]
    con.close()
    assert stored and all("[private]" in t for t in stored), stored
    _clean(project["db"], project["home"])
