"""``benchmarks/agents/coding_memory.py`` on a tiny slice (the first 40 records of one real session, three
questions), with the keyword-hash embedder in the hooks' process: the replay goes through the capture hook,
the prompt hook's context is mapped back to transcript records, the baselines stay within hela's budget and
the table renders. The figures in BENCHMARKS.md come from the real default models, not from this."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from hela_cli.config import load_config
from hela_cli.hooks import handlers as hook_handlers
from hela_cli.testing import HashEmbedder

REPO = Path(__file__).resolve().parents[1]
SESSION = REPO / "benchmarks" / "agents" / "coding_memory" / "data" / "bookminder" / "bookminder-day003.jsonl"


def _bench():
    spec = importlib.util.spec_from_file_location("coding_memory_bench", REPO / "benchmarks" / "agents" / "coding_memory.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod   # its dataclass looks its module up
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture()
def slice_(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    lines = SESSION.read_text(encoding="utf-8").splitlines()[:40]
    (data / SESSION.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    questions = {"questions": [
        # worded as the record itself: the hash embedder finds it, so hela's context must map back to it
        {"id": "t1", "kind": "convention", "prompt": "I'd like to work on the project alongside with you; I had "
         "trouble getting the living documentation output", "evidence": ["bookminder-day003-L00111"]},
        # the answer is in a tool's output, which today's capture does not store: grep finds it, hela cannot
        {"id": "t2", "kind": "failure", "prompt": "pytest specs says collected 0 items, no tests ran",
         "evidence": ["bookminder-day003-L00070r", "bookminder-day003-L00172r"]},
        {"id": "t3", "kind": "failure", "prompt": "a question about records not in the slice",
         "evidence": ["bookminder-day009-L05197"]},
    ]}
    qfile = tmp_path / "questions.json"
    qfile.write_text(json.dumps(questions), encoding="utf-8")
    # the hooks' process loads its embedder once per (model, folder): the hash double stands in for it
    monkeypatch.setenv("HELA_MODELS_DIR", str(tmp_path / "models"))
    cfg = load_config()
    monkeypatch.setitem(hook_handlers._EMBEDDERS, (cfg.models.embedder, cfg.models.dir), HashEmbedder())
    return data, qfile, tmp_path / "work"


def test_slice_replays_asks_and_scores(slice_):
    data, qfile, work = slice_
    work.mkdir()
    bench = _bench()
    res = bench.run(work, data, qfile)
    assert res["sessions"] == 1
    assert res["memories"] > 0 and (work / "hela.db").exists()
    rows = {r["id"]: r for r in res["rows"]}
    assert set(rows) == {"t1", "t2"}   # t3's evidence is outside the replayed sessions
    budget = res["prompt_tokens"]
    for r in rows.values():
        assert r["none"] == {"answered": False, "recall": 0.0, "tokens": 0}
        for system in ("grep", "bm25", "hela"):
            assert 0 <= r[system]["tokens"] <= budget
    assert rows["t1"]["hela"]["answered"] and rows["t1"]["grep"]["answered"]
    assert rows["t2"]["grep"]["answered"] and not rows["t2"]["hela"]["answered"]
    summary = res["summary"]
    assert summary["hela"]["all"]["answered"] == 0.5
    assert res["briefs"] and all(v >= 0 for v in res["briefs"].values())
    curve = bench.budget_curve(data, qfile, [60, 800], 400)
    assert [(c["system"], c["budget"]) for c in curve] == [("grep", 60), ("bm25", 60), ("grep", 800), ("bm25", 800)]
    assert all(c["tok_prompt"] <= c["budget"] for c in curve)
    assert curve[2]["answered"] >= curve[0]["answered"] and curve[2]["answered"] >= 1
    table = bench.table(summary)
    assert table.splitlines()[0].startswith("| system | all answered")
    assert {line.split(" | ")[0] for line in table.splitlines()[2:]} >= {"| none", "| grep", "| bm25", "| hela"}


def test_grep_and_bm25_fill_the_budget_in_rank_order(tmp_path):
    bench = _bench()
    corpus = bench.Corpus.read([SESSION])
    text, uuids = bench.grep_context(corpus, "pytest specs collected items", 200, 400)
    assert text and len(text) <= 200 * 4 and uuids
    counts = [sum(w in line.lower() for w in ("pytest", "spec", "collect", "item")) for line in text.splitlines()]
    assert counts == sorted(counts, reverse=True) and counts[0] >= 3   # the most keywords first
    bm = bench.BM25(corpus)
    text2, uuids2 = bm.context("pytest.ini test discovery", 200, 400)
    assert text2 and uuids2 and "discovery" in text2.splitlines()[0].lower()
    assert bench.grep_context(corpus, "zzqx nonexistent", 200, 400) == ("", set())
