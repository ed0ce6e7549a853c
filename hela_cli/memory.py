"""``Memory``: the library facade. One store, lazily loaded models, the operations the CLI exposes.

    from hela_cli.memory import Memory
    from hela_cli.config import load_config

    mem = Memory(load_config(overrides={"db": "my.db"}))
    mem.ingest(["chat.jsonl"], space="alice")
    result = mem.ask("Where does Alice work?", space="alice")
    print(result["answer"])
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

from hela_cli.config import Config
from hela_cli.errors import HelaError
from hela_cli.ingest import ingest_conversations, parse_all
from hela_cli.models import ChatModel, Embedder, LlamaChat, LlamaEmbedder, resolve_model
from hela_cli.paths import default_db_path, model_dir
from hela_cli.prompts import answer_messages
from hela_cli.retrieval import Retrieval, retrieve
from hela_cli.store import Store


class Memory:
    def __init__(self, config: Config, store: Store | None = None, embedder: Embedder | None = None,
                 chat: ChatModel | None = None):
        self.config = config
        self.store = store if store is not None else Store(config.db or default_db_path())
        self._embedder = embedder
        self._chat = chat
        self._tokenizer: Any = None

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---------------------------------------------------------------- models (lazy)
    @property
    def model_dir(self) -> Path:
        return model_dir(self.config.models.dir)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            path, mid = resolve_model(self.config.models.embedder, self.model_dir, "embedder")
            self._embedder = LlamaEmbedder(path, mid, n_ctx=self.config.models.embed_ctx,
                                           n_threads=self.config.models.n_threads)
        return self._embedder

    @property
    def chat(self) -> ChatModel:
        if self._chat is None:
            path, mid = resolve_model(self.config.models.chat, self.model_dir, "chat")
            self._chat = LlamaChat(path, mid, n_ctx=self.config.models.chat_ctx,
                                   n_threads=self.config.models.n_threads)
        return self._chat

    def count_tokens(self, text: str) -> int:
        """Tokens as the chat model counts them (its vocabulary only is loaded when no chat is needed)."""
        if self._chat is not None:
            return self._chat.count_tokens(text)
        if self._tokenizer is None:
            from hela_cli.models import check_gguf
            from llama_cpp import Llama

            path, _ = resolve_model(self.config.models.chat, self.model_dir, "chat")
            check_gguf(path)
            self._tokenizer = Llama(model_path=str(path), vocab_only=True, verbose=False)
        return len(self._tokenizer.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=True))

    # ---------------------------------------------------------------- operations
    def ingest(self, paths: Sequence[str | Path], fmt: str = "auto", space: str | None = None,
               progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        convs = parse_all(paths, fmt)  # everything validated before any write
        if not any(c.turns for c in convs):
            raise HelaError(f"{', '.join(map(str, paths))}: no turns to ingest")
        return ingest_conversations(self.store, self.embedder, convs, self.config, space, progress)

    def _check_embedder(self) -> None:
        info = self.store.embedder_info()
        if info is not None:
            self.store.bind_embedder(self.embedder.model_id, self.embedder.dim)

    def retrieve(self, question: str, space: str, *, now: float | None = None,
                 learn: bool | None = None) -> Retrieval:
        if not question.strip():
            raise HelaError("the question is empty")
        sp = self.store.require_space(space)
        self._check_embedder()
        return retrieve(self.store, sp, self.embedder, question, self.config, now=now, learn=learn)

    def ask(self, question: str, space: str, *, now: float | None = None, llm: bool = True,
            learn: bool | None = None) -> dict[str, Any]:
        """Retrieve (and learn), then answer with the chat model using prompt A.2.

        Returns the stable ``hela ask --json`` object.
        """
        t0 = time.perf_counter()
        res = self.retrieve(question, space, now=now, learn=learn)
        messages = answer_messages(question, res.memories, res.semantic)
        context = "\n".join(m["content"] for m in messages)
        answer = None
        timings = dict(res.timings_ms)
        if llm:
            t1 = time.perf_counter()
            a = self.config.answer
            answer = self.chat.generate(messages, max_tokens=a.max_tokens, temperature=a.temperature)
            timings["generate"] = (time.perf_counter() - t1) * 1000
        tokens = self.count_tokens(context)
        timings["total"] = (time.perf_counter() - t0) * 1000
        return {
            "question": question,
            "space": space,
            "answer": answer,
            "memories": res.memories,
            "semantic": res.semantic,
            "context": context,
            "context_tokens": tokens,
            "query_keywords": res.query_keywords,
            "now": res.now,
            "step": res.step,
            "timings_ms": {k: round(v, 2) for k, v in timings.items()},
        }
