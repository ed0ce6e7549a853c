"""Hebbian dual-path retrieval with the real embedder, including the paper's Figure 5 situation."""

import json

import pytest

from hela_cli.config import Config
from tests.conftest import SAMPLE

# Memory A answers the query; memory B is semantically far from it but belongs with A.
A = "My new puppy is a golden retriever called Biscuit."
B = "The vet booked the hip operation for the 14th, so I moved my Lisbon flight."
DISTRACTORS = [
    "I repainted the kitchen a pale green over the weekend.",
    "Our book club is reading a thriller set in Oslo.",
    "The bakery on the corner sells great rye bread.",
    "I finally fixed the squeaky bike chain.",
    "The train to Porto was delayed by an hour.",
    "My sister bought a kayak for the summer.",
    "We watched a documentary about octopuses.",
    "The hotel in Lisbon has a rooftop pool.",
]


def _conversation(path):
    lines = []
    texts = [A] + DISTRACTORS[:4] + [B] + DISTRACTORS[4:]
    for i, t in enumerate(texts):
        lines.append(json.dumps({"role": "user", "content": t, "timestamp": f"2024-03-{i + 1:02d}T10:00:00Z"}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _mem(make_memory, spreading=True):
    cfg = Config()
    cfg.retrieval.k, cfg.retrieval.m = 2, 1
    cfg.retrieval.spreading = spreading
    cfg.ingest.context_window = 0  # each turn embedded alone: similarity is the turn's own
    return make_memory(cfg)


QUERY = "What breed is my dog Biscuit?"


@pytest.mark.parametrize("spreading", [True, False])
def test_figure5_hebbian_path(make_memory, tmp_path, spreading):
    with _mem(make_memory, spreading) as mem:
        mem.ingest([_conversation(tmp_path / "c.jsonl")], space="fig5")
        ids = {n["text"]: n["id"] for n in mem.store.iter_nodes(mem.store.require_space("fig5").id)}
        a, b = ids[A], ids[B]
        before = mem.retrieve(QUERY, "fig5", learn=False)
        assert before.memories[0]["id"] == a
        assert b not in [m["id"] for m in before.memories]
        # co-activation history: questions that bring A and B back together (top-2, no flipped slot)
        mem.config.retrieval.m = 0
        for _ in range(50):
            res = mem.retrieve("Biscuit the golden retriever puppy needs a hip operation at the vet", "fig5")
            assert {m["id"] for m in res.memories} == {a, b}
        mem.config.retrieval.m = 1
        sp = mem.store.require_space("fig5")
        assert mem.store.edge_weight(sp, a, b) > 0.8
        after = mem.retrieve(QUERY, "fig5", learn=False)
        got = {m["id"]: m for m in after.memories}
        if spreading:
            assert b in got and got[b]["path"] == "hebbian"
            assert got[b]["spread_from"][0]["id"] == a and got[b]["spread_bonus"] > 0
            assert got[b]["base_score"] < min(m["base_score"] for m in after.memories if m["path"] == "base")
        else:
            assert b not in got


@pytest.mark.parametrize("fixed", [False, True])
def test_learning_updates_edges_and_access(make_memory, fixed):
    cfg = Config().replace(**{"ingest.fixed_links": fixed, "ingest.keyword_links": 0})
    with make_memory(cfg) as mem:
        mem.ingest([SAMPLE / "conversation.json"])
        sp = mem.store.require_space("demo")
        planned = [m["id"] for m in mem.retrieve("What is the name of Jonas's dog?", "demo", learn=False).memories]
        before = mem.store.edges_among(sp, planned)  # conversation links among them (0.5 each)
        res = mem.retrieve("What is the name of Jonas's dog?", "demo")
        ids = [m["id"] for m in res.memories]
        assert ids == planned
        sp = mem.store.require_space("demo")
        assert sp.step == 1
        after = mem.store.edges_among(sp, ids)
        pairs = [(a, b) for i, a in enumerate(sorted(ids)) for b in sorted(ids)[i + 1:]]
        assert set(after) == set(pairs)  # Eq.1 reinforced every pair of the retrieved set
        for p in pairs:  # w' = min(cap, decay * w + eta), from the link (if any) or from 0; a fixed link
            # does not decay: w' = min(cap, prior + eta)
            w = before.get(p, 0.0) * (1.0 if fixed else 0.995)
            assert after[p] == pytest.approx(min(1.0, w + 0.02))
        assert any(p not in before for p in pairs) and any(p in before for p in pairs)
        nodes = mem.store.get_nodes(ids)
        assert all(n["access_count"] == 1 for n in nodes.values())
        ro = mem.retrieve("What is the name of Jonas's dog?", "demo", learn=False)
        assert mem.store.require_space("demo").step == 1
        assert [m["id"] for m in ro.memories][:10] == ids[:10]


def test_time_is_measured_from_space_now(make_memory):
    cfg = Config()
    cfg.retrieval.time_decay = True
    with make_memory(cfg) as mem:
        mem.ingest([SAMPLE / "conversation.json"])
        res = mem.retrieve("dog", "demo", learn=False)
        newest = max(n["ts"] for n in mem.store.iter_nodes(mem.store.require_space("demo").id))
        assert res.now == newest
        far = mem.retrieve("dog", "demo", learn=False, now=newest + 365 * 86400)
        assert far.memories[0]["time_factor"] < res.memories[0]["time_factor"]


def test_low_confidence_traits_stay_out_of_the_context(make_memory, embedder, tmp_path):
    with _mem(make_memory) as mem:
        mem.ingest([_conversation(tmp_path / "c.jsonl")], space="fig5")
        sp = mem.store.require_space("fig5")
        node = next(iter(mem.store.iter_nodes(sp.id)))["id"]
        texts = {"unsure": ("trait", "User owns a golden retriever named Biscuit.", 0.0),
                 "sure": ("trait", "User loves the dog Biscuit.", 0.9),
                 "fact": ("fact", "User adopted the puppy Biscuit.", None)}
        vecs = embedder.embed([t for _, t, _ in texts.values()])
        with mem.store.transaction():
            for (kind, text, conf), vec in zip(texts.values(), vecs):
                mem.store.insert_semantic(sp.id, kind, "User", text, conf, None, node, [node], vec)
        # off by default (retrieval.semantic_k 0: the default small model's records hurt its answers)
        assert mem.retrieve(QUERY, "fig5", learn=False).semantic == []
        mem.config.retrieval.semantic_k = 5
        used = {s["text"] for s in mem.retrieve(QUERY, "fig5", learn=False).semantic}
        assert used == {texts["sure"][1], texts["fact"][1]}
        mem.config.retrieval.semantic_min_confidence = 0.0
        assert len(mem.retrieve(QUERY, "fig5", learn=False).semantic) == 3
        mem.config.retrieval.semantic_k = 1
        assert len(mem.retrieve(QUERY, "fig5", learn=False).semantic) == 1


def test_passage_vectors_find_a_detail_past_the_embedding_cut(make_memory, embedder, tmp_path):
    """A long turn whose answer sits after the part the main vector sees (``ingest.max_turn_chars``): its
    passage vectors bring it to the top; with ``retrieval.passages: false`` it stays below short turns."""
    filler = " ".join(f"Step {i}: I compared prices of flights and trains for the spring holiday." for i in range(8))
    long_turn = filler + " By the way, my grandmother's secret lasagne recipe uses nutmeg and ricotta."
    rows = [{"role": "user", "content": t, "timestamp": f"2024-03-{i + 1:02d}T10:00:00Z"}
            for i, t in enumerate([long_turn] + DISTRACTORS)]
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cfg = Config()
    cfg.retrieval.k, cfg.retrieval.m = 1, 0
    cfg.ingest.context_window, cfg.ingest.max_turn_chars, cfg.ingest.passage_chars = 0, 200, 120
    question = "What goes into grandma's lasagne recipe?"
    with make_memory(cfg) as mem:
        mem.ingest([path], space="p")
        sp = mem.store.require_space("p")
        long_id = next(n["id"] for n in mem.store.iter_nodes(sp.id) if n["text"] == long_turn)
        n_passages = mem.store.db.execute("SELECT count(*) FROM node_passage WHERE node_id=?",
                                          (long_id,)).fetchone()[0]
        assert n_passages >= 4
        cos_main = float(mem.store.node_vectors([long_id])[long_id] @ embedder.embed([question])[0])
        hit = mem.retrieve(question, "p", learn=False).memories[0]
        assert hit["id"] == long_id and hit["cos"] > cos_main + 0.1
        mem.config.retrieval.passages = False
        mem.config.retrieval.alpha = 0.0   # cosine only: the main vector never saw the recipe
        assert mem.retrieve(question, "p", learn=False).memories[0]["id"] != long_id
        with mem.store.transaction():      # forgetting a node takes its passages along
            mem.store.delete_nodes([long_id])
        assert mem.store.db.execute("SELECT count(*) FROM node_passage").fetchone()[0] == 0
        assert mem.store.integrity_problems() == []


def test_date_prior_prefers_memories_of_the_named_month(make_memory, tmp_path):
    text = "We went hiking in the mountains with the kids."
    rows = [{"role": "user", "content": text, "timestamp": ts}
            for ts in ("2024-01-10T10:00:00Z", "2024-03-12T10:00:00Z", "2024-06-20T10:00:00Z")]
    rows.insert(1, {"role": "user", "content": "The bakery sells rye bread.", "timestamp": "2024-02-01T10:00:00Z"})
    path = tmp_path / "dates.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cfg = Config()
    cfg.retrieval.k, cfg.retrieval.m = 1, 0
    cfg.retrieval.spreading = False
    cfg.ingest.context_window = 0
    with make_memory(cfg) as mem:
        mem.ingest([path], space="d")
        q = "Where did we go hiking in March 2024?"
        mem.config.retrieval.date_prior = 0.0   # identical texts: the tie breaks on node id (January)
        assert mem.retrieve(q, "d", learn=False).memories[0]["time_str"].startswith("2024-01")
        mem.config.retrieval.date_prior = 0.5
        best = mem.retrieve(q, "d", learn=False).memories[0]
        assert best["time_str"].startswith("2024-03") and best["time_factor"] == pytest.approx(1.0)
