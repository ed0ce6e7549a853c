"""Cross-table integrity checks: the ones every engine runs (:data:`SHARED_CHECKS`) and the engine's own
(``_engine_integrity``: SQLite's ``PRAGMA integrity_check``; ``_engine_checks``: its vec0 / FTS5 or
Postgres' keyword tables)."""

from __future__ import annotations


#: cross-table checks both backends run (each query counts inconsistent rows)
SHARED_CHECKS = {
    "nodes without stored vector": "SELECT count(*) FROM nodes n WHERE NOT EXISTS "
        "(SELECT 1 FROM node_emb v WHERE v.node_id = n.id)",
    "stored vectors without node": "SELECT count(*) FROM node_emb v WHERE NOT EXISTS "
        "(SELECT 1 FROM nodes n WHERE n.id = v.node_id)",
    "edges with missing node": "SELECT count(*) FROM edges e WHERE NOT EXISTS (SELECT 1 FROM nodes n "
        "WHERE n.id = e.a) OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.b)",
    "passage vectors without node": "SELECT count(*) FROM node_passage p WHERE NOT EXISTS "
        "(SELECT 1 FROM nodes n WHERE n.id = p.node_id)",
    "negative or non-finite weights": "SELECT count(*) FROM edges WHERE NOT (amp >= 0 AND amp < 1e300) "
        "OR NOT (prior >= 0 AND prior < 1e300)",
    "evidence with missing node": "SELECT count(*) FROM semantic_evidence s WHERE NOT EXISTS "
        "(SELECT 1 FROM nodes n WHERE n.id = s.node_id)",
    "hub rows with missing node": "SELECT count(*) FROM hubs h WHERE NOT EXISTS "
        "(SELECT 1 FROM nodes n WHERE n.id = h.node_id)",
    "supersessions with missing node": "SELECT count(*) FROM supersessions s WHERE NOT EXISTS (SELECT 1 FROM "
        "nodes n WHERE n.id = s.old_id AND n.space_id = s.space_id) OR NOT EXISTS (SELECT 1 FROM nodes n "
        "WHERE n.id = s.new_id AND n.space_id = s.space_id)",
    "keyword postings without node": "SELECT count(*) FROM node_terms t WHERE NOT EXISTS "
        "(SELECT 1 FROM nodes n WHERE n.id = t.node_id)",
    # BM25 reads N, n and the average length from these per-space rows (store/keywords.py): each can drift
    # on its own (a write that updated one and not another), so each is checked against what it counts
    "keyword statistics out of step": "SELECT count(*) FROM spaces s WHERE fts_docs <> "
        "(SELECT count(*) FROM nodes n WHERE n.space_id = s.id)",
    "keyword lengths out of step": "SELECT count(*) FROM spaces s LEFT JOIN (SELECT space_id, sum(dl) AS len "
        "FROM (SELECT space_id, node_id, min(dl) AS dl FROM node_terms GROUP BY space_id, node_id) AS per_node "
        "GROUP BY space_id) AS l ON l.space_id = s.id WHERE s.fts_len <> coalesce(l.len, 0)",
    "keyword postings in another space than their node": "SELECT count(*) FROM node_terms t "
        "JOIN nodes n ON n.id = t.node_id WHERE n.space_id <> t.space_id",
    "keyword postings with two lengths for one memory": "SELECT count(*) FROM (SELECT node_id FROM node_terms "
        "GROUP BY node_id HAVING min(dl) <> max(dl)) AS d",
    "memories with keywords but no postings": "SELECT count(*) FROM nodes n WHERE n.keywords <> '' AND "
        "NOT EXISTS (SELECT 1 FROM node_terms t WHERE t.node_id = n.id)",
}


class Integrity:
    # ---------------------------------------------------------------- integrity
    def integrity_problems(self) -> list[str]:
        """Cross-table consistency checks (used by tests and ``hela doctor``-style checks): the engine's own
        structural check, then :data:`SHARED_CHECKS` and the engine's table checks, each ``name: count``."""
        return self._engine_integrity() + self._count_problems({**self._engine_checks(), **SHARED_CHECKS})

    def _count_problems(self, checks: dict[str, str]) -> list[str]:
        """``name: count`` for each check query counting something inconsistent (vector checks skipped
        before an embedder is bound)."""
        problems = []
        if self.embedder_info() is None:
            checks = {k: v for k, v in checks.items() if "vector" not in k}
        with self._snapshot():
            for name, sql in checks.items():
                n = self.db.execute(sql).fetchone()[0]
                if n:
                    problems.append(f"{name}: {n}")
        return problems

