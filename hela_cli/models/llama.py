"""The llama-cpp-python implementations of the model protocols: :class:`LlamaEmbedder`, :class:`LlamaChat`,
and :class:`VocabTokenizer` (a GGUF's vocabulary alone, to count tokens). llama-cpp-python is imported
lazily so that commands that need no model stay fast (``OMP_WAIT_POLICY`` is set in
:mod:`hela_cli.models` before it can load).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hela_cli.errors import ModelError
from hela_cli.models.gguf import check_gguf


def _n_threads(n: int) -> int:
    return n if n > 0 else max(1, os.cpu_count() or 1)


def _load_llama(path: Path, **kwargs: Any) -> Any:
    """A ``llama_cpp.Llama``; ``n_threads`` also sets the prompt / batch threads (llama-cpp-python's own
    default for those is every core, whatever ``n_threads`` says: ``models.n_threads`` did not bound
    embedding or prompt processing before)."""
    try:
        from llama_cpp import Llama
    except ImportError as e:  # pragma: no cover
        raise ModelError(f"llama-cpp-python is not installed ({e}); run `make setup`") from None
    if "n_threads" in kwargs:
        kwargs.setdefault("n_threads_batch", kwargs["n_threads"])
    try:
        return Llama(model_path=str(path), verbose=False, **kwargs)
    except (ValueError, RuntimeError, OSError) as e:
        raise ModelError(f"{path}: llama.cpp could not load the model ({e})") from None


class VocabTokenizer:
    """Just a GGUF's vocabulary (no weights, no context) to count tokens cheaply and quietly.

    ``Llama(vocab_only=True)`` would also build a context, and llama.cpp then logs an error-level
    "n_ctx_seq > n_ctx_train (0)" line on stderr of every ``hela ask --no-llm``.
    """

    def __init__(self, path: str | Path):
        path = Path(path)
        check_gguf(path)
        try:
            import llama_cpp
            from llama_cpp._internals import LlamaModel
            from llama_cpp._logger import set_verbose
        except ImportError as e:  # pragma: no cover
            raise ModelError(f"llama-cpp-python is not installed ({e}); run `make setup`") from None
        set_verbose(False)
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        try:
            self._model = LlamaModel(path_model=str(path), params=params, verbose=False)
        except (ValueError, RuntimeError, OSError) as e:
            raise ModelError(f"{path}: llama.cpp could not load the model's vocabulary ({e})") from None

    def count_tokens(self, text: str) -> int:
        return len(self._model.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=True))


class LlamaEmbedder:
    """Sentence embeddings from an encoder GGUF (pooling from the file, L2-normalised).

    Text longer than the context window is truncated *for the embedding only* (the full text is stored).
    A model trained with instruction prefixes (e5: ``"query: "`` / ``"passage: "``) records them in the
    GGUF (``hela.query_prefix`` / ``hela.passage_prefix``, written by :mod:`hela_cli.models.convert`):
    ``embed`` prefixes what is stored, ``embed_query`` what is asked.
    """

    BATCH_TOKENS = 128  # tokens per llama_decode when several texts are embedded (measured: 64-256 similar)

    def __init__(self, path: str | Path, model_id: str | None = None, n_ctx: int = 512, n_threads: int = 0):
        path = Path(path)
        meta = check_gguf(path, prefix="hela.", cache=True)
        arch = meta.get("general.architecture", "?")
        if f"{arch}.pooling_type" not in meta:
            raise ModelError(f"{path}: '{arch}' model has no pooling type, so it is not a sentence-embedding "
                             f"model (did you give a chat model as the embedder?)")
        self.path = path
        self.model_id = model_id or f"file:{path.name}"
        self.n_ctx = n_ctx
        self.query_prefix = str(meta.get("hela.query_prefix") or "")
        self.passage_prefix = str(meta.get("hela.passage_prefix") or "")
        # flash attention: with several turns in one llama_decode the plain attention kernel computes the
        # whole (masked) tokens x tokens matrix and was slower than one turn at a time
        self._params = dict(embedding=True, n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx, flash_attn=True)
        self.n_threads = _n_threads(n_threads)
        self._llm = _load_llama(path, n_threads=self.n_threads, **self._params)
        self._peer: Any = None  # a second context for batches (see _embed_groups), loaded on first need
        self.dim = int(self._llm.n_embd())
        self.batch_tokens = min(self.BATCH_TOKENS, n_ctx)
        self.embed(["hela"])  # a model with corrupt weights fails here, before anything is written

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8", "replace"), add_bos=True))

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """Embed questions (with the model's query prefix, if it has one)."""
        return self._embed([self.query_prefix + t for t in texts])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed memories (with the model's passage prefix, if it has one); see :meth:`_embed`."""
        if self.passage_prefix:
            texts = [self.passage_prefix + t for t in texts]
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a batch: texts sorted by token count and packed several per ``llama_decode`` (each its own
        sequence; llama.cpp pools per sequence), up to ``batch_tokens`` tokens a decode. The vectors are
        the ones one text at a time gives (cosine >= 0.9999 in the tests)."""
        texts = [t if t.strip() else "." for t in texts]
        tokenize = self._llm.tokenize
        sizes = [min(len(tokenize(t.encode("utf-8", "replace"))), self.n_ctx) for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        group: list[int] = []
        used = 0
        groups: list[list[int]] = []
        for i in sorted(range(len(texts)), key=sizes.__getitem__):
            if group and used + sizes[i] > self.batch_tokens:
                groups.append(group)
                group, used = [], 0
            group.append(i)
            used += sizes[i]
        if group:
            groups.append(group)
        self._embed_groups(texts, groups, out)
        norms = np.linalg.norm(out, axis=1)
        if not np.isfinite(out).all() or not norms.all():  # corrupt weights: never store such a vector
            raise ModelError(f"{self.path}: the embedder produced a non-finite or zero vector "
                             f"(corrupt model file?)")
        return out / norms[:, None]

    def _embed_groups(self, texts: list[str], groups: list[list[int]], out: np.ndarray) -> None:
        """Run the decode groups; with two or more groups and two or more threads, half of them on a second
        context in a second thread, each context with half the threads. llama.cpp's threads synchronise
        after every layer of a small decode; two independent decodes keep both cores busy instead:
        LoCoMo turn pairs 46-51 -> 69-74 texts/s, long LongMemEval turns 18.2 -> 24.6 texts/s on 2 cores,
        with less CPU (docs/benchmarks/speed.md "Speed round 4"). The second context is loaded once, on the first batch
        that needs it (a one-text query never does). It opens the model file a second time rather than
        sharing llama-cpp-python's model object (whose internals would have to be driven directly): the
        weights are one memory-mapped file, so their pages are shared; what it adds is ~42 MB of private
        memory, mostly its own compute buffers (``/proc/self/smaps_rollup``: Private_Dirty 61 -> 103 MB)."""
        if len(groups) < 2 or self.n_threads < 2:
            for g in groups:
                self._embed_group(self._llm, texts, g, out)
            return
        import threading

        import llama_cpp

        half = self.n_threads // 2
        if self._peer is None:
            self._peer = _load_llama(self.path, n_threads=half, **self._params)
        mine, theirs = groups[0::2], groups[1::2]
        failure: list[BaseException] = []

        def run_peer() -> None:
            try:
                for g in theirs:
                    self._embed_group(self._peer, texts, g, out)
            except BaseException as e:  # noqa: BLE001 - re-raised on the calling thread
                failure.append(e)

        peer = threading.Thread(target=run_peer, name="hela-embed-peer", daemon=True)
        own = self.n_threads - half
        llama_cpp.llama_set_n_threads(self._llm.ctx, own, own)
        peer.start()
        try:
            for g in mine:
                self._embed_group(self._llm, texts, g, out)
        finally:
            peer.join()
            llama_cpp.llama_set_n_threads(self._llm.ctx, self.n_threads, self.n_threads)
        if failure:
            raise failure[0]

    def _embed_group(self, llm: Any, texts: list[str], group: list[int], out: np.ndarray) -> None:
        vecs = llm.embed([texts[i] for i in group], normalize=False, truncate=True)
        if vecs and vecs[0] and isinstance(vecs[0][0], list):  # per-token output: the model has no pooling
            raise ModelError(f"{self.path}: the model returned per-token vectors; not a sentence embedder")
        out[group] = np.asarray(vecs, dtype=np.float32)


class LlamaChat:
    """A chat GGUF through llama.cpp's chat template; optional JSON-schema-constrained output."""

    def __init__(self, path: str | Path, model_id: str | None = None, n_ctx: int = 4096, n_threads: int = 0,
                 flash_attn: bool = True):
        path = Path(path)
        meta = check_gguf(path, cache=True)
        arch = meta.get("general.architecture", "?")
        if f"{arch}.pooling_type" in meta and arch in ("bert", "nomic-bert", "jina-bert-v2", "t5encoder"):
            raise ModelError(f"{path}: '{arch}' is an embedding model, not a chat model")
        self.path = path
        self.model_id = model_id or f"file:{path.name}"
        self.n_ctx = n_ctx
        self._llm = _load_llama(path, n_ctx=n_ctx, n_threads=_n_threads(n_threads), n_batch=512,
                                flash_attn=flash_attn)

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=True))

    def generate(self, messages: list[dict[str, str]], *, max_tokens: int = 256, temperature: float = 0.0,
                 json_schema: dict[str, Any] | None = None, stop: list[str] | None = None,
                 on_text: Any = None) -> str:
        prompt_tokens = sum(self.count_tokens(m["content"]) + 4 for m in messages)
        if prompt_tokens + max_tokens > self.n_ctx:
            raise ModelError(f"prompt of ~{prompt_tokens} tokens plus {max_tokens} to generate exceeds the "
                             f"chat model's context window of {self.n_ctx} tokens (raise models.chat_ctx or "
                             f"lower retrieval.k)")
        kwargs: dict[str, Any] = {"stop": stop} if stop else {}
        if json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        try:
            if on_text is not None and json_schema is None:  # streaming: the same tokens, piece by piece
                parts = []
                for chunk in self._llm.create_chat_completion(messages=messages, max_tokens=max_tokens,
                                                              temperature=temperature, seed=0, stream=True,
                                                              **kwargs):
                    piece = chunk["choices"][0]["delta"].get("content") or ""
                    if piece:
                        parts.append(piece)
                        on_text(piece)
                return "".join(parts).strip()
            out = self._llm.create_chat_completion(messages=messages, max_tokens=max_tokens,
                                                   temperature=temperature, seed=0, **kwargs)
        except ValueError as e:
            raise ModelError(f"generation failed: {e}") from None
        return (out["choices"][0]["message"].get("content") or "").strip()
