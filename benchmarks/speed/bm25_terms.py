"""BM25's score over many query terms: the old expression (one ``CASE`` per term, ``base.ordered_sum``) against
the one aggregate the store uses since issue 44 (``hela_ordered_sum(c ORDER BY pos)`` on SQLite), on the
same postings: bit-identical scores, and the time of each.

    python benchmarks/speed/bm25_terms.py [--docs 10000] [--terms 3,8,20,60,200,900,5000]

Synthetic postings (``--docs`` documents of ~25 keywords from a 20,000-word vocabulary, the first 2,000 words
frequent), the BM25 statement of ``store/keywords.py`` with each score expression. The old expression is
skipped from 1,000 terms (SQLite refuses it: "Expression tree is too large (maximum depth 1000)").
"""

from __future__ import annotations

import argparse
import json
import random
import time

from hela_cli.store.base import BM25_B, BM25_K1, ordered_sum, sqlite3
from hela_cli.store.sqlite.connection import OrderedSum

SQL = """WITH tot AS (SELECT CAST(fts_docs AS REAL) AS n, CAST(fts_len AS REAL) AS len FROM spaces WHERE id = ?),
     k AS (SELECT value AS term, key AS pos FROM json_each(?)),
     df AS (SELECT term, CAST(count(*) AS REAL) AS df FROM node_terms
            WHERE space_id = ? AND term IN (SELECT term FROM k) GROUP BY term),
     q AS (SELECT k.term, k.pos, ln((tot.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS v
           FROM k CROSS JOIN tot LEFT JOIN df ON df.term = k.term),
     p AS (SELECT t.node_id, q.pos, (CASE WHEN q.v > 0 THEN q.v ELSE 1e-6 END)
                  * ((t.tf * ?) / (t.tf + ? * (? + ? * t.dl / (tot.len / tot.n)))) AS c
           FROM q JOIN node_terms t ON t.space_id = ? AND t.term = q.term CROSS JOIN tot WHERE tot.n > 0)
SELECT node_id, {score} AS score FROM p GROUP BY node_id ORDER BY score DESC, node_id LIMIT 50"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--terms", default="3,8,20,60,200,900,5000")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rnd = random.Random(1)
    db = sqlite3.connect(":memory:")
    db.create_aggregate("hela_ordered_sum", 1, OrderedSum)
    db.execute("CREATE TABLE node_terms(space_id INT, term TEXT, node_id INT, tf INT, dl INT, "
               "PRIMARY KEY(space_id, term, node_id))")
    db.execute("CREATE TABLE spaces(id INT, fts_docs INT, fts_len INT)")
    vocab = [f"w{i}" for i in range(20_000)]
    rows, total = [], 0
    for n in range(a.docs):
        words = set(rnd.choices(vocab[:2000], k=15)) | set(rnd.choices(vocab, k=10))
        total += len(words)
        rows += [(1, w, n, 1, len(words)) for w in words]
    db.executemany("INSERT INTO node_terms VALUES (?, ?, ?, ?, ?)", rows)
    db.execute("INSERT INTO spaces VALUES (1, ?, ?)", (a.docs, total))

    def run(terms: list[str], score: str) -> tuple[list, float]:
        args = (1, json.dumps(terms), 1, BM25_K1 + 1.0, BM25_K1, 1.0 - BM25_B, BM25_B, 1)
        best = float("inf")
        for _ in range(a.repeat):
            t = time.perf_counter()
            out = db.execute(SQL.format(score=score), args).fetchall()
            best = min(best, time.perf_counter() - t)
        return out, best * 1000

    print("| query terms | one CASE per term (ms) | one aggregate (ms) | same scores, bit for bit |")
    print("| --- | --- | --- | --- |")
    for n in [int(x) for x in a.terms.split(",")]:
        terms = rnd.sample(vocab[:3000] if n <= 3000 else vocab, n)
        new, t_new = run(terms, "hela_ordered_sum(c ORDER BY pos)")
        if n < 1000:
            old, t_old = run(terms, ordered_sum(n, 0))
            print(f"| {n} | {t_old:.1f} | {t_new:.1f} | {old == new} |")
        else:
            print(f"| {n} | refused (expression depth) | {t_new:.1f} | - |")


if __name__ == "__main__":
    main()
