"""The SQLite engine's search: the KNN policy (in-process index, persisted sign bits or sqlite-vec), per-space
caches of vectors, and the BM25 statement over the keyword postings.

A space of up to 20k memories is searched with the exact in-process index
(:mod:`hela_cli.store.vector_index`), a larger one through the sign bits persisted in the file
(``sign_blocks`` / ``sign_state``, kept current by every node write) with exact rescoring, and sqlite-vec's
brute force is the fallback. Keywords: the postings (``node_terms``) and each space's counts are shared
(:mod:`hela_cli.store.keywords`); this engine writes new postings with ``executemany`` and scores them in
one statement (:meth:`SqliteSearch._bm25`, BM25 as FTS5 computes it with the space's own statistics)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


from hela_cli.store.base import _blob, sqlite3, term_rows
from hela_cli.errors import StoreReadOnly
from hela_cli.store.sqlite.connection import is_readonly_error


class SqliteSearch:
    """KNN by cosine and keyword search over a space (the SQLite engine's)."""

    def node_vectors(self, ids: Sequence[int], space_id: int | None = None) -> dict[int, np.ndarray]:
        """Stored float32 vectors by node id (cached per space like :meth:`node_features` with ``space_id``)."""
        return self._cached_read(space_id, "vectors", ids, lambda missing: {
            nid: np.frombuffer(blob, dtype=np.float32) for nid, blob in self.select_in(
                "SELECT node_id, embedding FROM node_emb WHERE node_id IN ({ids})", missing)})

    def vector_index_kind(self, space_id: int) -> str:
        """Which index the next search of the space uses (no side effects): ``exact`` (the in-process float32
        index), ``int8`` (the in-process quantized index, ``vector_cache`` above 20k nodes), ``sign-bits``
        (the persisted sign bits with exact rescoring), ``sqlite-vec`` (its brute force), ``none`` (no
        embedder bound yet). The policy is :meth:`knn`'s."""
        if self.embedder_info() is None:
            return "none"
        from hela_cli.store.vector_index import EXACT_LIMIT

        size = self._space_size(space_id)
        by_use = self.vector_cache_auto > 0 and size <= self.vector_cache_auto and (
            self._searches.get(space_id, 0) > 0 or space_id in self._indexes)
        cache = self.vector_cache or by_use
        if not cache and size > self.sign_index_min:
            return "sign-bits"
        if cache or size <= EXACT_LIMIT:
            return "exact" if size <= EXACT_LIMIT else "int8"
        return "sqlite-vec"

    def knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Nearest nodes of the space by cosine: ``[(node_id, cosine_similarity)]``, best first.

        Policy: with ``vector_cache``, the in-process index; otherwise spaces above ``sign_index_min``
        nodes use the sign bits persisted in the file (exact rescoring of ``sign_rescore`` candidates),
        spaces up to 20k nodes the exact in-process index, and sqlite-vec's brute force the rest (spaces
        between the two limits when ``sign_index_min`` is raised, or a read-only file whose bits are stale)."""
        if k <= 0:
            return []
        if self.embedder_info() is not None:
            from hela_cli.store.vector_index import EXACT_LIMIT

            size = 0 if self.vector_cache else self._space_size(space_id)
            cache = self.vector_cache or self._cache_by_use(space_id, size)
            if not cache and size > self.sign_index_min:
                hits = self._sign_knn(space_id, vector, k)
                if hits is not None:
                    return hits
            elif cache or size <= EXACT_LIMIT:   # up to 20k nodes the in-process index is exact and fast
                index = self._vector_index(space_id)
                if index.exact:
                    return index.knn(vector, k)
                # quantized index: it proposes k + 20 ids; the stored float32 vectors give the exact cosines
                # and the final top k (int8 rounding can swap near-ties at the border)
                hits = index.knn(vector, k + 20)
                vecs = self.node_vectors([nid for nid, _ in hits], space_id)
                q = np.asarray(vector, dtype=np.float32)
                exact = [(nid, float(np.dot(vecs[nid], q))) for nid, _ in hits if nid in vecs]
                return sorted(exact, key=lambda t: (-t[1], t[0]))[:k]
        rows = self.db.execute(
            "SELECT node_id, distance FROM node_vec WHERE embedding MATCH ? AND k = ? AND space_id = ?",
            (_blob(vector), int(k), space_id)).fetchall()
        return [(nid, 1.0 - dist) for nid, dist in rows]

    def _cache_by_use(self, space_id: int, size: int) -> bool:
        """``vector_cache_auto``: from its second search through this connection, a space of at most that
        many nodes is searched with the in-process index (kept current by :meth:`_vector_index`). A one-shot
        command searches once and never pays the load (~1 s at 100k nodes); a long-lived process (library,
        MCP server) gets the faster search from its second question on (docs/benchmarks/speed.md "Speed round 4")."""
        seen = self._searches.get(space_id, 0)
        self._searches[space_id] = seen + 1
        if self.vector_cache_auto <= 0 or (seen == 0 and space_id not in self._indexes):
            return False
        return size <= self.vector_cache_auto

    def _space_size(self, space_id: int) -> int:
        """The space's node count, cached until its nodes change. A current ``sign_state`` row holds it
        (``count(*)`` over a 1M-node space reads its whole index)."""
        version = self._nodes_version(space_id)
        cached = self._sizes.get(space_id)
        if cached is None or cached[0] != version:
            row = self.db.execute("SELECT n FROM sign_state WHERE space_id=? AND version=?",
                                  (space_id, version)).fetchone()
            cached = (version, row[0] if row else self.count_nodes(space_id))
            self._sizes[space_id] = cached
        return cached[1]

    def _vector_index(self, space_id: int) -> Any:
        """The space's in-process index, built on first use and brought up to date after node writes."""
        from hela_cli.store.vector_index import EXACT_LIMIT, VectorIndex

        cached = self._indexes.get(space_id)
        if cached is not None and cached[0] == self._nodes_version(space_id):
            return cached[1]   # every search of a small space comes here: no transaction for it
        info = self.embedder_info()
        assert info is not None
        with self._snapshot():  # the version, the node list and the vectors from one snapshot
            version = self._nodes_version(space_id)
            cached = self._indexes.get(space_id)
            index, stamps = None, None
            if cached is not None and cached[2] == info and cached[1].n > EXACT_LIMIT:
                index, stamps = self._refreshed_index(space_id, cached[1], cached[3], info[1])
            if index is None:
                rows = self.db.execute("SELECT node_id, embedding FROM node_emb WHERE space_id = ? ORDER BY node_id",
                                       (space_id,))
                index = VectorIndex.from_rows(rows, info[1])
                stamps = self._node_stamps(space_id) if index.n > EXACT_LIMIT else None
        self._indexes[space_id] = (version, index, info, stamps)
        return index

    def _node_stamps(self, space_id: int) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, created_at)`` of the space's nodes, by id: what tells a kept row from a new one (SQLite may
        give a deleted node's id to the next insert; that node's ``created_at`` is later)."""
        rows = self.db.execute("SELECT id, created_at FROM nodes WHERE space_id = ? ORDER BY id",
                               (space_id,)).fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        ids, created = zip(*rows)
        return np.array(ids, dtype=np.int64), np.array(created, dtype=np.float64)

    def _refreshed_index(self, space_id: int, index: Any, stamps: tuple[np.ndarray, np.ndarray] | None,
                         dim: int) -> tuple[Any, Any]:
        """The cached index brought up to date after writes: rows of deleted nodes dropped, new nodes'
        vectors read and added (:meth:`VectorIndex.updated`). After inserts only, one aggregate and the new
        rows (:meth:`_appended_stamps`); otherwise the whole node list (~110 ms at 100k nodes), where a
        rebuild reads every vector (~1 s). ``(None, None)`` when a rebuild is due (no stamps, or more than
        a quarter of the space changed)."""
        if stamps is None:
            return None, None
        appended = self._appended_stamps(space_id, *stamps)
        if appended is not None:  # only inserts since: no need to read the whole node list
            keep = np.ones(index.n, dtype=bool)
            new_ids = appended[0]
            ids, created = np.concatenate([stamps[0], appended[0]]), np.concatenate([stamps[1], appended[1]])
            return self._index_with(index, keep, new_ids, dim, ids, created)
        ids, created = self._node_stamps(space_id)
        pos = np.searchsorted(stamps[0], index.ids)  # the index's rows against the stamps it was built with
        pos = np.minimum(pos, max(len(stamps[0]) - 1, 0))
        old_created = stamps[1][pos]
        now_pos = np.minimum(np.searchsorted(ids, index.ids), max(len(ids) - 1, 0))
        keep = (ids[now_pos] == index.ids) & (created[now_pos] == old_created) if len(ids) else \
            np.zeros(index.n, dtype=bool)
        new_mask = ~np.isin(ids, index.ids[keep])
        return self._index_with(index, keep, ids[new_mask], dim, ids, created)

    def _appended_stamps(self, space_id: int, ids: np.ndarray, created: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray] | None:
        """The stamps of nodes added after the ones in ``(ids, created)`` when nothing else changed (no node
        deleted, no id given again): the rows up to the newest known id still count and sum their
        ``created_at`` as before (microseconds modulo a prime: integers, exact, no overflow). One aggregate
        in SQLite (~25 ms at 100k nodes) and an id range, instead of the whole list (~110 ms). A node's
        vector never changes in place (only ``hela reembed`` rewrites vectors, and it rebinds the
        embedder, which rebuilds the index). None otherwise."""
        top = int(ids[-1]) if len(ids) else 0
        n, total = self.db.execute(
            "SELECT count(*), coalesce(sum(CAST(created_at * 1000000 AS INTEGER) % 1000000007), 0) FROM nodes "
            "WHERE space_id = ? AND id <= ?", (space_id, top)).fetchone()
        if n != len(ids) or total != int(((created * 1e6).astype(np.int64) % 1000000007).sum()):
            return None
        rows = self.db.execute("SELECT id, created_at FROM nodes WHERE space_id = ? AND id > ? ORDER BY id",
                               (space_id, top)).fetchall()
        return (np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.float64))

    def _index_with(self, index: Any, keep: np.ndarray, new_ids: np.ndarray, dim: int, ids: np.ndarray,
                    created: np.ndarray) -> tuple[Any, Any]:
        """``index`` without the rows ``keep`` drops and with the vectors of ``new_ids``; ``(None, None)``
        when a rebuild is due (a quarter of the space changed, or a node lacks its vector)."""
        if len(new_ids) + int((~keep).sum()) > max(index.n, 1) // 4:
            return None, None
        vecs = self.node_vectors(new_ids.tolist()) if len(new_ids) else {}
        if len(vecs) != len(new_ids):  # a node without a vector: leave it to a rebuild
            return None, None
        mat = np.array([vecs[int(n)] for n in new_ids], dtype=np.float32).reshape(len(new_ids), dim)
        fresh = index.updated(keep, new_ids, mat)
        return (fresh, (ids, created)) if fresh is not None else (None, None)

    # ---------------------------------------------------------------- the persisted sign-bit index
    def _sign_knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]] | None:
        """KNN through the persisted sign bits: the ``sign_rescore`` Hamming-nearest nodes, rescored with
        their stored float32 vectors (exact cosines; only the candidate set is approximate). None when
        the bits are stale and cannot be rebuilt (a read-only file): the caller falls back to sqlite-vec."""
        from hela_cli.store.vector_index import _matvec

        index = self._sign_index(space_id)
        if index is None:
            return None
        q = np.asarray(vector, dtype=np.float32)
        cand = index.candidates(q, max(self.sign_rescore, k))
        ids: list[int] = []
        blobs: list[bytes] = []
        for nid, blob in self.select_in("SELECT node_id, embedding FROM node_emb WHERE node_id IN ({ids})",
                                        cand.tolist()):
            ids.append(nid)
            blobs.append(blob)
        if not ids:
            return []
        sims = _matvec(np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), -1), q)
        k = min(k, len(ids))
        top = np.argpartition(-sims, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
        return sorted(((ids[i], float(sims[i])) for i in top), key=lambda t: (-t[1], t[0]))

    def _sign_index(self, space_id: int) -> Any:
        """The space's sign bits loaded from the file (cached until its nodes change); rebuilt first when
        missing or stale (``sign_state.version`` behind ``nodes_version``, another embedder's width, or
        the space grown past twice the size its centre was taken at). None if a rebuild cannot be written."""
        from hela_cli.store.vector_index import SignIndex

        info = self.embedder_info()
        assert info is not None
        dim = info[1]
        version = self._nodes_version(space_id)
        cached = self._signs.get(space_id)
        if cached is not None and cached[0] == version:
            return cached[1]
        for attempt in range(2):
            with self._snapshot():  # state and blocks from one snapshot
                version = self._nodes_version(space_id)
                state = self.db.execute("SELECT version, dim, n, built_n, center FROM sign_state WHERE space_id=?",
                                        (space_id,)).fetchone()
                fresh = state is not None and state[0] == version and state[1] == dim and state[2] <= 2 * state[3]
                if fresh:
                    index = SignIndex.from_blocks(self.db.execute(
                        "SELECT ids, bits FROM sign_blocks WHERE space_id=? ORDER BY lo", (space_id,)),
                        dim, np.frombuffer(state[4], dtype=np.float32))
            if fresh:
                self._signs = {space_id: (version, index)}  # one space's bits at a time
                return index
            if attempt == 0 and not self._build_signs(space_id, dim):
                return None
        return None  # pragma: no cover - a writer changed the space between the rebuild and the load

    def _build_signs(self, space_id: int, dim: int) -> bool:
        """(Re)write the space's sign bits from ``node_emb``: two passes (the centre is the mean of all its
        vectors, then each block's bits). False when the file cannot be written (read-only)."""
        from hela_cli.store.vector_index import SIGN_BLOCK, block_bytes, sign_words

        def chunks() -> Any:
            cur = self.db.execute("SELECT node_id, embedding FROM node_emb WHERE space_id=? ORDER BY node_id",
                                  (space_id,))
            while True:
                rows = cur.fetchmany(SIGN_BLOCK)
                if not rows:
                    return
                yield (np.array([r[0] for r in rows], dtype=np.int64),
                       np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim))

        size = self._space_size(space_id)
        if size >= 200_000:  # 28 s at 1M nodes (measured): say so
            self._report(f"{self.path}: indexing the {size:,} memories of this space for search (once)")
        try:
            with self.transaction():
                row = self.db.execute("SELECT version, dim, n, built_n FROM sign_state WHERE space_id=?",
                                      (space_id,)).fetchone()
                if row is not None and row[0] == self._nodes_version(space_id) and row[1] == dim \
                        and row[2] <= 2 * row[3]:
                    return True  # another process rebuilt them while this one waited for the lock
                total = np.zeros(dim, dtype=np.float64)
                n = 0
                for _, vecs in chunks():
                    total += vecs.sum(axis=0, dtype=np.float64)
                    n += len(vecs)
                center = (total / max(n, 1)).astype(np.float32)
                self.db.execute("DELETE FROM sign_blocks WHERE space_id=?", (space_id,))
                for ids, vecs in chunks():
                    self.db.execute("INSERT INTO sign_blocks(space_id, lo, hi, n, ids, bits) VALUES (?,?,?,?,?,?)",
                                    (space_id, int(ids[0]), int(ids[-1]), len(ids),
                                     *block_bytes(ids, sign_words(vecs, center))))
                self.db.execute("INSERT OR REPLACE INTO sign_state(space_id, version, dim, n, built_n, center) "
                                "VALUES (?,?,?,?,?,?)", (space_id, self._nodes_version(space_id), dim, n, n,
                                                         center.tobytes()))
        except sqlite3.OperationalError as e:
            if is_readonly_error(e):
                return False
            raise
        except StoreReadOnly:   # a database opened read-only: searched without persisting the bits
            return False
        return True

    def _signs_after_write(self, space_id: int, add: tuple[np.ndarray, np.ndarray] | None = None,
                           remove: Sequence[int] = ()) -> None:
        """Keep the space's persisted bits current through a node write: call inside the write transaction
        right after its one ``nodes_version`` bump, with the nodes it added (``(ids, vectors)``) or removed.
        Bits already stale stay stale (the next search rebuilds them); so do bits an append cannot keep in
        id order."""
        from hela_cli.store.vector_index import SIGN_BLOCK, block_arrays, block_bytes, sign_words

        state = self.db.execute("SELECT version, dim, n, center FROM sign_state WHERE space_id=?",
                                (space_id,)).fetchone()
        version = self._nodes_version(space_id)
        if state is None or state[0] != version - 1:
            return
        dim, n, center = state[1], state[2], np.frombuffer(state[3], dtype=np.float32)
        if remove:
            blocks: dict[int, list[int]] = {}
            for nid in sorted(set(remove)):
                row = self.db.execute("SELECT id FROM sign_blocks WHERE space_id=? AND lo<=? AND hi>=? "
                                      "ORDER BY lo DESC LIMIT 1", (space_id, nid, nid)).fetchone()
                if row:
                    blocks.setdefault(row[0], []).append(nid)
            for bid, gone in blocks.items():
                ids_b, bits_b = self.db.execute("SELECT ids, bits FROM sign_blocks WHERE id=?", (bid,)).fetchone()
                ids, words = block_arrays(ids_b, bits_b, dim)
                keep = ~np.isin(ids, gone)
                n -= int((~keep).sum())
                if not keep.any():
                    self.db.execute("DELETE FROM sign_blocks WHERE id=?", (bid,))
                    continue
                ids, words = ids[keep], words[:, keep]
                self.db.execute("UPDATE sign_blocks SET lo=?, hi=?, n=?, ids=?, bits=? WHERE id=?",
                                (int(ids[0]), int(ids[-1]), len(ids), *block_bytes(ids, words), bid))
        if add is not None and len(add[0]):
            order = np.argsort(add[0], kind="stable")
            new_ids = np.asarray(add[0], dtype=np.int64)[order]
            new_words = sign_words(np.asarray(add[1], dtype=np.float32)[order], center)
            last = self.db.execute("SELECT id, hi, ids, bits FROM sign_blocks WHERE space_id=? ORDER BY lo DESC "
                                   "LIMIT 1", (space_id,)).fetchone()
            if last is not None and new_ids[0] <= last[1]:
                return  # not an append in id order: leave the bits stale
            if last is not None:
                ids, words = block_arrays(last[2], last[3], dim)
                room = SIGN_BLOCK - len(ids)
                if room > 0:
                    ids = np.concatenate([ids, new_ids[:room]])
                    words = np.concatenate([words, new_words[:, :room]], axis=1)
                    self.db.execute("UPDATE sign_blocks SET hi=?, n=?, ids=?, bits=? WHERE id=?",
                                    (int(ids[-1]), len(ids), *block_bytes(ids, words), last[0]))
                    new_ids, new_words = new_ids[room:], new_words[:, room:]
            for i in range(0, len(new_ids), SIGN_BLOCK):
                ids, words = new_ids[i:i + SIGN_BLOCK], new_words[:, i:i + SIGN_BLOCK]
                self.db.execute("INSERT INTO sign_blocks(space_id, lo, hi, n, ids, bits) VALUES (?,?,?,?,?,?)",
                                (space_id, int(ids[0]), int(ids[-1]), len(ids), *block_bytes(ids, words)))
            n += len(add[0])
        self.db.execute("UPDATE sign_state SET version=?, n=? WHERE space_id=?", (version, n, space_id))

    # ---------------------------------------------------------------- keywords (node_terms)
    def _index_terms(self, space_id: int, docs: dict[int, Sequence[str]]) -> None:
        """Keyword postings of new nodes ``{node_id: keywords}`` and the space's BM25 counts (inside the write
        transaction)."""
        rows, total = term_rows(space_id, docs)
        self.db.executemany("INSERT INTO node_terms(space_id, term, node_id, tf, dl) VALUES (?,?,?,?,?)", rows)
        self.db.execute("UPDATE spaces SET fts_docs = fts_docs + ?, fts_len = fts_len + ? WHERE id = ?",
                        (len(docs), total, space_id))

    # ---------------------------------------------------------------- semantic records
    def semantic_knn(self, space_id: int, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        rows = self.db.execute(
            "SELECT semantic_id, distance FROM semantic_vec WHERE embedding MATCH ? AND k = ? AND space_id = ?",
            (_blob(vector), int(k), space_id)).fetchall()
        return [(sid, 1.0 - d) for sid, d in rows]

    def semantic_vector(self, semantic_id: int) -> np.ndarray | None:
        row = self.db.execute("SELECT embedding FROM semantic_vec WHERE semantic_id=?", (semantic_id,)).fetchone()
        return np.frombuffer(row[0], dtype=np.float32) if row else None

    # ---------------------------------------------------------------- recall filters
    def knn_among(self, space_id: int, vector: np.ndarray, k: int, allowed: set[int]) -> list[tuple[int, float]]:
        """Exact nearest of the ``allowed`` memories by cosine, best first. Up to the in-process index's
        limit (20k nodes) the space's index is used with a mask; above, the allowed vectors are read by id
        from ``node_emb`` (a filter narrows the space; a filter matching most of a large space reads most
        of its vectors: ~1 s per 100k)."""
        from hela_cli.store.vector_index import EXACT_LIMIT, _matvec

        if k <= 0 or not allowed:
            return []
        q = np.asarray(vector, dtype=np.float32)
        if self.embedder_info() is not None and self._space_size(space_id) <= EXACT_LIMIT:
            index = self._vector_index(space_id)
            if index.exact:
                mask = np.isin(index.ids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
                ids, mat = index.ids[mask], index.f32[mask]
                if not len(ids):
                    return []
                sims = _matvec(mat, q)
                kk = min(k, len(ids))
                top = np.argpartition(-sims, kk - 1)[:kk] if kk < len(ids) else np.arange(len(ids))
                return sorted(((int(ids[i]), float(sims[i])) for i in top), key=lambda t: (-t[1], t[0]))
        best: list[tuple[int, float]] = []
        ordered = sorted(allowed)
        for i in range(0, len(ordered), 20_000):
            rows = list(self.select_in("SELECT node_id, embedding FROM node_emb WHERE node_id IN ({ids})",
                                       ordered[i:i + 20_000]))
            if not rows:
                continue
            sims = _matvec(np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1), q)
            best.extend((rows[j][0], float(sims[j])) for j in range(len(rows)))
            best = sorted(best, key=lambda t: (-t[1], t[0]))[:k]
        return best

    # ---------------------------------------------------------------- browsing (hela ui)
