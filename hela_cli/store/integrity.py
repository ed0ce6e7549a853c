"""Cross-table integrity checks."""

from __future__ import annotations


class Integrity:
    # ---------------------------------------------------------------- integrity
    def integrity_problems(self) -> list[str]:
        """Cross-table consistency checks (used by tests and ``hela doctor``-style checks)."""
        problems = []
        ok = self.db.execute("PRAGMA integrity_check").fetchone()[0]
        if ok != "ok":
            problems.append(f"integrity_check: {ok}")
        checks = {
            "nodes without vector": "SELECT count(*) FROM nodes n WHERE NOT EXISTS "
                                    "(SELECT 1 FROM node_vec v WHERE v.node_id = n.id)",
            "vectors without node": "SELECT count(*) FROM node_vec v WHERE NOT EXISTS "
                                    "(SELECT 1 FROM nodes n WHERE n.id = v.node_id)",
            "nodes without stored vector": "SELECT count(*) FROM nodes n WHERE NOT EXISTS "
                                           "(SELECT 1 FROM node_emb v WHERE v.node_id = n.id)",
            "stored vectors without node": "SELECT count(*) FROM node_emb v WHERE NOT EXISTS "
                                           "(SELECT 1 FROM nodes n WHERE n.id = v.node_id)",
            "fts rows without node": "SELECT count(*) FROM node_fts f WHERE NOT EXISTS "
                                     "(SELECT 1 FROM nodes n WHERE n.id = f.rowid)",
            "edges with missing node": "SELECT count(*) FROM edges e WHERE NOT EXISTS (SELECT 1 FROM nodes n "
                                       "WHERE n.id = e.a) OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.b)",
            "passage vectors without node": "SELECT count(*) FROM node_passage p WHERE NOT EXISTS "
                                            "(SELECT 1 FROM nodes n WHERE n.id = p.node_id)",
            "negative or non-finite weights": "SELECT count(*) FROM edges WHERE NOT (amp >= 0 AND amp < 1e300)",
            "evidence with missing node": "SELECT count(*) FROM semantic_evidence s WHERE NOT EXISTS "
                                          "(SELECT 1 FROM nodes n WHERE n.id = s.node_id)",
        }
        if self.embedder_info() is None:
            checks = {k: v for k, v in checks.items() if "vector" not in k}
        for name, sql in checks.items():
            n = self.db.execute(sql).fetchone()[0]
            if n:
                problems.append(f"{name}: {n}")
        return problems

