"""``hela bench locomo`` end to end on a tiny LoCoMo-shaped file written here (original text)."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from hela_cli.bench import BASELINES, VARIANTS, load_records, run_locomo
from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.errors import InputError
from hela_cli.text.keywords import keywords
from hela_cli.store import Store
from tests.support import QA_A, QA_B, SESSIONS_A, SESSIONS_B

runner = CliRunner()


TEXT = {(sid, f"D{n}:{i}"): t for sid, sessions in (("pair-a", SESSIONS_A), ("pair-b", SESSIONS_B))
        for n, (_, turns) in enumerate(sessions, start=1) for i, (_, t) in enumerate(turns, start=1)}


def _comparable(summary):
    return {k: summary[k] for k in ("questions", "per_category", "overall", "overall_all", "samples", "k", "m")}


def _strip(rec):
    return {k: v for k, v in rec.items() if k not in ("retrieval_ms", "generate_ms", "consolidate_ms")}


class Stop(Exception):
    pass


def stop_after(n):
    """A progress callback that interrupts a run once ``n`` questions are done."""
    def progress(done, total, label):
        if done >= n and ":" not in label:
            raise Stop
    return progress


def test_cli_retrieval_only_json(cli_env, locomo_file, tmp_path):
    rec_path, out_path = tmp_path / "records.jsonl", tmp_path / "summary.json"
    res = runner.invoke(app, ["bench", "locomo", str(locomo_file), "--retrieval-only", "--json",
                              "--records", str(rec_path), "--out", str(out_path), "--k", "3"])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert s == json.loads(out_path.read_text())
    assert s["questions"] == len(QA_A) + len(QA_B) and s["samples"] == ["pair-a", "pair-b"]
    assert s["k"] == 3 and s["budget"] == 3 + s["m"]
    assert set(s["per_category"]) == {"1", "2", "3", "4", "5"}
    assert s["overall"]["count"] == len(QA_A) + len(QA_B) - 1  # category 5 is not in the paper's overall
    for g in [*s["per_category"].values(), s["overall"], s["overall_all"]]:
        assert g["recall"] == pytest.approx(g["recall_base"] + g["recall_flipped"], abs=1e-5)
        assert g["context_tokens"] > 0 and g["amem_f1"] is None
    assert s["overall_all"]["recall"] > 0.3  # the tiny conversations are easy
    recs = load_records(rec_path)
    assert len(recs) == s["questions"]
    for r in recs:  # each record's recall is the share of its gold evidence among its retrieved dia_ids
        got = {m["source_id"] for m in r["retrieved"]}
        assert r["recall"] == pytest.approx(sum(e in got for e in r["evidence"]) / len(r["evidence"]))
    for cat, g in s["per_category"].items():  # the summary is the mean of the records
        rs = [r["recall"] for r in recs if str(r["category"]) == cat]
        assert g["count"] == len(rs) and g["recall"] == pytest.approx(sum(rs) / len(rs), abs=1e-6)
    every = [r["recall"] for r in recs]
    assert s["overall_all"]["recall"] == pytest.approx(sum(every) / len(every), abs=1e-6)
    r = recs[0]
    assert r["sample"] == "pair-a" and r["qa_index"] == 0 and r["category"] == 4 and r["gold"] == "Pebble"
    assert r["prediction"] is None and len(r["retrieved"]) <= s["budget"]
    assert {"source_id", "path", "score", "base_score"} <= set(r["retrieved"][0])
    assert recs[5]["gold"] == "a pottery bowl"  # category 5 uses adversarial_answer
    assert not (cli_env / "hela.db").exists()  # HELA_DB (the user's database) is never touched


def test_root_db_keeps_the_spaces(cli_env, locomo_file, tmp_path):
    """`hela --db X bench locomo ...` keeps the conversation's space in X, like the bench's own --db (it was
    ignored while typer's vendored click and the real click's ParameterSource were compared)."""
    from hela_cli.store import Store

    db = tmp_path / "kept.db"
    res = runner.invoke(app, ["--db", str(db), "bench", "locomo", str(locomo_file), "--retrieval-only",
                              "--samples", "pair-b", "--limit", "1"])
    assert res.exit_code == 0, res.output
    with Store(db) as s:
        assert [r["name"] for r in s.spaces()] == ["pair-b"]
    assert not (cli_env / "hela.db").exists()


def test_cli_human_table_and_errors(cli_env, locomo_file):
    res = runner.invoke(app, ["bench", "locomo", str(locomo_file), "--retrieval-only", "--samples", "pair-b",
                              "--limit", "2"])
    assert res.exit_code == 0, res.output
    assert "overall" in res.stdout and "recall" in res.stdout
    bad = runner.invoke(app, ["bench", "locomo", str(locomo_file), "--samples", "pair-a,nope", "--retrieval-only"])
    assert bad.exit_code == 2 and "nope" in bad.output and "pair-a, pair-b" in bad.output
    assert "Traceback" not in bad.output
    bad = runner.invoke(app, ["bench", "locomo", str(locomo_file), "--variant", "magic"])
    assert bad.exit_code == 2 and "no-spreading" in bad.output


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_runs(variant, locomo_file, cfg, embedder, tmp_path):
    rec_path = tmp_path / "r.jsonl"
    s = run_locomo(locomo_file, retrieval_only=True, variant=variant, k=3, cfg=cfg, embedder=embedder,
                   records=rec_path)
    assert s["variant"] == variant and s["questions"] == len(QA_A) + len(QA_B)
    recs = load_records(rec_path)
    assert s["budget"] == 3 + s["m"]
    for r in recs:
        if variant == "bm25":  # only turns sharing a keyword with the question, best first
            assert len(r["retrieved"]) <= s["budget"]
            scores = [m["score"] for m in r["retrieved"]]
            assert scores == sorted(scores, reverse=True)
            q = set(keywords(r["question"]))
            assert all(q & set(keywords(TEXT[r["sample"], m["source_id"]])) for m in r["retrieved"])
        else:  # every conversation has >= budget turns: the budget is always filled
            assert len(r["retrieved"]) == s["budget"]  # equal budget: k + m
        if variant in BASELINES:
            assert {m["path"] for m in r["retrieved"]} <= {"base"} and r["recall_flipped"] in (0.0, None)
        else:  # the m extra slots are 'hebbian' only when the spreading bonus brought the memory in
            paths = [m["path"] for m in r["retrieved"]]
            assert paths[:3] == ["base"] * 3 and set(paths[3:]) <= {"base", "hebbian"}
            assert all(m["score"] > m["base_score"] for m in r["retrieved"] if m["path"] == "hebbian")
            if variant == "no-spreading":
                assert paths == ["base"] * s["budget"] and r["recall_flipped"] in (0.0, None)
    if variant == "no-forget":
        assert s["forget_every"] == 0
    if variant == "bm25":
        assert sum(len(r["retrieved"]) for r in recs) > len(recs)


def test_ablations_change_the_code_path(locomo_file, cfg, embedder, tmp_path):
    def run(variant):
        db, rec = tmp_path / f"{variant}.db", tmp_path / f"{variant}.jsonl"
        s = run_locomo(locomo_file, retrieval_only=True, variant=variant, k=2, cfg=cfg, embedder=embedder,
                       db=db, records=rec)
        with Store(db) as st:
            sp = st.require_space("pair-a")
            steps, edges = sp.step, st.count_edges(sp.id)
        return s, load_records(rec), steps, edges

    full, full_recs, full_steps, full_edges = run("full")
    nf = run_locomo(locomo_file, retrieval_only=True, variant="no-forget", k=2, cfg=cfg, embedder=embedder)
    assert _comparable(full) == _comparable(nf)
    assert full["config"]["retrieval"]["spreading"] is True and full["config"]["retrieval"]["learn"] is True
    # full: Eq.1 learnt once per question; spreading lifted some memory above its base activation
    assert full_steps == len(QA_A)
    assert any(m["score"] > m["base_score"] + 1e-9 for r in full_recs for m in r["retrieved"])
    ns, ns_recs, ns_steps, _ = run("no-spreading")
    assert ns["config"]["retrieval"]["spreading"] is False
    assert all(m["score"] == m["base_score"] for r in ns_recs for m in r["retrieved"])  # no Eq.4 bonus
    assert ns_steps == len(QA_A)
    nl, _, nl_steps, nl_edges = run("no-learn")
    assert nl["config"]["retrieval"]["learn"] is False
    assert nl_steps == 0 and nl_edges < full_edges  # no Eq.1: only the conversation links
    nr = run_locomo(locomo_file, retrieval_only=True, variant="no-reflect", k=2, cfg=cfg, embedder=embedder)
    assert nr["config"]["retrieval"]["semantic_k"] == 0 and nr["config"]["consolidation_auto"] is False


def test_full_forgets_periodically_no_forget_does_not(locomo_file, cfg, embedder):
    pytest.importorskip("hela_cli.mechanics.forget")
    cfg.forgetting.delta_prune = 0.5  # ingest links weigh 0.1-0.2: unused old turns become candidates
    cfg.ingest.fixed_links = False    # ... as they decay (paper); a fixed link keeps its turn from being weak
    full = run_locomo(locomo_file, retrieval_only=True, cfg=cfg, embedder=embedder, k=2, forget_every=2)
    nf = run_locomo(locomo_file, retrieval_only=True, variant="no-forget", cfg=cfg, embedder=embedder, k=2,
                    forget_every=2)
    assert full["forget_every"] == 2 and nf["forget_every"] == 0
    assert full["per_sample"]["pair-a"]["forgotten"] > 0
    assert all(s["forgotten"] == 0 for s in nf["per_sample"].values())


def test_resume_after_interruption_matches_uninterrupted(locomo_file, cfg, embedder, tmp_path):
    # forgetting after every 3 questions, with a threshold that makes it remove turns: the replay on resume
    # must reproduce learning *and* forgetting
    cfg.forgetting.delta_prune = 0.5
    cfg.ingest.fixed_links = False  # links that decay (paper): old unused turns become forgetting candidates
    kw = dict(retrieval_only=True, cfg=cfg, embedder=embedder, k=2, forget_every=3)
    straight_path = tmp_path / "straight.jsonl"
    straight = run_locomo(locomo_file, records=straight_path, **kw)

    part = tmp_path / "part.jsonl"
    with pytest.raises(Stop):  # interrupted in the middle of the first conversation
        run_locomo(locomo_file, records=part, progress=stop_after(4), **kw)
    assert len(load_records(part)) == 4
    # a torn final line (killed while writing) is dropped on resume
    with open(part, "a") as f:
        f.write('{"run": {"variant": "fu')
    resumed = run_locomo(locomo_file, records=part, **kw)
    assert resumed["timing"]["resumed"] == 4 and resumed["timing"]["replayed"] == 4
    assert resumed["timing"]["asked"] == len(QA_A) + len(QA_B) - 4
    assert _comparable(resumed) == _comparable(straight)
    if straight["forget_every"]:
        assert straight["per_sample"]["pair-a"]["forgotten"] > 0
        assert resumed["per_sample"] == {**straight["per_sample"], "pair-a": {
            **straight["per_sample"]["pair-a"], "resumed": 4, "ingest_s": resumed["per_sample"]["pair-a"]["ingest_s"]},
            "pair-b": {**straight["per_sample"]["pair-b"], "ingest_s": resumed["per_sample"]["pair-b"]["ingest_s"]}}
    assert [_strip(r) for r in load_records(part)] == [_strip(r) for r in load_records(straight_path)]
    # everything done: a rerun asks nothing and ingests nothing
    again = run_locomo(locomo_file, records=part, **kw)
    assert again["timing"]["asked"] == 0 and _comparable(again) == _comparable(straight)
    # records of another run are refused, not mixed
    with pytest.raises(InputError, match="different run"):
        run_locomo(locomo_file, records=part, **{**kw, "forget_every": 4})
    with pytest.raises(InputError, match="different run"):
        run_locomo(locomo_file, records=part, **{**kw, "variant": "cosine"})
    # records that do not belong to this dataset are refused too
    lines = part.read_text().splitlines()
    first = json.loads(lines[0])
    first["question"] = "Something else?"
    part.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(InputError, match="another question"):
        run_locomo(locomo_file, records=part, **kw)


class FakeChat:
    """A deterministic stand-in chat model: distils each cluster's first turn as a fact, and answers with
    the number of semantic records in its prompt (so the answers expose the consolidation state)."""

    model_id = "fake-chat"
    n_ctx = 4096

    def count_tokens(self, text):
        return len(text.split())

    def generate(self, messages, *, max_tokens=256, temperature=0.0, json_schema=None, stop=None):
        prompt = messages[-1]["content"]
        if json_schema is not None:
            m = re.search(r"^\[(\d+)\] \([^)]*\) ([^:]+): (.+)$", prompt, re.M)
            fact = {"subject": m.group(2), "text": m.group(3), "date": "", "evidence": [int(m.group(1))]}
            return json.dumps({"traits": [], "facts": [fact], "knowledge": []})
        if "<SEMANTIC KNOWLEDGE>" not in prompt:  # prompt A.2 leaves an empty block out
            return "0 semantic records"
        section = prompt.split("<SEMANTIC KNOWLEDGE>")[1].split("</SEMANTIC KNOWLEDGE>")[0]
        return f"{section.count(chr(10) + '- ')} semantic records"


def test_resume_in_qa_mode_replays_consolidation(locomo_file, cfg, embedder, tmp_path):
    pytest.importorskip("hela_cli.mechanics.consolidate")
    cfg.consolidation.auto_every = 2   # auto-consolidation after every 2 learning asks ...
    cfg.consolidation.delta_hub = 0.15  # ... and ingest links (0.1 each) already make hubs
    cfg.retrieval.semantic_k = 5        # records in the answer context (off by default)
    kw = dict(cfg=cfg, embedder=embedder, chat=FakeChat(), k=2, samples=["pair-a"])
    straight = run_locomo(locomo_file, records=tmp_path / "s.jsonl", **kw)
    assert straight["timing"]["consolidations"] > 0
    recs = load_records(tmp_path / "s.jsonl")
    assert any(r["semantic"] > 0 for r in recs) and recs[-1]["prediction"] != recs[0]["prediction"]

    def stop_after(n):
        def progress(done, total, label):
            if done >= n and ":" not in label:
                raise KeyboardInterrupt
        return progress

    with pytest.raises(KeyboardInterrupt):
        run_locomo(locomo_file, records=tmp_path / "p.jsonl", progress=stop_after(3), **kw)
    resumed = run_locomo(locomo_file, records=tmp_path / "p.jsonl", **kw)
    assert resumed["timing"]["replayed"] == 3
    assert [_strip(r) for r in load_records(tmp_path / "p.jsonl")] == [_strip(r) for r in recs]
    assert _comparable(resumed) == _comparable(straight)


def test_baselines_answer_like_memory_ask(locomo_file, cfg, embedder, tmp_path):
    class Recording(FakeChat):
        calls = []

        def generate(self, messages, **kw):
            self.calls.append(kw)
            return "Answer: Pebble\nQuestion: and then?" if kw.get("json_schema") is None else super().generate(
                messages, **kw)

    chat = Recording()
    run_locomo(locomo_file, variant="bm25", samples=["pair-a"], limit=1, cfg=cfg, embedder=embedder, chat=chat,
               records=tmp_path / "b.jsonl")
    (r,) = load_records(tmp_path / "b.jsonl")
    assert r["prediction"] == "Pebble" and r["amem_f1"] == 1.0
    assert chat.calls[-1]["stop"] and chat.calls[-1]["max_tokens"] == cfg.answer.max_tokens


def test_one_qa_item_with_the_default_chat_model(locomo_file, cfg, embedder, chat, tmp_path):
    s = run_locomo(locomo_file, samples=["pair-a"], limit=1, cfg=cfg, embedder=embedder, chat=chat,
                   records=tmp_path / "qa.jsonl")
    (r,) = load_records(tmp_path / "qa.jsonl")
    assert isinstance(r["prediction"], str) and r["prediction"]
    for key in ("amem_f1", "amem_bleu1", "locomo_f1"):
        assert 0.0 <= r[key] <= 1.0
    assert r["generate_ms"] > 0
    g = s["per_category"]["4"]
    assert g["count"] == 1 and g["amem_f1"] == pytest.approx(r["amem_f1"], abs=1e-6)
    assert s["models"]["chat"] == "smollm2"


def test_semantic_split_table():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "quality" / "locomo_table.py"
    spec = importlib.util.spec_from_file_location("locomo_table", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rec = {"prediction": "x", "amem_bleu1": 0.0, "locomo_f1": 0.0, "recall": 1.0, "generate_ms": 2000.0}
    records = [dict(rec, category=1, semantic=0, amem_f1=0.5), dict(rec, category=2, semantic=0, amem_f1=0.25),
               dict(rec, category=4, semantic=2, amem_f1=0.0, generate_ms=4000.0),
               dict(rec, category=5, semantic=3, amem_f1=1.0)]  # adversarial: not counted
    rows = mod.semantic_split_table(records).splitlines()[2:]
    assert rows == ["| none | 2 | 37.5 | 0.0 | 0.0 | 100.0 | 2.0 |", "| 1 or more | 1 | 0.0 | 0.0 | 0.0 | 100.0 | 4.0 |"]


def test_gold_fields_never_reach_retrieval(locomo_file, cfg, embedder, tmp_path, monkeypatch):
    """Answers, evidence and categories are read only to score: changing them (a canary answer, other
    evidence ids, other categories) changes no query and no retrieved memory."""
    import hela_cli.mechanics.retrieval as retrieval_mod

    seen: list[str] = []
    real_retrieve = retrieval_mod.retrieve

    def spy(store, space, emb, question, *a, **kw):
        seen.append(question)
        return real_retrieve(store, space, emb, question, *a, **kw)

    class RecordingEmbedder:
        model_id, dim = embedder.model_id, embedder.dim

        def embed(self, texts):
            seen.extend(texts)
            return embedder.embed(texts)

    monkeypatch.setattr(retrieval_mod, "retrieve", spy)
    data = json.loads(locomo_file.read_text())
    for sample in data:
        for n, qa in enumerate(sample["qa"]):
            qa["answer" if "answer" in qa else "adversarial_answer"] = f"CANARY{n}zebra"
            qa["evidence"] = ["D1:1"]
            qa["category"] = 5 - (qa["category"] % 5)
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(data))

    def retrieved(path):
        rec = tmp_path / f"{path.stem}.jsonl"
        run_locomo(path, retrieval_only=True, variant="full", k=3, cfg=cfg, embedder=RecordingEmbedder(),
                   records=rec)
        return [[m["source_id"] for m in r["retrieved"]] for r in load_records(rec)]

    assert retrieved(altered) == retrieved(locomo_file)
    assert seen and not any("CANARY" in t or "zebra" in t for t in seen)
    assert "What is the name of Priya's kitten?" in seen  # the spy saw the questions


def test_test_retest_passes(locomo_file, cfg, embedder, tmp_path):
    """--passes 2: pass 1 is the single-pass run; pass 2 asks again on the memory the first pass taught;
    without learning the second pass is identical; an interrupted two-pass run resumes to the same result."""
    kw = dict(retrieval_only=True, cfg=cfg, embedder=embedder, k=2, forget_every=0)
    one = run_locomo(locomo_file, **kw)
    two = run_locomo(locomo_file, passes=2, records=tmp_path / "two.jsonl", **kw)
    assert two["passes"] == 2 and set(two["by_pass"]) == {"1", "2"}
    assert {**_comparable(two), "questions": None} == {**_comparable(one), "questions": None}
    assert two["questions"] == 2 * one["questions"]
    assert two["by_pass"]["1"]["overall_all"] == one["overall_all"]
    recs = load_records(tmp_path / "two.jsonl")
    assert [r["pass"] for r in recs] == [1] * len(QA_A) + [2] * len(QA_A) + [1] * len(QA_B) + [2] * len(QA_B)
    assert two["timing"]["asked"] == 2 * (len(QA_A) + len(QA_B))
    # learning changed what the second pass retrieved for some question (scores at least)
    p1 = {(r["sample"], r["qa_index"]): r["retrieved"] for r in recs if r["pass"] == 1}
    assert any(r["retrieved"] != p1[(r["sample"], r["qa_index"])] for r in recs if r["pass"] == 2)
    nolearn = run_locomo(locomo_file, passes=2, variant="no-learn", **kw)
    assert nolearn["by_pass"]["1"]["per_category"] == nolearn["by_pass"]["2"]["per_category"]

    part = tmp_path / "part.jsonl"
    with pytest.raises(Stop):   # interrupted in pass 2 of the first conversation
        run_locomo(locomo_file, passes=2, records=part, progress=stop_after(len(QA_A) + 2), **kw)
    resumed = run_locomo(locomo_file, passes=2, records=part, **kw)
    assert resumed["by_pass"] == two["by_pass"]
    assert [_strip(r) for r in load_records(part)] == [_strip(r) for r in recs]
    with pytest.raises(InputError, match="different run"):   # a single-pass run does not mix with them
        run_locomo(locomo_file, records=part, **kw)
    with pytest.raises(InputError, match="passes"):
        run_locomo(locomo_file, passes=0, **kw)


def test_flipped_recall_is_split_into_learned_and_link(locomo_file, cfg, embedder, tmp_path):
    """Every flipped ('hebbian') memory counts once, as learned or as conversation link; without learning
    nothing is learned."""
    kw = dict(retrieval_only=True, cfg=cfg, embedder=embedder, k=2, forget_every=0)
    for variant in ("full", "no-learn"):
        path = tmp_path / f"{variant}.jsonl"
        s = run_locomo(locomo_file, variant=variant, records=path, **kw)
        recs = [r for r in load_records(path) if r["recall"] is not None]
        for r in recs:
            assert r["recall_flipped"] == pytest.approx(r["recall_learned"] + r["recall_link"])
        assert {"recall_learned", "recall_link"} <= set(s["overall_all"])
        if variant == "no-learn":
            assert all(r["recall_learned"] == 0 for r in recs)
    from hela_cli.bench.locomo import _spread_attribution

    mems = [{"id": 5, "source_id": "D1:2", "path": "hebbian",
             "spread_from": [{"id": 4, "contribution": 0.3, "weight": 0.5}]},
            {"id": 9, "source_id": "D3:1", "path": "hebbian",
             "spread_from": [{"id": 2, "contribution": 0.2, "weight": 0.2}]},
            {"id": 1, "source_id": "D1:1", "path": "base", "spread_from": []}]
    assert _spread_attribution(mems, {(4, 5): 0.5}, 1.0) == (["D3:1"], ["D1:2"])
    # 100 steps later a decaying link weighs 0.5 * 0.3: weight 0.5 is then mostly learned; a fixed prior of
    # 0.5 does not decay, so the same weight is still all link
    assert _spread_attribution(mems, {(4, 5): 0.5}, 0.3) == (["D1:2", "D3:1"], [])
    assert _spread_attribution(mems, {(4, 5): 0.5}, 0.3, {(4, 5): 0.5}) == (["D3:1"], ["D1:2"])


def test_categories_score_a_subset_on_the_same_learning_sequence(locomo_file, cfg, embedder, tmp_path):
    """--categories 1,2,3,4: category-5 questions are still asked (learning sees the same sequence), so each
    scored record equals the all-categories run's record of that question; a bad list is refused."""
    kw = dict(retrieval_only=True, cfg=cfg, embedder=embedder, k=2, forget_every=3)
    cfg.forgetting.delta_prune = 0.5
    everything = run_locomo(locomo_file, records=tmp_path / "all.jsonl", **kw)
    sub = run_locomo(locomo_file, records=tmp_path / "sub.jsonl", categories=[1, 2, 3, 4], **kw)
    all_recs = {(r["sample"], r["qa_index"]): _strip(r) for r in load_records(tmp_path / "all.jsonl")}
    sub_recs = load_records(tmp_path / "sub.jsonl")
    assert sub_recs and all(r["category"] in (1, 2, 3, 4) for r in sub_recs)
    assert len(sub_recs) == sum(1 for r in all_recs.values() if r["category"] != 5)
    assert [_strip(r) for r in sub_recs] == [all_recs[(r["sample"], r["qa_index"])] for r in sub_recs]
    assert sub["categories"] == [1, 2, 3, 4] and "5" not in sub["per_category"]
    assert sub["timing"]["asked_unscored"] == sum(1 for q in QA_A + QA_B if q["category"] == 5)
    assert sub["per_category"]["4"] == everything["per_category"]["4"]
    with pytest.raises(InputError, match="categories"):
        run_locomo(locomo_file, categories=[0, 9], **kw)


def test_cli_categories_option_is_validated(cli_env, locomo_file):
    res = runner.invoke(app, ["bench", "locomo", str(locomo_file), "--retrieval-only", "--categories", "one"])
    assert res.exit_code == 2 and "--categories" in res.output


def test_bench_without_nltk_says_which_extra_before_running(monkeypatch, tmp_path, locomo_file):
    """nltk is the ``bench`` extra: without it both benchmarks stop at once with the install line."""
    import sys

    from hela_cli.bench.longmemeval import run_longmemeval
    from tests.support import MINI

    monkeypatch.setitem(sys.modules, "nltk", None)   # import nltk -> ImportError
    db = tmp_path / "bench.db"
    for run in (lambda: run_locomo(locomo_file, retrieval_only=True, cfg=Config(), db=db),
                lambda: run_longmemeval(MINI, retrieval_only=True, cfg=Config())):
        with pytest.raises(InputError, match=r"pip install 'hela\[bench\]'"):
            run()
    assert not db.exists()
