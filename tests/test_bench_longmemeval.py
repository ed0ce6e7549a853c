"""``hela bench longmemeval`` on a small LongMemEval-shaped file written for these tests
(tests/data/longmemeval_mini.json: 4 items, one of them an abstention item, a repeated session id and an
empty turn)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hela_cli.bench import load_records
from hela_cli.bench.longmemeval import (abstains, exact_match, load_items, run_longmemeval, score_item,
                                        summarize_lme)
from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.errors import InputError

runner = CliRunner()
from tests.support import MINI  # noqa: E402


@pytest.fixture()
def cfg(model_dir_path):
    c = Config()
    c.models.dir = str(model_dir_path)
    return c


def _items():
    return {it.qid: it for it in load_items(MINI)}


def _mem(source_id):
    return {"source_id": source_id, "session": source_id.rsplit(":", 1)[0]}


def _write(tmp_path, items, name="lme.json"):
    p = tmp_path / name
    p.write_text(json.dumps(items), encoding="utf-8")
    return p


# ----------------------------------------------------------------------------------- parsing and gold
def test_items_and_their_gold():
    items = _items()
    assert list(items) == ["lm_user_1", "lm_multi_2", "lm_ku_3", "lm_temp_4_abs"]
    u = items["lm_user_1"]
    assert u.qtype == "single-session-user" and u.answer == "a corgi" and not u.abstention
    assert u.gold_sessions == ["answer_dog_1"] and u.gold_turns == ["answer_dog_1:0"]
    assert u.now == 1686387600.0  # 2023/06/10 09:00 UTC: Eq.3's "now"
    ku = items["lm_ku_3"]
    assert ku.gold_sessions == ["answer_job_new"]
    assert ku.gold_turns == ["answer_job_old:0", "answer_job_new:0"]
    src = [t.source_id for t in ku.conv.turns]
    # the empty turn is skipped and the next keeps its index; the repeated filler session is kept as "#2"
    assert "answer_job_new:1" not in src and "answer_job_new:2" in src
    assert "filler_garden#2:0" in src
    a = items["lm_temp_4_abs"]
    assert a.abstention and a.qtype == "temporal-reasoning"
    assert items["lm_multi_2"].answer == "2"


def test_bad_files_name_file_and_item(tmp_path):
    raw = json.loads(MINI.read_text())
    del raw[1]["question"]
    p = _write(tmp_path, raw)
    with pytest.raises(InputError, match=r"lme\.json: item 2 \(lm_multi_2\): no 'question'"):
        load_items(p)
    raw = json.loads(MINI.read_text())
    raw[0]["answer_session_ids"] = "answer_dog_1"
    with pytest.raises(InputError, match="item 1 .*answer_session_ids"):
        load_items(_write(tmp_path, raw))
    raw = json.loads(MINI.read_text())
    raw[2]["haystack_sessions"][0][0]["content"] = 7
    with pytest.raises(InputError, match=r"item 3 \(lm_ku_3\) session 1 .*turn 1: 'content' must be a string"):
        load_items(_write(tmp_path, raw))


# ----------------------------------------------------------------------------------- metrics by hand
def test_recall_metrics_hand_computed():
    items = _items()
    multi = items["lm_multi_2"]  # gold sessions answer_music_a + answer_music_b, one has_answer turn in each
    s = score_item(multi, [_mem("answer_music_a:1"), _mem("filler_travel:0")], None, True)
    assert s["session_recall_any"] == 1.0 and s["session_recall_all"] == 0.0 and s["turn_recall"] == 0.0
    s = score_item(multi, [_mem("answer_music_a:0"), _mem("answer_music_b:3")], None, True)
    assert s["session_recall_any"] == 1.0 and s["session_recall_all"] == 1.0 and s["turn_recall"] == 0.5
    s = score_item(multi, [_mem("filler_travel:0")], None, True)
    assert (s["session_recall_any"], s["session_recall_all"], s["turn_recall"]) == (0.0, 0.0, 0.0)
    ku = items["lm_ku_3"]  # the repeated session id is its own session, never a gold one
    s = score_item(ku, [_mem("answer_job_old:0"), _mem("filler_garden#2:1")], None, True)
    assert s["session_recall_any"] == 0.0 and s["turn_recall"] == 0.5
    assert s["f1"] is None and s["em"] is None and s["abstained"] is None  # retrieval only


def test_abstention_items_are_not_scored_for_recall():
    abs_item = _items()["lm_temp_4_abs"]
    s = score_item(abs_item, [_mem("answer_trip_abs:0")], None, True)
    assert s["session_recall_any"] is None and s["turn_recall"] is None
    s = score_item(abs_item, [_mem("answer_trip_abs:0")], "You did not mention a rail pass.", False)
    assert s["abstained"] == 1.0 and s["f1"] is None and s["em"] is None
    assert score_item(abs_item, [], "Three days.", False)["abstained"] == 0.0


def test_qa_metrics_hand_computed():
    u = _items()["lm_user_1"]  # answer "a corgi"
    s = score_item(u, [], "A Corgi.", False)
    assert s["em"] == 1.0 and s["f1"] == 1.0 and s["abstained"] is None
    s = score_item(u, [], "a corgi puppy", False)  # pred {corgi, puppi}, gold {corgi}: P 1/2, R 1
    assert s["em"] == 0.0 and s["f1"] == pytest.approx(2 / 3)
    assert score_item(u, [], "", False)["f1"] == 0.0
    assert exact_match("The  answer!", "answer") == 1.0 and exact_match("", "") == 0.0
    assert abstains("I don’t know.") and abstains("That was not mentioned.") and not abstains("Kyoto")


def test_summary_groups_by_type_and_keeps_abstention_apart():
    recs = [
        {"question_type": "multi-session", "abstention": False, "session_recall_any": 1.0, "turn_recall": 0.5,
         "context_tokens": 100, "f1": 0.5},
        {"question_type": "multi-session", "abstention": False, "session_recall_any": 0.0, "turn_recall": 0.0,
         "context_tokens": 300, "f1": 0.0},
        {"question_type": "knowledge-update", "abstention": False, "session_recall_any": 1.0, "turn_recall": None,
         "context_tokens": 200, "f1": 1.0},
        {"question_type": "multi-session", "abstention": True, "session_recall_any": None, "turn_recall": None,
         "context_tokens": 400, "abstained": 1.0},
    ]
    s = summarize_lme(recs)
    assert list(s["per_type"]) == ["multi-session", "knowledge-update"]  # the benchmark's order
    ms = s["per_type"]["multi-session"]
    assert ms["count"] == 3 and ms["session_recall_any"] == 0.5 and ms["session_recall_any_n"] == 2
    assert ms["turn_recall"] == 0.25 and ms["context_tokens"] == pytest.approx(800 / 3, abs=1e-5)
    o = s["overall"]
    assert o["count"] == 4 and o["session_recall_any"] == pytest.approx(2 / 3, abs=1e-5)
    assert o["turn_recall"] == 0.25 and o["turn_recall_n"] == 2 and o["f1"] == 0.5
    assert s["abstention"]["count"] == 1 and s["abstention"]["abstained"] == 1.0


# ----------------------------------------------------------------------------------- runs
def _retrieved(summary_records):
    return {(r["sample"], r["variant"]): [(m["source_id"], m["score"]) for m in r["retrieved"]]
            for r in summary_records}


def test_run_retrieval_only_small_budget(cfg, embedder, tmp_path):
    s = run_longmemeval(MINI, variants=["full", "cosine", "bm25"], retrieval_only=True, k=2, cfg=cfg,
                        embedder=embedder, records=tmp_path / "r.jsonl")
    assert s["items"] == ["lm_user_1", "lm_multi_2", "lm_ku_3", "lm_temp_4_abs"]
    assert s["ingest"]["ingested"] == 4 and s["ingest"]["turns"] == 38  # one ingest per item, not per variant
    assert s["ingest"]["turns_per_s"] > 0 and s["ingest"]["embed_tokens"] > 38
    recs = load_records(tmp_path / "r.jsonl")
    assert len(recs) == 12
    for v, g in s["variants"].items():
        assert g["budget"] == 2 + cfg.retrieval.m and g["questions"] == 4
        assert g["overall"]["session_recall_any_n"] == 3  # the abstention item is not scored
        assert g["abstention"]["count"] == 1
    for r in recs:
        assert len(r["retrieved"]) <= 5 and r["prediction"] is None
        assert all(m["session"] == m["source_id"].rsplit(":", 1)[0] for m in r["retrieved"])
    by = {(r["sample"], r["variant"]): r for r in recs}
    # "What breed is the puppy I adopted?" - the corgi turn is the nearest one by far
    assert by[("lm_user_1", "cosine")]["session_recall_any"] == 1.0
    assert by[("lm_user_1", "cosine")]["turn_recall"] == 1.0
    assert by[("lm_temp_4_abs", "full")]["session_recall_any"] is None


def test_gold_fields_never_reach_retrieval(cfg, embedder, tmp_path):
    class Spy:
        def __init__(self, inner):
            self.inner, self.model_id, self.dim, self.texts = inner, inner.model_id, inner.dim, []

        def embed(self, texts):
            self.texts.extend(texts)
            return self.inner.embed(texts)

    raw = json.loads(MINI.read_text())
    poisoned = copy.deepcopy(raw)
    for it in poisoned:
        it["answer"] = "Zanzibar quokka"
        it["question_type"] = "knowledge-update"
        it["answer_session_ids"] = [it["haystack_session_ids"][-1]]
        for sess in it["haystack_sessions"]:
            for t in sess:
                t["has_answer"] = not t.get("has_answer", False)
    a, b = Spy(embedder), Spy(embedder)
    kw = dict(variants=["full", "bm25"], retrieval_only=True, k=2, cfg=cfg)
    run_longmemeval(_write(tmp_path, raw, "a.json"), embedder=a, records=tmp_path / "a.jsonl", **kw)
    run_longmemeval(_write(tmp_path, poisoned, "b.json"), embedder=b, records=tmp_path / "b.jsonl", **kw)
    assert a.texts == b.texts  # the same texts embedded, in the same order
    assert not any("zanzibar" in t.lower() or "quokka" in t.lower() for t in b.texts)
    ra, rb = load_records(tmp_path / "a.jsonl"), load_records(tmp_path / "b.jsonl")
    assert _retrieved(ra) == _retrieved(rb)  # same memories, same scores
    assert [r["context_tokens"] for r in ra] == [r["context_tokens"] for r in rb]
    assert [r["session_recall_any"] for r in ra] != [r["session_recall_any"] for r in rb]  # scoring did change


def test_resume_from_records_and_cache(cfg, embedder, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    rec = tmp_path / "r.jsonl"
    kw = dict(variants=["full", "cosine"], retrieval_only=True, k=2, cfg=cfg, embedder=embedder, limit=3)
    first = run_longmemeval(MINI, records=rec, cache_dir=cache, **kw)
    assert first["ingest"]["ingested"] == 3 and len(list(cache.glob("*.db"))) == 3
    lines = rec.read_text().splitlines()
    assert len(lines) == 6
    uninterrupted = _retrieved([json.loads(line) for line in lines])
    rec.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])  # item 2 half done, then a torn write
    again = run_longmemeval(MINI, records=rec, **kw)  # no cache: item 1 is done, so 2 items are ingested
    assert again["timing"]["resumed"] == 3 and again["timing"]["asked"] == 3
    assert again["ingest"]["ingested"] == 2
    for v in ("full", "cosine"):
        assert again["variants"][v]["overall"] == first["variants"][v]["overall"]
    assert _retrieved(load_records(rec)) == uninterrupted
    assert len(load_records(rec)) == 6
    cached = run_longmemeval(MINI, cache_dir=cache, **kw)  # the cache replaces the ingest
    assert cached["ingest"]["ingested"] == 0 and cached["ingest"]["cached"] == 3
    for v in ("full", "cosine"):
        assert cached["variants"][v]["overall"] == first["variants"][v]["overall"]
    with pytest.raises(InputError, match="different run"):
        run_longmemeval(MINI, records=rec, **{**kw, "variants": ["bm25"]})
    with pytest.raises(InputError, match="different run"):
        run_longmemeval(MINI, records=rec, **{**kw, "k": 3})


def test_question_date_is_now(cfg, embedder, tmp_path):
    """With Eq.3's time decay on, Δt counts from question_date: a later question date lowers every score by
    the same factor exp(-Δ/τ)."""
    raw = json.loads(MINI.read_text())[:1]
    later = copy.deepcopy(raw)
    later[0]["question_date"] = "2023/08/09 (Wed) 09:00"  # 60 days later = one τ
    c = cfg.replace(**{"retrieval.time_decay": True, "retrieval.tau_days": 60.0, "retrieval.spreading": False})
    kw = dict(variants=["full"], retrieval_only=True, k=2, cfg=c, embedder=embedder)
    run_longmemeval(_write(tmp_path, raw, "a.json"), records=tmp_path / "a.jsonl", **kw)
    run_longmemeval(_write(tmp_path, later, "b.json"), records=tmp_path / "b.jsonl", **kw)
    (a,), (b,) = load_records(tmp_path / "a.jsonl"), load_records(tmp_path / "b.jsonl")
    assert [m["source_id"] for m in a["retrieved"]] == [m["source_id"] for m in b["retrieved"]]
    for ma, mb in zip(a["retrieved"], b["retrieved"]):
        assert mb["base_score"] == pytest.approx(ma["base_score"] * 2.718281828 ** -1, rel=1e-3)


def test_per_type_and_limit_select_items(cfg, embedder):
    s = run_longmemeval(MINI, per_type=1, variants=["bm25"], retrieval_only=True, k=1, cfg=cfg, embedder=embedder)
    assert s["items"] == ["lm_user_1", "lm_multi_2", "lm_ku_3", "lm_temp_4_abs"]  # one type each already
    s = run_longmemeval(MINI, limit=2, variants=["bm25"], retrieval_only=True, k=1, cfg=cfg, embedder=embedder)
    assert s["items"] == ["lm_user_1", "lm_multi_2"]


def test_answers_with_the_default_chat_model(cfg, embedder, chat, tmp_path):
    raw = json.loads(MINI.read_text())
    p = _write(tmp_path, [raw[0], raw[3]])
    s = run_longmemeval(p, variants=["full", "cosine"], k=3, cfg=cfg, embedder=embedder, chat=chat,
                        records=tmp_path / "qa.jsonl")
    recs = load_records(tmp_path / "qa.jsonl")
    assert len(recs) == 4
    for r in recs:
        assert isinstance(r["prediction"], str) and r["generate_ms"] > 0
        if r["abstention"]:
            assert r["abstained"] in (0.0, 1.0) and r["f1"] is None
        else:
            assert 0.0 <= r["f1"] <= 1.0 and r["em"] in (0.0, 1.0) and r["abstained"] is None
    for g in s["variants"].values():
        assert g["abstention"]["abstained_n"] == 1 and g["overall"]["f1_n"] == 1


# ----------------------------------------------------------------------------------- CLI
def test_cli_json_and_table(cli_env, tmp_path):
    out_path, rec = tmp_path / "s.json", tmp_path / "r.jsonl"
    res = runner.invoke(app, ["bench", "longmemeval", str(MINI), "--retrieval-only", "--variant", "full,bm25",
                              "--k", "2", "--json", "--out", str(out_path), "--records", str(rec)])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert s == json.loads(out_path.read_text())
    assert s["benchmark"] == "longmemeval" and list(s["variants"]) == ["full", "bm25"]
    assert set(s["variants"]["full"]["per_type"]) == {"single-session-user", "multi-session", "knowledge-update",
                                                      "temporal-reasoning"}
    assert len(load_records(rec)) == 8
    res = runner.invoke(app, ["bench", "longmemeval", str(MINI), "--retrieval-only", "--variant", "full,bm25",
                              "--k", "2", "--records", str(rec)])  # all resumed: nothing ingested
    assert res.exit_code == 0, res.output
    assert "LongMemEval full" in res.stdout and "overall" in res.stdout and "abstention" in res.stdout
    assert "8 resumed" in res.stdout
    assert not (cli_env / "hela.db").exists()  # the user's database is never touched


def test_cli_errors(cli_env, tmp_path):
    bad = runner.invoke(app, ["bench", "longmemeval", str(MINI), "--variant", "full,magic"])
    assert bad.exit_code == 2 and "unknown variant 'magic'" in bad.output and "Traceback" not in bad.output
    bad = runner.invoke(app, ["bench", "longmemeval", str(MINI), "--cache-dir", str(tmp_path / "nope")])
    assert bad.exit_code == 2 and "--cache-dir" in bad.output
    locomo = _write(tmp_path, [{"sample_id": "x", "conversation": {}}], "locomo.json")
    bad = runner.invoke(app, ["bench", "longmemeval", str(locomo), "--retrieval-only"])
    assert bad.exit_code != 0 and "locomo.json" in bad.output and "Traceback" not in bad.output


def test_paper_longmemeval_config_maps_appendix_d():
    from hela_cli.config import load_config

    c = load_config(Path(__file__).resolve().parents[1] / "benchmarks" / "ablations" / "configs" / "paper-longmemeval.yaml",
                    env={})
    r = c.retrieval
    assert (r.k, r.m, r.semantic_k, r.theta, r.alpha) == (15, 3, 5, 0.4, 0.7)
    assert r.time_decay and r.beta == 0.1 and c.ingest.context_window == 0


def test_items_select_in_the_given_order(cfg, embedder):
    s = run_longmemeval(MINI, item_ids=["lm_ku_3", "lm_user_1"], variants=["bm25"], retrieval_only=True, k=1,
                        cfg=cfg, embedder=embedder)
    assert s["items"] == ["lm_ku_3", "lm_user_1"]
    with pytest.raises(InputError, match="unknown question_id 'nope'"):
        run_longmemeval(MINI, item_ids=["lm_ku_3", "nope"], variants=["bm25"], retrieval_only=True, cfg=cfg,
                        embedder=embedder)
