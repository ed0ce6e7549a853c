"""Batched embedding (several texts per llama_decode) gives the vectors of one text at a time."""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SAMPLE

REFERENCE = Path(__file__).parent / "data" / "minilm_reference.json"


@pytest.fixture(scope="module")
def single(embedder):
    """The pre-batching path: llama-cpp-python's embed, one text per call, plain attention kernel."""
    from llama_cpp import Llama

    llm = Llama(model_path=str(embedder.path), verbose=False, embedding=True, n_ctx=512, n_batch=512,
                n_ubatch=512, n_threads=2)

    def embed(text: str) -> np.ndarray:
        return np.asarray(llm.embed(text if text.strip() else ".", normalize=True, truncate=True), np.float32)

    return embed


def _texts() -> list[str]:
    conv = json.loads((SAMPLE / "conversation.json").read_text())[0]
    turns = [t["text"] for k, v in conv["conversation"].items() if k.startswith("session_") and isinstance(v, list)
             for t in v]
    long = " ".join(turns)  # far over the 512-token context: truncated for the embedding
    return [turns[0], "", long[:3000], *turns[1:25], "   ", long, turns[1] + "\n" + turns[2]]


def test_batched_vectors_equal_one_at_a_time(embedder, single):
    texts = _texts()
    got = embedder.embed(texts)
    assert got.shape == (len(texts), embedder.dim) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    want = np.stack([single(t) for t in texts])
    cos = (got * want).sum(axis=1)
    assert cos.min() >= 0.999, (cos.argmin(), cos.min())  # row by row: the input order survives the sort
    assert float(got[0] @ got[3]) < 0.99  # distinct turns, distinct vectors


def test_batch_composition_does_not_change_a_vector(embedder):
    texts = _texts()
    alone = embedder.embed([texts[5]])[0]
    for batch in (texts, texts[::-1], texts[3:9]):
        vec = embedder.embed(batch)[batch.index(texts[5])]
        assert float(vec @ alone) >= 0.999


def test_batched_vectors_match_sentence_transformers(embedder):
    ref = json.loads(REFERENCE.read_text())
    got = embedder.embed([s["text"] for s in ref["sentences"]])
    want = np.asarray([s["embedding"] for s in ref["sentences"]], dtype=np.float32)
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    assert ((got * want).sum(axis=1)).min() >= 0.999


def test_empty_batch(embedder):
    assert embedder.embed([]).shape == (0, embedder.dim)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_two_contexts_give_the_vectors_of_one(embedder, single, threads):
    """With two or more threads a batch of several decodes runs half on a second context in a second
    thread; the vectors, their order and the errors are those of one context."""
    from hela_cli.models import LlamaEmbedder

    emb = LlamaEmbedder(embedder.path, n_threads=threads)
    texts = _texts() * 3
    got = emb.embed(texts)
    assert (emb._peer is not None) == (threads >= 2)   # loaded by the first batch of several decodes
    want = np.stack([single(t) for t in texts])
    assert (got * want).sum(axis=1).min() >= 0.999
    assert float(emb.embed_query([texts[4]])[0] @ got[4]) >= 0.999   # one text: the main context alone


def test_a_failure_on_the_second_context_is_raised(embedder, monkeypatch):
    from hela_cli.models import LlamaEmbedder

    emb = LlamaEmbedder(embedder.path, n_threads=2)
    emb.embed(_texts())                      # the second context exists now
    monkeypatch.setattr(emb._peer, "embed", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("peer broke")))
    with pytest.raises(RuntimeError, match="peer broke"):
        emb.embed(_texts())
    monkeypatch.undo()
    assert emb.embed(_texts()).shape[0] == len(_texts())   # both contexts usable afterwards
