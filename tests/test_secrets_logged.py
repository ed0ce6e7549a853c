"""Issue 40's follow-up: text from outside that reaches the database or a file beside it is redacted on
every path that is not an opt-in store of the user's own text (``hela add`` without ``--redact``): the
question of a recall or ask (asks log, query vector), an answer restating it, a prompt handed to
``learn_recall`` unredacted (``hooks.redact`` off), the text an edit replaces (history), the prompt the hook's
feedback state file keeps, and the MCP server's error lines."""

from __future__ import annotations

import json
from pathlib import Path

from hela_cli.errors import InputError
from hela_cli.hooks.feedback import _state_path, remember_injected
from hela_cli.mcp_server.tools import _error_line
from hela_cli.store import Store

PW = "Xy9secretPass"
KEY = "sk-proj-Qm4vTz8Qm4vTz8Qm4vTz8Qm4vTz8Qm4v"
QUESTION = f"why does `export PGPASSWORD={PW}` then psql with {KEY} fail for the tea shop?"


def _asks(mem) -> list[tuple[str, str | None]]:
    return [(q, a) for q, a in mem.store.db.execute("SELECT question, answer FROM asks ORDER BY id").fetchall()]


def _memory(make_memory, hash_embedder, **changes):
    mem = make_memory(embedder=hash_embedder, **changes)
    mem.add_batch("a", [{"text": f"turn {i}: the tea shop opens at nine, psql failed"} for i in range(4)])
    return mem


def test_a_learning_recall_logs_the_question_redacted_and_embeds_it_redacted(make_memory, hash_embedder):
    mem = _memory(make_memory, hash_embedder)
    res = mem.retrieve(QUESTION, "a", learn=True)
    assert res.recall_id is not None
    (question, _), = _asks(mem)
    assert PW not in question and KEY not in question
    assert "PGPASSWORD=[REDACTED:password]" in question and "tea shop" in question
    # the query vector kept for feedback is the redacted question's, not the secret's
    clean = question
    assert (hash_embedder.embed([clean])[0] == res.query_vector).all()


def test_an_ask_logs_the_question_redacted(make_memory, hash_embedder):
    mem = _memory(make_memory, hash_embedder)
    out = mem.ask(QUESTION, "a", llm=False, learn=True)
    assert out["recall_id"] is not None and PW not in out["question"]
    (question, _), = _asks(mem)
    assert PW not in question and KEY not in question and "[REDACTED:" in question


def test_a_prompt_learned_from_unredacted_is_logged_redacted(make_memory, hash_embedder):
    # the prompt hook with hooks.redact off hands its prompt as typed to learn_recall
    mem = _memory(make_memory, hash_embedder)
    res = mem.retrieve("tea shop", "a", learn=False)
    rid = mem.learn_recall("a", QUESTION, res, res.memories[:1])
    assert rid is not None
    (question, _), = _asks(mem)
    assert PW not in question and KEY not in question


def test_a_logged_answer_is_redacted(make_memory, hash_embedder):
    mem = _memory(make_memory, hash_embedder)
    res = mem.retrieve("tea shop", "a", learn=False)
    mem._log(mem.space("a").id, "what did I export?", f"You ran export PGPASSWORD={PW}.", res.memories, res.step,
             "ask")
    (_, answer), = _asks(mem)
    assert PW not in answer and "PGPASSWORD=[REDACTED:password]" in answer


def test_an_edit_that_takes_a_secret_out_leaves_it_nowhere(make_memory, hash_embedder, tmp_path):
    db = tmp_path / "e.db"
    mem = make_memory(embedder=hash_embedder, store=Store(db))
    nid = mem.add("a", f"my deploy line: export PGPASSWORD={PW} && psql -h db app")  # opt-in redaction: off
    mem.edit("a", nid, "my deploy line: psql -h db app (password in ~/.pgpass)")
    versions = mem.history("a", nid)["versions"]
    assert all(PW not in v["text"] for v in versions)
    assert any("PGPASSWORD=[REDACTED:password]" in v["text"] for v in versions)
    mem.close()
    wal = Path(str(db) + "-wal")
    raw = db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    assert PW.encode() not in raw


def test_the_hook_feedback_state_keeps_the_prompt_redacted(monkeypatch, tmp_path):
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    remember_injected("s1", "a", 7, [{"id": 1, "text": "the tea shop"}], f"run export PGPASSWORD={PW} for me")
    state = json.loads(_state_path("s1").read_text(encoding="utf-8"))
    assert PW not in state["prompt"] and "[REDACTED:password]" in state["prompt"]


def test_mcp_error_lines_are_redacted():
    url = f"postgresql://app:{PW}@db:5432/app"
    assert PW not in _error_line(InputError(f"cannot open {url}"))
    assert PW not in _error_line(RuntimeError(f"connection to {url} failed"))
    assert "postgresql://app:[REDACTED:url-password]@db" in _error_line(RuntimeError(f"connection to {url} failed"))
