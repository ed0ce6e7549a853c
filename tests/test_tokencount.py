"""The Python token counter (cached vocabulary) counts exactly what llama.cpp's tokenizer counts."""

import json

import pytest

from hela_cli.models import DEFAULT_MODELS, VocabTokenizer
from hela_cli.models.tokencount import bpe_token_counter
from tests.conftest import SAMPLE


@pytest.fixture()
def chat_gguf(model_dir_path, tmp_path, monkeypatch):
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    return model_dir_path / DEFAULT_MODELS["smollm2"].filename


def _texts() -> list[str]:
    conv = json.loads((SAMPLE / "conversation.json").read_text())[0]["conversation"]
    lines = [f"{t['speaker']}: {t['text']}" for k, v in conv.items() if k.startswith("session_")
             and isinstance(v, list) for t in v]
    return [*lines, "\n".join(lines), "a  b   c\n\n\nd\t\te ", "12345 1,000.50 ٣٤٥ ½ 2023-05-08", "",
            "naïve café 😀🎉 日本語のテキスト", "<|im_start|>user\nhi<|im_end|>\n", "it's they'll I'M O'Neil",
            "  leading and trailing  ", "\n", "Ünïcödé\u00a0nbsp\u200bzero-width", "x" * 300]


def test_counts_equal_llama_cpp(chat_gguf):
    counter = bpe_token_counter(chat_gguf)
    assert counter is not None  # SmolLM2: byte-level BPE, smollm pre-tokenizer
    reference = VocabTokenizer(chat_gguf)
    got = [counter.count_tokens(t) for t in _texts()]
    want = [reference.count_tokens(t) for t in _texts()]
    assert got == want
    assert sum(got) > 1000


def test_vocabulary_is_cached_and_reused(chat_gguf, tmp_path):
    first = bpe_token_counter(chat_gguf)
    cached = list((tmp_path / "home" / "cache").glob("*.tokenizer.json"))
    assert len(cached) == 1 and (cached[0].parent.stat().st_mode & 0o077) == 0  # a user-only dir
    assert bpe_token_counter(chat_gguf).count_tokens("Caroline went to the LGBTQ support group.") == \
        first.count_tokens("Caroline went to the LGBTQ support group.")
    cached[0].write_text("{not json")  # a damaged cache is rebuilt, not trusted
    assert bpe_token_counter(chat_gguf).count_tokens("hello world") == 2
    assert json.loads(cached[0].read_text())["pre"] == "smollm"


def test_other_tokenizers_fall_back(model_dir_path, tmp_path, monkeypatch):
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    assert bpe_token_counter(model_dir_path / DEFAULT_MODELS["minilm"].filename) is None  # WordPiece


def test_ask_without_llm_counts_tokens_without_llama_cpp(embedder, chat, model_dir_path, tmp_path, monkeypatch):
    import hela_cli.models
    from hela_cli.config import Config
    from hela_cli.memory import Memory
    from hela_cli.store import Store

    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    cfg = Config()
    cfg.models.dir = str(model_dir_path)
    with Memory(cfg, store=Store.memory(), embedder=embedder) as mem:
        mem.ingest([SAMPLE / "conversation.json"])

        def no_vocab(*a, **k):
            raise AssertionError("ask --no-llm loaded the chat vocabulary through llama.cpp")

        monkeypatch.setattr(hela_cli.models, "VocabTokenizer", no_vocab)
        res = mem.ask("What did Melanie paint recently?", "demo", llm=False, learn=False)
    assert res["answer"] is None and res["memories"]
    assert res["context_tokens"] == chat.count_tokens(res["context"]) > 100
