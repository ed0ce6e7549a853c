"""Spaces are separate (issue 35): what one space recalls, and with which scores, does not depend on what other
spaces of the same file or Postgres database hold. The keyword statistics (BM25's document count, document
frequencies and average length) are each space's own, on both engines."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.store import Store
from hela_cli.store.browse import NodeFilter
from hela_cli.text.keywords import keywords

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def _recall(mem: Memory, space: str, questions: list[str]) -> list:
    """Per question: the retrieved memories (id, score, path) without learning, the keyword candidates with
    their BM25 scores, the filtered keyword search and the keyword browse page."""
    store = mem.store
    sp = store.require_space(space)
    out = []
    for q in questions:
        r = mem.retrieve(q, space, learn=False)
        kw = keywords(q)
        out.append({"memories": [(m["id"], m["score"], m["path"]) for m in r.memories],
                    "keyword": store.keyword_search(sp.id, kw, 100),
                    "keyword_among": store.keyword_search_among(sp.id, kw, 100, speaker="Maya"),
                    "browse": [n["id"] for n in store.browse_nodes(sp.id, NodeFilter(terms=tuple(kw)), 20)],
                    "df": store.term_counts(sp.id, kw)})
    return out


def test_a_spaces_recall_is_the_same_beside_three_other_conversations(backend_db, hash_embedder):
    """The conversation alone, its questions asked (no learning); three other conversations ingested into
    other spaces of the same database (one of them the same conversation in another format, so every term
    of the questions gains documents elsewhere); the same questions again: identical lists and scores."""
    questions = [q["question"] for q in json.loads((SAMPLE / "questions.json").read_text())]
    mem = Memory(Config(db=backend_db), embedder=hash_embedder)
    try:
        mem.ingest([SAMPLE / "conversation.json"], space="maya")
        alone = _recall(mem, "maya", questions)
        assert all(a["keyword"] for a in alone)   # the check has something to compare
        for space, path in (("maya-text", SAMPLE / "conversation.txt"), ("chat", SAMPLE / "chat.jsonl"),
                            ("lme", ROOT / "tests" / "data" / "longmemeval_mini.json")):
            mem.ingest([path], space=space)
        assert len(mem.store.spaces()) == 4
        assert _recall(mem, "maya", questions) == alone
        # and the other way round: dropping the others leaves the scores where they were
        for space in ("maya-text", "chat", "lme"):
            mem.store.drop_space(mem.store.require_space(space).id)
        assert _recall(mem, "maya", questions) == alone
        assert mem.store.integrity_problems() == []
    finally:
        mem.close()


def _relative(mem: Memory, space: str, questions: list[str]) -> dict:
    """What the space recalls (no learning), its ingest links (conversation and keyword links between
    sessions), then after learning recalls its edges, forgetting's criteria and consolidation's hubs, with
    ids counted from the space's first memory."""
    from hela_cli.mechanics.consolidate import plan_consolidation
    from hela_cli.mechanics.forget import evaluate

    store, cfg = mem.store, mem.config
    sp = store.require_space(space)
    first = min(n["id"] for n in store.iter_nodes(sp.id))
    recalls = []
    for q in questions:
        r = mem.retrieve(q, space, learn=False)
        recalls.append([(m["id"] - first, m["score"], m["path"]) for m in r.memories])
        recalls.append([(i - first, x) for i, x in store.keyword_search(sp.id, keywords(q), 100)])
    links = [(a - first, b - first, w) for a, b, w in store.all_edges(sp)]
    for q in questions * 3:   # then learning (Eq.1), the same sequence: what it teaches is the space's too
        mem.retrieve(q, space, learn=True)
    sp = store.require_space(space)
    learned = [(a - first, b - first, w) for a, b, w in store.all_edges(sp)]
    forget = [{**c, "id": c["id"] - first} for c in evaluate(store, sp, cfg, only_candidates=False)[1]]
    hubs = [(p.node_id - first, p.strength, [n - first for n in p.cluster], p.action)
            for p in plan_consolidation(store, sp, cfg)]
    return {"recalls": recalls, "links": links, "learned": learned, "forget": forget, "hubs": hubs}


def test_a_conversation_ingested_after_others_is_the_conversation_alone(tmp_path, hash_embedder):
    """The bench's case: a conversation ingested into a file after other conversations (its ids higher, its
    keyword links and statistics computed beside them) recalls, links, forgets and consolidates exactly as
    the conversation alone in its own file."""
    questions = [q["question"] for q in json.loads((SAMPLE / "questions.json").read_text())]
    cfg = dict(consolidation__delta_hub=0.01)

    def memory(db: Path) -> Memory:
        c = Config(db=str(db))
        for key, value in cfg.items():
            section, _, field = key.partition("__")
            setattr(getattr(c, section), field, value)
        return Memory(c, embedder=hash_embedder)

    with memory(tmp_path / "alone.db") as mem:
        mem.ingest([SAMPLE / "conversation.json"], space="maya")
        alone = _relative(mem, "maya", questions)
    assert alone["links"] and alone["learned"] != alone["links"] and alone["forget"] and alone["hubs"]
    with memory(tmp_path / "shared.db") as mem:
        for space, path in (("maya-text", SAMPLE / "conversation.txt"), ("chat", SAMPLE / "chat.jsonl"),
                            ("lme", ROOT / "tests" / "data" / "longmemeval_mini.json")):
            mem.ingest([path], space=space)
        mem.ingest([SAMPLE / "conversation.json"], space="maya")
        assert _relative(mem, "maya", questions) == alone


def _docs(rng: random.Random, n: int) -> list[list[str]]:
    vocab = [f"w{i}" for i in range(40)] + ["café", "cafe", "don't"]
    return [[rng.choice(vocab) for _ in range(rng.randint(0, 8))] for _ in range(n)]


def _search(store: Store, sid: int, queries: list[list[str]]) -> list[list[tuple[int, float]]]:
    """Keyword search results with ids counted from the space's first memory (ids are per database)."""
    first = min(n["id"] for n in store.iter_nodes(sid))
    return [[(nid - first, score) for nid, score in store.keyword_search(sid, q, 30)] for q in queries]


def _insert(store: Store, name: str, docs: list[list[str]]) -> int:
    sp = store.ensure_space(name)
    with store.transaction():
        store.insert_nodes(sp.id, [{"text": f"{name} {i}", "ts": float(i), "ord": i, "hash": f"{name}{i}",
                                    "keywords": k} for i, k in enumerate(docs)], np.ones((len(docs), 4)))
    return sp.id


def test_keyword_scores_do_not_see_other_spaces_on_either_engine(backend_db):
    """BM25 of a space equals, to the last digit, its scores alone (in a fresh database of the same engine)
    after spaces of very different sizes and document lengths are written beside it, before it (lower ids)
    and after it, and after memories of another space are deleted."""
    rng = random.Random(7)
    mine = _docs(rng, 150)
    queries = [rng.sample([f"w{i}" for i in range(40)] + ["café"], rng.randint(1, 5)) for _ in range(40)]
    with Store(backend_db) as s:
        s.bind_embedder("t", 4)
        sid = _insert(s, "mine", mine)
        expected = _search(s, sid, queries)
        assert any(len({x for _, x in e}) > 1 for e in expected)
        other = _insert(s, "after", [d * 3 for d in _docs(rng, 90)])   # longer documents
        assert _search(s, sid, queries) == expected
        with s.transaction():
            s.delete_nodes([n["id"] for n in list(s.iter_nodes(other))[:40]])
        assert _search(s, sid, queries) == expected
        s.drop_space(sid)
        _insert(s, "before", _docs(rng, 400))                      # a larger space with lower ids
        sid = _insert(s, "mine", mine)
        assert _search(s, sid, queries) == expected
        assert s.integrity_problems() == []


def test_a_space_alone_scores_exactly_as_fts5_bm25():
    """The statement computes FTS5's BM25 to the last bit for a space alone (what migration 0015 replaced:
    an FTS5 table of space-scoped terms), accent-folded duplicates and repeated keywords included."""
    from hela_cli.store.sqlite.schema import FTS_TOKENIZER

    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(60)] + ["don't", "café", "cafe", "Émile", "emile"]
    docs = [[rng.choice(vocab) for _ in range(rng.randint(0, 9))] for _ in range(3000)]
    with Store(":memory:") as s:
        s.bind_embedder("t", 4)
        sid = _insert(s, "a", docs)
        s.db.execute(f'CREATE VIRTUAL TABLE fts USING fts5(terms, tokenize="{FTS_TOKENIZER}")')
        s.db.executemany("INSERT INTO fts(rowid, terms) SELECT id, ? FROM nodes WHERE hash = ?",
                         [(" ".join(f"s{sid}_{k}" for k in d), f"a{i}") for i, d in enumerate(docs)])
        for _ in range(300):
            terms = [t for t in dict.fromkeys(rng.sample(vocab, rng.randint(1, 6)))]
            query = " OR ".join('"' + f"s{sid}_{t}".replace('"', '""') + '"' for t in terms)
            fts5 = [(r, -x) for r, x in s.db.execute(
                "SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY bm25(fts), rowid LIMIT 50", (query,))]
            assert s.keyword_search(sid, terms, 50) == fts5
