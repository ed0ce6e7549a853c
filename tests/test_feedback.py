"""Learning from use signals: the feedback rule (hand-computed values), the recall id of every learning
recall / ask, ``Memory.reinforce`` / ``hela reinforce`` / MCP ``reinforce`` and their errors."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.mechanics.dynamics import depressed_weight, feedback_pairs, trace_bonus
from hela_cli.errors import InputError
from tests.conftest import SAMPLE

S_BASE = {1: 2.0, 2: 1.5, 3: 1.2, 4: 0.9, 5: 0.4}


# ----------------------------------------------------------------------------------- the rule (pure)
def test_pairs_among_used_only():
    strengthen, weaken = feedback_pairs(S_BASE, [4, 2], eta=0.5)
    assert strengthen == {(2, 4): 0.5} and weaken == {}


def test_used_tied_to_best_unused_base_hits():
    # used 3 and 5; the 2 best unused by S_base are 1 (2.0) and 2 (1.5)
    strengthen, _ = feedback_pairs(S_BASE, [5, 3], eta=0.5, anchors=2, anchor_eta=0.25)
    assert strengthen == {(3, 5): 0.5, (1, 3): 0.25, (2, 3): 0.25, (1, 5): 0.25, (2, 5): 0.25}


def test_anchor_rate_never_lowers_a_used_pair_and_ids_outside_are_ignored():
    strengthen, _ = feedback_pairs({1: 1.0, 2: 0.5}, [1, 2, 99], eta=0.1, anchors=3, anchor_eta=0.3)
    assert strengthen == {(1, 2): 0.1}   # both used: no anchor left; 99 was not retrieved


def test_unused_spread_memory_is_weakened():
    # 5 was brought in by spreading from 1 and 2 and not used: those edges keep 1 - 0.4 of their learned part
    strengthen, weaken = feedback_pairs(S_BASE, [1], eta=0.5, spread_from={5: [1, 2], 4: [1]}, depress=0.4)
    assert weaken == {(1, 5): 0.6, (2, 5): 0.6, (1, 4): 0.6}
    assert feedback_pairs(S_BASE, [4], eta=0.5, spread_from={4: [1]}, depress=0.4)[1] == {}   # used: kept
    assert strengthen == {}


def test_nothing_used():
    assert feedback_pairs(S_BASE, [], eta=0.5, anchors=3, anchor_eta=0.25) == ({}, {})


def test_depressed_weight_keeps_the_prior():
    assert depressed_weight(0.8, 0.5, 0.5) == pytest.approx(0.65)   # 0.5 + 0.3 * 0.5
    assert depressed_weight(0.3, 0.5, 0.0) == 0.5                   # below its prior: the prior stays
    assert depressed_weight(0.4, 0.0, 0.25) == pytest.approx(0.1)


def test_trace_bonus_hand_computed():
    # min_sim 0.5, weight 1.0: sim 0.75 -> 0.5, sim 1.0 -> 1.0, sim 0.4 -> nothing; a memory takes the largest
    assert trace_bonus([0.75, 1.0, 0.4], [[1, 2], [2], [3]], 1.0, 0.5) == {1: 0.5, 2: 1.0}
    assert trace_bonus([0.9], [[1]], 0.0, 0.5) == {}


def test_use_trace_reaches_a_later_similar_query(make_memory, hash_embedder):
    m = _mem(make_memory, hash_embedder, hebbian__coretrieval=False)
    res = m.retrieve("What is the name of Jonas's dog?", "demo")
    used = res.memories[-1]["id"]   # the last memory of the set: the least likely to come back by base
    m.reinforce("demo", [used], recall_id=res.recall_id)
    again = m.retrieve("What is the name of Jonas's dog?", "demo", learn=False)
    hit = {x["id"]: x for x in again.memories}
    assert used in hit and hit[used]["trace_bonus"] == pytest.approx(m.config.retrieval.trace_weight)
    m.config.retrieval.trace_weight = 0.0
    off = m.retrieve("What is the name of Jonas's dog?", "demo", learn=False)
    assert all(x["trace_bonus"] == 0.0 for x in off.memories)


# ----------------------------------------------------------------------------------- library
def _mem(make_memory, hash_embedder, **changes):
    return make_memory(Config(), embedder=hash_embedder, ingest=[SAMPLE / "conversation.json"], **changes)


def test_recall_reinforce_changes_exactly_the_rule_pairs(make_memory, hash_embedder):
    m = _mem(make_memory, hash_embedder, hebbian__feedback_anchors=1, hebbian__feedback_eta=0.5,
             hebbian__feedback_anchor_eta=0.25)
    res = m.retrieve("What is the name of Jonas's dog?", "demo")
    assert isinstance(res.recall_id, int)
    ids = [x["id"] for x in res.memories]
    used = ids[2:4]
    best_unused = ids[0]   # the first memory is the best by S_base
    sp = m.store.require_space("demo")
    pairs = [(min(a, b), max(a, b)) for a, b in ((used[0], used[1]), (used[0], best_unused),
                                                 (used[1], best_unused))]
    before = {p: m.store.edge_weight(sp, *p) for p in pairs}
    edges = m.store.count_edges(sp.id)
    rep = m.reinforce("demo", used, recall_id=res.recall_id)
    assert rep["recall_id"] == res.recall_id and rep["used"] == used and rep["strengthened"] == 3
    sp = m.store.require_space("demo")
    assert rep["step"] == sp.step   # feedback does not advance the step
    after = {p: m.store.edge_weight(sp, *p) for p in pairs}
    assert after[pairs[0]] == pytest.approx(min(1.0, before[pairs[0]] + 0.5))
    anchor = m.config.hebbian.feedback_anchor_eta
    assert after[pairs[1]] == pytest.approx(min(1.0, before[pairs[1]] + anchor))
    assert after[pairs[2]] == pytest.approx(min(1.0, before[pairs[2]] + anchor))
    assert m.store.count_edges(sp.id) >= edges
    row = m.store.get_ask(res.recall_id)
    assert row["kind"] == "recall" and row["used"] == used and [r["id"] for r in row["retrieval"]] == ids


def test_feedback_errors_write_nothing(make_memory, hash_embedder):
    m = _mem(make_memory, hash_embedder)
    m.ingest([SAMPLE / "chat.jsonl"])
    other = m.retrieve("hello", [s["name"] for s in m.store.spaces() if s["name"] != "demo"][0])
    res = m.retrieve("Where did Maya travel?", "demo")
    sp = m.store.require_space("demo")
    state = (m.store.all_edges(sp), sp.step)
    returned = [x["id"] for x in res.memories]
    stranger = next(i for i in range(1, 10_000) if i not in returned)
    cases = [
        ((["demo", returned[:1]], {"recall_id": 10_000}), "recall 10000: no such recall"),
        ((["demo", returned[:1]], {"recall_id": other.recall_id}), "is a recall of another space"),
        ((["demo", [returned[0], stranger]], {"recall_id": res.recall_id}), f"did not return memory {stranger}"),
        ((["demo", ["x"]], {"recall_id": res.recall_id}), "is not a memory id"),
    ]
    for (args, kw), needle in cases:
        with pytest.raises(InputError, match=needle):
            m.reinforce(*args, **kw)
    sp = m.store.require_space("demo")
    assert (m.store.all_edges(sp), sp.step) == state
    assert m.store.get_ask(res.recall_id)["used"] is None
    m.reinforce("demo", returned[:2])          # default: the space's latest recall
    with pytest.raises(InputError, match="already has feedback"):
        m.reinforce("demo", returned[:2], recall_id=res.recall_id)


def test_read_only_recall_has_no_recall_id(make_memory, hash_embedder):
    m = _mem(make_memory, hash_embedder)
    sp = m.store.require_space("demo")
    assert m.retrieve("dog", "demo", learn=False).recall_id is None
    assert m.store.asks(sp.id) == []


def test_feedback_only_learning(make_memory, hash_embedder):
    """hebbian.coretrieval off: a learning recall reinforces no pair and keeps the step; feedback does learn."""
    m = _mem(make_memory, hash_embedder, hebbian__coretrieval=False)
    sp = m.store.require_space("demo")
    edges = m.store.all_edges(sp)
    res = m.retrieve("What is the name of Jonas's dog?", "demo")
    assert m.store.require_space("demo").step == sp.step
    assert m.store.all_edges(sp) == edges
    m.reinforce("demo", [x["id"] for x in res.memories[:2]], recall_id=res.recall_id)
    assert m.store.all_edges(sp) != edges


def test_answer_log_off_keeps_no_text(make_memory, hash_embedder):
    m = _mem(make_memory, hash_embedder, answer__log=False)
    out = m.ask("What is the name of Jonas's dog?", "demo", llm=False)
    row = m.store.get_ask(out["recall_id"])
    assert row["question"] == "" and row["answer"] is None and row["kind"] == "ask" and row["retrieval"]


# ----------------------------------------------------------------------------------- CLI
def test_cli_ask_json_then_reinforce(cli_env):
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(SAMPLE / "conversation.json")]).exit_code == 0
    res = runner.invoke(app, ["ask", "What is the name of Jonas's dog?", "-s", "demo", "--no-llm", "--json"])
    out = json.loads(res.stdout)
    rid, ids = out["recall_id"], [m["id"] for m in out["memories"]]
    assert isinstance(rid, int)
    bad = runner.invoke(app, ["reinforce", "-s", "demo", "--recall", str(rid), str(ids[0]), "999999"])
    assert bad.exit_code == 2 and "did not return memory 999999" in bad.output
    assert len(bad.output.strip().splitlines()) == 1
    bad = runner.invoke(app, ["reinforce", "-s", "demo", "--recall", "424242", str(ids[0])])
    assert bad.exit_code == 2 and "recall 424242: no such recall" in bad.output
    ok = runner.invoke(app, ["reinforce", "-s", "demo", "--recall", str(rid), str(ids[0]), str(ids[1]), "--json"])
    assert ok.exit_code == 0, ok.output
    rep = json.loads(ok.stdout)
    assert rep["recall_id"] == rid and rep["used"] == ids[:2] and rep["strengthened"] >= 1


# ----------------------------------------------------------------------------------- MCP
def test_mcp_recall_then_reinforce(tmp_path):
    from tests.support import MCP_TURNS as TURNS, call_tool, mcp_params

    db = tmp_path / "mcp.db"
    errlog = (tmp_path / "server.err").open("w")

    async def main() -> None:
        async with stdio_client(mcp_params(tmp_path, db), errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            err, out = await call_tool(s, "remember", {"space": "pets", "turns": TURNS})
            err, out = await call_tool(s, "recall", {"space": "pets", "query": "What is the name of Alice's cat?"})
            assert not err and isinstance(out["recall_id"], int)
            rid, ids = out["recall_id"], [m["id"] for m in out["memories"]]
            err, rep = await call_tool(s, "reinforce", {"space": "pets", "recall_id": rid, "used": ids[:2]})
            assert not err and rep["recall_id"] == rid and rep["used"] == ids[:2] and rep["strengthened"] >= 1
            err, msg = await call_tool(s, "reinforce", {"space": "pets", "recall_id": rid, "used": ids[:2]})
            assert err and msg == f"recall {rid} already has feedback (memories {ids[:2]})"
            err, out = await call_tool(s, "recall", {"space": "pets", "query": "marathon"})
            err, msg = await call_tool(s, "reinforce", {"space": "pets", "recall_id": out["recall_id"], "used": [987654]})
            assert err and msg.startswith(f"recall {out['recall_id']} did not return memory 987654")
            err, msg = await call_tool(s, "reinforce", {"space": "pets", "recall_id": 31337, "used": ids[:1]})
            assert err and msg.startswith("recall 31337: no such recall")

    anyio.run(main)
    errlog.close()
    assert "Traceback" not in (tmp_path / "server.err").read_text()


# ----------------------------------------------------------------------------------- prequential bench


def test_bench_feedback_is_applied_after_the_question_is_scored(locomo_file, cfg, hash_embedder, tmp_path,  # noqa: F811
                                                                monkeypatch):
    import hela_cli.mechanics.feedback as fb
    from hela_cli.bench import run_locomo

    records = tmp_path / "r.jsonl"
    seen = []
    real = fb.apply_feedback

    def spy(store, space, retrieval, used, cfg_, when, recall_id=None):
        written = [json.loads(line) for line in records.read_text().splitlines()]
        seen.append((store.get_ask(recall_id)["question"], written[-1]["question"] if written else None, len(written)))
        return real(store, space, retrieval, used, cfg_, when, recall_id=recall_id)

    monkeypatch.setattr(fb, "apply_feedback", spy)
    s = run_locomo(locomo_file, retrieval_only=True, cfg=cfg, embedder=hash_embedder, k=3, records=records,
                   feedback="evidence", forget_every=0)
    recs = [json.loads(line) for line in records.read_text().splitlines()]
    assert s["feedback"] == "evidence (simulation)" and len(seen) == len(recs) == 10
    # each question's feedback comes after its own record was written, and before the next question's
    assert [(q, last, n) for q, last, n in seen] == [(r["question"], r["question"], i + 1) for i, r in enumerate(recs)]
    for r in recs:
        retrieved = {m["source_id"] for m in r["retrieved"]}
        assert set(r["used"]) == retrieved & set(r["evidence"])
    # pair-a: only the adversarial question's evidence D2:1 was evidence of an earlier question (the third)
    assert [r["overlap"] for r in recs if r["sample"] == "pair-a"] == [False] * 5 + [True, False]
    assert set(s["by_overlap"]) == {"overlap", "no overlap"}


def test_bench_feedback_spec_errors(locomo_file, cfg, hash_embedder):  # noqa: F811
    from hela_cli.bench import run_locomo

    for bad in ("often", "noisy", "noisy:2", "evidence:0.5"):
        with pytest.raises(InputError, match="--feedback"):
            run_locomo(locomo_file, retrieval_only=True, cfg=cfg, embedder=hash_embedder, feedback=bad)


def test_simulated_feedback_kinds():
    from hela_cli.bench.feedback import EvidenceHistory, parse_feedback, simulated_used

    mems = [{"id": i, "source_id": f"D1:{i}", "text": t, "speaker": "Ann", "timestamp": None}
            for i, t in enumerate(["I adopted a kitten called Pebble", "Rain all day", "Pebble broke a bowl",
                                   "Lunch was fine"], start=1)]
    assert parse_feedback("noisy:0.5") == ("noisy", 0.5) and parse_feedback(None) == ("none", 0.0)
    assert simulated_used("evidence", 0, mems, ["D1:3", "D1:1", "D9:9"]) == [1, 3]
    assert simulated_used("answer", 0, mems, [], gold="Pebble", question="What is the kitten's name?") == [1, 3]
    noisy = simulated_used("noisy", 0.5, mems, ["D1:1", "D1:3"], seed="x")
    assert len(noisy) == 2 and len(set(noisy) & {1, 3}) == 1 and noisy == simulated_used(
        "noisy", 0.5, mems, ["D1:1", "D1:3"], seed="x")
    h = EvidenceHistory()
    assert [h.overlaps(e) for e in (["a"], ["b"], ["b", "c"], [])] == [False, False, True, False]
    # cite: the reader's own answer, not the gold one (no answer: nothing)
    assert parse_feedback("cite") == ("cite", 0.0)
    assert simulated_used("cite", 0, mems, [], question="What did the kitten break?", prediction="a bowl") == [3]
    assert simulated_used("cite", 0, mems, [], gold="Pebble", question="What did the kitten break?") == []


def test_bench_cite_feedback_uses_the_readers_answer(locomo_file, cfg, hash_embedder, tmp_path):
    from hela_cli.bench import run_locomo
    from hela_cli.bench.longmemeval import run_longmemeval
    from tests.support import MINI, SESSIONS_A, ScriptedChat

    with pytest.raises(InputError, match="--retrieval-only"):
        run_locomo(locomo_file, retrieval_only=True, cfg=cfg, embedder=hash_embedder, feedback="cite")
    with pytest.raises(InputError, match="one question per haystack"):
        run_longmemeval(MINI, retrieval_only=False, cfg=cfg, embedder=hash_embedder, feedback="cite")
    records = tmp_path / "r.jsonl"
    s = run_locomo(locomo_file, cfg=cfg, embedder=hash_embedder, chat=ScriptedChat(answer="Pebble the kitten"),
                   k=3, records=records, feedback="cite", forget_every=0, samples=["pair-a"])
    recs = [json.loads(line) for line in records.read_text().splitlines()]
    assert s["feedback"] == "cite" and recs and all(r["prediction"] == "Pebble the kitten" for r in recs)
    text = {f"D{n}:{i}": t for n, (_, turns) in enumerate(SESSIONS_A, start=1) for i, (_, t) in enumerate(turns, 1)}
    for r in recs:   # what the reader's answer cites among that question's memories
        pebble = {m["source_id"] for m in r["retrieved"]
                  if "Pebble" in text[m["source_id"]] or "kitten" in text[m["source_id"]]}
        assert set(r["used"]) <= pebble and (bool(r["used"]) == bool(pebble))


def test_longmemeval_feedback_after_its_only_question(tmp_path, model_dir_path, hash_embedder):
    """LongMemEval: feedback (simulation) reaches the item's own memory after its single question is scored,
    so it changes no score: the same memories as without feedback."""
    from hela_cli.bench.longmemeval import run_longmemeval
    from tests.support import MINI

    cfg = Config()
    cfg.models.dir = str(model_dir_path)
    kw = dict(variants=["full"], retrieval_only=True, k=2, cfg=cfg, embedder=hash_embedder)
    plain = run_longmemeval(MINI, records=tmp_path / "a.jsonl", **kw)
    fed = run_longmemeval(MINI, records=tmp_path / "b.jsonl", feedback="evidence", **kw)
    a = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    b = [json.loads(x) for x in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert [r["retrieved"] for r in a] == [r["retrieved"] for r in b]
    assert all(set(r["used"]) <= {m["source_id"] for m in r["retrieved"]} for r in b)
    assert any("simulation" in n for n in fed["notes"]) and not any("simulation" in n for n in plain["notes"])


class _Tofu:
    """A stand-in reader that always answers "Tofu"."""

    model_id = "tofu"
    n_ctx = 4096

    def count_tokens(self, text):
        return len(text.split())

    def generate(self, messages, **kw):
        return "Tofu"


def test_cited_answer_as_feedback_switch(make_memory, hash_embedder):
    """answer.cite_feedback: the citations sharing words with the answer are the used set of the ask."""
    on = _mem(make_memory, hash_embedder, answer__cite_feedback=True)
    on._chat = _Tofu()
    out = on.ask("What is the name of Jonas's dog?", "demo")
    cited = [c["id"] for c in out["citations"] if c["overlap"] > 0]
    assert cited and out["feedback"]["used"] == cited
    assert on.store.get_ask(out["recall_id"])["used"] == cited
    off = _mem(make_memory, hash_embedder)
    off._chat = _Tofu()
    out = off.ask("What is the name of Jonas's dog?", "demo")
    assert "feedback" not in out and off.store.get_ask(out["recall_id"])["used"] is None
