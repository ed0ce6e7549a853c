"""Keyword statistics per space (issue 35): what BM25 keyword search and ingest cost, before / after, and the
designs that were weighed. Performance only; synthetic keywords (no model).

    python benchmarks/keyword_spaces.py --checkout before=OLD_CHECKOUT --checkout after=. --json F
    python benchmarks/keyword_spaces.py --designs --json F

``--checkout NAME=DIR`` (repeatable): each checkout's ``hela_cli`` runs in its own worker process (DIR first
on ``sys.path``) through the public ``Store`` API: ``insert_nodes`` in transactions of 1,000 memories
(8-d vectors, the same for every checkout: the difference is the keyword index) and ``keyword_search``
(limit 100, the default ``retrieval.keyword_candidates``). Two layouts of one file: 100,000 memories in one
space, and 100 spaces of 1,000. The checkouts are built one after the other, then queried in alternating
rounds (``--rounds``) so that a busy machine slows both alike; p50 / p95 per query over every round.

``--designs``: the designs weighed for the fix, as SQL on one in-memory database with the same documents:
FTS5's ``bm25()`` (one table for every space: the statistics of the whole file), the ``node_terms``
postings with the BM25 statement of ``store/sqlite/search.py`` (the space's statistics), FTS5 matches scored in
Python with the space's statistics, and one FTS5 table per space (what opening a file with 100 or 1,000
of them costs).

Keywords: 9 draws per memory from a 20,000-word vocabulary with Zipf weights (1/rank), distinct; a query
is 5 draws with weights 1/sqrt(rank) (questions name rarer words than turns do, and some common ones).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

VOCAB = 20_000
LAYOUTS = {"1x100k": (1, 100_000), "100x1k": (100, 1_000)}


def _weights(power: float) -> np.ndarray:
    p = 1.0 / np.arange(1, VOCAB + 1) ** power
    return p / p.sum()


def docs(n: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    draws = rng.choice(VOCAB, size=(n, 9), p=_weights(1.0))
    return [[f"w{x}" for x in dict.fromkeys(row.tolist())] for row in draws]


def queries(n: int, seed: int = 99) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [[f"w{x}" for x in row] for row in rng.choice(VOCAB, size=(n, 5), p=_weights(0.5)).tolist()]


def _pcts(ms: list[float]) -> dict[str, float]:
    s = sorted(ms)
    return {"p50_ms": round(s[len(s) // 2], 3), "p95_ms": round(s[int(len(s) * 0.95)], 3), "n": len(s)}


# ----------------------------------------------------------------------------- worker (one checkout)
def worker(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(args.code).resolve()))
    from hela_cli.store import Store

    spaces, per = LAYOUTS[args.layout]
    per = int(per * args.scale)
    if args.phase == "build":
        t0 = time.perf_counter()
        with Store(args.db) as st:
            st.bind_embedder("synthetic", 8)
            rng = np.random.default_rng(1)
            for s in range(spaces):
                sp = st.ensure_space(f"s{s}")
                kws = docs(per, seed=1000 + s)
                for i in range(0, per, 1000):
                    chunk = kws[i:i + 1000]
                    rows = [{"text": f"{s}-{i + j}", "ts": float(i + j), "ord": i + j, "hash": f"{s}-{i + j}",
                             "keywords": k} for j, k in enumerate(chunk)]
                    with st.transaction():
                        st.insert_nodes(sp.id, rows, rng.standard_normal((len(chunk), 8)).astype(np.float32))
            st.checkpoint()
        secs = time.perf_counter() - t0
        print(json.dumps({"build_s": round(secs, 2), "memories_per_s": round(spaces * per / secs),
                          "file_bytes": os.path.getsize(args.db)}))
        return
    qs = queries(args.queries, seed=args.seed)
    out = []
    with Store(args.db) as st:
        ids = [st.require_space(f"s{s}").id for s in range(spaces)]
        st.keyword_search(ids[0], qs[0], 100)   # warm: statements prepared, pages mapped
        for i, q in enumerate(qs):
            t = time.perf_counter()
            st.keyword_search(ids[i % spaces], q, 100)
            out.append((time.perf_counter() - t) * 1000)
    print(json.dumps(out))


def _run(cmd: list[str]) -> Any:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


def checkouts(args: argparse.Namespace) -> dict[str, Any]:
    named = dict(c.split("=", 1) for c in args.checkout)
    tmp = Path(args.dir or tempfile.mkdtemp(prefix="hela-kw-"))
    me = [sys.executable, str(Path(__file__).resolve()), "--worker"]
    report: dict[str, Any] = {}
    for layout in LAYOUTS:
        res: dict[str, Any] = {}
        for name, code in named.items():
            db = tmp / f"{name}-{layout}.db"
            for p in tmp.glob(f"{name}-{layout}.db*"):
                p.unlink()
            res[name] = _run([*me, code, "--phase", "build", "--layout", layout, "--db", str(db),
                              "--scale", str(args.scale)])
            print(f"{layout} {name}: built {res[name]}", flush=True)
        lat: dict[str, list[float]] = {name: [] for name in named}
        for r in range(args.rounds):
            for name, code in named.items():
                lat[name] += _run([*me, code, "--phase", "query", "--layout", layout, "--db",
                                   str(tmp / f"{name}-{layout}.db"), "--queries", str(args.queries),
                                   "--seed", str(r), "--scale", str(args.scale)])
        for name in named:
            res[name]["keyword_search"] = _pcts(lat[name])
            print(f"{layout} {name}: keyword_search {res[name]['keyword_search']}", flush=True)
        report[layout] = res
    return report


# ----------------------------------------------------------------------------- the designs, as SQL
def designs(args: argparse.Namespace) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from hela_cli.store.base import BM25_B, BM25_K1, ordered_sum, sqlite3

    # the statement of store/sqlite/search.py (SqliteSearch._bm25), without the filters
    bm25_sql = """WITH tot AS (SELECT CAST(fts_docs AS REAL) AS n, CAST(fts_len AS REAL) AS len FROM spaces WHERE id = ?),
        k AS (SELECT value AS term, key AS pos FROM json_each(?)),
        df AS (SELECT term, CAST(count(*) AS REAL) AS df FROM node_terms WHERE space_id = ? AND term IN (SELECT term FROM k) GROUP BY term),
        q AS (SELECT k.term, k.pos, ln((tot.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS v
              FROM k CROSS JOIN tot LEFT JOIN df ON df.term = k.term),
        p AS (SELECT t.node_id, q.pos, (CASE WHEN q.v > 0 THEN q.v ELSE 1e-6 END)
                     * ((t.tf * ?) / (t.tf + ? * (? + ? * t.dl / (tot.len / tot.n)))) AS c
              FROM q JOIN node_terms t ON t.space_id = ? AND t.term = q.term CROSS JOIN tot WHERE tot.n > 0)
        SELECT node_id, {score} AS score FROM p GROUP BY node_id ORDER BY score DESC, node_id LIMIT ?"""

    def fts_global(db: Any, s: int, q: list[str]) -> list:
        query = " OR ".join(f'"s{s}_{t}"' for t in q)
        return db.execute("SELECT rowid, -bm25(node_fts) FROM node_fts WHERE node_fts MATCH ? "
                          "ORDER BY bm25(node_fts) LIMIT 100", (query,)).fetchall()

    def postings(db: Any, s: int, q: list[str]) -> list:
        return db.execute(bm25_sql.format(score=ordered_sum(len(q), 0)), (s, json.dumps(q), s, BM25_K1 + 1.0, BM25_K1, 1.0 - BM25_B, BM25_B, s,
                                     100)).fetchall()

    def python_scored(db: Any, s: int, q: list[str]) -> list:
        n, total = db.execute("SELECT fts_docs, fts_len FROM spaces WHERE id = ?", (s,)).fetchone()
        rows = db.execute("SELECT rowid, terms FROM node_fts WHERE node_fts MATCH ?",
                          (" OR ".join(f'"s{s}_{t}"' for t in q),)).fetchall()
        keys = [f"s{s}_{t}" for t in q]
        held = [(r, set(doc.split()), doc.count(" ") + 1) for r, doc in rows]
        idf = []
        for k in keys:
            df = sum(1 for _, terms, _ in held if k in terms)
            v = math.log((n - df + 0.5) / (df + 0.5))
            idf.append(v if v > 0 else 1e-6)
        avgdl = total / n
        scored = [(r, sum(v * ((1 * (BM25_K1 + 1.0)) / (1 + BM25_K1 * ((1 - BM25_B) + BM25_B * dl / avgdl)))
                          for k, v in zip(keys, idf) if k in terms)) for r, terms, dl in held]
        return sorted(scored, key=lambda x: (-x[1], x[0]))[:100]

    def per_space_fts(db: Any, s: int, q: list[str]) -> list:
        query = " OR ".join(f'"{t}"' for t in q)
        return db.execute(f"SELECT rowid, -bm25(fts_{s}) FROM fts_{s} WHERE fts_{s} MATCH ? "
                          f"ORDER BY bm25(fts_{s}) LIMIT 100", (query,)).fetchall()

    report: dict[str, Any] = {}
    tok = "unicode61 tokenchars '_'"
    for layout, (spaces, per) in LAYOUTS.items():
        per = int(per * args.scale)
        db = sqlite3.connect(":memory:")
        db.execute(f'CREATE VIRTUAL TABLE node_fts USING fts5(terms, tokenize="{tok}")')
        db.execute("CREATE TABLE node_terms(space_id INT, term TEXT, node_id INT, tf INT, dl INT, "
                   "PRIMARY KEY(space_id, term, node_id)) WITHOUT ROWID")
        db.execute("CREATE TABLE spaces(id INTEGER PRIMARY KEY, fts_docs INT, fts_len INT)")
        build = {"fts_global": 0.0, "postings": 0.0, "per_space_fts": 0.0}
        nid = 0
        for s in range(1, spaces + 1):
            kws = docs(per, seed=999 + s)
            ids = list(range(nid + 1, nid + per + 1))
            nid += per
            t = time.perf_counter()
            db.executemany("INSERT INTO node_fts(rowid, terms) VALUES (?,?)",
                           [(i, " ".join(f"s{s}_{w}" for w in k)) for i, k in zip(ids, kws)])
            build["fts_global"] += time.perf_counter() - t
            t = time.perf_counter()
            db.executemany("INSERT INTO node_terms VALUES (?,?,?,1,?)",
                           [(s, w, i, len(k)) for i, k in zip(ids, kws) for w in k])
            db.execute("INSERT INTO spaces VALUES (?,?,?)", (s, per, sum(map(len, kws))))
            build["postings"] += time.perf_counter() - t
            t = time.perf_counter()
            db.execute(f'CREATE VIRTUAL TABLE fts_{s} USING fts5(terms, tokenize="{tok}")')
            db.executemany(f"INSERT INTO fts_{s}(rowid, terms) VALUES (?,?)",
                           [(i, " ".join(k)) for i, k in zip(ids, kws)])
            build["per_space_fts"] += time.perf_counter() - t
        qs = queries(args.queries)
        res: dict[str, Any] = {"build_s": {k: round(v, 2) for k, v in build.items()}}
        first = {}
        for name, fn in (("fts_global", fts_global), ("postings", postings), ("python_scored", python_scored),
                         ("per_space_fts", per_space_fts)):
            lat = []
            for i, q in enumerate(qs):
                t = time.perf_counter()
                got = fn(db, 1 + i % spaces, q)
                lat.append((time.perf_counter() - t) * 1000)
                if i == 0:
                    first[name] = got
            res[name] = _pcts(lat)
        if spaces == 1:   # one space alone: every design gives FTS5's ranking
            res["same_ids_as_fts5_on_query_0"] = {k: [r[0] for r in v] == [r[0] for r in first["fts_global"]]
                                                  for k, v in first.items()}
        report[layout] = res
        print(layout, json.dumps(res), flush=True)
        db.close()
    # one FTS5 table per space: each is 5 more schema entries (the table and 4 shadow tables) that every
    # new connection parses before its first statement
    opens: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as d:
        for n in (100, 1000):
            path = os.path.join(d, f"f{n}.db")
            db = sqlite3.connect(path)
            db.execute("CREATE TABLE t(x)")
            for s in range(n):
                db.execute(f'CREATE VIRTUAL TABLE fts_{s} USING fts5(terms, tokenize="{tok}")')
            db.commit()
            db.close()
            lat = []
            for _ in range(20):
                t = time.perf_counter()
                c = sqlite3.connect(path)
                c.execute("SELECT count(*) FROM t").fetchone()
                c.close()
                lat.append((time.perf_counter() - t) * 1000)
            opens[f"{n}_spaces"] = {**_pcts(lat), "schema_entries": 1 + 5 * n}
    report["open_with_per_space_fts_tables"] = opens
    print(json.dumps(opens), flush=True)
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", action="append", default=[], help="NAME=DIR of a hela checkout (repeatable)")
    ap.add_argument("--designs", action="store_true", help="the designs weighed, as SQL on one database")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="memories per space times this (a quick check)")
    ap.add_argument("--dir", help="where the databases go (default: a temporary directory)")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("--layout", help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        args.code = args.worker
        worker(args)
        return
    report: dict[str, Any] = {}
    if args.checkout:
        report["checkouts"] = checkouts(args)
    if args.designs:
        report["designs"] = designs(args)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
