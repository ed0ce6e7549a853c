"""Embedders with instruction prefixes (e5: "query: " / "passage: "): questions take the query path."""

import numpy as np

from hela_cli.config import Config
from hela_cli.models import embed_queries
from hela_cli.mechanics.retrieval import retrieve
from hela_cli.testing import HashEmbedder
from tests.conftest import SAMPLE


class Prefixed(HashEmbedder):
    """Memories embedded as "passage: ...", questions as "query: ..." (records what it was asked)."""

    def __init__(self):
        self.queries: list[str] = []
        self.passages: list[str] = []

    def embed(self, texts):
        self.passages.extend(texts)
        return super().embed(["passage: " + t for t in texts])

    def embed_query(self, texts):
        self.queries.extend(texts)
        return super().embed(["query: " + t for t in texts])


def test_embed_queries_prefers_the_query_path():
    plain, pre = HashEmbedder(), Prefixed()
    assert np.array_equal(embed_queries(plain, ["where"]), plain.embed(["where"]))
    assert np.array_equal(embed_queries(pre, ["where"]), HashEmbedder().embed(["query: where"]))
    assert pre.queries == ["where"] and pre.passages == []


def test_retrieve_embeds_the_question_as_a_query(make_memory):
    emb = Prefixed()
    mem = make_memory(Config(), embedder=emb, ingest=[SAMPLE / "conversation.json"])
    n_passages = len(emb.passages)
    st = mem.store
    res = retrieve(st, st.require_space("demo"), emb, "Where did Caroline go?", mem.config, learn=False)
    assert res.memories
    assert emb.queries == ["Where did Caroline go?"] and len(emb.passages) == n_passages == 83
