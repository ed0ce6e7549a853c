"""Correcting memory: list with filters, complete deletion, edits with a history, dropping and renaming
spaces. The SQL of ``hela memories`` / ``delete`` / ``edit`` / ``history`` / ``spaces drop|rename`` that both
engines share.

Complete deletion (:meth:`Correct.erase_nodes`) removes a memory from every place hela keeps it, in one
write transaction: the node row, ``node_emb``, ``node_passage``, the keyword postings (``node_terms``, with
the space's BM25 counts: the scores a fresh ingest of the remaining memories would give), the engine's own
index rows (SQLite: the sqlite-vec row and the persisted sign bits; through :meth:`delete_nodes`' engine
hook), its edit history, its edges, its supersession marks (either side), the asks-log rows whose retrieved
set holds it (or whose question or answer quote it) and the semantic records that cite it (with their
vectors and evidence; their hubs are reset so they may be distilled again). Then the engine's
:meth:`scrub` makes the bytes go too: SQLite zeroes, checkpoints, reads its file back and VACUUMs when a
probe of the text is still there (:mod:`hela_cli.store.sqlite.correct`); Postgres VACUUMs and ANALYZEs the
tables (:mod:`hela_cli.store.postgres.correct`). :func:`probes` and :func:`file_holds` are the byte search.
"""

from __future__ import annotations

import mmap
import os
import time
from typing import Any, Iterable, Sequence

import numpy as np

from hela_cli.errors import InputError, StoreError
from hela_cli.store.base import NODE_COLUMNS, _blob, _node
from hela_cli.text.redact import redact

# Tombstones (ids and times only) are kept this long: longer than any consolidation or ask runs.
TOMBSTONE_DAYS = 1.0

# Probes of a deleted text searched for in the file bytes: its first PROBE_BYTES bytes, and for a longer
# text also its middle and its end. Shorter texts than MIN_PROBE bytes are not searched for (they occur
# in unrelated bytes by chance).
PROBE_BYTES = 48
MIN_PROBE = 12


def filter_clause(speaker: str | None = None, session: str | None = None, since: float | None = None,
                  until: float | None = None, before: float | None = None, contains: str | None = None,
                  alias: str = "") -> tuple[str, list[Any]]:
    """``(" AND ...", args)`` restricting node rows (table alias ``alias``) by the correction filters:
    speaker / session equal, ``since <= ts <= until``, ``ts < before``, text containing ``contains``
    (case-insensitive for ASCII letters)."""
    p = f"{alias}." if alias else ""
    conditions = [(speaker, f"{p}speaker = ?"), (session, f"{p}session = ?"), (since, f"{p}ts >= ?"),
                  (until, f"{p}ts <= ?"), (before, f"{p}ts < ?"), (contains, f"instr(lower({p}text), lower(?)) > 0")]
    used = [(sql, value) for value, sql in conditions if value is not None]
    return "".join(f" AND {sql}" for sql, _ in used), [value for _, value in used]


def probes(texts: Iterable[str]) -> list[bytes]:
    """Byte strings to search the file for, for each deleted text (see :data:`PROBE_BYTES`)."""
    out: list[bytes] = []
    for t in texts:
        b = (t or "").encode("utf-8")
        if len(b) < MIN_PROBE:
            continue
        parts = {b[:PROBE_BYTES]}
        if len(b) > 3 * PROBE_BYTES:
            mid = len(b) // 2
            parts |= {b[mid:mid + PROBE_BYTES], b[-PROBE_BYTES:]}
        for part in parts:
            # a probe cut inside a multi-byte character would still match, but keep them decodable
            part = part.decode("utf-8", "ignore").encode("utf-8")
            if len(part) >= MIN_PROBE and part not in out:
                out.append(part)
    return out


def file_holds(path: str, needles: Sequence[bytes]) -> list[bytes]:
    """The needles found in the file's bytes (memory-mapped: ~0.1 s per needle per 100 MB)."""
    if not needles or not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        return [n for n in needles if mm.find(n) != -1]


class Correct:
    """Listing, complete deletion, edits and their history, dropping and renaming spaces.

    What differs between the engines is in the hooks each engine package defines (declared in
    :class:`hela_cli.store.core.StoreCore`): :meth:`_write_vectors`, :meth:`_signs_replace`,
    :meth:`checkpoint` / :meth:`scrub`, and the spellings of ``self.dialect``."""

    # ---------------------------------------------------------------- listing
    def list_nodes(self, space_id: int, *, limit: int | None = None, **filters: Any) -> list[dict[str, Any]]:
        """The space's memories matching ``filters`` (:func:`filter_clause`), newest first (by time, then
        conversation order), at most ``limit``."""
        where, args = filter_clause(**filters)
        sql = (f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE space_id = ?{where} "
               f"ORDER BY ts DESC, ord DESC, id DESC")
        if limit is not None:
            sql += " LIMIT ?"
            args.append(int(limit))
        return [_node(r) for r in self.db.execute(sql, (space_id, *args))]

    def count_matching(self, space_id: int, **filters: Any) -> int:
        where, args = filter_clause(**filters)
        return self.db.execute(f"SELECT count(*) FROM nodes WHERE space_id = ?{where}",
                               (space_id, *args)).fetchone()[0]

    def filtered_ids(self, space_id: int, **filters: Any) -> list[int]:
        """Ids of the space's memories matching ``filters`` (recall filters: candidate selection)."""
        where, args = filter_clause(**filters)
        return [r[0] for r in self.db.execute(f"SELECT id FROM nodes WHERE space_id = ?{where}",
                                              (space_id, *args))]

    def resolve_nodes(self, space_id: int, space_name: str, ids: Sequence[int] = (),
                      source_ids: Sequence[str] = ()) -> list[int]:
        """The node ids of ``ids`` and ``source_ids`` in the space, in the order given; an unknown one is an
        :class:`InputError` naming it (nothing is changed)."""
        out: list[int] = []
        have = {r[0] for r in self.select_in("SELECT id FROM nodes WHERE space_id = ? AND id IN ({ids})",
                                             [int(i) for i in ids], (space_id,))}
        for i in ids:
            if int(i) not in have:
                raise InputError(f"no memory {i} in space '{space_name}'")
            out.append(int(i))
        if source_ids:
            found = self.ids_by_source(space_id, source_ids)
            for s in source_ids:
                if s not in found:
                    raise InputError(f"no memory with source id '{s}' in space '{space_name}'")
                out.append(found[s])
        return list(dict.fromkeys(out))

    # ---------------------------------------------------------------- complete deletion
    def _purge_derived(self, space_id: int, ids: Sequence[int], texts: Sequence[str]) -> dict[str, Any]:
        """Inside a write transaction: delete what was derived from the memories ``ids`` (whose texts are
        ``texts``): the semantic records that cite them or were distilled from them as a hub (vectors and
        evidence too), the hub bookkeeping of those hubs and of every cluster holding them (so they may be
        distilled again), and the asks-log rows whose retrieved set holds them or whose question or
        answer quotes one of the texts. Returns the deleted records' texts and the counts."""
        self.require_transaction("_purge_derived")
        ids = list(ids)
        records = sorted({r[0] for r in self.select_in(
            "SELECT semantic_id FROM semantic_evidence WHERE node_id IN ({ids})", ids)} | {r[0] for r in self.select_in(
                "SELECT id FROM semantic WHERE space_id = ? AND hub_id IN ({ids})", ids, (space_id,))})
        hubs = {r[0] for r in self.select_in("SELECT hub_id FROM semantic WHERE id IN ({ids}) AND hub_id IS NOT NULL",
                                             records)}
        record_texts = [r[0] for r in self.select_in("SELECT text FROM semantic WHERE id IN ({ids})", records)]
        for sql in ("DELETE FROM semantic_evidence WHERE semantic_id IN ({ids})",
                    f"DELETE FROM {self.dialect.semantic_vectors} WHERE semantic_id IN ({{ids}})",
                    "DELETE FROM semantic WHERE id IN ({ids})"):
            _delete_in(self, sql, records)
        _delete_in(self, "DELETE FROM reembed_stage WHERE kind = 'semantic' AND id IN ({ids})", records)
        hubs_reset = (_delete_in(self, "DELETE FROM hubs WHERE node_id IN ({ids})", sorted(hubs | set(ids)))
                      + _delete_in(self, "DELETE FROM hubs WHERE space_id = ? AND "
                                   + self.dialect.json_holds("hubs.cluster", "{ids}"), ids, (space_id,)))
        asks = _delete_in(self, "DELETE FROM asks WHERE space_id = ? AND " + self.dialect.json_holds("asks.memories", "{ids}"),
                          ids, (space_id,))
        for t in dict.fromkeys([*texts, *record_texts]):
            if len(t.strip()) >= MIN_PROBE:   # a question or answer quoting the text
                asks += self.db.execute("DELETE FROM asks WHERE space_id = ? AND (instr(question, ?) > 0 OR "
                                        "instr(coalesce(answer, ''), ?) > 0)", (space_id, t, t)).rowcount
        return {"semantic": records, "semantic_texts": record_texts, "hubs_reset": hubs_reset, "asks": asks}

    def _tombstone(self, space_id: int, ids: Sequence[int]) -> None:
        """Inside the write transaction: record that these memories were deleted or edited now, and drop
        tombstones older than :data:`TOMBSTONE_DAYS`."""
        now = time.time()
        self.db.execute("DELETE FROM tombstones WHERE at < ?", (now - TOMBSTONE_DAYS * 86400,))
        self.db.executemany("INSERT INTO tombstones(node_id, space_id, at) VALUES (?, ?, ?)",
                            [(int(i), space_id, now) for i in ids])

    def changed_since(self, ids: Iterable[int], since: float) -> list[int]:
        """Those of ``ids`` deleted or edited at or after ``since`` (epoch seconds): a writer that read
        them before must not write what it derived from them (call inside its write transaction)."""
        return sorted({r[0] for r in self.select_in(
            "SELECT node_id FROM tombstones WHERE at >= ? AND node_id IN ({ids})", list(ids), (since,))})

    def deleted_ids(self, ids: Iterable[int]) -> list[int]:
        """Those of ``ids`` that were deleted (tombstoned and no longer stored)."""
        return sorted({r[0] for r in self.select_in(
            "SELECT node_id FROM tombstones t WHERE node_id IN ({ids}) AND NOT EXISTS "
            "(SELECT 1 FROM nodes n WHERE n.id = t.node_id)", list(ids))})

    def _drop_process_caches(self, space_id: int) -> None:
        """Forget every in-process copy of the space's vectors and rows at once (not at the next search)."""
        self._indexes.pop(space_id, None)
        self._signs.pop(space_id, None)
        self._sizes.pop(space_id, None)
        for key in [k for k in self._caches if k[0] == space_id]:
            del self._caches[key]
        self.__dict__.get("_trace_cache", {}).pop(space_id, None)   # the use traces (store/asks.py)

    def erase_nodes(self, space_id: int, ids: Sequence[int], scrub: bool = True,
                    revectors: dict[int, np.ndarray] | None = None) -> dict[str, Any]:
        """Delete the memories ``ids`` of the space completely (see the module docstring), in one write
        transaction (a savepoint inside the caller's), then, with ``scrub`` and outside any transaction,
        :meth:`scrub` the file of their texts. The public complete-deletion path (``hela delete``,
        ``spaces drop``, an import cleaning up). Ids of other spaces or unknown ids are ignored.

        Returns ``{"deleted": [ids], "semantic": [record ids], "asks": n, "hubs_reset": n,
        "history": n, "scrub": {...} | None}``. ``revectors``: new vectors for remaining memories whose
        embedding context held a deleted one (``hela_cli.maintenance.correct.delete`` computes them), written in the
        same transaction."""
        with self.transaction():
            rows = list(self.select_in("SELECT id, text FROM nodes WHERE space_id = ? AND id IN ({ids})",
                                       [int(i) for i in ids], (space_id,)))
            found = [r[0] for r in rows]
            texts = [r[1] for r in rows]
            texts += [r[0] for r in self.select_in("SELECT text FROM history WHERE node_id IN ({ids})", found)]
            derived = self._purge_derived(space_id, found, texts)
            history = _delete_in(self, "DELETE FROM history WHERE node_id IN ({ids})", found)
            _delete_in(self, "DELETE FROM reembed_stage WHERE kind IN ('node', 'passage') AND id IN ({ids})", found)
            keep = {n: v for n, v in (revectors or {}).items() if n not in set(found)}
            if keep and found:
                keep = {r[0]: keep[r[0]] for r in self.select_in(
                    "SELECT id FROM nodes WHERE space_id = ? AND id IN ({ids})", list(keep), (space_id,))}
                self._write_vectors(space_id, keep, time.time())
                self.db.execute("UPDATE spaces SET nodes_version = nodes_version + 1 WHERE id = ?", (space_id,))
                self._signs_replace(space_id, keep)
            if found:
                self._tombstone(space_id, found)
                self.delete_nodes(found)   # rows, vectors, passages, postings, edges, evidence, hubs, sign bits
        self._drop_process_caches(space_id)
        rep = {"deleted": found, "reembedded": sorted(keep) if found else [], "semantic": derived["semantic"],
               "asks": derived["asks"],
               "hubs_reset": derived["hubs_reset"], "history": history, "scrub": None}
        if scrub and found and not self._in_tx:
            rep["scrub"] = self.scrub([*texts, *derived["semantic_texts"]])
        return rep

    def _still_held(self, needle: bytes) -> bool:
        """Whether a remaining row still holds the probe legitimately (another memory, a record, history)."""
        t = needle.decode("utf-8")
        return self.db.execute(
            "SELECT EXISTS (SELECT 1 FROM nodes WHERE instr(text, ?) > 0) OR EXISTS (SELECT 1 FROM semantic "
            "WHERE instr(text, ?) > 0) OR EXISTS (SELECT 1 FROM history WHERE instr(text, ?) > 0) OR EXISTS "
            "(SELECT 1 FROM asks WHERE instr(question, ?) > 0 OR instr(coalesce(answer, ''), ?) > 0)",
            (t, t, t, t, t)).fetchone()[0] == 1

    # ---------------------------------------------------------------- edits
    def session_context(self, space_id: int, node: dict[str, Any], before: int, after: int,
                        exclude: Iterable[int] = ()) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Up to ``before`` turns of the node's session preceding it (oldest first) and up to ``after``
        following it (in order), leaving out the nodes ``exclude``: an edit re-embeds the node with its
        preceding context as ingest does, and the turns that had the node as context."""
        exclude = set(exclude)
        if exclude:
            prev, nxt = self.session_context(space_id, node, before + len(exclude), after + len(exclude))
            prev = [n for n in prev if n["id"] not in exclude]
            nxt = [n for n in nxt if n["id"] not in exclude]
            return prev[len(prev) - before:] if before else [], nxt[:after]
        cols = ", ".join(NODE_COLUMNS)
        sess = node["session"]
        cond = "session IS ?" if sess is None else "session = ?"
        prev = [_node(r) for r in self.db.execute(
            f"SELECT {cols} FROM nodes WHERE space_id = ? AND {cond} AND (ord < ? OR (ord = ? AND id < ?)) "
            f"ORDER BY ord DESC, id DESC LIMIT ?", (space_id, sess, node["ord"], node["ord"], node["id"], before))]
        nxt = [_node(r) for r in self.db.execute(
            f"SELECT {cols} FROM nodes WHERE space_id = ? AND {cond} AND (ord > ? OR (ord = ? AND id > ?)) "
            f"ORDER BY ord, id LIMIT ?", (space_id, sess, node["ord"], node["ord"], node["id"], after))]
        return list(reversed(prev)), nxt

    def replace_node_text(self, space_id: int, node_id: int, text: str, keywords: Sequence[str],
                          vector: np.ndarray, passages: np.ndarray | None,
                          followers: dict[int, np.ndarray] | None = None) -> dict[str, Any]:
        """Replace a memory's text in one write transaction, keeping its id, time, session, speaker and
        edges: the previous text goes to ``history`` (secrets redacted); the row's text and keywords, its vector (``node_emb``,
        ``node_vec``, sign bits), passage vectors and keyword postings are replaced; ``followers`` (node -> vector)
        are turns re-embedded because their embedding context held the old text. What was derived from the
        old text (semantic records citing it, asks-log rows holding it) is deleted as by a delete. Then the
        old text is scrubbed from the file bytes except where history keeps it."""
        if not text.strip():
            raise InputError(f"memory {node_id}: the new text is empty (use `hela delete` to remove a memory)")
        with self.transaction():
            row = self.db.execute("SELECT text, speaker FROM nodes WHERE id = ? AND space_id = ?",
                                  (node_id, space_id)).fetchone()
            if row is None:
                raise InputError(f"no memory {node_id} in this space")
            old = row[0]
            now = time.time()
            # the history keeps the previous text redacted: an edit that takes a secret out of a memory must
            # not leave it in the history (nor, through the scrub below, in the file bytes)
            self.db.execute("INSERT INTO history(node_id, space_id, text, speaker, edited_at) VALUES (?,?,?,?,?)",
                            (node_id, space_id, redact(old), row[1], now))
            derived = self._purge_derived(space_id, [node_id], [old])
            self._tombstone(space_id, [node_id])
            self._replace_keyword_row(space_id, node_id, keywords)   # before the row's keywords change
            # created_at moves: another process's in-process index tells a changed row by (id, created_at)
            self.db.execute(f"UPDATE nodes SET text = ?, keywords = ?, created_at = {self.dialect.greatest}(?, created_at + "
                            f"0.001) WHERE id = ?", (text, " ".join(keywords), now, node_id))
            vecs = {node_id: vector, **(followers or {})}
            self._write_vectors(space_id, vecs, now)
            self.db.execute("DELETE FROM node_passage WHERE node_id = ?", (node_id,))
            if passages is not None and len(passages):
                self.db.executemany("INSERT INTO node_passage(node_id, idx, space_id, embedding) VALUES (?,?,?,?)",
                                    [(node_id, i, space_id, _blob(v)) for i, v in enumerate(passages)])
            self.db.execute("UPDATE spaces SET nodes_version = nodes_version + 1 WHERE id = ?", (space_id,))
            self._signs_replace(space_id, vecs)
        self._drop_process_caches(space_id)
        scrub = self.scrub([old, *derived["semantic_texts"]]) if not self._in_tx else None
        return {"id": node_id, "previous": old, "semantic": derived["semantic"], "asks": derived["asks"],
                "hubs_reset": derived["hubs_reset"], "scrub": scrub}

    def node_history(self, node_id: int) -> list[dict[str, Any]]:
        """Earlier texts of a memory, oldest first: ``[{"version", "text", "speaker", "edited_at"}]``
        (``edited_at``: when that text was replaced)."""
        return [{"version": n, "text": t, "speaker": s, "edited_at": e} for n, (t, s, e) in enumerate(
            self.db.execute("SELECT text, speaker, edited_at FROM history WHERE node_id = ? ORDER BY id",
                            (node_id,)), start=1)]

    # ---------------------------------------------------------------- spaces
    def drop_space(self, space_id: int) -> dict[str, Any]:
        """Delete a space and everything in it completely (:meth:`erase_nodes` for its memories, then its
        remaining records, asks, hubs, sign bits and the space row), then scrub the file."""
        with self.transaction():
            rows = self.db.execute("SELECT id, text FROM nodes WHERE space_id = ?", (space_id,)).fetchall()
            texts = [r[1] for r in rows]
            texts += [r[0] for r in self.db.execute("SELECT text FROM history WHERE space_id = ?", (space_id,))]
            texts += [r[0] for r in self.db.execute("SELECT text FROM semantic WHERE space_id = ?", (space_id,))]
            texts += [r[0] for r in self.db.execute("SELECT text FROM session_gists WHERE space_id = ?", (space_id,))]
            rep = self.erase_nodes(space_id, [r[0] for r in rows], scrub=False)
            rest = [r[0] for r in self.db.execute("SELECT id FROM semantic WHERE space_id = ?", (space_id,))]
            for sql in ("DELETE FROM semantic_evidence WHERE semantic_id IN ({ids})",
                        f"DELETE FROM {self.dialect.semantic_vectors} WHERE semantic_id IN ({{ids}})",
                        "DELETE FROM semantic WHERE id IN ({ids})"):
                _delete_in(self, sql, rest)
            for table in ("asks", "hubs", "edges", *self.dialect.space_index_tables, "history", "node_passage",
                          "node_terms", "tombstones", "supersessions", "session_gists"):
                self.db.execute(f"DELETE FROM {table} WHERE space_id = ?", (space_id,))
            self.db.execute("DELETE FROM spaces WHERE id = ?", (space_id,))
        self._drop_process_caches(space_id)
        self._searches.pop(space_id, None)
        rep["scrub"] = self.scrub(texts) if not self._in_tx else None
        return rep

    def rename_space(self, old: str, new: str) -> None:
        """Rename a space (its memories are keyed by the space id: nothing else changes)."""
        self.check_space_name(new)
        with self.transaction():
            sp = self.require_space(old)
            if self.get_space(new) is not None:
                raise StoreError(f"space '{new}' already exists")
            self.db.execute("UPDATE spaces SET name = ? WHERE id = ?", (new, sp.id))


def _delete_in(store: Any, sql: str, ids: Sequence[int], params: Sequence[Any] = ()) -> int:
    """Run a ``DELETE ... IN ({ids})`` (``params`` bound before the ids) 500 ids at a time (no rows to read:
    portable to psycopg, whose cursor of a DELETE has no result to iterate). Returns the rows deleted."""
    return sum(store.db.execute(sql.format(ids=",".join("?" * len(c))), (*params, *c)).rowcount
               for c in _chunks(ids))


def _chunks(ids: Sequence[int], n: int = 500) -> Iterable[list[int]]:
    for i in range(0, len(ids), n):
        yield list(ids[i:i + n])


class FilteredSearch:
    """Recall filters (speaker, session, time window) applied in candidate selection: keyword search joined
    with the matching memories, the date window's memories among them (KNN among them is the engine's
    ``knn_among``)."""

    def keyword_search_among(self, space_id: int, terms: Sequence[str], limit: int, **filters: Any
                             ) -> list[tuple[int, float]]:
        """:meth:`keyword_search` restricted to the memories matching ``filters`` (joined in the BM25
        statement, so the limit counts matching memories only; the statistics stay the space's)."""
        where, args = filter_clause(alias="n", **filters)
        return self._bm25(space_id, terms, where, args, limit)

    def nodes_in_window_among(self, space_id: int, start: float, end: float, limit: int, **filters: Any) -> list[int]:
        """:meth:`nodes_in_window` among the memories matching ``filters``."""
        where, args = filter_clause(**filters)
        lo = start if start != float("-inf") else -1e300
        hi = end if end != float("inf") else 1e300
        return [r[0] for r in self.db.execute(
            f"SELECT id FROM nodes WHERE space_id=? AND ts BETWEEN ? AND ?{where} ORDER BY ts LIMIT ?",
            (space_id, lo, hi, *args, int(limit)))]
