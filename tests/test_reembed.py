"""`hela reembed`: another embedder's vectors for every memory, passage and record; resumable; one swap."""

import hashlib
import json
from typing import Sequence

import numpy as np
import pytest
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.errors import StoreError
from hela_cli.ingest import add_passages
from hela_cli.memory import Memory
from hela_cli.maintenance.reembed import node_texts, reembed
from hela_cli.mechanics.retrieval import retrieve
from hela_cli.store import Store
from hela_cli.testing import HashEmbedder
from tests.conftest import SAMPLE


class OtherEmbedder:
    """A second deterministic embedder (16-d, character trigrams) standing in for "another model"."""

    model_id = "test:trigram-16"
    dim = 16
    n_ctx = 512

    def __init__(self, fail_after: int | None = None):
        self.calls = 0
        self.texts: list[str] = []
        self.fail_after = fail_after

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt
        self.calls += 1
        self.texts.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            t = t.lower()
            for j in range(max(1, len(t) - 2)):
                h = hashlib.blake2b(t[j:j + 3].encode(), digest_size=2).digest()
                out[i, h[0] % self.dim] += 1.0 if h[1] & 1 else -1.0
            if not out[i].any():
                out[i, 0] = 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _cfg(**ingest) -> Config:
    cfg = Config()
    cfg.ingest.batch_size = 16
    for k, v in ingest.items():
        setattr(cfg.ingest, k, v)
    return cfg


@pytest.fixture()
def db(tmp_path, hash_embedder):
    """A file database ingested with the 64-d hash embedder: the sample conversation, passage vectors of
    its longer turns and one semantic record."""
    path = tmp_path / "m.db"
    cfg = _cfg(passage_chars=60)
    with Memory(cfg.replace(db=str(path)), embedder=hash_embedder) as mem:
        mem.ingest([SAMPLE / "conversation.json"])
        st = mem.store
        sp = st.require_space("demo")
        add_passages(st, hash_embedder, "demo", cfg)  # ingest made them already (passage_chars = 60)
        assert st.db.execute("SELECT count(DISTINCT node_id) FROM node_passage").fetchone()[0] > 5
        with st.transaction():
            st.insert_semantic(sp.id, "fact", "Caroline", "went to a support group", 0.9, None, None, [1],
                               hash_embedder.embed(["Caroline: went to a support group"])[0])
    return path, cfg


def _vectors(st: Store) -> dict[int, np.ndarray]:
    sp = st.require_space("demo")
    ids = [r["id"] for r in st.iter_nodes(sp.id)]
    return st.node_vectors(ids, sp.id)


def test_node_texts_are_what_ingest_embedded(tmp_path, hash_embedder):
    seen: list[str] = []

    class Recording(HashEmbedder):
        def embed(self, texts):
            seen.extend(texts)
            return super().embed(texts)

    with Memory(_cfg().replace(db=str(tmp_path / "r.db")), embedder=Recording()) as mem:
        mem.ingest([SAMPLE / "conversation.json"])
        texts = node_texts(mem.store, mem.config, set())
    assert len(texts) == 83
    assert [t for _, t in texts] == seen  # same context window, same cut, same order
    assert "\n" in texts[1][1]  # the preceding turn is there (ingest.context_window = 1)


def test_reembed_replaces_every_vector_and_the_binding(db, hash_embedder):
    path, cfg = db
    other = OtherEmbedder()
    with Store(path) as st:
        n_passages = st.db.execute("SELECT count(*) FROM node_passage").fetchone()[0]
        out = reembed(st, other, cfg)
        assert st.embedder_info() == ("test:trigram-16", 16)
        assert out["previous"] == ["test:hash-64", 64]
        assert out["vectors"] == {"node": 83, "passage": n_passages, "semantic": 1}
        assert out["resumed"] == 0 and out["embedded"] == 83 + n_passages + 1
        assert st.integrity_problems() == []
        # the stored vectors are the new embedder's vectors of the texts ingest would embed
        want = dict(zip([i for i, _ in node_texts(st, cfg, set())],
                        other.embed([t for _, t in node_texts(st, cfg, set())])))
        got = _vectors(st)
        assert set(got) == set(want)
        assert all(np.allclose(got[i], want[i], atol=1e-6) for i in want)
        sp = st.require_space("demo")
        assert st.db.execute("SELECT count(*) FROM node_passage").fetchone()[0] == n_passages
        assert st.semantic_vector(1).shape == (16,)
        # KNN (sqlite-vec with the new dimension) and retrieval work with the new embedder ...
        q = other.embed(["Caroline support group"])[0]
        assert len(st.knn(sp.id, q, 5)) == 5
        res = retrieve(st, sp, other, "When did Caroline go to the support group?", cfg, learn=False)
        assert res.memories
        # ... and the old one is refused from now on
        with pytest.raises(StoreError, match="trigram-16"):
            st.bind_embedder(hash_embedder.model_id, hash_embedder.dim)
        assert st.db.execute("SELECT count(*) FROM reembed_stage").fetchone()[0] == 0
        assert st.reembed_target() is None
        # the same embedder again: nothing to do
        assert reembed(st, other, cfg)["unchanged"] is True


def test_interrupted_reembed_keeps_the_old_embedder_and_resumes(db, hash_embedder):
    path, cfg = db
    with Store(path) as st:
        before = _vectors(st)
        with pytest.raises(KeyboardInterrupt):
            reembed(st, OtherEmbedder(fail_after=2), cfg, batch=16)
        # nothing visible changed: still the old binding and vectors; two batches are staged
        assert st.embedder_info() == ("test:hash-64", 64)
        assert all(np.array_equal(v, before[i]) for i, v in _vectors(st).items())
        assert st.db.execute("SELECT count(*) FROM reembed_stage").fetchone()[0] == 32
        assert st.reembed_target() == ("test:trigram-16", 16)
        sp = st.require_space("demo")
        assert retrieve(st, sp, hash_embedder, "support group", cfg, learn=False).memories
    with Store(path) as st:  # a new process resumes
        other = OtherEmbedder()
        out = reembed(st, other, cfg, batch=16)
        assert out["resumed"] == 32
        assert out["embedded"] == out["vectors"]["node"] + out["vectors"]["passage"] + 1 - 32
        assert len(other.texts) == out["embedded"]
        assert st.embedder_info() == ("test:trigram-16", 16)
        assert st.integrity_problems() == []
        want = OtherEmbedder().embed([t for _, t in node_texts(st, cfg, set())])
        got = _vectors(st)
        ids = [i for i, _ in node_texts(st, cfg, set())]
        assert all(np.allclose(got[i], w, atol=1e-6) for i, w in zip(ids, want))


def test_another_model_drops_what_the_first_staged(db):
    path, cfg = db
    with Store(path) as st:
        with pytest.raises(KeyboardInterrupt):
            reembed(st, OtherEmbedder(fail_after=1), cfg, batch=16)
        assert st.db.execute("SELECT count(*) FROM reembed_stage").fetchone()[0] == 16

        class Third(OtherEmbedder):
            model_id = "test:third-16"

        out = reembed(st, Third(), cfg, batch=16)
        assert out["resumed"] == 0
        assert st.embedder_info() == ("test:third-16", 16)


def test_passages_without_a_passage_size_are_dropped(db):
    path, cfg = db
    with Store(path) as st:
        owners = len(st.reembed_passage_owners())
        out = reembed(st, OtherEmbedder(), cfg.replace(**{"ingest.passage_chars": 0}))
        assert out["passages_dropped"] == owners > 0
        assert st.db.execute("SELECT count(*) FROM node_passage").fetchone()[0] == 0
        assert st.integrity_problems() == []


def test_memories_added_during_the_run_are_embedded_before_the_swap(db, hash_embedder):
    path, cfg = db

    class AddsOnce(OtherEmbedder):
        def embed(self, texts):
            if self.calls == 1:  # another process adds a memory with the old embedder mid-run
                with Memory(cfg.replace(db=str(path)), embedder=hash_embedder) as m2:
                    m2.add("demo", "a memory added while re-embedding", speaker="Melanie")
            return super().embed(texts)

    with Store(path) as st:
        out = reembed(st, AddsOnce(), cfg, batch=16)
        assert out["vectors"]["node"] == 84
        assert st.integrity_problems() == []
        assert st.embedder_info() == ("test:trigram-16", 16)


def test_space_option_guards_a_database_with_other_spaces(tmp_path, hash_embedder):
    cfg = _cfg().replace(db=str(tmp_path / "two.db"))
    with Memory(cfg, embedder=hash_embedder) as mem:
        mem.add("a", "first space memory")
        mem.add("b", "second space memory")
    with Memory(cfg, embedder=OtherEmbedder()) as mem:
        with pytest.raises(StoreError, match="other space"):
            mem.reembed("a")
        with pytest.raises(StoreError, match="unknown space"):
            mem.reembed("nope")
        assert mem.store.embedder_info() == ("test:hash-64", 64)
        out = mem.reembed()
        assert out["vectors"]["node"] == 2 and mem.store.embedder_info()[0] == "test:trigram-16"


def test_cli_reembed_to_the_default_embedder(cli_env, hash_embedder):
    db = cli_env / "hela.db"
    with Memory(_cfg().replace(db=str(db)), embedder=hash_embedder) as mem:
        mem.ingest([SAMPLE / "conversation.json"])
    runner = CliRunner()
    r = runner.invoke(app, ["reembed", "-s", "demo", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["model"].startswith("minilm:") and out["dim"] == 384 and out["vectors"]["node"] == 83
    r = runner.invoke(app, ["ask", "-s", "demo", "--no-llm", "--json", "Where did Caroline go?"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["reembed"])
    assert r.exit_code == 0 and "nothing to do" in r.stdout
