"""Ingest with the real default embedder: formats, idempotency, links, atomicity, bad input."""

import json

import pytest

from hela_cli.config import Config
from hela_cli.errors import InputError
from hela_cli.memory import Memory
from hela_cli.store import Store
from tests.conftest import SAMPLE


@pytest.fixture()
def mem(make_memory):
    m = make_memory(Config())
    yield m
    m.close()


def test_locomo_sample_ingest_is_idempotent(mem):
    first = mem.ingest([SAMPLE / "conversation.json"])
    assert first["nodes_added"] == 83 and first["skipped_duplicates"] == 0
    assert list(first["spaces"]) == ["demo"]
    second = mem.ingest([SAMPLE / "conversation.json"])
    assert second["nodes_added"] == 0 and second["skipped_duplicates"] == 83
    sp = mem.store.require_space("demo")
    assert mem.store.count_nodes(sp.id) == 83
    assert mem.store.integrity_problems() == []


def test_consecutive_turns_are_linked_within_sessions(mem):
    mem.ingest([SAMPLE / "conversation.json"])
    sp = mem.store.require_space("demo")
    nodes = list(mem.store.iter_nodes(sp.id))
    sessions = {n["session"] for n in nodes}
    session = {n["id"]: n["session"] for n in nodes}
    # one edge per consecutive pair inside each session (the other edges are keyword links between sessions)
    inside = [(a, b) for a, b, _ in mem.store.all_edges(sp) if session[a] == session[b]]
    assert len(inside) == len(nodes) - len(sessions)
    a, b = nodes[0], nodes[1]
    assert mem.store.edge_weight(sp, a["id"], b["id"]) == pytest.approx(mem.config.ingest.initial_weight)
    assert a["source_id"] == "D1:1" and a["keywords"]


def test_text_and_messages_formats(mem):
    s = mem.ingest([SAMPLE / "conversation.txt"], space="txt")
    assert s["nodes_added"] == 83
    s = mem.ingest([SAMPLE / "chat.jsonl"], space="chat")
    assert s["nodes_added"] > 5
    speakers = {n["speaker"] for n in mem.store.iter_nodes(mem.store.require_space("chat").id)}
    assert speakers == {"user", "assistant"}


def test_bad_file_among_good_writes_nothing(mem, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "hi"}\n{"role": "user", "content": \n')
    with pytest.raises(InputError, match="bad.jsonl"):
        mem.ingest([SAMPLE / "chat.jsonl", bad], space="x")
    assert mem.store.get_space("x") is None or mem.store.count_nodes(mem.store.get_space("x").id) == 0


def test_crash_mid_ingest_leaves_whole_batches_and_rerun_completes(embedder, tmp_path):
    class Crashing:
        model_id, dim, n_ctx = embedder.model_id, embedder.dim, embedder.n_ctx

        def __init__(self):
            self.calls = 0

        def embed(self, texts):
            self.calls += 1
            if self.calls == 3:
                raise KeyboardInterrupt("simulated crash")
            return embedder.embed(texts)

    cfg = Config()
    cfg.ingest.batch_size = 10
    cfg.ingest.keyword_links = 0   # the conversation links are what crosses batches
    db = tmp_path / "c.db"
    with Memory(cfg, store=Store(db), embedder=Crashing()) as m:
        with pytest.raises(KeyboardInterrupt):
            m.ingest([SAMPLE / "conversation.json"])
    with Store(db) as s:
        assert s.count_nodes(s.require_space("demo").id) == 20
        assert s.integrity_problems() == []
    with Memory(cfg, store=Store(db), embedder=embedder) as m:
        out = m.ingest([SAMPLE / "conversation.json"])
        assert out["nodes_added"] == 63 and out["skipped_duplicates"] == 20
        sp = m.store.require_space("demo")
        assert m.store.count_nodes(sp.id) == 83
        # links across the interrupted batch boundary exist too
        assert m.store.count_edges(sp.id) == 83 - 4


def test_long_turn_is_stored_whole_and_reported(mem, tmp_path):
    f = tmp_path / "long.jsonl"
    long_text = "word " * 5000
    f.write_text(json.dumps({"role": "user", "content": long_text, "timestamp": "2024-01-01T00:00:00Z"}) + "\n")
    out = mem.ingest([f], space="long")
    assert out["embedding_truncated"] == 1
    node = next(mem.store.iter_nodes(mem.store.require_space("long").id))
    assert node["text"] == long_text.strip() or node["text"] == long_text


def test_association_on_ingest_creates_edges(make_memory):
    cfg = Config()
    cfg.ingest.associate = True
    cfg.ingest.associate_min_sim = 0.5
    with make_memory(cfg) as m:
        m.ingest([SAMPLE / "conversation.json"])
        sp = m.store.require_space("demo")
        nodes = list(m.store.iter_nodes(sp.id))
        sessions = {n["session"] for n in nodes}
        assert m.store.count_edges(sp.id) > len(nodes) - len(sessions)


def test_split_passages_cover_the_text_within_the_size():
    from hela_cli.ingest import split_passages

    assert split_passages("short turn.", 100) == []
    assert split_passages("x" * 50, 0) == []
    text = ("The first sentence is here. " * 12 + "\n" + "A very long sentence without an end " * 10).strip()
    parts = split_passages(text, 120)
    assert len(parts) > 3 and all(0 < len(p) <= 120 for p in parts)
    assert " ".join(parts).split() == text.split()            # nothing lost, order kept
    assert all(len(p) <= 40 for p in split_passages("a" * 100, 40))  # no space: hard cuts
    assert "".join(split_passages("a" * 100, 40)) == "a" * 100


def test_keyword_links_join_sessions_bounded_and_idempotent(make_memory):
    from hela_cli.ingest import link_keywords

    cfg = Config()
    cfg.ingest.keyword_links = 2
    cfg.ingest.keyword_link_min_score = 0.0
    cfg.ingest.keyword_link_weight = 0.25
    with make_memory(cfg) as m:
        out = m.ingest([SAMPLE / "conversation.json"])
        assert out["keyword_links"] > 0
        sp = m.store.require_space("demo")
        session = {n["id"]: n["session"] for n in m.store.iter_nodes(sp.id)}
        edges = m.store.all_edges(sp)
        cross = [(a, b, w) for a, b, w in edges if session[a] != session[b]]
        assert len(cross) == out["keyword_links"]
        assert all(w == pytest.approx(0.25) for _, _, w in cross)
        assert len(cross) <= 2 * len(session)                     # at most top_k proposals per memory
        # consecutive links are unchanged: one per pair of neighbouring turns of a session
        same = [w for a, b, w in edges if session[a] == session[b]]
        assert all(w == pytest.approx(cfg.ingest.initial_weight) for w in same)
        assert link_keywords(m.store, "demo", cfg) == 0           # the one-off step again: nothing to add
        assert m.store.integrity_problems() == []


def test_keyword_links_off_add_no_cross_session_edge(make_memory):
    with make_memory(Config().replace(**{"ingest.keyword_links": 0})) as m:
        m.ingest([SAMPLE / "conversation.json"])
        sp = m.store.require_space("demo")
        session = {n["id"]: n["session"] for n in m.store.iter_nodes(sp.id)}
        assert all(session[a] == session[b] for a, b, _ in m.store.all_edges(sp))


def test_keyword_links_for_a_few_new_turns_match_the_full_computation(make_memory):
    """`hela add` links a few turns through FTS5 postings of their rare keywords; the result must be what
    the whole-space computation gives for the same turns."""
    from hela_cli.mechanics.dynamics import keyword_partners
    from hela_cli.ingest import link_keywords

    cfg = Config().replace(**{"ingest.keyword_links": 0})
    with make_memory(cfg) as m:
        m.ingest([SAMPLE / "conversation.json"])
        sp = m.store.require_space("demo")
        docs = m.store.keyword_docs(sp.id)
        new = sorted(docs)[-3:]                                   # 3 * 20 < 83 memories: the FTS5 path
        want = keyword_partners(docs, new, 4, 0.0)
        assert want
        before = {(a, b) for a, b, _ in m.store.all_edges(sp)}
        lcfg = cfg.replace(**{"ingest.keyword_links": 4, "ingest.keyword_link_min_score": 0.0})
        assert link_keywords(m.store, "demo", lcfg, new) == len(set(want) - before)
        after = {(a, b) for a, b, _ in m.store.all_edges(sp)}
        assert after - before == set(want) - before
