"""Reflective consolidation: hub detection and planning (pure), validation and dates, the failure path
with a scripted model, and the real scenario - repeated co-activation creates a hub that the real default
chat model (grammar-constrained) distils into semantic records with evidence."""

import json
from datetime import datetime, timezone

import pytest

from hela_cli.mechanics.consolidate import (cluster_change, detect_hubs, distill_schema, normalise_date, novelty, plan_hubs,
                                  resolve_relative, salvage_json, select_cluster, validate_distillation)
from tests.cases import write_conversation
from tests.support import ScriptedChat, batch_clusters, good_reply, hub_space, small_config  # noqa: F401 (shared)

MAY8 = datetime(2023, 5, 8, 10, 0, tzinfo=timezone.utc).timestamp()





# ----------------------------------------------------------------------------------- pure functions
def test_detect_hubs_eq2_strict_threshold_and_order():
    strengths = {1: (0.5, 3), 2: (0.9, 4), 3: (0.51, 2), 4: (0.9, 5), 5: (0.1, 1)}
    assert detect_hubs(strengths, 0.5) == [(2, 0.9, 4), (4, 0.9, 5), (3, 0.51, 2)]  # D > delta, ties by id
    assert detect_hubs({}, 0.5) == []


def test_select_cluster_limits():
    nb = [(7, 0.3), (8, 0.04), (9, 0.6), (10, 0.3), (1, 0.9)]
    assert select_cluster(1, nb, 0.05, 8) == [1, 9, 7, 10]  # self and weak links excluded, strongest first
    assert select_cluster(1, nb, 0.05, 2) == [1, 9, 7]
    assert select_cluster(1, nb, 0.5, 8) == [1, 9]
    assert select_cluster(1, [], 0.05, 8) == [1]


def test_cluster_change_and_novelty():
    assert cluster_change([1, 2, 3], [1, 2, 3]) == 0
    assert cluster_change([1, 2, 3], [1, 2, 4]) == pytest.approx(0.5)
    assert cluster_change([1], [2]) == 1
    assert novelty([1, 2, 3, 4], {1, 2, 3}) == pytest.approx(0.25)


def test_plan_hubs_actions():
    hubs = [(1, 0.9, 3), (2, 0.8, 3), (5, 0.7, 2)]
    clusters = {1: [1, 2, 3], 2: [2, 1, 3], 5: [5, 6, 7]}
    plans = plan_hubs(hubs, clusters, {}, {}, 0.3)
    assert [(p.node_id, p.action, p.covered_by) for p in plans] == [(1, "distill", None), (2, "covered", 1),
                                                                    (5, "distill", None)]
    clusters[2] = [2, 8, 9]
    state = {1: {"cluster": [1, 2, 3], "status": "ok"}, 5: {"cluster": [5, 6], "status": "ok"},
             2: {"cluster": [2, 8, 9], "status": "failed: reply is not valid JSON"}}
    plans = {p.node_id: p for p in plan_hubs(hubs, clusters, {}, state, 0.3)}
    assert plans[1].action == "unchanged" and plans[1].change == 0
    assert plans[5].action == "redistill" and plans[5].change == pytest.approx(1 / 3)
    assert plans[2].action == "retry" and plans[2].needs_model
    auto = {p.node_id: p for p in plan_hubs(hubs, clusters, {}, state, 0.3, retry_failed=False)}
    assert auto[2].action == "skip-failed" and not auto[2].needs_model
    # auto mode: a new hub inside a failed cluster is not sent to the model either
    auto = plan_hubs([(8, 0.6, 2)], {8: [8, 9, 2]}, {}, state, 0.3, retry_failed=False)
    assert (auto[0].action, auto[0].covered_by) == ("skip-failed", 2)
    # a failed hub whose cluster another hub distilled meanwhile is simply covered
    state[2]["cluster"] = clusters[2] = [2, 1, 3]
    assert plan_hubs(hubs, clusters, {}, state, 0.3)[1].action == "covered"


def test_distill_schema_restricts_evidence_and_sizes_to_budget():
    from llama_cpp.llama_grammar import LlamaGrammar

    s = distill_schema([12, 5, 9], 200)
    ev = s["properties"]["facts"]["items"]["properties"]["evidence"]
    assert ev["items"]["enum"] == [5, 9, 12] and ev["minItems"] == 1
    small = sum(s["properties"][k]["maxItems"] for k in ("traits", "facts", "knowledge"))
    big = distill_schema([1], 512)
    assert small < sum(big["properties"][k]["maxItems"] for k in ("traits", "facts", "knowledge"))
    compact = distill_schema([1], 512, compact=True)
    assert compact["properties"]["facts"]["items"]["properties"]["text"]["maxLength"] < 160
    LlamaGrammar.from_json_schema(json.dumps(s), verbose=False)  # llama.cpp accepts it as a grammar


def test_salvage_json_cuts_to_last_complete_item():
    full = '{"traits": [], "facts": [{"subject": "a", "text": "b c d", "date": "", "evidence": [1]}], "knowledge": []}'
    assert salvage_json(full) == (json.loads(full), False)
    cut = full[:full.index('"knowledge"')] + '"knowledge": [{"text": "half'
    obj, salvaged = salvage_json(cut)
    assert salvaged and obj["facts"][0]["text"] == "b c d" and obj["knowledge"] == []
    obj, salvaged = salvage_json('{"traits": [{"subject": "x", "te')
    assert obj == {"traits": []} and salvaged
    assert salvage_json("not json") == (None, False)


def test_relative_dates_against_the_turn():
    # the example: "yesterday" in a turn of 8 May 2023 is 7 May 2023
    assert resolve_relative("Caroline went hiking yesterday.", MAY8) == ("Caroline went hiking on 7 May 2023.",
                                                                         "7 May 2023")
    assert resolve_relative("Last Saturday she ran", MAY8)[1] == "6 May 2023"  # 8 May 2023 is a Monday
    assert resolve_relative("met last week", MAY8) == ("met the week before 8 May 2023",
                                                       "the week before 8 May 2023")
    assert resolve_relative("moved two days ago", MAY8)[1] == "6 May 2023"
    assert resolve_relative("started last month", MAY8)[1] == "April 2023"
    assert resolve_relative("no time here", MAY8) == ("no time here", None)
    years = {2023}
    assert normalise_date("2023-05-07", MAY8, years) == "7 May 2023"
    assert normalise_date("May 7", MAY8, years) == "7 May 2023"
    assert normalise_date("May 2023", MAY8, years) == "May 2023"
    assert normalise_date("yesterday", MAY8, years) == "7 May 2023"
    assert normalise_date("2019", MAY8, years) is None  # a year no turn mentions: ungrounded
    assert normalise_date("Saturday", MAY8, years) is None
    assert normalise_date("", MAY8, years) is None


def test_validate_distillation_rules():
    turns = {1: {"id": 1, "ts": MAY8, "speaker": "Caroline", "text": "I went hiking in the Alps yesterday."},
             2: {"id": 2, "ts": MAY8 + 86400 * 30, "speaker": "Melanie", "text": "My cat Luna hates the rain."}}
    obj = {"traits": [{"subject": "Luna", "text": "Melanie's cat Luna hates rain.", "confidence": 3.5,
                       "evidence": [2, 99]},
                      {"subject": "Caroline", "text": "Caroline likes hiking", "confidence": -1, "evidence": [1]}],
           "facts": [{"subject": "Caroline", "text": "Caroline went hiking in the Alps yesterday.", "date": "",
                      "evidence": [2]},
                     {"subject": "Caroline", "text": "Caroline went hiking in the Alps.", "date": "1999",
                      "evidence": [1]},
                     {"subject": "Bob", "text": "Bob bought a red sports car.", "date": "", "evidence": [1]},
                     {"subject": "x", "text": "The Alps are a vegan soybean food product.", "date": "",
                      "evidence": [1]},
                     {"subject": "x", "text": "Caroline likes json.json.json.json.json.json", "date": "", "evidence": [1]},
                     {"subject": "x", "text": "Tofu", "date": "", "evidence": [1]},
                     {"subject": "Melanie", "text": "13(27 June 2023) Melanie Caroline", "date": "", "evidence": [2]},
                     {"subject": "Melanie", "text": "2. Luna hates rain. You can't live without rain. You can't "
                      "live without rain. You can't live without rain.", "date": "", "evidence": [2]},
                     {"subject": "Melanie", "text": "1. Luna hates the rain.", "date": "", "evidence": [2]}],
           "knowledge": [{"text": "Caroline likes hiking", "evidence": [1]}]}
    recs, rejected = validate_distillation(obj, turns, hub=1)
    by_text = {r.text: r for r in recs}
    luna = by_text["Melanie's cat Luna hates rain."]
    assert luna.confidence == 1.0 and luna.evidence == [2] and luna.subject == "Melanie"  # clipped, speaker
    assert by_text["Caroline likes hiking"].confidence == 0.0 and by_text["Caroline likes hiking"].kind == "trait"
    hike = by_text["Caroline went hiking in the Alps on 7 May 2023."]  # resolved against turn 1, not 2
    assert hike.date == "7 May 2023" and hike.evidence == [1]
    alps = by_text["Caroline went hiking in the Alps."]
    assert alps.date == "7 May 2023"  # '1999' is ungrounded; the evidence turn's "yesterday" dates it
    reasons = [r["reason"] for r in rejected]
    assert sorted(set(reasons)) == ["degenerate repetition", "mostly not stated in the cluster's turns",
                                    "nothing beyond names and dates", "text too short"]
    assert reasons.count("degenerate repetition") == 2
    assert by_text["Luna hates the rain."].evidence == [2]  # list mark dropped
    assert reasons.count("mostly not stated in the cluster's turns") == 2  # Bob's car; one shared word of five
    assert sum(r.text == "Caroline likes hiking" for r in recs) == 1  # duplicate text across kinds kept once
    for r in recs:
        assert set(r.evidence) <= set(turns)


# ----------------------------------------------------------------------------------- store-level behaviour
def test_dry_run_plans_without_model_or_writes(make_memory, tmp_path):
    mem, ids = hub_space(make_memory, tmp_path, chat=None)
    mem._chat = None

    def no_model():
        raise AssertionError("dry run must not load a model")

    from hela_cli.mechanics.consolidate import consolidate

    sp = mem.store.require_space("t")
    rep = consolidate(mem.store, sp, mem.config, embedder=no_model, chat=no_model, dry_run=True)
    assert rep["dry_run"] and rep["to_distill"] == 1 and rep["covered"] == 2
    first = rep["hubs"][0]
    assert first["hub"] == ids[0] and first["cluster"] == [ids[0], ids[4], ids[6]] and first["action"] == "distill"
    assert mem.store.hub_state(sp.id) == {} and mem.store.count_semantic(sp.id) == 0
    assert mem.store.require_space("t").consolidated_step == 0


def test_failure_is_reported_retried_and_never_raises(make_memory, tmp_path):
    chat = ScriptedChat("this is not json", '{"traits": [')
    mem, ids = hub_space(make_memory, tmp_path, chat)
    rep = mem.consolidate("t")
    assert rep["failed"] == 1 and rep["distilled"] == 0 and rep["model_calls"] == 2  # one retry
    hub = rep["hubs"][0]
    assert hub["status"].startswith("failed: ") and hub["attempts"] == 2
    sp = mem.store.require_space("t")
    assert mem.store.hub_state(sp.id)[ids[0]]["status"].startswith("failed")
    assert mem.store.count_semantic(sp.id) == 0
    # auto-consolidation does not hammer a failing hub; an explicit run retries it
    assert mem.consolidate("t", auto=True)["model_calls"] == 0
    chat.replies = [good_reply]
    rep = mem.consolidate("t")
    assert rep["distilled"] == 1 and rep["hubs"][0]["status"] == "ok"


def test_retry_after_invalid_first_reply_and_merge_of_duplicates(make_memory, tmp_path):
    chat = ScriptedChat('{"traits": [], "facts": [{"subject": "x", "text": "Bob bought a car", "date": "", '
                        '"evidence": [1]}], "knowledge": []}', good_reply)
    mem, ids = hub_space(make_memory, tmp_path, chat)
    rep = mem.consolidate("t")
    hub = rep["hubs"][0]
    assert hub["status"] == "ok" and hub["attempts"] == 2 and rep["records_rejected"] == 1
    sp = mem.store.require_space("t")
    recs = mem.store.get_semantic(space_id=sp.id)
    assert {r["kind"] for r in recs} == {"trait", "fact"}
    trait = next(r for r in recs if r["kind"] == "trait")
    assert trait["confidence"] == 1.0 and trait["hub_id"] == ids[0]
    fact = next(r for r in recs if r["kind"] == "fact")
    assert fact["date"] == "7 May 2023"  # from its evidence turn's "yesterday"
    for r in recs:
        assert set(r["evidence"]) <= {ids[0], ids[4], ids[6]} and r["evidence"]
        assert mem.store.semantic_vector(r["id"]) is not None
    # the same statements again from a re-distilled hub merge their evidence instead of piling up
    with mem.store.transaction():
        mem.store.set_edges(sp, {(ids[0], ids[1]): 0.9}, mem.config.hebbian.decay)
    chat.replies = [lambda m, s: good_reply(m, s).replace(f"[{ids[0]}]", f"[{ids[1]}, {ids[0]}]")]
    rep = mem.consolidate("t")
    redistilled = next(h for h in rep["hubs"] if h["hub"] == ids[0])
    assert redistilled["action"] == "redistill" and rep["records_merged"] >= 1 and rep["records_inserted"] == 0
    assert mem.store.count_semantic(sp.id) == 2
    assert ids[1] in next(r for r in mem.store.get_semantic(space_id=sp.id) if r["kind"] == "trait")["evidence"]


def _batch_reply(messages):
    """The batch prompt's answer, as a capable model gives it: per cluster, a fact from its hub's own line."""
    return json.dumps({"clusters": batch_clusters(messages[-1]["content"]), "changes": []})


def test_a_server_gets_the_hubs_in_one_batched_call(make_memory, tmp_path):
    """An openai: chat model (not a local GGUF): three hubs go in ONE call of the batch prompt, and each
    hub's record is stored with its evidence; a GGUF would get prompt A.1 once per hub."""
    from hela_cli.mechanics.judge import batches_hubs
    from hela_cli.models.endpoints import OpenAIChat
    from tests.model_server import chat_server

    with chat_server(_batch_reply) as srv:
        ref = f"openai:judge@{srv.url}"
        mem, ids = hub_space(make_memory, tmp_path, OpenAIChat(ref), **{"models.chat": ref})
        sp = mem.store.require_space("t")
        with mem.store.transaction():   # two more hubs, apart from the first (node 0 with 4 and 6)
            mem.store.set_edges(sp, {(ids[1], ids[3]): 0.7, (ids[2], ids[5]): 0.4, (ids[2], ids[7]): 0.4},
                                mem.config.hebbian.decay)
        plan = mem.consolidate("t", dry_run=True)
        hubs = [h["hub"] for h in plan["hubs"] if h["action"] == "distill"]
        assert len(hubs) == 3 and plan["to_distill"] == 3
        rep = mem.consolidate("t")
    assert batches_hubs(mem.config) and not batches_hubs(small_config())
    assert len(srv.requests) == 1 and rep["model_calls"] == 1
    prompt = srv.requests[0]["messages"][-1]["content"]
    assert all(f"Cluster hub={h}:" in prompt for h in hubs) and "CHANGES." not in prompt
    assert rep["distilled"] == 3 and rep["failed"] == 0 and rep["records_inserted"] == 3
    state = mem.store.hub_state(sp.id)
    recs = {r["hub_id"]: r for r in mem.store.get_semantic(space_id=sp.id)}
    for h in hubs:
        entry = next(e for e in rep["hubs"] if e["hub"] == h)
        assert entry["status"] == "ok" and entry["inserted"] and state[h]["status"] == "ok"
        # the hub's own line (validated: a relative date made absolute against the turn's time)
        assert recs[h]["evidence"] == [h] and recs[h]["text"][:12] == mem.store.get_nodes([h])[h]["text"][:12]
        assert mem.store.semantic_vector(recs[h]["id"]) is not None


def test_a_batched_answer_that_does_not_parse_fails_its_hubs(make_memory, tmp_path):
    from hela_cli.models.endpoints import OpenAIChat
    from tests.model_server import chat_server

    with chat_server(lambda messages: "I could not decide.") as srv:
        ref = f"openai:judge@{srv.url}"
        mem, ids = hub_space(make_memory, tmp_path, OpenAIChat(ref), **{"models.chat": ref})
        rep = mem.consolidate("t")
    # the batch's failure, then prompt A.1 for the hub (an answer and its one retry), which fails too
    assert len(srv.requests) == 3 and rep["failed"] == 1 and rep["distilled"] == 0
    assert "Cluster hub=" in srv.requests[0]["messages"][-1]["content"]
    assert "Cluster hub=" not in srv.requests[1]["messages"][-1]["content"]
    assert rep["hubs"][0]["batch_status"] == "failed: the answer is not valid JSON (dropped, nothing stored)"
    assert rep["hubs"][0]["status"].startswith("failed")
    assert mem.store.count_semantic(mem.store.require_space("t").id) == 0


def test_a_server_too_small_for_the_batch_gets_prompt_a1_per_hub(make_memory, tmp_path):
    """A model server that cannot follow the batched prompt (a small GGUF behind llama.cpp's server): the
    hubs the batch failed are distilled again one prompt A.1 each, and stored."""
    from hela_cli.models.endpoints import OpenAIChat
    from tests.model_server import chat_server

    hub: list[int] = []

    def reply(messages):
        prompt = messages[-1]["content"]
        if "Cluster hub=" in prompt:
            return "Sure! Here are the facts: Caroline has a dog."
        return json.dumps({"traits": [], "knowledge": [],
                           "facts": [{"subject": "Caroline", "text": "Caroline adopted the greyhound Tofu.",
                                      "date": "", "evidence": hub[:1]}]})

    with chat_server(reply) as srv:
        ref = f"openai:small@{srv.url}"
        mem, ids = hub_space(make_memory, tmp_path, OpenAIChat(ref), **{"models.chat": ref})
        hub.append(ids[0])
        rep = mem.consolidate("t")
    assert len(srv.requests) == 2 and rep["model_calls"] == 2
    assert rep["distilled"] == 1 and rep["failed"] == 0 and rep["records_inserted"] == 1
    entry = rep["hubs"][0]
    assert entry["status"] == "ok" and entry["batch_status"].startswith("failed")
    recs = mem.store.get_semantic(space_id=mem.store.require_space("t").id)
    assert [r["evidence"] for r in recs] == [[ids[0]]]


def test_auto_consolidation_hook_and_switch(make_memory, tmp_path):
    chat = ScriptedChat(good_reply)
    mem, ids = hub_space(make_memory, tmp_path, chat, **{"consolidation.auto": True,
                                                      "consolidation.auto_every": 3})

    def ask(question: str = "Tell me about Tofu the greyhound", llm: bool = True):
        res = mem.ask(question, "t", llm=llm)
        assert res["consolidation"] is None and "consolidate" not in res["timings_ms"]  # the caller's step
        return mem.consolidate_if_due("t")

    reps = [ask() for _ in range(3)]
    assert [r is None for r in reps] == [True, True, False]
    assert reps[-1]["distilled"] >= 1
    assert mem.store.require_space("t").consolidated_step == 3
    # next due run with unchanged hubs: no model call
    calls = len(chat.calls)
    out = [ask() for _ in range(3)][-1]
    assert out is not None and out["model_calls"] == 0 and len(chat.calls) == calls + 3  # only the answers
    # switched off: never
    mem.config.consolidation.auto = False
    assert all(ask("Tofu?") is None for _ in range(4))
    # ask alone never consolidates, even when one is due
    mem.config.consolidation.auto = True
    before = mem.store.require_space("t").consolidated_step
    for _ in range(4):
        mem.ask("Tofu?", "t", llm=False)
    assert mem.store.require_space("t").consolidated_step == before
    assert mem.consolidate_if_due("t") is not None

def test_coactivation_creates_hub_that_real_model_distils(make_memory, chat, tmp_path):
    class Counting:
        def __init__(self, inner):
            self.inner, self.calls, self.model_id, self.n_ctx = inner, 0, inner.model_id, inner.n_ctx

        def count_tokens(self, text):
            return self.inner.count_tokens(text)

        def generate(self, *a, **kw):
            self.calls += 1
            return self.inner.generate(*a, **kw)

    counting = Counting(chat)
    mem = make_memory(small_config(), chat=counting)
    mem.ingest([write_conversation(tmp_path / "c.jsonl")], space="t")
    sp = mem.store.require_space("t")
    assert mem.consolidate("t", dry_run=True)["hubs"] == []  # ingest links alone make no hub
    for _ in range(20):  # repeated co-activation of the same three memories (Eq.1)
        res = mem.retrieve("Tofu the greyhound walks vet", "t")
    together = {m["id"] for m in res.memories}
    rep = mem.consolidate("t")
    assert rep["hubs_found"] >= 1 and rep["distilled"] == 1 and rep["failed"] == 0
    hub = next(h for h in rep["hubs"] if h["action"] == "distill")
    assert set(hub["cluster"]) == together and hub["strength"] > mem.config.consolidation.delta_hub
    assert hub["status"] == "ok" and not hub["salvaged"]  # the grammar gave complete, parseable JSON
    assert all(h["status"].startswith("covered") for h in rep["hubs"] if h is not hub)
    recs = mem.store.get_semantic(space_id=sp.id)
    assert recs and rep["records_inserted"] == len(recs)
    for r in recs:
        assert r["kind"] in ("trait", "fact", "knowledge") and r["text"].strip()
        assert r["evidence"] and set(r["evidence"]) <= together
        assert mem.store.semantic_vector(r["id"]) is not None
        if r["confidence"] is not None:
            assert 0.0 <= r["confidence"] <= 1.0
    # unchanged hubs are not distilled again
    calls = counting.calls
    again = mem.consolidate("t")
    assert again["model_calls"] == 0 and counting.calls == calls and again["unchanged"] == again["hubs_found"]
    # the semantic records now come back with retrieval when the answer context takes them (off by default)
    assert mem.retrieve("Who is Tofu?", "t", learn=False).semantic == []
    mem.config.retrieval.semantic_k = 5
    assert mem.retrieve("Who is Tofu?", "t", learn=False).semantic
    assert mem.store.integrity_problems() == []
