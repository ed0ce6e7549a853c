"""OpenAI-compatible endpoints as models (hela_cli.models.endpoints): a real llama-cpp-python server on
127.0.0.1 serving the default models, and a tiny HTTP server returning each fault."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.mechanics.consolidate import distill_cluster, distill_schema, salvage_json
from hela_cli.models.endpoints import (OpenAIChat, OpenAIEmbedder, estimate_tokens, is_loopback, parse_ref)
from hela_cli.errors import InputError, ModelError
from hela_cli.answering.prompts import ANSWER_STOP, answer_messages, clean_answer
from tests.conftest import SAMPLE
from tests.model_server import SERVER_KEY, dead_url, fault_server, llama_server  # noqa: F401 (fixtures)
from tests.support import hub_space

runner = CliRunner()

MEMORIES = [
    {"id": 1, "timestamp": 1683540000.0, "speaker": "Caroline", "text": "I adopted a greyhound called Tofu."},
    {"id": 2, "timestamp": 1683543600.0, "speaker": "Melanie", "text": "I went hiking in the Dolomites."},
]


def cli(*args, env=None):
    return runner.invoke(app, list(args), env=env)


# ----------------------------------------------------------------------------------- refs (pure)
def test_refs_and_the_remote_rule():
    ep = parse_ref("openai:llama3.2@http://127.0.0.1:11434/v1/")
    assert (ep.model, ep.base_url, ep.root, ep.loopback) == ("llama3.2", "http://127.0.0.1:11434/v1",
                                                             "http://127.0.0.1:11434", True)
    assert parse_ref("openai:org/model@name@http://localhost:8080/v1").model == "org/model@name"
    for bad in ("openai:llama3", "openai:@http://x/v1", "openai:m@ftp://x/v1", "openai:m@http://u:p@x/v1"):
        with pytest.raises(InputError):
            parse_ref(bad)
    assert is_loopback("127.0.0.2") and is_loopback("[::1]") and is_loopback("localhost")
    assert not is_loopback("api.openai.com") and not is_loopback("192.168.1.10")
    with pytest.raises(InputError, match="models.allow_remote: api.example.com"):
        OpenAIChat("openai:gpt@https://api.example.com/v1")
    OpenAIChat("openai:gpt@https://api.example.com/v1", allow_remote="other.org, API.example.com")  # named: ok
    assert estimate_tokens("hello world") == 4 and estimate_tokens("") == 0


def test_a_remote_endpoint_is_refused_by_the_cli_before_anything_is_sent(cli_env):
    res = cli("ask", "Where?", "--space", "demo", env={"HELA_MODELS_CHAT": "openai:gpt-4o-mini@https://api.openai.com/v1"})
    assert res.exit_code == 2
    assert "api.openai.com' is not this machine" in res.output and "models.allow_remote" in res.output
    assert not (cli_env / "hela.db").exists()


# ----------------------------------------------------------------------------------- faithful plumbing
def test_same_answer_and_vectors_in_process_and_through_the_server(llama_server, chat, embedder, monkeypatch):
    monkeypatch.setenv("HELA_API_KEY", SERVER_KEY)
    # llama-cpp-python's server applies a repeat penalty of 1.1 by default; in-process hela applies none
    served = OpenAIChat(f"openai:smollm2@{llama_server}", request_extra='{"repeat_penalty": 1.0}')
    messages = answer_messages("What is the name of Caroline's dog?", MEMORIES, [])
    local = chat.generate(messages, max_tokens=32, temperature=0.0, stop=ANSWER_STOP)
    remote = served.generate(messages, max_tokens=32, temperature=0.0, stop=ANSWER_STOP)
    assert remote == local and clean_answer(remote, MEMORIES) == clean_answer(local, MEMORIES)
    pieces: list[str] = []
    streamed = served.generate(messages, max_tokens=32, temperature=0.0, stop=ANSWER_STOP, on_text=pieces.append)
    assert streamed == local and len(pieces) > 1 and "".join(pieces).strip() == local
    # the server's own tokenizer counts the context
    text = messages[-1]["content"]
    assert served.count_tokens(text) == chat.count_tokens(text) and served._counter.method == "extras"

    emb = OpenAIEmbedder(f"openai:minilm@{llama_server}")
    texts = ["I adopted a greyhound called Tofu.", "hiking", "Wir gingen in den Bergen wandern."]
    assert emb.dim == embedder.dim == 384 and emb.model_id == "openai:minilm"
    cos = (emb.embed(texts) * embedder.embed(texts)).sum(axis=1)
    assert np.all(cos > 0.9999), cos


def test_distillation_through_the_server_asks_for_json(llama_server, make_memory, tmp_path, monkeypatch):
    monkeypatch.setenv("HELA_API_KEY", SERVER_KEY)
    served = OpenAIChat(f"openai:smollm2@{llama_server}")
    turns = {1: {"id": 1, "ts": 1683540000.0, "speaker": "Caroline", "text": "I adopted a greyhound called Tofu."},
             2: {"id": 2, "ts": 1683543600.0, "speaker": "Melanie", "text": "Tofu is such a calm dog!"}}
    dist = distill_cluster(served, turns, hub=1, max_tokens=200)
    # llama-cpp-python refuses OpenAI's json_schema form and takes its own json_object + schema dialect
    assert served._format == "schema"
    assert salvage_json(dist.raw[0])[0] is not None  # constrained output: JSON
    assert distill_schema([1, 2], 200)["required"] == ["traits", "facts", "knowledge"]


# ----------------------------------------------------------------------------------- CLI with endpoints
def test_cli_ingest_ask_reembed_through_the_server(cli_env, llama_server, monkeypatch):
    monkeypatch.setenv("HELA_API_KEY", SERVER_KEY)
    served_emb, served_chat = f"openai:minilm@{llama_server}", f"openai:smollm2@{llama_server}"
    monkeypatch.setenv("HELA_MODELS_EMBEDDER", served_emb)
    monkeypatch.setenv("HELA_MODELS_CHAT", served_chat)
    res = cli("ingest", str(SAMPLE / "conversation.json"), "--json")
    assert res.exit_code == 0, res.output
    models = json.loads(cli("models", "list", "--json").stdout)
    assert models["database_embedder"] == {"model": "openai:minilm", "dim": 384}
    assert [(e["kind"], e["answers"], e["model_listed"]) for e in models["endpoints"]] == [
        ("embedder", True, True), ("chat", True, True)]
    out = json.loads(cli("ask", "What is the name of Jonas's dog?", "--space", "demo", "--json").stdout)
    assert out["answer"] and out["context_tokens"] > 0
    # move the file to the in-process GGUF embedder and back
    monkeypatch.setenv("HELA_MODELS_EMBEDDER", "minilm")
    assert cli("reembed", "--json").exit_code == 0
    assert json.loads(cli("models", "list", "--json").stdout)["database_embedder"]["model"].startswith("minilm:")
    res = cli("reembed", "--model", served_emb, "--json")
    assert res.exit_code == 0, res.output
    monkeypatch.setenv("HELA_MODELS_EMBEDDER", served_emb)
    assert json.loads(cli("models", "list", "--json").stdout)["database_embedder"]["model"] == "openai:minilm"
    # the key is nowhere in the database
    assert SERVER_KEY.encode() not in (cli_env / "hela.db").read_bytes()


def test_missing_or_wrong_key_is_a_configuration_error(cli_env, llama_server, monkeypatch):
    monkeypatch.delenv("HELA_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("HELA_MODELS_EMBEDDER", f"openai:minilm@{llama_server}")
    res = cli("ingest", str(SAMPLE / "conversation.json"))
    assert res.exit_code == 2 and "HTTP 401" in res.output and f"openai:minilm@{llama_server}" in res.output
    assert len(res.output.strip().splitlines()) == 1
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)  # the fallback variable
    assert cli("ingest", str(SAMPLE / "conversation.json")).exit_code == 0


# ----------------------------------------------------------------------------------- faults
@pytest.fixture()
def demo_db(cli_env, monkeypatch):
    """The sample conversation ingested with the in-process embedder; the key set."""
    assert cli("ingest", str(SAMPLE / "conversation.json")).exit_code == 0
    monkeypatch.setenv("HELA_API_KEY", SERVER_KEY)
    return cli_env / "hela.db"


def _state(db):
    con = sqlite3.connect(db)
    try:
        return (con.execute("SELECT count(*) FROM asks").fetchone()[0],
                con.execute("SELECT step FROM spaces").fetchall(),
                con.execute("SELECT sum(access_count) FROM nodes").fetchone()[0])
    finally:
        con.close()


@pytest.mark.parametrize("fault,code,words", [
    ("down", 3, "cannot connect (is the server running?)"),
    ("slow", 3, "no reply within 0.5 s (models.timeout)"),
    ("500", 3, "HTTP 500: model crashed"),
    ("400", 3, "HTTP 400: bad request"),
    ("html", 3, "is not JSON (HTTP 200, text/html"),
    ("echo401", 2, "HTTP 401: invalid key: Bearer *** (check HELA_API_KEY"),
])
def test_a_failed_answer_is_one_line_and_writes_nothing(demo_db, fault_server, monkeypatch, fault, code, words):
    base = dead_url() if fault == "down" else f"{fault_server}/{fault}/v1"
    monkeypatch.setenv("HELA_MODELS_CHAT", f"openai:smollm2@{base}")
    monkeypatch.setenv("HELA_MODELS_TIMEOUT", "0.5")
    monkeypatch.setenv("HELA_DEBUG", "1")  # a traceback would escape: none may
    before = _state(demo_db)
    for mode in ([], ["--json"]):  # streamed (plain) and whole (--json) answers
        res = cli("ask", "What is the name of Jonas's dog?", "--space", "demo", *mode)
        assert res.exit_code == code, res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: openai:smollm2@{base}: ")
        assert words in res.output
        assert SERVER_KEY not in res.output
        assert _state(demo_db) == before  # no ask logged, no learning step, no access counted
    assert SERVER_KEY.encode() not in demo_db.read_bytes()


def test_an_embedder_of_another_dimension_is_refused(demo_db, fault_server, monkeypatch):
    monkeypatch.setenv("HELA_MODELS_EMBEDDER", f"openai:tiny@{fault_server}/dim8/v1")
    res = cli("ask", "Where?", "--space", "demo", "--no-llm")
    assert res.exit_code == 4 and "'openai:tiny' (8-d)" in res.output and "hela reembed" in res.output


@pytest.mark.parametrize("fault", ["500", "html"])
def test_a_failed_distillation_writes_no_record(make_memory, tmp_path, fault_server, fault):
    chat = OpenAIChat(f"openai:m@{fault_server}/{fault}/v1", timeout=5)
    mem, ids = hub_space(make_memory, tmp_path, chat)
    rep = mem.consolidate("t")
    assert rep["failed"] == 1 and rep["distilled"] == 0
    assert f"openai:m@{fault_server}/{fault}/v1" in rep["hubs"][0]["status"]
    assert mem.store.count_semantic(mem.store.require_space("t").id) == 0


def test_library_faults_are_model_errors(fault_server):
    with pytest.raises(ModelError, match="cannot connect"):
        OpenAIEmbedder(f"openai:e@{dead_url()}")
    with pytest.raises(ModelError, match="HTTP 500"):
        OpenAIEmbedder(f"openai:e@{fault_server}/500/v1")
    assert Config().models.timeout == 120.0
    # a server without a tokenizer route: the high estimate (one token per 3 UTF-8 bytes)
    chat = OpenAIChat(f"openai:m@{fault_server}/500/v1")
    assert chat.count_tokens("x" * 30) == 10 and chat._counter.method == "estimate" and not chat._counter.exact
    with pytest.raises(ModelError, match="cannot connect"):
        OpenAIChat(f"openai:m@{dead_url()}").count_tokens("hello")


# ----------------------------------------------------------------------------------- bench --reader
def test_bench_reader_answers_with_the_given_model(cli_env, llama_server, monkeypatch, tmp_path):
    from tests.support import MINI, QA_A, SESSIONS_A, tiny_locomo_sample

    monkeypatch.setenv("HELA_API_KEY", SERVER_KEY)
    ref = f"openai:smollm2@{llama_server}"
    locomo = tmp_path / "tiny_locomo.json"
    locomo.write_text(json.dumps([tiny_locomo_sample("pair-a", ("Priya", "Tomas"), SESSIONS_A, QA_A)]))
    rec = tmp_path / "qa.jsonl"
    res = cli("bench", "locomo", str(locomo), "--limit", "2", "--reader", ref, "--records", str(rec), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["models"]["chat"] == ref
    answers = [json.loads(line) for line in rec.read_text().splitlines()]
    assert answers and all("prediction" in a for a in answers) and any(a["prediction"] for a in answers)
    res = cli("bench", "longmemeval", str(MINI), "--limit", "1", "--reader", ref, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["models"]["chat"] == ref
    bad = cli("bench", "locomo", str(locomo), "--reader", "client")
    assert bad.exit_code == 2 and "only inside `hela mcp`" in bad.output
    down = cli("bench", "locomo", str(locomo), "--limit", "1", "--reader", f"openai:smollm2@{dead_url()}")
    assert down.exit_code == 3 and "cannot connect" in down.output and SERVER_KEY not in down.output
