"""The deferred, batched judge (hela_cli/mechanics/judge.py) and the agent route's pure parts
(hela_cli/models/agent.py: refs, budgets, the ledger, reading each CLI's output) with test doubles; the real
agent CLIs: tests/test_agent_model.py."""

from __future__ import annotations

import json
import re

import pytest

from hela_cli.errors import InputError, ModelError
from hela_cli.mechanics.consolidate import HubPlan
from hela_cli.mechanics.judge import BATCH_SCHEMA, Work, apply_batch, batch_messages, parse_batch, pending, run_batch
from hela_cli.models.agent import (AgentBudgetSpent, Budget, Ledger, Run, _claude_reply, _codex_reply, _gemini_reply,
                                   parse_budget, parse_ref)
from tests.support import batch_clusters

DAY = 86_400.0
T0 = 1_700_000_000.0


# ------------------------------------------------------------------------------------------ the agent route
def test_refs():
    assert parse_ref("agent:claude-code") == ("claude-code", None)
    assert parse_ref("agent:gemini@gemini-2.5-flash-lite") == ("gemini", "gemini-2.5-flash-lite")
    for bad in ("agent:cursor", "agent:codex@", "agent:codex@--yolo", "agent:claude-code@a b"):
        with pytest.raises(InputError):
            parse_ref(bad)


def test_budgets():
    assert parse_budget("24 calls, 150000 tokens") == Budget(24, 150_000)
    assert parse_budget("10 calls") == Budget(10, 150_000)          # the other part from the default
    assert parse_budget("1.5M tokens, 3 calls") == Budget(3, 1_500_000)
    assert parse_budget("200k tokens") == Budget(24, 200_000)
    assert parse_budget("off") == Budget(0, 0)
    for bad in ("lots", "10 calls and more", "-3 calls", ""):
        with pytest.raises(InputError):
            parse_budget(bad)


def test_config_refuses_a_bad_budget():
    from hela_cli.config import load_config
    from hela_cli.errors import HelaError

    assert load_config(env={}, overrides={"models.agent_budget": "5 calls"}).models.agent_budget == "5 calls"
    with pytest.raises(HelaError, match="agent_budget"):
        load_config(env={"HELA_MODELS_AGENT_BUDGET": "plenty"})
    with pytest.raises(HelaError, match="model_work"):
        load_config(env={"HELA_HOOKS_MODEL_WORK": "sometimes"})


def test_ledger_counts_and_stops(tmp_path):
    led = Ledger(tmp_path)
    b = Budget(2, 1000)
    led.reserve("codex", b, 100)
    led.record("codex", 300, 50, estimated=False)
    assert led.spent("codex")["calls"] == 1 and led.spent("codex")["tokens"] == 350
    with pytest.raises(AgentBudgetSpent) as e:      # this prompt would pass the token cap
        led.reserve("codex", b, 700)
    assert e.value.first and isinstance(e.value, ModelError)
    led.reserve("codex", b, 100)
    with pytest.raises(AgentBudgetSpent) as e:      # the calls are spent
        led.reserve("codex", b, 1)
    assert not e.value.first and "2 of 2 calls" in e.value.message
    assert led.refuse("codex", b)[1] is False and led.refuse("gemini", b) is None
    assert led.spent("codex")["stopped"] == 3 and led.spent("gemini")["calls"] == 0
    led.count("codex", "dropped")
    assert led.spent("codex")["dropped"] == 1


def _run(out: str, code: int = 0, err: str = "") -> Run:
    return Run(code, out, err, False, 0.1)


def test_reading_each_cli():
    r = _claude_reply(_run(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "{}",
                                       "usage": {"input_tokens": 10, "cache_read_input_tokens": 5,
                                                 "output_tokens": 7}})))
    assert (r.text, r.input_tokens, r.output_tokens) == ("{}", 15, 7)
    with pytest.raises(ModelError, match="Invalid API key"):
        _claude_reply(_run(json.dumps({"type": "result", "is_error": True, "result": "Invalid API key"}), 1))
    with pytest.raises(ModelError, match="no JSON result"):
        _claude_reply(_run("", 1, "boom"))
    events = [{"type": "thread.started"}, {"type": "item.completed", "item": {"type": "agent_message", "text": "ok"}},
              {"type": "turn.completed", "usage": {"input_tokens": 40, "cached_input_tokens": 30, "output_tokens": 2}}]
    r = _codex_reply(_run("\n".join(json.dumps(e) for e in events)))
    assert (r.text, r.input_tokens, r.output_tokens) == ("ok", 40, 2)
    with pytest.raises(ModelError, match="quota"):
        _codex_reply(_run(json.dumps({"type": "turn.failed", "error": {"message": "quota exceeded"}}), 1))
    r = _gemini_reply(_run("Loaded cached credentials.\n" + json.dumps(
        {"response": "hi", "stats": {"models": {"gemini-2.5-flash": {"tokens": {"prompt": 9, "candidates": 3}}}}})))
    assert (r.text, r.input_tokens, r.output_tokens) == ("hi", 9, 3)
    r = _gemini_reply(_run(json.dumps({"response": "hi"})))
    assert r.input_tokens is None      # none reported: the caller estimates (and labels it)


# ------------------------------------------------------------------------------------------ the batch
class Scripted:
    """A chat-model double: answers every call with ``reply`` (a text or a function of the messages)."""

    def __init__(self, reply):
        self.reply, self.calls = reply, []
        self.model_id, self.n_ctx = "scripted", 32768

    def count_tokens(self, text):
        return len(text) // 3

    def generate(self, messages, *, max_tokens=256, temperature=0.0, json_schema=None, stop=None):
        self.calls.append((messages, json_schema))
        return self.reply(messages) if callable(self.reply) else self.reply


def _world(make_memory, hash_embedder):
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0, consolidation__delta_hub=0.01)
    ids = mem.add_many("p", [
        {"text": "The API rate limit is 100 requests per minute.", "speaker": "user", "time": T0},
        {"text": "The staging server is kestrel, deployed with make deploy.", "speaker": "user", "time": T0 + 60},
        {"text": "Kestrel runs the staging database too.", "speaker": "user", "time": T0 + 120},
        {"text": "The API rate limit is 500 requests per minute.", "speaker": "user", "time": T0 + DAY}])
    mem.retrieve("staging server kestrel deploy", "p")     # a learning recall: Eq.1 makes a hub
    return mem, ids


def _answer(work: Work, **over):
    hub = work.hubs[0].node_id
    pair = work.changes[0]
    obj = {"clusters": [{"hub": hub, "reasoning": "It states the staging server.",
                         "facts": [{"subject": "staging", "text": "The staging server is kestrel", "date": "",
                                    "evidence": [hub]}], "traits": [], "knowledge": []}],
           "changes": [{"pair": f"{pair['old_id']}>{pair['new_id']}", "reasoning": "A new value of the same limit.",
                        "verdict": "replaces", "evidence": [pair["old_id"], pair["new_id"]]}]}
    obj.update(over)
    return obj


def test_one_call_for_hubs_and_changes(make_memory, hash_embedder):
    mem, ids = _world(make_memory, hash_embedder)
    sp = mem.space("p")
    work = pending(mem.store, sp, mem.config)
    assert work.hubs and [(c["old_id"], c["new_id"], c["status"]) for c in work.changes] == [(ids[0], ids[3], "possible")]
    msgs = batch_messages(work)
    text = msgs[1]["content"]
    assert f"Cluster hub={work.hubs[0].node_id}:" in text and f"Pair {ids[0]}>{ids[3]}:" in text
    assert text.index("CLUSTERS") < text.index("CHANGES") and '"reasoning"' in text
    chat = Scripted(lambda m: json.dumps(_answer(work)))
    rep = run_batch(mem.store, sp, mem.config, chat, hash_embedder, work)
    assert len(chat.calls) == 1 and chat.calls[0][1] == BATCH_SCHEMA
    assert rep["calls"] == 1 and rep["superseded"] == 1 and rep["records"] == 1 and rep["hubs_ok"] == 1
    row = mem.store.supersessions_for([ids[0]])[ids[0]][0]
    assert (row["detector"], row["status"], row["reason"]) == ("judge", "superseded", "A new value of the same limit.")
    recs = mem.store.db.execute("SELECT s.text, e.node_id FROM semantic s JOIN semantic_evidence e "
                                "ON e.semantic_id = s.id").fetchall()
    assert recs == [("The staging server is kestrel", work.hubs[0].node_id)]
    assert pending(mem.store, sp, mem.config).empty          # nothing left to ask: no second call
    from hela_cli.maintenance.correct import fact_chain
    assert fact_chain(mem.store, ids[3])[0]["reason"] == "A new value of the same limit."


@pytest.mark.parametrize("change, expect", [
    ({"verdict": "no"}, None),
    ({"verdict": "unsure"}, ("judge", "possible")),
    ({"reasoning": ""}, ("slot", "possible")),                        # no reasoning before the verdict: skipped
    ({"evidence": [1, 2, 3, 99]}, ("slot", "possible")),             # evidence outside the pair: skipped
    ({"verdict": "yes"}, ("slot", "possible")),                      # not one of the verdicts: skipped
])
def test_verdicts(make_memory, hash_embedder, change, expect):
    mem, ids = _world(make_memory, hash_embedder)
    sp = mem.space("p")
    work = pending(mem.store, sp, mem.config, hubs=False)
    obj = _answer(Work(sp, hubs=[HubPlan(0, 0, 0, [], {}, "distill")], changes=work.changes), clusters=[])
    obj["changes"][0].update(change)
    apply_batch(mem.store, work, obj, hash_embedder, mem.config)
    rows = mem.store.supersessions_for([ids[0]]).get(ids[0], [])
    assert (None if not rows else (rows[0]["detector"], rows[0]["status"])) == expect


def test_what_the_model_writes_is_stored_redacted(make_memory, hash_embedder):
    """A change's reason the model writes is stored text: redacted whole before it is cut, like a turn."""
    mem, ids = _world(make_memory, hash_embedder)
    sp = mem.space("p")
    work = pending(mem.store, sp, mem.config, hubs=False)
    obj = _answer(Work(sp, hubs=[HubPlan(0, 0, 0, [], {}, "distill")], changes=work.changes), clusters=[])
    key = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ3lN5pR7tV9xZ"
    obj["changes"][0]["reasoning"] = "The limit changed. " * 19 + f"The deploy key is {key} now."
    apply_batch(mem.store, work, obj, hash_embedder, mem.config)
    row = mem.store.supersessions_for([ids[0]])[ids[0]][0]
    assert row["detector"] == "judge" and len(row["reason"]) <= 400
    assert key[:12] not in row["reason"] and key[-12:] not in row["reason"]


def test_an_answer_that_does_not_parse_is_dropped(make_memory, hash_embedder):
    mem, ids = _world(make_memory, hash_embedder)
    sp = mem.space("p")
    before = mem.store.supersessions_for([ids[0]])
    for raw in ("I think the limit changed.", "", "[1, 2]", '{"verdict": "replaces"}'):
        rep = run_batch(mem.store, sp, mem.config, Scripted(raw), hash_embedder)
        assert rep["calls"] == 1 and rep["dropped"] is True
    assert mem.store.supersessions_for([ids[0]]) == before and mem.store.count_semantic(sp.id) == 0


def test_parse_batch():
    assert parse_batch('```json\n{"clusters": [], "changes": []}\n```') == {"clusters": [], "changes": []}
    assert parse_batch('Here it is: {"changes": [{"pair": "1>2"}]}') == {"changes": [{"pair": "1>2"}]}
    cut = '{"clusters": [], "changes": [{"pair": "1>2", "reasoning": "r", "verdict": "no", "evidence": [1]}, {"pair": "3>'
    assert parse_batch(cut)["changes"][0]["pair"] == "1>2"   # cut short by the token budget: complete items kept
    assert parse_batch('{"clusters": "x", "changes": []}') is None


def test_a_cluster_record_that_is_not_grounded_is_rejected(make_memory, hash_embedder):
    mem, ids = _world(make_memory, hash_embedder)
    sp = mem.space("p")
    work = pending(mem.store, sp, mem.config)
    obj = _answer(work)
    obj["clusters"][0]["facts"] = [{"subject": "x", "text": "Quantum llamas invented the toaster", "date": "",
                                    "evidence": [work.hubs[0].node_id]}]
    rep = apply_batch(mem.store, work, obj, hash_embedder, mem.config)
    assert rep["records"] == 0 and rep["hubs_ok"] == 0 and rep["rejected"] == 1
    state = mem.store.hub_state(sp.id)
    assert state[work.hubs[0].node_id]["status"].startswith("failed: no valid record")
    for p in work.hubs[1:]:   # a hub the answer left out: failed too (not asked again automatically)
        assert state[p.node_id]["status"] == "failed: not answered in the batch"


def test_the_explicit_command_refuses_an_in_process_model(make_memory, hash_embedder):
    mem, _ = _world(make_memory, hash_embedder)
    with pytest.raises(ModelError, match="in-process GGUF"):
        mem.judge("p")


def test_a_session_gist_written_at_the_end_is_what_the_brief_shows(make_memory, hash_embedder, tmp_path, monkeypatch):
    """At a session's end the batch carries the session's notes (its extractive gist, with ids); the summary
    the model writes is stored, the next brief shows it without calling a model, and deleting a memory of the
    session deletes it."""
    from hela_cli.hooks import modelwork
    from hela_cli.hooks.context import start_context

    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    turns = [{"text": "Refunds lose cents: fix billing/api.py", "speaker": "user", "role": "user"}]
    for i in range(6):
        turns += [{"text": f"[result] `pytest -x tests/test_refund.py` exit {1 if i < 5 else 0}: E AssertionError",
                   "speaker": "tool", "role": "tool"},
                  {"text": f"We store amounts as Decimal in billing/api.py, step {i}.", "speaker": "assistant",
                   "role": "assistant"}]
    seen = []

    def answer(messages):
        text = messages[-1]["content"]
        seen.append(text)
        ids = [int(i) for i in re.findall(r"\[#(\d+)\]", text)]
        return json.dumps({"clusters": [], "changes": [], "sessions": [
            {"session": "s1", "summary": "- Asked to fix refunds that lost cents.\n- billing/api.py now uses Decimal; "
             "the refund test passes.", "evidence": ids[:2]}]})

    mem = make_memory(embedder=hash_embedder, chat=Scripted(answer), models__chat="agent:claude-code",
                      supersession__detect=False)
    ids = mem.add_many("p", [{**t, "time": T0 + 60 * i, "session": "s1"} for i, t in enumerate(turns)])
    assert modelwork.session_item(mem, "p", "s1") is not None
    assert modelwork.run(mem, "p", mem.config, "claude-code", "s1", "Stop") == {}   # mid-session: no gist
    rep = modelwork.run(mem, "p", mem.config, "claude-code", "s1", "SessionEnd")["model"]
    assert rep["calls"] == 1 and rep["gists"] == 1 and "Session s1:" in seen[0] and "SESSIONS." in seen[0]
    assert modelwork.session_item(mem, "p", "s1") is None      # written from all its memories: not asked again
    text, facts = start_context(mem, "p", tmp_path, "s2")
    assert facts["written"] == 1 and "summarized by scripted" in text and "now uses Decimal" in text
    mem.delete("p", [ids[3]])
    assert mem.store.session_gists(mem.space("p").id, ["s1"]) == {}


def test_a_session_summary_citing_ids_outside_its_notes_is_not_stored(make_memory, hash_embedder):
    mem, ids = _world(make_memory, hash_embedder)
    sp = mem.space("p")
    item = {"session": "x", "turns": 12, "notes": "- asked: something [#1]", "ids": [ids[0]]}
    work = pending(mem.store, sp, mem.config, hubs=False, changes=False, sessions=[item])
    rep = apply_batch(mem.store, work, {"sessions": [{"session": "x", "summary": "s", "evidence": [ids[0], 999]}]},
                      hash_embedder, mem.config)
    assert rep["gists"] == 0 and rep["skipped"] == 1 and mem.store.session_gists(sp.id, ["x"]) == {}


# ------------------------------------------------------------------------------------------ hela judge
def _judge_reply(messages):
    """A capable model's answer to the batch prompt: each change replaces its earlier memory, each cluster
    gives a fact from its hub's own line."""
    prompt = messages[-1]["content"]
    clusters = batch_clusters(prompt)
    changes = [{"pair": f"{a}>{b}", "reasoning": "A new value of the same limit.", "verdict": "replaces",
                "evidence": [int(a), int(b)]} for a, b in re.findall(r"^Pair (\d+)>(\d+):", prompt, re.M)]
    return json.dumps({"clusters": clusters, "changes": changes})


def _judge_env(tmp_path, url):
    return {"HELA_DB": str(tmp_path / "hela.db"), "HELA_HOME": str(tmp_path / "home"),
            "HELA_MODELS_DIR": str(tmp_path / "no-models"), "HELA_MODELS_EMBEDDER": f"openai:hash@{url}",
            "HELA_MODELS_CHAT": f"openai:judge@{url}", "HELA_SUPERSESSION_MIN_SIMILARITY": "-1",
            "HELA_CONSOLIDATION_DELTA_HUB": "0.01", "HELA_CONFIG": "", "HELA_SPACE": ""}


def _judge_world(env):
    """The world of :func:`_world` in a database file, written with the server's (hash) embedder."""
    from hela_cli.config import load_config
    from hela_cli.memory import Memory

    with Memory(load_config(env={k: v for k, v in env.items() if v})) as mem:
        ids = mem.add_many("p", [
            {"text": "The API rate limit is 100 requests per minute.", "speaker": "user", "time": T0},
            {"text": "The staging server is kestrel, deployed with make deploy.", "speaker": "user", "time": T0 + 60},
            {"text": "Kestrel runs the staging database too.", "speaker": "user", "time": T0 + 120},
            {"text": "The API rate limit is 500 requests per minute.", "speaker": "user", "time": T0 + DAY}])
        mem.retrieve("staging server kestrel deploy", "p")
    return ids


def _hela(args, env):
    from typer.testing import CliRunner

    from hela_cli.cli import app

    return CliRunner().invoke(app, args, env=env)


def test_the_judge_command_prints_its_verdicts_and_what_it_cost(tmp_path):
    from hela_cli.store import Store
    from tests.model_server import chat_server

    with chat_server(_judge_reply) as srv:
        env = _judge_env(tmp_path, srv.url)
        ids = _judge_world(env)
        plan = _hela(["judge", "--dry-run"], env)
        assert plan.exit_code == 0, plan.output
        assert f"#{ids[0]} > #{ids[3]} (possible" in plan.output and "100 requests per minute" in plan.output
        assert "(dry run: no model call, nothing written)" in plan.output and srv.requests == []
        res = _hela(["judge"], env)
        assert res.exit_code == 0, res.output
        assert len(srv.requests) == 1
        out = " ".join(res.output.split())
        assert f"#{ids[0]} > #{ids[3]}: replaces -> superseded" in out and "A new value of the same limit." in out
        assert "hub " in out and ": ok (1 record(s))" in out
        assert "1 superseded" in out and f"1 call to openai:judge@{srv.url}" in out
        assert re.search(r"\d+ input \+ \d+ output tokens", out)
        again = _hela(["judge", "--json"], env)
        assert json.loads(again.output)["calls"] == 0 and len(srv.requests) == 1   # nothing left to ask
    with Store.open(env["HELA_DB"]) as s:
        row = s.supersessions_for([ids[0]])[ids[0]][0]
        assert (row["detector"], row["status"], row["reason"]) == ("judge", "superseded", "A new value of the same limit.")
        assert s.count_semantic(s.require_space("p").id) >= 1


def test_the_judge_command_limits_and_json(tmp_path):
    from tests.model_server import chat_server

    with chat_server(_judge_reply) as srv:
        env = _judge_env(tmp_path, srv.url)
        ids = _judge_world(env)
        res = _hela(["judge", "--hubs", "0", "--json"], env)
        assert res.exit_code == 0, res.output
        rep = json.loads(res.output)
        assert (rep["calls"], rep["hubs"], rep["changes"], rep["superseded"]) == (1, 0, 1, 1)
        assert rep["items"] == [{"pair": [ids[0], ids[3]], "verdict": "replaces",
                                 "reason": "A new value of the same limit.", "status": "superseded"}]
        assert rep["usage"]["input_tokens"] > 0 and "Cluster hub=" not in srv.requests[0]["messages"][-1]["content"]
        bad = _hela(["judge", "--limit", "-1"], env)
        assert bad.exit_code == 2 and len(srv.requests) == 1


def test_the_judge_command_refuses_a_small_model_and_a_spent_budget(tmp_path):
    from tests.model_server import chat_server

    with chat_server(_judge_reply) as srv:
        env = _judge_env(tmp_path, srv.url)
        _judge_world(env)
        before = (tmp_path / "hela.db").read_bytes()
        for chat, budget, needle in (("smollm2", "24 calls", "in-process GGUF is too small"),
                                     ("agent:claude-code", "off", "agent:claude-code: today's budget is spent")):
            res = _hela(["judge"], {**env, "HELA_MODELS_CHAT": chat, "HELA_MODELS_AGENT_BUDGET": budget})
            assert res.exit_code == 3 and needle in res.output and len(res.output.strip().splitlines()) == 1, res.output
        assert srv.requests == [] and (tmp_path / "hela.db").read_bytes() == before
        # a dry run needs no model
        assert _hela(["judge", "--dry-run"], {**env, "HELA_MODELS_CHAT": "smollm2"}).exit_code == 0


def test_the_docs_judge_commands_run_as_written(tmp_path):
    """docs/models.md's block of `hela judge` commands, each line run as written, against a scripted openai:
    server (the configured chat model)."""
    from pathlib import Path

    from tests.model_server import chat_server

    doc = (Path(__file__).resolve().parent.parent / "docs" / "models.md").read_text(encoding="utf-8")
    section = doc[doc.index("**Run it now: `hela judge`.**"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    lines = [ln.split("  #")[0].strip() for ln in block.splitlines() if ln.strip()]
    assert len(lines) == 3 and all(ln.startswith("hela judge") for ln in lines)
    with chat_server(_judge_reply) as srv:
        env = _judge_env(tmp_path, srv.url)
        _judge_world(env)
        outs = []
        for ln in lines:
            res = _hela(ln.split()[1:], env)
            assert res.exit_code == 0, (ln, res.output)
            outs.append(res.output)
        assert len(srv.requests) == 1     # the dry run calls nothing; the third finds nothing left to ask
    assert "dry run" in outs[0] and "replaces -> superseded" in outs[1] and json.loads(outs[2])["calls"] == 0
