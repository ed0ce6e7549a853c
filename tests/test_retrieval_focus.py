"""Retrieval round 4 (issue 47): a second, focused dense probe (the question's focus words) and more spreading
slots for a question that asks for a list. Pure logic on the hash embedder (no model file)."""

import numpy as np
import pytest

from hela_cli.mechanics.dynamics import fuse_probes
from hela_cli.text.question_focus import asks_for_list, focus_text


@pytest.mark.parametrize("question, names, expected", [
    ("What books has Tim read?", {"tim"}, "books read"),
    ("What martial arts has John done?", {"john"}, "martial arts"),
    ("What type of pottery did Melanie mention?", {"melanie"}, "pottery"),
    ("Which cities has John been to?", {"john"}, "cities"),
    ("What are the names of John's children?", {"john"}, "children"),
    ("What did they do?", set(), ""),
])
def test_focus_text(question, names, expected):
    assert focus_text(question, names) == expected


@pytest.mark.parametrize("question, expected", [
    ("What books has Tim read?", True),
    ("Which US cities does John mention visiting?", True),
    ("What people has Maria met while volunteering?", True),
    ("What kinds of art does Caroline make?", True),
    ("What has Melanie painted?", True),
    ("How many games has John won?", True),
    ("What is Caroline's identity?", False),
    ("What did Melanie paint recently?", False),
    ("What does Melanie do to destress?", False),
    ("When did John go to Chicago?", False),
    ("Where has Maria made friends?", False),
])
def test_asks_for_list(question, expected):
    assert asks_for_list(question) is expected


def test_fuse_probes():
    assert fuse_probes(0.3, 0.8, 0.0) == 0.3                     # off: the question's cosine (the paper)
    assert fuse_probes(0.3, 0.8, 0.5) == pytest.approx(0.55)
    assert fuse_probes(0.3, 0.8, 0.0, use_max=True) == 0.8
    assert fuse_probes(0.9, 0.8, 0.5, use_max=True) == 0.9


def _cos(mem, text, nid):
    """The cosine of a text's vector with a stored memory's vector."""
    sp = mem.store.require_space("chat")
    vec = mem.store.node_vectors([nid], sp.id)[nid]
    return float(np.dot(mem.embedder.embed([text])[0], vec))


def test_the_focused_probe_ranks_the_topic_above_the_questions_frame(make_memory, hash_embedder):
    """"What type of pottery did Melanie mention?": a turn that is only about pottery is nearer the focus
    ("pottery") than the question, whose frame ("type", "mention", the name) another turn shares."""
    with make_memory(embedder=hash_embedder, retrieval__spreading=False, retrieval__alpha=0.0, retrieval__k=2,
                     retrieval__m=0, retrieval__replies=0, ingest__context_window=0) as mem:
        mem.add("chat", "Caroline went to the park.", speaker="Caroline", session="s1", time="2024-05-01T10:00:00Z")
        pottery = mem.add("chat", "Pottery!", session="s1", time="2024-05-02T10:00:00Z")
        frame = mem.add("chat", "The type of paint was mentioned by Melanie yesterday at the studio.",
                        speaker="Melanie", session="s1", time="2024-05-03T10:00:00Z")
        q = "What type of pottery did Melanie mention?"
        off = mem.retrieve(q, "chat", learn=False).memories
        assert [m["id"] for m in off] == [frame, pottery]
        for key, value in (("focus_max", True), ("focus_weight", 0.5)):
            setattr(mem.config.retrieval, key, value)
            on = mem.retrieve(q, "chat", learn=False).memories
            assert [m["id"] for m in on] == [pottery, frame], key
            cq, cf = _cos(mem, q, pottery), _cos(mem, "pottery", pottery)
            assert cf > cq
            want = fuse_probes(cq, cf, mem.config.retrieval.focus_weight, mem.config.retrieval.focus_max)
            assert on[0]["cos"] == pytest.approx(want, abs=1e-5)
            setattr(mem.config.retrieval, key, type(value)())   # back off for the next form


def _list_chat(mem):
    rows = [("s1", "Pancakes with syrup this morning."),
            ("s1", "Books, books: I read fantasy books all week and read more books."),
            ("s1", "Sunny weather outside here."),
            ("s2", "Books on the shelf."),
            ("s3", "Heavy books."),
            ("s2", "Books are heavy to carry.")]
    return [mem.add("chat", text, session=s, time=f"2024-05-0{i + 1}T10:00:00Z") for i, (s, text) in enumerate(rows)]


def test_a_list_question_gets_more_spreading_slots_within_the_budget(make_memory, hash_embedder):
    with make_memory(embedder=hash_embedder, retrieval__k=3, retrieval__m=1, retrieval__replies=0,
                     ingest__context_window=0) as mem:
        ids = _list_chat(mem)
        q = "What books has Tim read?"
        assert asks_for_list(q)
        off = mem.retrieve(q, "chat", learn=False).memories
        mem.config.retrieval.list_slots = 2
        on = mem.retrieve(q, "chat", learn=False).memories
        # the best match's two session neighbours come in through spreading: one slot before, both now
        spread = {ids[0], ids[2]}
        assert len({m["id"] for m in off} & spread) == 1
        assert {m["id"] for m in on} >= spread
        assert len(on) == len(off) == 4                            # k + m unchanged
        assert on[0]["id"] == off[0]["id"] == ids[1]
        # a question that does not ask for a list keeps Eq.5's k and m
        single = "What did Tim read about books?"
        assert not asks_for_list(single)
        mem.config.retrieval.list_slots = 0
        a = [m["id"] for m in mem.retrieve(single, "chat", learn=False).memories]
        mem.config.retrieval.list_slots = 2
        assert [m["id"] for m in mem.retrieve(single, "chat", learn=False).memories] == a


def test_soft_keyword_match():
    from hela_cli.mechanics.dynamics import soft_keyword_match

    assert soft_keyword_match(1, [0.7, 0.3], 3, 0.6) == pytest.approx((1 + 0.7) / 3)   # 0.3 is below tau
    assert soft_keyword_match(2, [], 2, 0.6) == 1.0
    assert soft_keyword_match(0, [0.9], 0, 0.6) == 0.0


class _Synonyms:
    """The hash embedder, except that a keyword embedded alone as one of ``ALIAS`` gets its alias's vector
    ("martial" is "kickbox"): a word-level semantic match the hash embedder alone does not have."""

    ALIAS = {"martial": "kickbox"}

    def __init__(self):
        from hela_cli.testing import HashEmbedder

        self.inner, self.calls = HashEmbedder(), []
        self.model_id, self.dim, self.n_ctx = "test:synonyms", self.inner.dim, self.inner.n_ctx

    def embed(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed([self.ALIAS.get(t, t) for t in texts])


def test_a_keyword_said_in_other_words_counts_with_soft_keywords(make_memory):
    emb = _Synonyms()
    with make_memory(embedder=emb, retrieval__spreading=False, retrieval__replies=0,
                     ingest__context_window=0) as mem:
        kick = mem.add("chat", "I'm doing kickboxing these days.", session="s1", time="2024-05-01T10:00:00Z")
        mem.add("chat", "We visited the museum.", session="s1", time="2024-05-02T10:00:00Z")
        q = "What martial arts has Jon done?"

        def keyword_of(nid):
            return next(m["keyword"] for m in mem.retrieve(q, "chat", learn=False).memories if m["id"] == nid)

        off = keyword_of(kick)
        mem.config.retrieval.soft_keywords = 0.6
        on = keyword_of(kick)
        # "martial" (one of the question's three keywords: martial, art, jon) now matches "kickbox" at cosine 1,
        # weighed 1 - bm25_weight in keyword_match
        assert on - off == pytest.approx((1 - mem.config.retrieval.bm25_weight) / 3, abs=1e-5)
        # the keywords' vectors are kept: a second recall embeds no keyword again
        emb.calls.clear()
        keyword_of(kick)
        assert all(len(c) == 1 for c in emb.calls)   # only the question itself
