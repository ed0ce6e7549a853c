"""Nodes: insert, read, count, delete (forgetting), access bookkeeping."""

from __future__ import annotations

import time
from typing import Any, Iterable, Iterator, Sequence

import numpy as np


from hela_cli.store.base import NODE_COLUMNS, ROW_CACHE_MAX, _blob, _fts_terms, _node


class Nodes:
    """Node rows with their vectors (``node_vec``, ``node_emb``) and keyword rows (``node_fts``)."""

    def existing_hashes(self, space_id: int, hashes: Iterable[str]) -> dict[str, int]:
        """``{hash: node_id}`` for the given content hashes already stored in the space."""
        hashes = list(hashes)
        found: dict[str, int] = {}
        for i in range(0, len(hashes), 500):
            chunk = hashes[i:i + 500]
            q = ",".join("?" * len(chunk))
            found.update((h, nid) for h, nid in self.db.execute(
                f"SELECT hash, id FROM nodes WHERE space_id=? AND hash IN ({q})", (space_id, *chunk)))
        return found

    def next_ord(self, space_id: int) -> int:
        return self.db.execute("SELECT coalesce(max(ord), -1) + 1 FROM nodes WHERE space_id=?",
                               (space_id,)).fetchone()[0]

    def insert_nodes(self, space_id: int, rows: list[dict[str, Any]], vectors: np.ndarray) -> list[int]:
        """Insert nodes with their vectors and FTS entries. Call inside :meth:`transaction`.

        Rows whose hash already exists in the space are skipped (returned id is -1).
        """
        assert self._in_tx, "insert_nodes must run inside a transaction"
        ids: list[int] = []
        now = time.time()
        for row, vec in zip(rows, vectors):
            cur = self.db.execute(
                "INSERT OR IGNORE INTO nodes(space_id, text, speaker, role, ts, time_str, keywords, "
                "source_id, session, ord, hash, source, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (space_id, row["text"], row.get("speaker"), row.get("role"), row["ts"], row.get("time_str"),
                 " ".join(row.get("keywords", [])), row.get("source_id"), row.get("session"), row["ord"],
                 row["hash"], row.get("source"), now))
            if cur.rowcount == 0:
                ids.append(-1)
                continue
            nid = cur.lastrowid
            ids.append(nid)
            blob = _blob(vec)
            self.db.execute("INSERT INTO node_vec(node_id, space_id, embedding) VALUES (?, ?, ?)",
                            (nid, space_id, blob))
            self.db.execute("INSERT INTO node_emb(node_id, space_id, embedding) VALUES (?, ?, ?)",
                            (nid, space_id, blob))
            self.db.execute("INSERT INTO node_fts(rowid, terms) VALUES (?, ?)",
                            (nid, _fts_terms(space_id, row.get("keywords", []))))
        if any(i != -1 for i in ids):
            self.db.execute("UPDATE spaces SET nodes_version = nodes_version + 1 WHERE id=?", (space_id,))
        return ids

    def get_nodes(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        ids = list(ids)
        out: dict[int, dict[str, Any]] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            q = ",".join("?" * len(chunk))
            for r in self.db.execute(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE id IN ({q})", chunk):
                out[r[0]] = _node(r)
        return out

    def node_features(self, ids: Iterable[int], space_id: int | None = None) -> dict[int, dict[str, Any]]:
        """The fields retrieval scores by (``ts``, ``speaker``, ``keywords``): lighter than :meth:`get_nodes`.

        With ``space_id`` the answer is also kept in a per-space cache (these fields never change; the
        cache is dropped when the space's nodes change), so repeated retrievals in one process read
        each node once."""
        ids = list(ids)
        cache = self._space_cache(space_id, "features")
        missing = [i for i in ids if i not in cache] if cache is not None else ids
        out: dict[int, dict[str, Any]] = {}
        for i in range(0, len(missing), 500):
            chunk = missing[i:i + 500]
            q = ",".join("?" * len(chunk))
            for nid, ts, speaker, kws in self.db.execute(
                    f"SELECT id, ts, speaker, keywords FROM nodes WHERE id IN ({q})", chunk):
                out[nid] = {"ts": ts, "speaker": speaker, "keywords": kws.split() if kws else []}
        if cache is None:
            return out
        if len(cache) + len(out) <= ROW_CACHE_MAX:
            cache.update(out)
        return {i: cache[i] if i in cache else out[i] for i in ids if i in cache or i in out}

    def _space_cache(self, space_id: int | None, kind: str) -> dict[int, Any] | None:
        """A per-space cache of immutable per-node data, emptied when the space's ``nodes_version`` moves."""
        if space_id is None:
            return None
        version = self._nodes_version(space_id)
        entry = self._caches.get((space_id, kind))
        if entry is None or entry[0] != version:
            entry = (version, {})
            self._caches[(space_id, kind)] = entry
        return entry[1]

    def get_node(self, node_id: int) -> dict[str, Any] | None:
        return self.get_nodes([node_id]).get(node_id)

    def iter_nodes(self, space_id: int) -> Iterator[dict[str, Any]]:
        for r in self.db.execute(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE space_id=? ORDER BY ord",
                                 (space_id,)):
            yield _node(r)

    def count_nodes(self, space_id: int) -> int:
        return self.db.execute("SELECT count(*) FROM nodes WHERE space_id=?", (space_id,)).fetchone()[0]


    def touch_nodes(self, ids: Sequence[int], when: float) -> None:
        """Record an access (inside a transaction)."""
        self.db.executemany("UPDATE nodes SET access_count = access_count + 1, last_access = ? WHERE id = ?",
                            [(when, i) for i in ids])

    # ---------------------------------------------------------------- deletion (forgetting)
    def delete_nodes(self, ids: Sequence[int]) -> None:
        """Remove nodes with their vectors, FTS entries and edges; count forgotten semantic evidence.

        Call inside a transaction.
        """
        assert self._in_tx, "delete_nodes must run inside a transaction"
        if ids:
            q = ",".join("?" * len(ids))
            self.db.execute(f"UPDATE spaces SET nodes_version = nodes_version + 1 WHERE id IN "
                            f"(SELECT DISTINCT space_id FROM nodes WHERE id IN ({q}))", list(ids))
        for nid in ids:
            self.db.execute("UPDATE semantic SET forgotten_evidence = forgotten_evidence + 1 "
                            "WHERE id IN (SELECT semantic_id FROM semantic_evidence WHERE node_id=?)", (nid,))
            self.db.execute("DELETE FROM semantic_evidence WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM edges WHERE a=? OR b=?", (nid, nid))
            self.db.execute("DELETE FROM node_vec WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM node_emb WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM node_passage WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM node_fts WHERE rowid=?", (nid,))
            self.db.execute("DELETE FROM hubs WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM nodes WHERE id=?", (nid,))

