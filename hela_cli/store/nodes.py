"""Nodes: insert, read, count, delete (forgetting), access bookkeeping; the shared SQL of the ``nodes`` table.

What an engine writes differently (the bulk load of new rows with their vectors and keyword postings, and
dropping its own index rows of deleted nodes) is behind two hooks, :meth:`Nodes._load_nodes` and
:meth:`Nodes._forget_nodes`, declared in :class:`hela_cli.store.core.StoreCore`."""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from hela_cli.store.base import NODE_COLUMNS, ROW_CACHE_MAX, _node

#: the columns a new node row is written with (after an optional ``id``)
NODE_WRITE_COLUMNS = ("space_id", "text", "speaker", "role", "ts", "time_str", "keywords", "source_id", "session",
                      "ord", "hash", "source", "created_at")


class Nodes:
    """Node rows with their vectors (``node_emb``) and the engine's index rows."""

    def existing_hashes(self, space_id: int, hashes: Iterable[str]) -> dict[str, int]:
        """``{hash: node_id}`` for the given content hashes already stored in the space."""
        return dict(self.select_in("SELECT hash, id FROM nodes WHERE space_id=? AND hash IN ({ids})",
                                   list(hashes), (space_id,)))

    def ids_by_source(self, space_id: int, source_ids: Iterable[str]) -> dict[str, int]:
        """``{source_id: node_id}`` for the given source ids already stored in the space (``hela add --id``)."""
        ids = list(dict.fromkeys(source_ids))
        found: dict[str, int] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            q = ",".join("?" * len(chunk))
            for sid, nid in self.db.execute(f"SELECT source_id, min(id) FROM nodes WHERE space_id=? AND "
                                            f"source_id IN ({q}) GROUP BY source_id", (space_id, *chunk)):
                found[sid] = nid
        return found

    def latest_nodes(self, space_id: int, n: int = 1, session: str | None = None) -> list[dict[str, Any]]:
        """The space's ``n`` newest nodes by ``ord`` (of one ``session`` when given), newest first."""
        where, args = ("space_id=?", [space_id]) if session is None else ("space_id=? AND session=?",
                                                                         [space_id, session])
        return [_node(r) for r in self.db.execute(
            f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE {where} ORDER BY ord DESC LIMIT ?", (*args, n))]

    def next_ord(self, space_id: int) -> int:
        return self.db.execute("SELECT coalesce(max(ord), -1) + 1 FROM nodes WHERE space_id=?",
                               (space_id,)).fetchone()[0]

    def _fresh_rows(self, space_id: int, rows: list[dict[str, Any]], vectors: np.ndarray
                    ) -> dict[str, tuple[dict[str, Any], np.ndarray]]:
        """The rows to insert, by hash: not already stored in the space, first of repeats (both backends)."""
        known = self.existing_hashes(space_id, [row["hash"] for row in rows])
        fresh: dict[str, tuple[dict[str, Any], np.ndarray]] = {}
        for row, vec in zip(rows, vectors):
            if row["hash"] not in known and row["hash"] not in fresh:
                fresh[row["hash"]] = (row, vec)
        return fresh

    def insert_nodes(self, space_id: int, rows: list[dict[str, Any]], vectors: np.ndarray) -> list[int]:
        """Insert nodes with their vectors and keyword rows. Call inside :meth:`transaction`.

        Rows whose hash already exists in the space (or earlier in ``rows``) are skipped: their returned id
        is -1. The check runs inside the write transaction, so a concurrent ingest of the same turns
        cannot slip in between. The engine writes the rows, vectors and keyword index in bulk
        (:meth:`_load_nodes`)."""
        self.require_transaction("insert_nodes")
        fresh = self._fresh_rows(space_id, rows, vectors)
        if not fresh:
            return [-1] * len(rows)
        new = self._load_nodes(space_id, fresh, time.time())
        self.db.execute("UPDATE spaces SET nodes_version = nodes_version + 1 WHERE id=?", (space_id,))
        self._signs_after_write(space_id, add=(np.array([new[h] for h in fresh], dtype=np.int64),
                                               np.array([vec for _, vec in fresh.values()], dtype=np.float32)))
        ids, placed = [], set()
        for row in rows:
            h = row["hash"]
            ids.append(new[h] if h in new and h not in placed else -1)
            placed.add(h)
        return ids

    @staticmethod
    def _node_rows(space_id: int, fresh: dict[str, tuple[dict[str, Any], np.ndarray]], now: float
                   ) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
        """``(columns, rows)`` of the ``nodes`` rows to write for ``fresh`` (an ``id`` column when every row
        brings one: ``hela copy`` keeps ids, store/transfer.py)."""
        with_id = all("id" in row for row, _ in fresh.values())
        columns = (("id",) if with_id else ()) + NODE_WRITE_COLUMNS
        return columns, [((row["id"],) if with_id else ()) + (
            space_id, row["text"], row.get("speaker"), row.get("role"), row["ts"], row.get("time_str"),
            " ".join(row.get("keywords", [])), row.get("source_id"), row.get("session"), row["ord"], row["hash"],
            row.get("source"), now) for row, _ in fresh.values()]

    def get_nodes(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        return {r[0]: _node(r) for r in self.select_in(
            f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE id IN ({{ids}})", list(ids))}

    def node_features(self, ids: Iterable[int], space_id: int | None = None) -> dict[int, dict[str, Any]]:
        """The fields retrieval scores by (``ts``, ``speaker``, ``keywords``): lighter than :meth:`get_nodes`.

        With ``space_id`` the answer is also kept in a per-space cache (these fields never change; the
        cache is dropped when the space's nodes change), so repeated retrievals in one process read
        each node once."""
        return self._cached_read(space_id, "features", ids, lambda missing: {
            nid: {"ts": ts, "speaker": speaker, "keywords": kws.split() if kws else []}
            for nid, ts, speaker, kws in self.select_in(
                "SELECT id, ts, speaker, keywords FROM nodes WHERE id IN ({ids})", missing)})

    def node_derived(self, space_id: int, kind: str, ids: Iterable[int],
                     compute: Callable[[list[int]], dict[int, Any]]) -> dict[int, Any]:
        """A value derived from each node's immutable fields (its text, its keywords) by ``compute(missing
        ids)``, kept in the space's ``kind`` cache like :meth:`node_features` (dropped when the space's nodes
        change): retrieval derives it once per node and process."""
        return self._cached_read(space_id, f"derived:{kind}", ids, compute)

    def _cached_read(self, space_id: int | None, kind: str, ids: Iterable[int],
                     read: Callable[[list[int]], dict[int, Any]]) -> dict[int, Any]:
        """``read`` the ids not yet in the space's ``kind`` cache and keep them there (up to ROW_CACHE_MAX
        entries); without ``space_id`` just ``read`` everything."""
        ids = list(ids)
        cache = self._space_cache(space_id, kind)
        if cache is None:
            return read(ids)
        out = read([i for i in ids if i not in cache])
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
        """Every node of the space in conversation order, with every column of ``nodes`` (read from the
        table itself, so export carries columns that later migrations add), ``keywords`` as a list."""
        for row in self._dicts("SELECT * FROM nodes WHERE space_id = ? ORDER BY ord", (space_id,)):
            row.pop("created_at", None)
            row["keywords"] = row["keywords"].split() if row["keywords"] else []
            yield row

    def keyword_docs(self, space_id: int) -> dict[int, tuple[str | None, list[str]]]:
        """``{node: (session, keywords)}`` for every node of the space (cold-start keyword links)."""
        return {nid: (session, kws.split() if kws else []) for nid, session, kws in self.db.execute(
            "SELECT id, session, keywords FROM nodes WHERE space_id=?", (space_id,))}

    def node_sessions(self, ids: Iterable[int]) -> dict[int, str | None]:
        return {nid: session for nid, session in self.select_in("SELECT id, session FROM nodes WHERE id IN ({ids})",
                                                                 list(ids))}

    def next_turns(self, space_id: int, ids: Iterable[int]) -> dict[int, int]:
        """``{node: the next turn of its session}`` (by ``ord``) for the given nodes that have one: the reply
        to a recalled turn (a node without a session has none). Cached per space like
        :meth:`node_features` (the order of a space's turns changes only when its nodes do)."""
        found = self._cached_read(space_id, "next_turn", ids, lambda missing: {
            nid: nxt for nid, nxt in self.select_in(
                "SELECT n.id, (SELECT m.id FROM nodes m WHERE m.space_id = n.space_id AND m.session = n.session "
                "AND (m.ord > n.ord OR (m.ord = n.ord AND m.id > n.id)) ORDER BY m.ord, m.id LIMIT 1) "
                "FROM nodes n WHERE n.space_id = ? AND n.id IN ({ids})", missing, (space_id,))})
        return {nid: nxt for nid, nxt in found.items() if nxt is not None}

    def consecutive_pairs(self, space_id: int) -> list[tuple[int, int]]:
        """``(earlier, next)`` node ids of consecutive turns of each session, in ``ord`` order (the
        conversation links ingest makes)."""
        rows = self.db.execute("SELECT id, coalesce(session, '') FROM nodes WHERE space_id=? ORDER BY ord, id",
                               (space_id,)).fetchall()
        last: dict[str, int] = {}
        out = []
        for nid, session in rows:
            if session in last:
                out.append((last[session], nid))
            last[session] = nid
        return out

    def count_nodes(self, space_id: int) -> int:
        """The space's number of memories, cached per space until its nodes change (the prompt hook's
        relevance decision reads it on every prompt)."""
        cache = self._space_cache(space_id, "count")
        if cache and 0 in cache:
            return int(cache[0])
        n = self.db.execute("SELECT count(*) FROM nodes WHERE space_id=?", (space_id,)).fetchone()[0]
        if cache is not None:
            cache[0] = n
        return n

    def touch_nodes(self, ids: Sequence[int], when: float) -> None:
        """Record an access (inside a transaction)."""
        self.db.executemany("UPDATE nodes SET access_count = access_count + 1, last_access = ? WHERE id = ?",
                            [(when, i) for i in ids])

    # ---------------------------------------------------------------- deletion (forgetting)
    def delete_nodes(self, ids: Sequence[int]) -> None:
        """Remove nodes with their vectors, keyword postings, passages, edges, supersession marks, hub rows and the
        model-written gists of their sessions; count the
        semantic evidence they leave behind. Call inside a transaction.

        Per space, after its ``nodes_version`` bump, the engine drops its own index rows of the nodes
        (:meth:`_forget_nodes`: SQLite's sqlite-vec rows and sign bits; nothing on Postgres), then their
        keyword postings and the space's BM25 counts go (:meth:`_unindex_terms`); the rows every engine
        keeps are deleted here."""
        self.require_transaction("delete_nodes")
        ids = list(ids)
        by_space: dict[int, list[int]] = {}
        for nid, sid in self.select_in("SELECT id, space_id FROM nodes WHERE id IN ({ids})", ids):
            by_space.setdefault(sid, []).append(nid)
        self._forget_session_gists(ids)   # derived text of their sessions (store/gists.py)
        for sid in sorted(by_space):
            self.db.execute("UPDATE spaces SET nodes_version = nodes_version + 1 WHERE id = ?", (sid,))
            self._forget_nodes(sid, by_space[sid])
            self._unindex_terms(sid, by_space[sid])
        for nid in ids:
            self.db.execute("UPDATE semantic SET forgotten_evidence = forgotten_evidence + 1 "
                            "WHERE id IN (SELECT semantic_id FROM semantic_evidence WHERE node_id=?)", (nid,))
            self.db.execute("DELETE FROM semantic_evidence WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM edges WHERE a=? OR b=?", (nid, nid))
            self.db.execute("DELETE FROM supersessions WHERE old_id=? OR new_id=?", (nid, nid))
            self.db.execute("DELETE FROM node_emb WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM node_passage WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM hubs WHERE node_id=?", (nid,))
            self.db.execute("DELETE FROM nodes WHERE id=?", (nid,))

    # ---------------------------------------------------------------- reads of a space
    def _nodes_version(self, space_id: int) -> int:
        row = self.db.execute("SELECT nodes_version FROM spaces WHERE id=?", (space_id,)).fetchone()
        return row[0] if row else -1

    def speaker_counts(self, space_id: int) -> dict[str, int]:
        """``{speaker: number of memories}`` of the space, cached per space until its nodes change."""
        cache = self._space_cache(space_id, "speakers")
        if cache:
            return dict(cache)
        rows = self.db.execute("SELECT coalesce(speaker, ''), count(*) FROM nodes WHERE space_id=? "
                               "GROUP BY speaker", (space_id,)).fetchall()
        out = {s: n for s, n in rows if s}
        if cache is not None:
            cache.update(out)
        return out

    def nodes_in_window(self, space_id: int, start: float, end: float, limit: int) -> list[int]:
        """Ids of up to ``limit`` memories of the space with ``start <= ts <= end`` (index ``nodes_space_ts``)."""
        lo = start if start != float("-inf") else -1e300
        hi = end if end != float("inf") else 1e300
        return [r[0] for r in self.db.execute(
            "SELECT id FROM nodes WHERE space_id=? AND ts BETWEEN ? AND ? ORDER BY ts LIMIT ?",
            (space_id, lo, hi, int(limit)))]
