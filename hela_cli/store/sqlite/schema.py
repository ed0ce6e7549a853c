"""The SQLite engine's schema and named migrations.

``MIGRATIONS`` is the ordered list of named migrations; :func:`migration_set` turns it into a sqlite-utils
:class:`~sqlite_utils.migrations.Migrations` set (``"hela"``), which records what it applied in the
``_sqlite_migrations`` table (databases written by hela 0.1.0 kept that record in a ``migrations``
table; :meth:`~hela_cli.store.sqlite.connection.SqliteConnection._migrate` adopts it). Each migration
gets a sqlite-utils ``Database`` (the one place the engine uses sqlite-utils).

Migrations 0001-0005 are written as SQL: they are history (existing files were created by exactly this
DDL), and they need what ``Table.create`` cannot express: CHECK constraints, ``WITHOUT ROWID`` tables and
FTS5 / vec0 virtual tables. Later migrations use the sqlite-utils table API where it suffices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations

MIGRATION_SET = "hela"


def _script(db: "Database", sql: str) -> None:
    """Run a migration script statement by statement (``executescript`` would COMMIT the transaction)."""
    for stmt in sql.split(";"):
        if stmt.strip():
            db.execute(stmt)


def _m1_core(db: "Database") -> None:
    _script(db, 
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE spaces(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at REAL NOT NULL,
            step INTEGER NOT NULL DEFAULT 0,        -- retrieval counter (Eq.1 global decay)
            base_step INTEGER NOT NULL DEFAULT 0,   -- step at which edge amplitudes were last rebased
            consolidated_step INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE nodes(
            id INTEGER PRIMARY KEY,
            space_id INTEGER NOT NULL REFERENCES spaces(id),
            text TEXT NOT NULL,
            speaker TEXT,
            role TEXT,
            ts REAL NOT NULL,                       -- UTC epoch seconds
            time_str TEXT,                          -- the original date string
            keywords TEXT NOT NULL DEFAULT '',      -- space-separated stemmed keywords
            source_id TEXT,                         -- e.g. LoCoMo dia_id
            session TEXT,
            ord INTEGER NOT NULL,                   -- order within the space
            hash TEXT NOT NULL,                     -- content hash (idempotent ingest)
            source TEXT,                            -- file it came from
            access_count INTEGER NOT NULL DEFAULT 0,
            last_access REAL,
            created_at REAL NOT NULL,
            UNIQUE(space_id, hash)
        );
        CREATE INDEX nodes_space_ord ON nodes(space_id, ord);
        CREATE INDEX nodes_space_source ON nodes(space_id, source_id);
        CREATE TABLE edges(
            a INTEGER NOT NULL,
            b INTEGER NOT NULL,
            space_id INTEGER NOT NULL,
            amp REAL NOT NULL,                      -- weight = amp * decay^(step - base_step)
            PRIMARY KEY(a, b),
            CHECK(a < b),
            CHECK(amp >= 0)
        ) WITHOUT ROWID;
        CREATE INDEX edges_b ON edges(b);
        CREATE INDEX edges_space ON edges(space_id);
        CREATE VIRTUAL TABLE node_fts USING fts5(space, keywords, tokenize='unicode61');
        """
    )


def _m2_semantic(db: "Database") -> None:
    _script(db, 
        """
        CREATE TABLE semantic(
            id INTEGER PRIMARY KEY,
            space_id INTEGER NOT NULL REFERENCES spaces(id),
            kind TEXT NOT NULL CHECK(kind IN ('trait', 'fact', 'knowledge')),
            subject TEXT,
            text TEXT NOT NULL,
            confidence REAL,
            date TEXT,                               -- absolute date for facts, e.g. 7 May 2023
            hub_id INTEGER,                          -- node whose cluster produced it
            forgotten_evidence INTEGER NOT NULL DEFAULT 0,  -- evidence turns since forgotten
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX semantic_space ON semantic(space_id);
        CREATE TABLE semantic_evidence(
            semantic_id INTEGER NOT NULL REFERENCES semantic(id) ON DELETE CASCADE,
            node_id INTEGER NOT NULL,
            PRIMARY KEY(semantic_id, node_id)
        ) WITHOUT ROWID;
        CREATE INDEX semantic_evidence_node ON semantic_evidence(node_id);
        CREATE TABLE hubs(
            node_id INTEGER PRIMARY KEY,
            space_id INTEGER NOT NULL,
            cluster TEXT NOT NULL,                   -- JSON list of node ids distilled
            distilled_step INTEGER NOT NULL,
            status TEXT NOT NULL                     -- ok | failed: reason
        );
        CREATE TABLE asks(
            id INTEGER PRIMARY KEY,
            space_id INTEGER NOT NULL,
            question TEXT NOT NULL,
            answer TEXT,
            memories TEXT NOT NULL,                  -- JSON list of node ids
            step INTEGER NOT NULL,
            created_at REAL NOT NULL
        );
        """
    )


def _m3_nodes_version(db: "Database") -> None:
    # bumped on every insert/delete of a space's nodes: in-process vector indexes know when to reload
    db.execute("ALTER TABLE spaces ADD COLUMN nodes_version INTEGER NOT NULL DEFAULT 0")


def _m4_node_emb(db: "Database") -> None:
    # A plain copy of each node's float32 vector keyed by node id. vec0 answers KNN well but a lookup by id
    # reads its whole 1024-vector chunk (0.3-0.5 ms per id, and an IN (...) list scans: 0.9 s for 100 ids
    # at 1M nodes); retrieval needs the exact vectors of keyword- and spreading-reached nodes by id, and
    # the in-process index loads whole spaces. Costs 4*dim bytes per node.
    _script(db, """
        CREATE TABLE node_emb(
            node_id INTEGER PRIMARY KEY,
            space_id INTEGER NOT NULL,
            embedding BLOB NOT NULL
        );
        CREATE INDEX node_emb_space ON node_emb(space_id, node_id);
        CREATE INDEX nodes_space_ts ON nodes(space_id, ts);
        """)
    if db.execute("SELECT count(*) FROM sqlite_master WHERE name='node_vec'").fetchone()[0]:
        db.execute("INSERT INTO node_emb(node_id, space_id, embedding) "
                   "SELECT node_id, space_id, embedding FROM node_vec")


def _m5_fts_space_terms(db: "Database") -> None:
    # Keyword search scoped to a space by its terms ("s<space>_<term>") instead of a space column: an
    # AND with a column token that every node of the space carries walked the whole space's posting list
    # (2 ms at 10k, 23 ms at 100k nodes, growing linearly); scoped terms cost only their own postings.
    db.execute("DROP TABLE node_fts")
    db.execute(f"CREATE VIRTUAL TABLE node_fts USING fts5(terms, tokenize=\"{FTS_TOKENIZER}\")")
    db.execute("INSERT INTO node_fts(rowid, terms) SELECT id, CASE WHEN keywords = '' THEN '' ELSE "
               "'s' || space_id || '_' || replace(keywords, ' ', ' s' || space_id || '_') END FROM nodes")


def _m7_edges_space_amp(db: "Database") -> None:
    # Pruning deletes the space's weakest edges a few at a time (store/edges.py prune_edges): an index on
    # (space_id, amp) finds them without reading the others. It also serves every "WHERE space_id=?"
    # that edges_space served, so that one goes (one index to maintain per edge write, not two).
    db.execute("CREATE INDEX edges_space_amp ON edges(space_id, amp)")
    db.execute("DROP INDEX edges_space")


def _m8_node_passage(db: "Database") -> None:
    # Passage vectors of long turns (ingest.passage_chars): a memory keeps one id and one main vector; its
    # cosine to a question is the best of the main vector and its passages' (the embedder's window cuts a
    # long turn, one vector averages away its details). Deleted with the node.
    _script(db, """
        CREATE TABLE node_passage(
            node_id INTEGER NOT NULL,
            idx INTEGER NOT NULL,
            space_id INTEGER NOT NULL,
            embedding BLOB NOT NULL,
            PRIMARY KEY(node_id, idx)
        ) WITHOUT ROWID;
        CREATE INDEX node_passage_space ON node_passage(space_id);
        """)


def _m9_reembed_stage(db: "Database") -> None:
    # `hela reembed`: vectors of another embedder are staged here batch by batch (one transaction each, so
    # an interrupted run resumes), then swapped in with the embedder binding in one transaction. Empty
    # outside a re-embed. kind: node | passage | semantic; part: the passage index (0 otherwise).
    _script(db, """
        CREATE TABLE reembed_stage(
            kind TEXT NOT NULL,
            id INTEGER NOT NULL,
            part INTEGER NOT NULL DEFAULT 0,
            embedding BLOB NOT NULL,
            PRIMARY KEY(kind, id, part)
        ) WITHOUT ROWID;
        """)


def _m10_edge_prior(db: "Database") -> None:
    # Fixed prior weight of an edge (issue 17): what ingest links (consecutive turns, cold-start keyword
    # links) weigh, which Eq.1's global decay does not erode; the decaying amplitude holds only what Eq.1
    # learned. Current weight = prior + amp * decay^(step - base_step). Pruning looks for learned-only edges
    # (prior 0) with a small amp, so the index leads with (space_id, prior).
    db.execute("ALTER TABLE edges ADD COLUMN prior REAL NOT NULL DEFAULT 0")
    db.execute("CREATE INDEX edges_space_prior_amp ON edges(space_id, prior, amp)")
    db.execute("DROP INDEX edges_space_amp")


def _m11_sign_blocks(db: "Database") -> None:
    # The persisted sign-bit index of large spaces (store/sqlite/search.py, store/vector_index.py): a cold
    # process read 1M vectors through sqlite-vec in ~1 s per question, or loaded the in-process index in
    # 14.5 s. Per space, the centre its bits are taken against, the nodes_version they match (older:
    # stale, rebuilt on the next search) and its node count; per block of up to 4,096 nodes (ordered by
    # id, range lo..hi), the ids (int64) and the bits (word-major uint64) as BLOBs. Derived data: deleting
    # a space's state row makes the next search rebuild its blocks.
    ints = ("space_id", "version", "dim", "n", "built_n")
    db["sign_state"].create({**{c: int for c in ints}, "center": bytes}, pk="space_id",
                            not_null={*ints, "center"})
    cols = ("space_id", "lo", "hi", "n")
    db["sign_blocks"].create({"id": int, **{c: int for c in cols}, "ids": bytes, "bits": bytes}, pk="id",
                             not_null={*cols, "ids", "bits"})
    db["sign_blocks"].create_index(["space_id", "lo"], index_name="sign_blocks_space_lo")


def _m12_history(db: "Database") -> None:
    # `hela edit`: the previous text of an edited memory (one row per replaced version; deleted with the
    # memory). And FTS5's secure-delete option on the keyword index: a deleted row's terms leave the index
    # segments at once instead of staying behind a delete marker until the next merge (complete deletion,
    # store/correct.py).
    db["history"].create({"id": int, "node_id": int, "space_id": int, "text": str, "speaker": str,
                          "edited_at": float}, pk="id", not_null={"node_id", "space_id", "text", "edited_at"})
    db["history"].create_index(["node_id", "id"], index_name="history_node")
    db.execute("INSERT INTO node_fts(node_fts, rank) VALUES ('secure-delete', 1)")
    # ids (no text) of memories deleted or edited, with when: a consolidation or an ask that read them
    # before and writes after does not write records or log rows restating the old text (store/correct.py).
    # Kept TOMBSTONE_DAYS.
    db["tombstones"].create({"node_id": int, "space_id": int, "at": float}, not_null={"node_id", "space_id", "at"})
    db["tombstones"].create_index(["node_id", "at"], index_name="tombstones_node")


def _m13_asks_feedback(db: "Database") -> None:
    # Learning from use signals: every recall / ask the caller may give feedback on is a row of `asks` (its id is
    # the recall id). `kind` says which call wrote it (ask | recall); `retrieval` holds the retrieved set as the
    # feedback rule needs it (JSON list of {id, base, path, from}: S_base, dual path, spreading sources);
    # `used` / `used_at` record the feedback once given (a recall takes feedback once).
    db.execute("ALTER TABLE asks ADD COLUMN kind TEXT NOT NULL DEFAULT 'ask'")
    db.execute("ALTER TABLE asks ADD COLUMN retrieval TEXT")
    db.execute("ALTER TABLE asks ADD COLUMN used TEXT")
    db.execute("ALTER TABLE asks ADD COLUMN used_at REAL")
    # the query vector of the recall: a recall with feedback is a use trace (retrieval.trace_weight)
    db.execute("ALTER TABLE asks ADD COLUMN vector BLOB")



def _m14_asks_traces(db: "Database") -> None:
    # every learning recall writes an asks row; a recall reads only the use traces (rows with feedback and a
    # query vector): this partial index keeps that read proportional to the traces, not to all recalls
    db.execute("CREATE INDEX IF NOT EXISTS asks_traces ON asks(space_id, id) "
               "WHERE used IS NOT NULL AND vector IS NOT NULL")

FTS_TOKENIZER = "unicode61 tokenchars '_'"   # node_fts of migrations 0005-0014


def _m15_keyword_terms(db: "Database") -> None:
    # Keyword statistics per space (issue 35). FTS5's bm25() takes the document count and the average
    # length over the whole table, i.e. over every space of the file: a space's scores and rankings moved
    # when another space was ingested beside it, and told something of the other spaces' content. The
    # postings become a plain table, as on Postgres (store/postgres/schema.py): (space, term, node) with the term
    # frequency and the node's length, and each space's counts in `spaces`; BM25 is computed in SQL from
    # them (store/sqlite/search.py). A space alone in a file scores as FTS5 scored it. Measured against one FTS5
    # table per space and a Python scorer over FTS5 matches: docs/benchmarks/quality.md, "Keyword statistics per space".
    from hela_cli.store.base import term_rows

    db.execute("ALTER TABLE spaces ADD COLUMN fts_docs INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE spaces ADD COLUMN fts_len INTEGER NOT NULL DEFAULT 0")
    db.execute("""
        CREATE TABLE node_terms(
            space_id INTEGER NOT NULL,
            term TEXT NOT NULL,
            node_id INTEGER NOT NULL,
            tf INTEGER NOT NULL,                    -- occurrences of the term in the node's keywords
            dl INTEGER NOT NULL,                    -- the node's length in tokens (BM25's document length)
            PRIMARY KEY(space_id, term, node_id)
        ) WITHOUT ROWID""")
    counts: dict[int, list[int]] = {}
    last = -1
    while True:   # 5,000 nodes at a time, each batch's postings written in key order; the index afterwards
        chunk = db.execute("SELECT id, space_id, keywords FROM nodes WHERE id > ? ORDER BY id LIMIT 5000",
                           (last,)).fetchall()
        if not chunk:
            break
        last = chunk[-1][0]
        rows = []
        for nid, sid, kws in chunk:
            mine, total = term_rows(sid, {nid: kws.split() if kws else []})
            rows.extend(mine)
            c = counts.setdefault(sid, [0, 0])
            c[0] += 1
            c[1] += total
        rows.sort()
        db.conn.executemany("INSERT INTO node_terms(space_id, term, node_id, tf, dl) VALUES (?,?,?,?,?)", rows)
    db.execute("CREATE INDEX node_terms_node ON node_terms(node_id)")
    db.conn.executemany("UPDATE spaces SET fts_docs = ?, fts_len = ? WHERE id = ?",
                        [(d, n, sid) for sid, (d, n) in counts.items()])
    db.execute("DROP TABLE node_fts")


def _m16_space_hebbian(db: "Database") -> None:
    # Eq.1's decay of each space (issue 41). An edge stores `prior + amp` with `amp` relative to the space's
    # `base_step`; its current weight is `prior + amp * decay ** (step - base_step)`, so the stored amplitudes
    # mean something only with the decay they were learned under. Every reader used its own configuration's
    # `hebbian.decay`: a space learned under 0.9 and read under 0.995 showed weights of 8.7e11. Since 0016 the
    # space keeps its decay and every reader uses it (store/edges.py). NULL: not recorded yet. No earlier
    # version wrote the decay into the file (meta holds the embedder and the schema version only), so an
    # existing space starts NULL and the first process that opens it with a configuration records that
    # configuration's decay, the one it read and learned the space with until now (Edges.record_decay);
    # a reader before that, without a configuration, reads with the default 0.995. A new space starts with
    # the default (the column's): a writer learning under another decay rebases it, still empty, at once.
    db.execute("ALTER TABLE spaces ADD COLUMN decay REAL DEFAULT 0.995")
    db.execute("UPDATE spaces SET decay = NULL")

def _m6_asks_log_memories_view(db: "Database") -> None:
    # the asks table (0002) becomes a log of asks, as `llm` logs prompts: read newest first per space
    db["asks"].create_index(["space_id", "created_at"], index_name="asks_space_created")
    # a readable view for people browsing the file (`sqlite-utils rows hela.db memories`, Datasette)
    db.create_view("memories", """
        SELECT n.id, s.name AS space, n.ord, n.session, n.time_str, datetime(n.ts, 'unixepoch') AS time_utc,
               n.speaker, n.text, n.source_id, n.access_count,
               (SELECT count(*) FROM edges e WHERE e.a = n.id OR e.b = n.id) AS edges
        FROM nodes n JOIN spaces s ON s.id = n.space_id""")


def _m17_supersession(db: "Database") -> None:
    # Facts that change (issue 38): a memory superseded by a later one, with who replaced it, from when, by
    # which detector and with what confidence. Nothing is deleted: the rows are the history of a fact
    # (store/supersession.py); deleting either memory deletes the row (store/nodes.py `delete_nodes`).
    from hela_cli.store.supersession import SUPERSESSIONS_SQL

    _script(db, SUPERSESSIONS_SQL.format(int="INTEGER", real="REAL"))


def _m18_judge_reason(db: "Database") -> None:
    # the change judge's reason for its verdict (issue 45 item 4: `hela history` shows why a mark was made)
    _script(db, "ALTER TABLE supersessions ADD COLUMN reason TEXT")
def _m19_tokens(db: "Database") -> None:
    # Tokens per client of a shared server (issue 44): a token's name, the SHA-256 of the token (never the
    # token), the spaces it may use and its scope (store/tokens.py; hela_cli/mcp_server/access.py checks them)
    from hela_cli.store.tokens import TOKENS_SQL

    _script(db, TOKENS_SQL.format(real="REAL"))


def _m20_session_gists(db: "Database") -> None:
    # session gists a chat model wrote at a session's end, read by the brief (store/gists.py; issue 46)
    from hela_cli.store.gists import SESSION_GISTS_SQL

    _script(db, SESSION_GISTS_SQL.format(int="INTEGER", real="REAL"))


MIGRATIONS: list[tuple[str, Callable[["Database"], None]]] = [
    ("0001_core", _m1_core),
    ("0002_semantic", _m2_semantic),
    ("0003_nodes_version", _m3_nodes_version),
    ("0004_node_emb", _m4_node_emb),
    ("0005_fts_space_terms", _m5_fts_space_terms),
    ("0006_asks_log_memories_view", _m6_asks_log_memories_view),
    ("0007_edges_space_amp", _m7_edges_space_amp),
    ("0008_node_passage", _m8_node_passage),
    ("0009_reembed_stage", _m9_reembed_stage),
    ("0010_edge_prior", _m10_edge_prior),
    ("0011_sign_blocks", _m11_sign_blocks),
    ("0012_history", _m12_history),
    ("0013_asks_feedback", _m13_asks_feedback),
    ("0014_asks_traces", _m14_asks_traces),
    ("0015_keyword_terms", _m15_keyword_terms),
    ("0016_space_hebbian", _m16_space_hebbian),
    ("0017_supersession", _m17_supersession),
    ("0018_judge_reason", _m18_judge_reason),
    ("0019_tokens", _m19_tokens),
    ("0020_session_gists", _m20_session_gists),
]
SCHEMA_VERSION = len(MIGRATIONS)


def migration_set(migrations: list[tuple[str, Callable[["Database"], None]]]) -> "Migrations":
    """``migrations`` (normally ``MIGRATIONS``) as a sqlite-utils migration set (imported lazily: opening an
    up-to-date file needs none)."""
    from sqlite_utils.migrations import Migrations

    ms = Migrations(MIGRATION_SET)
    for name, fn in migrations:
        ms(name=name)(fn)
    return ms


def legacy_records(rows: list[Any]) -> list[dict[str, Any]]:
    """Rows of a 0.1.0 ``migrations`` table ``(name, applied_at epoch)`` as ``_sqlite_migrations`` records."""
    import datetime

    return [{"migration_set": MIGRATION_SET, "name": name,
             "applied_at": str(datetime.datetime.fromtimestamp(ts, datetime.timezone.utc))} for name, ts in rows]
