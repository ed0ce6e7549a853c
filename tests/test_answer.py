"""End to end with the real default models: ingest the sample, answer with SmolLM2 (prompt A.2)."""

import pytest

from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.answering.prompts import answer_messages, format_date
from hela_cli.store import Store
from tests.conftest import SAMPLE


@pytest.fixture(scope="module")
def mem(embedder, chat):
    m = Memory(Config(), store=Store.memory(), embedder=embedder, chat=chat)
    m.ingest([SAMPLE / "conversation.json"])
    yield m
    m.close()


def test_answer_from_memory(mem):
    res = mem.ask("What is the name of Jonas's dog?", "demo")
    assert "tofu" in res["answer"].lower()
    assert "D1:4" in [m["source_id"] for m in res["memories"]]
    assert 200 < res["context_tokens"] < 2500
    assert res["timings_ms"]["generate"] > 0


def test_prompt_a2_shape():
    mems = [{"timestamp": 1689379200.0, "speaker": "Maya", "text": "I got the job!"}]
    sem = [{"kind": "trait", "subject": "Maya", "text": "likes maps", "confidence": 0.8},
           {"kind": "fact", "subject": "Maya", "text": "started a job", "date": "1 April 2024"}]
    msgs = answer_messages("What job?", mems, sem)
    body = msgs[1]["content"]
    assert "<EPISODIC MEMORIES>" in body and "[15 July 2023] Maya: I got the job!" in body
    assert "<SEMANTIC KNOWLEDGE>" in body and "- [1 April 2024] Maya: started a job" in body
    assert "<USER CHARACTERISTICS>" in body and "- Maya: likes maps" in body
    assert "confidence" not in body
    assert format_date(1689379200.0) == "15 July 2023"


@pytest.mark.parametrize("flash", [True, False])
def test_chat_flash_attention_setting(make_memory, model_dir_path, flash):
    import llama_cpp

    cfg = Config()
    cfg.models.dir = str(model_dir_path)
    cfg.models.chat_flash_attn = flash
    with make_memory(cfg) as m:
        m.ingest([SAMPLE / "conversation.json"])
        want = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        assert m.chat._llm.context_params.flash_attn_type == want
        assert "tofu" in m.ask("What is the name of Jonas's dog?", "demo")["answer"].lower()


def test_asks_are_logged(make_memory):
    """Answered or learning asks land in the `asks` table (newest first); read-only ones leave it empty, and
    with `answer.log: false` a learning ask's row (its recall id) keeps no text."""
    m = make_memory(Config())
    m.ingest([SAMPLE / "conversation.json"])
    sp = m.store.require_space("demo")
    m.ask("What is the name of Jonas's dog?", "demo", llm=False, learn=False)
    assert m.store.asks(sp.id) == []
    first = m.ask("What is the name of Jonas's dog?", "demo", llm=False, learn=True)
    m.ask("Where did Maya travel?", "demo", llm=False, learn=True)
    log = m.store.asks(sp.id)
    assert [r["question"] for r in log] == ["Where did Maya travel?", "What is the name of Jonas's dog?"]
    assert log[1]["memories"] == [x["id"] for x in first["memories"]] and log[1]["step"] == first["step"] == 1
    assert log[1]["answer"] is None
    m.config.answer.log = False
    third = m.ask("Who is Tofu?", "demo", llm=False, learn=True)
    log = m.store.asks(sp.id)
    assert len(log) == 3 and log[0]["id"] == third["recall_id"] and log[0]["question"] == ""
    m.close()
