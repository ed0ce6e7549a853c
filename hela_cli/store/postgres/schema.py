"""Schema of a hela database on Postgres: named, ordered migrations, as on SQLite (``schema.py``).

The tables mirror SQLite's final schema, keyed by space the same way (``space_id`` on every table, so a
space can be moved, copied, or distributed by that column). What SQLite keeps in virtual tables lives in
plain tables here:

* ``node_emb`` / ``semantic_emb``: pgvector ``vector`` columns (no fixed width in the column: the
  embedder's width is bound in ``meta`` as on SQLite; HNSW indexes cast to it, see ``search.py``);
* ``node_terms``: the keyword postings (``tf``: occurrences of the term in the node's keywords, ``dl``:
  the node's length in tokens), as on SQLite since its migration 0015; with each space's counts
  (``spaces.fts_docs`` / ``spaces.fts_len``: memories and tokens) they give BM25 with the space's own
  statistics (``search.py``).

Each migration runs in one transaction under an advisory lock (several processes opening a new
database take turns) and is recorded in ``hela_migrations``.
"""

from __future__ import annotations

from hela_cli.store.gists import SESSION_GISTS_SQL
from hela_cli.store.supersession import SUPERSESSIONS_SQL
from hela_cli.store.tokens import TOKENS_SQL

PG_MIGRATIONS: list[tuple[str, str]] = [
    ("0001_core", """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE spaces(
            id BIGSERIAL PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at DOUBLE PRECISION NOT NULL,
            step BIGINT NOT NULL DEFAULT 0,
            base_step BIGINT NOT NULL DEFAULT 0,
            consolidated_step BIGINT NOT NULL DEFAULT 0,
            nodes_version BIGINT NOT NULL DEFAULT 0,
            fts_docs BIGINT NOT NULL DEFAULT 0,
            fts_len BIGINT NOT NULL DEFAULT 0
        );
        CREATE TABLE nodes(
            id BIGSERIAL PRIMARY KEY,
            space_id BIGINT NOT NULL REFERENCES spaces(id),
            text TEXT NOT NULL,
            speaker TEXT,
            role TEXT,
            ts DOUBLE PRECISION NOT NULL,
            time_str TEXT,
            keywords TEXT NOT NULL DEFAULT '',
            source_id TEXT,
            session TEXT,
            ord BIGINT NOT NULL,
            hash TEXT NOT NULL,
            source TEXT,
            access_count BIGINT NOT NULL DEFAULT 0,
            last_access DOUBLE PRECISION,
            created_at DOUBLE PRECISION NOT NULL,
            UNIQUE(space_id, hash)
        );
        CREATE INDEX nodes_space_ord ON nodes(space_id, ord);
        CREATE INDEX nodes_space_source ON nodes(space_id, source_id);
        CREATE INDEX nodes_space_ts ON nodes(space_id, ts);
        CREATE TABLE edges(
            a BIGINT NOT NULL,
            b BIGINT NOT NULL,
            space_id BIGINT NOT NULL,
            amp DOUBLE PRECISION NOT NULL,
            prior DOUBLE PRECISION NOT NULL DEFAULT 0,
            PRIMARY KEY(a, b),
            CHECK(a < b),
            CHECK(amp >= 0)
        );
        CREATE INDEX edges_b ON edges(b);
        CREATE INDEX edges_space_prior_amp ON edges(space_id, prior, amp);
        CREATE TABLE node_emb(
            node_id BIGINT PRIMARY KEY,
            space_id BIGINT NOT NULL,
            embedding vector NOT NULL
        );
        CREATE INDEX node_emb_space ON node_emb(space_id, node_id);
        CREATE TABLE node_terms(
            space_id BIGINT NOT NULL,
            term TEXT NOT NULL,
            node_id BIGINT NOT NULL,
            tf INTEGER NOT NULL,
            dl INTEGER NOT NULL,
            PRIMARY KEY(space_id, term, node_id)
        );
        CREATE INDEX node_terms_node ON node_terms(node_id);
        CREATE TABLE node_passage(
            node_id BIGINT NOT NULL,
            idx INTEGER NOT NULL,
            space_id BIGINT NOT NULL,
            embedding BYTEA NOT NULL,
            PRIMARY KEY(node_id, idx)
        );
        CREATE INDEX node_passage_space ON node_passage(space_id);
        CREATE TABLE semantic(
            id BIGSERIAL PRIMARY KEY,
            space_id BIGINT NOT NULL REFERENCES spaces(id),
            kind TEXT NOT NULL CHECK(kind IN ('trait', 'fact', 'knowledge')),
            subject TEXT,
            text TEXT NOT NULL,
            confidence DOUBLE PRECISION,
            date TEXT,
            hub_id BIGINT,
            forgotten_evidence BIGINT NOT NULL DEFAULT 0,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX semantic_space ON semantic(space_id);
        CREATE TABLE semantic_emb(
            semantic_id BIGINT PRIMARY KEY REFERENCES semantic(id) ON DELETE CASCADE,
            space_id BIGINT NOT NULL,
            embedding vector NOT NULL
        );
        CREATE INDEX semantic_emb_space ON semantic_emb(space_id);
        CREATE TABLE semantic_evidence(
            semantic_id BIGINT NOT NULL REFERENCES semantic(id) ON DELETE CASCADE,
            node_id BIGINT NOT NULL,
            PRIMARY KEY(semantic_id, node_id)
        );
        CREATE INDEX semantic_evidence_node ON semantic_evidence(node_id);
        CREATE TABLE hubs(
            node_id BIGINT PRIMARY KEY,
            space_id BIGINT NOT NULL,
            cluster TEXT NOT NULL,
            distilled_step BIGINT NOT NULL,
            status TEXT NOT NULL
        );
        CREATE TABLE asks(
            id BIGSERIAL PRIMARY KEY,
            space_id BIGINT NOT NULL,
            question TEXT NOT NULL,
            answer TEXT,
            memories TEXT NOT NULL,
            step BIGINT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX asks_space_created ON asks(space_id, created_at);
        CREATE VIEW memories AS
            SELECT n.id, s.name AS space, n.ord, n.session, n.time_str, to_timestamp(n.ts) AS time_utc,
                   n.speaker, n.text, n.source_id, n.access_count,
                   (SELECT count(*) FROM edges e WHERE e.a = n.id OR e.b = n.id) AS edges
            FROM nodes n JOIN spaces s ON s.id = n.space_id
    """),
    # `hela reembed`: vectors of another embedder staged batch by batch, swapped in at the end (reembed.py)
    ("0002_reembed_stage", """
        CREATE TABLE reembed_stage(
            kind TEXT NOT NULL,
            id BIGINT NOT NULL,
            part INTEGER NOT NULL DEFAULT 0,
            embedding BYTEA NOT NULL,
            PRIMARY KEY(kind, id, part)
        )
    """),
    # `hela edit`'s previous texts and the tombstones of deleted / edited memories (store/correct.py)
    ("0003_history", """
        CREATE TABLE history(
            id BIGSERIAL PRIMARY KEY,
            node_id BIGINT NOT NULL,
            space_id BIGINT NOT NULL,
            text TEXT NOT NULL,
            speaker TEXT,
            edited_at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX history_node ON history(node_id, id);
        CREATE TABLE tombstones(
            node_id BIGINT NOT NULL,
            space_id BIGINT NOT NULL,
            at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX tombstones_node ON tombstones(node_id, at)
    """),
    # learning from use signals (SQLite 0013_asks_feedback): recall kind, retrieved set, feedback, query vector
    ("0004_asks_feedback", """
        ALTER TABLE asks ADD COLUMN kind TEXT NOT NULL DEFAULT 'ask';
        ALTER TABLE asks ADD COLUMN retrieval TEXT;
        ALTER TABLE asks ADD COLUMN used TEXT;
        ALTER TABLE asks ADD COLUMN used_at DOUBLE PRECISION;
        ALTER TABLE asks ADD COLUMN vector BYTEA
    """),
    # the use traces a recall reads (SQLite 0014_asks_traces)
    ("0005_asks_traces", """
        CREATE INDEX asks_traces ON asks(space_id, id) WHERE used IS NOT NULL AND vector IS NOT NULL
    """),
    # Eq.1's decay of each space, the one its stored amplitudes mean something with (SQLite
    # 0016_space_hebbian, where the reasons are); existing spaces NULL (not recorded), new ones the default
    ("0006_space_hebbian", """
        ALTER TABLE spaces ADD COLUMN decay DOUBLE PRECISION;
        ALTER TABLE spaces ALTER COLUMN decay SET DEFAULT 0.995
    """),
    # facts that change (SQLite 0017_supersession): the same table (store/supersession.py)
    ("0007_supersession", SUPERSESSIONS_SQL.format(int="BIGINT", real="DOUBLE PRECISION")),
    # the change judge's reason for its verdict (SQLite 0018_judge_reason)
    ("0008_judge_reason", "ALTER TABLE supersessions ADD COLUMN reason TEXT"),
    # tokens per client of a shared server (SQLite 0019_tokens): the same table (store/tokens.py). Named in
    # this engine's own sequence: applied_migrations() reads the names back in name order
    ("0009_tokens", TOKENS_SQL.format(real="DOUBLE PRECISION")),
    # session gists a chat model wrote (SQLite 0020_session_gists)
    ("0010_session_gists", SESSION_GISTS_SQL.format(int="BIGINT", real="DOUBLE PRECISION")),
]
