"""One direction of flow (pure logic, ``hash_embedder``): ``Memory.ask`` answers and learns and nothing else;
``Memory.retrieve`` takes ``k`` without touching the configuration; one ``streaming.answer``; the public
``Memory.space`` / ``Memory.spaces`` that the MCP server uses instead of private names."""

from __future__ import annotations

import pytest

from hela_cli.config import Config
from hela_cli.errors import StoreError
from hela_cli.memory import Memory
from hela_cli.answering.prompts import ANSWER_STOP, answer_messages
from hela_cli.answering.answer import answer
from tests.conftest import SAMPLE


class EchoChat:
    """A chat model that records its calls and replies with a fixed text."""

    model_id, n_ctx = "echo", 4096

    def __init__(self, reply: str = "Answer: Tofu\nQuestion: and the cat?"):
        self.reply = reply
        self.calls: list[dict] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def generate(self, messages, **kwargs):
        self.calls.append(kwargs)
        return self.reply


def test_answer_generates_with_the_answer_settings_then_cleans():
    chat = EchoChat()
    cfg = Config()
    cfg.answer.max_tokens = 17
    mems = [{"timestamp": 1689379200.0, "speaker": "Jonas", "text": "My dog is Tofu."}]
    assert answer(chat, answer_messages("Dog?", mems, []), mems, cfg.answer) == "Tofu"
    assert chat.calls == [{"max_tokens": 17, "temperature": 0.0, "stop": ANSWER_STOP}]


def test_ask_answers_and_learns_but_never_consolidates(make_memory, hash_embedder, monkeypatch):
    chat = EchoChat()
    mem = make_memory(embedder=hash_embedder, chat=chat, ingest=[SAMPLE / "conversation.json"],
                      consolidation__auto=True, consolidation__auto_every=1)
    monkeypatch.setattr(Memory, "consolidate_if_due", lambda *a, **k: pytest.fail("ask consolidated"))
    monkeypatch.setattr(Memory, "consolidate", lambda *a, **k: pytest.fail("ask consolidated"))
    step = mem.space("demo").step
    res = mem.ask("What is the name of Jonas's dog?", "demo")
    assert res["answer"] == "Tofu" and res["consolidation"] is None
    assert res["step"] == step + 1 == mem.space("demo").step  # learnt once
    assert list(res["timings_ms"]) == ["embed", "candidates", "spreading", "total", "generate", "learn"]
    assert mem.ask("What is the name of Jonas's dog?", "demo", learn=False)["step"] == step + 1


def test_retrieve_and_ask_take_k_without_changing_the_configuration(make_memory, hash_embedder):
    mem = make_memory(embedder=hash_embedder, chat=EchoChat(), ingest=[SAMPLE / "conversation.json"],
                      retrieval__m=0)
    base = [m["id"] for m in mem.retrieve("Jonas dog Tofu", "demo", learn=False).memories]
    two = mem.retrieve("Jonas dog Tofu", "demo", k=2, learn=False).memories
    assert [m["id"] for m in two] == base[:2] and len(base) > 2
    assert len(mem.ask("Jonas dog Tofu", "demo", k=3, learn=False)["memories"]) == 3
    assert mem.config.retrieval.k == Config().retrieval.k


def test_space_and_spaces_create_nothing(tmp_path, hash_embedder):
    db = tmp_path / "none.db"
    mem = Memory(Config(db=str(db)), embedder=hash_embedder)
    assert mem.spaces() == []
    with pytest.raises(StoreError):
        mem.space("demo")
    assert not db.exists()
    mem.add("demo", "Tofu is Jonas's greyhound.")
    assert [r["name"] for r in mem.spaces()] == ["demo"] and mem.space("demo").name == "demo"
    mem.close()
