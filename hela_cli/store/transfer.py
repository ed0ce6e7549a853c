"""Reading a whole space out and writing it into another database (``hela copy``), on either backend.

The SQL here is portable (it runs on SQLite and, translated by ``PgDB``, on Postgres); vectors and keyword
rows go through each backend's own ``insert_nodes`` / ``insert_passages`` and ``_put_semantic_vector``.
A space is written in ONE transaction: a failed copy leaves the destination as it was. Ids are kept when
the destination has none of them (a new database: the copy's export is the source's); otherwise new ids
are given and every reference (edges, evidence, hubs, asks, supersession marks) is mapped.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from hela_cli.errors import StoreError

_SEMANTIC = ("kind", "subject", "text", "confidence", "date", "hub_id", "forgotten_evidence", "created_at",
             "updated_at")


class Transfer:
    """``space_dump`` on the source, ``space_load`` on the destination."""

    def space_dump(self, name: str) -> dict[str, Any]:
        """Everything of space ``name``: counters, nodes with vectors, edges (raw amplitudes and priors),
        passages, semantic records with vectors and evidence, hub state, the asks log, edit history, supersession
        marks."""
        sp = self.require_space(name)
        with self._snapshot():
            sid = sp.id
            step, base, cons, decay = self.db.execute(
                "SELECT step, base_step, consolidated_step, decay FROM spaces WHERE id=?", (sid,)).fetchone()
            nodes = [dict(n) for n in self.iter_nodes(sid)]
            stamps = dict(self.db.execute("SELECT id, created_at FROM nodes WHERE space_id=?", (sid,)).fetchall())
            for n in nodes:
                n["created_at"] = stamps.get(n["id"])
            vecs = self.node_vectors([n["id"] for n in nodes])
            edges = [tuple(r) for r in self.db.execute(
                "SELECT a, b, amp, prior FROM edges WHERE space_id=? ORDER BY a, b", (sid,))]
            passages: dict[int, list[bytes]] = {}
            for nid, _, blob in self.db.execute(
                    "SELECT node_id, idx, embedding FROM node_passage WHERE space_id=? ORDER BY node_id, idx", (sid,)):
                passages.setdefault(nid, []).append(bytes(blob))
            semantic = self.get_semantic(space_id=sid)
            for rec in semantic:
                rec["vector"] = self.semantic_vector(rec["id"])
            hubs = [tuple(r) for r in self.db.execute(
                "SELECT node_id, cluster, distilled_step, status FROM hubs WHERE space_id=? ORDER BY node_id", (sid,))]
            history = [tuple(r) for r in self.db.execute(
                "SELECT node_id, text, speaker, edited_at FROM history WHERE space_id=? ORDER BY id", (sid,))]
            asks = [tuple(r) for r in self.db.execute(
                "SELECT id, question, answer, memories, step, created_at, kind, retrieval, used, used_at, vector "
                "FROM asks WHERE space_id=? ORDER BY id", (sid,))]
            supersessions = self.space_supersessions(sid)
        return {"name": name, "step": step, "base_step": base, "consolidated_step": cons, "decay": decay, "nodes": nodes,
                "vectors": vecs, "edges": edges, "passages": passages, "semantic": semantic, "hubs": hubs,
                "asks": asks, "history": history, "supersessions": supersessions, "embedder": self.embedder_info()}

    def _ids_free(self, table: str, ids: list[int]) -> bool:
        return not any(True for _ in self.select_in(f"SELECT id FROM {table} WHERE id IN ({{ids}})", ids))

    def space_load(self, dump: dict[str, Any]) -> dict[str, int]:
        """Write a :meth:`space_dump` as a new space (refused if the space exists here with memories)."""
        name = dump["name"]
        existing = self.get_space(name)
        if existing is not None and (self.count_nodes(existing.id) or self.count_semantic(existing.id)):
            raise StoreError(f"{self.path}: space '{name}' already exists here; copy into another database "
                             f"or choose other spaces")
        if dump["embedder"] is not None:
            self.bind_embedder(*dump["embedder"])
        sp = self.ensure_space(name)
        nodes = dump["nodes"]
        with self.transaction():
            keep_ids = self._ids_free("nodes", [n["id"] for n in nodes])
            rows = []
            for n in nodes:
                row = {k: n.get(k) for k in ("text", "speaker", "role", "ts", "time_str", "keywords", "source_id",
                                             "session", "ord", "hash", "source")}
                if keep_ids:
                    row["id"] = n["id"]
                rows.append(row)
            dim = dump["embedder"][1] if dump["embedder"] else 0
            vecs = np.array([dump["vectors"][n["id"]] for n in nodes], dtype=np.float32).reshape(len(nodes), dim)
            new = self.insert_nodes(sp.id, rows, vecs) if rows else []
            if any(i < 0 for i in new):
                raise StoreError(f"space '{name}': two memories with the same content hash in the source")
            idmap = {n["id"]: i for n, i in zip(nodes, new)}
            self.db.executemany("UPDATE nodes SET access_count=?, last_access=?, created_at=? WHERE id=?",
                                [(n["access_count"], n["last_access"], n["created_at"], idmap[n["id"]])
                                 for n in nodes])
            self.db.executemany("INSERT INTO edges(a, b, space_id, amp, prior) VALUES (?,?,?,?,?)",
                                [(min(idmap[a], idmap[b]), max(idmap[a], idmap[b]), sp.id, amp, prior)
                                 for a, b, amp, prior in dump["edges"]])
            if dump["passages"]:
                self.insert_passages(sp.id, {idmap[nid]: np.array([np.frombuffer(b, dtype=np.float32) for b in bl])
                                             for nid, bl in dump["passages"].items()})
            keep_sem = self._ids_free("semantic", [r["id"] for r in dump["semantic"]])
            semmap: dict[int, int] = {}
            for rec in dump["semantic"]:
                values = [rec[c] for c in _SEMANTIC]
                values[_SEMANTIC.index("hub_id")] = idmap.get(rec["hub_id"], rec["hub_id"])
                cols = ", ".join(_SEMANTIC)
                if keep_sem:
                    self.db.execute(f"INSERT INTO semantic(id, space_id, {cols}) VALUES (?,?,{','.join('?' * len(values))})",
                                    (rec["id"], sp.id, *values))
                    semmap[rec["id"]] = rec["id"]
                else:
                    semmap[rec["id"]] = self.db.execute(
                        f"INSERT INTO semantic(space_id, {cols}) VALUES (?,{','.join('?' * len(values))}) RETURNING id",
                        (sp.id, *values)).fetchone()[0]
                if rec["vector"] is not None:
                    self._put_semantic_vector(semmap[rec["id"]], sp.id, rec["vector"])
                self.db.executemany("INSERT INTO semantic_evidence(semantic_id, node_id) VALUES (?, ?)",
                                    [(semmap[rec["id"]], idmap[e]) for e in rec["evidence"] if e in idmap])
            self.db.executemany(
                "INSERT INTO hubs(node_id, space_id, cluster, distilled_step, status) VALUES (?,?,?,?,?)",
                [(idmap[h], sp.id, json.dumps([idmap.get(c, c) for c in json.loads(cluster)]), st, status)
                 for h, cluster, st, status in dump["hubs"] if h in idmap])
            keep_asks = self._ids_free("asks", [a[0] for a in dump["asks"]])
            def ids(js: str | None) -> str | None:  # memory ids inside the asks log's JSON columns, mapped
                if js is None:
                    return None
                v = json.loads(js)
                if v and isinstance(v[0], dict):  # `retrieval`: [{id, base, path, from: [ids]}]
                    return json.dumps([{**e, "id": idmap.get(e["id"], e["id"]),
                                        "from": [idmap.get(f, f) for f in e.get("from") or []]} for e in v])
                return json.dumps([idmap.get(m, m) for m in v])

            self.db.executemany(
                f"INSERT INTO asks({'id, ' if keep_asks else ''}space_id, question, answer, memories, step, created_at, "
                f"kind, retrieval, used, used_at, vector) VALUES ({'?, ' if keep_asks else ''}?,?,?,?,?,?,?,?,?,?,?)",
                [((aid,) if keep_asks else ()) + (sp.id, q, a, ids(mem), st, ts, kind, ids(ret), ids(used), used_at,
                                                  None if vec is None else bytes(vec))
                 for aid, q, a, mem, st, ts, kind, ret, used, used_at, vec in dump["asks"]])
            self.db.executemany("INSERT INTO history(node_id, space_id, text, speaker, edited_at) VALUES (?,?,?,?,?)",
                                [(idmap[nid], sp.id, text, speaker, at) for nid, text, speaker, at
                                 in dump.get("history", ()) if nid in idmap])
            self.restore_supersessions(sp.id, [{**r, "old_id": idmap[r["old_id"]], "new_id": idmap[r["new_id"]]}
                                               for r in dump.get("supersessions", ())
                                               if r["old_id"] in idmap and r["new_id"] in idmap])
            # the decay travels with the amplitudes it gives meaning to (issue 41)
            self.db.execute("UPDATE spaces SET step=?, base_step=?, consolidated_step=?, decay=? WHERE id=?",
                            (dump["step"], dump["base_step"], dump["consolidated_step"], dump.get("decay"), sp.id))
            self._after_load()
        return {"nodes": len(nodes), "edges": len(dump["edges"]), "semantic": len(dump["semantic"]),
                "asks": len(dump["asks"]), "ids_kept": int(keep_ids)}
