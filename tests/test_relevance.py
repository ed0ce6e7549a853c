"""What the prompt hook injects (issue 52): the memories a prompt needs or nothing; receipts never by meaning;
the decision's parts (the prompt's cues, the margin over the background) and the per-session report."""

from __future__ import annotations

import json

import pytest

from hela_cli.config import Config
from hela_cli.hooks import log as hook_log
from hela_cli.hooks.context import injectable, prompt_context, start_context
from hela_cli.mechanics import relevance
from hela_cli.memory import Memory
from hela_cli.text.prompt_cues import named_things, names_in, refers_to_project
from hela_cli.text.session_lines import is_receipt

PROJECT = [
    ("user", "Let's switch the build backend from setuptools to hatchling while we move to uv."),
    ("assistant", "Done: pyproject.toml now uses hatchling as the build backend, and uv.lock is committed."),
    ("user", "First things first: the Apple Books library lives in BKLIBRARY_PATH, keep it a module constant."),
    ("assistant", "[tool output] File created successfully at: /home/dev/bookminder/Dockerfile"),
    ("assistant", "[tool output] <tool_use_error>File has not been read yet. Read it first before writing to it."),
    ("user", "Please write the specs with describe/it names, no docstrings in specs."),
    ("assistant", "The CI workflow runs ruff format --check and pytest on every push to main."),
    ("user", "We first tried black and flake8, then replaced both with ruff."),
]
UNRELATED = ["Write a haiku about the first snow of winter.", "What is a good substitute for eggs in a cake?",
             "How do I reverse a linked list in Rust?", "Thanks, see you tomorrow!",
             "Draft an email to my landlord about the broken heating."]


@pytest.fixture()
def mem(tmp_path, embedder, monkeypatch):
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    m = Memory(Config(db=str(tmp_path / "hela.db")), embedder=embedder)
    m.add_many("proj", [{"speaker": s, "text": t, "session": "earlier", "id": f"m{i}",
                         "time": f"2026-11-{i + 1:02d} 10:00"} for i, (s, t) in enumerate(PROJECT)])
    yield m
    m.close()


def _ids(mem: Memory, needle: str) -> int:
    return next(r["id"] for r in mem.memories("proj", limit=50) if needle in r["text"])


@pytest.mark.parametrize("prompt", UNRELATED)
def test_a_prompt_about_nothing_in_the_project_gets_nothing(mem, prompt):
    text, facts = prompt_context(mem, "proj", prompt, "now")
    assert text == "" and facts["memories"] == []


def test_the_old_floor_alone_injects_the_haiku_prompt(mem):
    """What the decision replaces (a test that fails when the floor alone would already be silent)."""
    cfg = Config(db=mem.config.db)
    cfg.hooks.relevance = False
    text, _ = prompt_context(mem, "proj", UNRELATED[0], "now", cfg=cfg)
    assert text   # "first" alone carried it past hooks.prompt_min_score


def test_a_project_question_gets_its_memory(mem):
    text, facts = prompt_context(mem, "proj", "Why did we switch the build backend to hatchling?", "now")
    assert "hatchling" in text and facts["evidence"]
    assert all(e in ("name", "meaning", "anchored") for e in facts["evidence"])


def test_a_named_identifier_is_evidence(mem):
    text, facts = prompt_context(mem, "proj", "Where is BKLIBRARY_PATH defined?", "now")
    assert "BKLIBRARY_PATH" in text and "name" in facts["evidence"]


def test_receipts_are_never_injected_by_meaning(mem):
    rid = _ids(mem, "File created successfully")
    eid = _ids(mem, "tool_use_error")
    for prompt in ("How did we set up the Docker build for the project?", "Which files did we create before?"):
        _, facts = prompt_context(mem, "proj", prompt, f"s-{prompt}")
        assert rid not in facts["memories"] and eid not in facts["memories"]
    receipt = {"text": PROJECT[3][1]}
    assert not injectable(receipt) and injectable(receipt, named_things("What happened to the Dockerfile?"))


def test_the_brief_uses_the_same_decision(mem, tmp_path):
    root = tmp_path / "repo-with-nothing-in-common"
    root.mkdir()
    text, facts = start_context(mem, "proj", root, "brief-session")
    assert "Relevant to the repository now:" not in text


def test_prompt_learns_nothing_and_logs_the_recall(mem):
    cur = mem.store.db.execute
    edges = cur("SELECT * FROM edges ORDER BY 1, 2").fetchall()
    _, facts = prompt_context(mem, "proj", "Why did we switch the build backend to hatchling?", "learn-sess")
    assert facts["memories"] and facts["recall_id"]   # hooks.feedback: the echo of the reply names it later
    assert cur("SELECT * FROM edges ORDER BY 1, 2").fetchall() == edges
    cfg = Config(db=mem.config.db)
    cfg.hooks.learn_injected = True
    _, facts = prompt_context(mem, "proj", "Why did we switch the build backend to hatchling?", "learn-2", cfg=cfg)
    assert facts["memories"] and cur("SELECT * FROM edges ORDER BY 1, 2").fetchall() != edges


def test_margin_is_measured_against_the_background(mem, embedder):
    res = mem.retrieve("Why did we switch the build backend to hatchling?", "proj", learn=False)
    sp = mem.space("proj")
    v = relevance.judge(mem.store, sp.id, embedder, "Why did we switch the build backend to hatchling?",
                        res.memories, res.query_vector)
    best = max(v.values(), key=lambda x: x.margin)
    assert best.relevant and best.margin > 0.2 and 0 < best.background < 0.6
    again = relevance.background_vectors(embedder)
    assert again.shape == (len(relevance.BACKGROUND), embedder.dim)


def test_background_is_cached_outside_the_database(tmp_path, embedder, monkeypatch):
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "h2"))
    relevance._CACHE.clear()
    first = relevance.background_vectors(embedder)
    files = list((tmp_path / "h2" / "cache").glob("relevance-background.*.json"))
    assert len(files) == 1
    relevance._CACHE.clear()
    assert (relevance.background_vectors(embedder) == first).all()


@pytest.mark.parametrize("prompt, named, project", [
    ("I want to edit .claude/commands/hi.md: what do I need to know?", ["claude/commands/hi.md"], False),
    ("Why are BKLIBRARY_PATH and BKLIBRARY_DB_FILE module-level constants?", ["bklibrary_path", "bklibrary_db_file"],
     False),
    ("What changes did we make to pyproject.toml so far?", ["pyproject.toml"], True),
    ("Run `git status` and tell me", ["git status"], False),
    ("Is Python 3.12 still supported in this repo?", [], True),
    ("How do I squash the last three commits into one?", [], False),
])
def test_prompt_cues(prompt, named, project):
    assert named_things(prompt) == named and refers_to_project(prompt) is project
    assert names_in("see pyproject.toml", ["pyproject.toml"]) and not names_in("x", [])


@pytest.mark.parametrize("text, receipt", [
    ("[tool output] File created successfully at: /a/Dockerfile", True),
    ("[tool output] The file /x/plan.md has been updated successfully.", True),
    ("[tool output] <tool_use_error>File has not been read yet</tool_use_error>", True),
    ("[tool output] 1→import os\n2→import sys\n3→", True),
    ("[tool output] src/\ndocs/a.md\ntests/b.py", True),
    ("[tool output] 3 passed, 1 failed in 0.4s", False),
    ("[result] `pytest -x` exit 1: E assert 1 == 2", False),
    ("We decided to keep the specs without docstrings.", False),
])
def test_receipts(text, receipt):
    assert is_receipt(text) is receipt


def test_hooks_status_reports_each_session(tmp_path, monkeypatch):
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    rows = [{"agent": "claude-code", "session": "s1", "role": "prompt", "result": "ok", "tokens": 120,
             "memories": [1, 2]},
            {"agent": "claude-code", "session": "s1", "role": "prompt", "result": "empty", "tokens": 0},
            {"agent": "claude-code", "session": "s1", "role": "prompt", "result": "empty", "tokens": 0},
            {"agent": "claude-code", "session": "s1", "role": "capture", "result": "ok",
             "feedback": {"echoed": [2], "strengthened": 1}},
            {"agent": "codex", "session": "s2", "role": "prompt", "result": "empty", "tokens": 0}]
    for r in rows:
        hook_log.append(r)
    stats = hook_log.session_stats()
    assert [s["session"] for s in stats] == ["s2", "s1"]
    s1 = stats[1]
    assert s1["prompts"] == 3 and s1["silent"] == round(2 / 3, 3) and s1["tokens"] == 120
    assert s1["injected"] == 2 and s1["used"] == 1 and stats[0]["used"] is None
    json.dumps(stats)
