"""An in-process vector index for long-lived processes (library use, agents, benchmarks).

sqlite-vec's brute-force KNN costs ~16 ms at 10k and ~1.4 s at 1M 384-d vectors on this machine; a
process that answers many questions can instead keep the space's vectors in memory:

* up to ``EXACT_LIMIT`` (20k) vectors: exact cosine over a float32 matrix (one matvec on this thread);
* above it: 1-bit sign quantization of mean-centred vectors, scanned with XOR + popcount one 64-bit word
  column at a time, then the best ``rescore`` (2000) candidates re-ranked from an int8 copy (per-row scale).
  ``Store.knn`` then recomputes the returned cosines from the stored float32 vectors, so scores stay
  exact; only the choice of the top k is approximate (recall@100 against the exact ranking is measured
  by ``benchmarks/speed/scale.py`` and recorded in BENCHMARKS.md).

The index is a cache: the database stays the source of truth. It is rebuilt when the space's
``nodes_version`` (bumped on every insert/delete) changes. No SQL here.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np


def _matvec(mat: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``mat @ q`` on the calling thread. numpy's ``@`` goes to a multi-threaded BLAS whose worker threads
    spin after each call; on 2 cores shared with llama.cpp or another process that made every following
    step of a retrieval several times slower (measured: matvec 8 ms vs 2 ms, row loading 5.8 ms vs 1 ms)."""
    return np.einsum("ij,j->i", mat, q)


EXACT_LIMIT = 20_000  # above this many vectors the quantized scan is faster than an exact matvec (measured)


def _int8(block: np.ndarray, center: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row symmetric int8 quantization of ``row - center``: ``row ~= center + q8 * scale``.

    Centring first spends the 8 bits on what differs between memories, not on the direction all sentence
    embeddings share; and since ``row . q = (row - center) . q + center . q``, ranking by the centred part
    is ranking by cosine. int8 -> float32 is ~25x faster than float16 -> float32 in numpy here (0.15 vs
    3.7 ms for 2000 x 384) and half the memory."""
    block = np.asarray(block, dtype=np.float32) - center
    scale = np.abs(block).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    q8 = np.rint(block / scale[:, None]).astype(np.int8)
    return q8, scale.astype(np.float32)


def hamming_nearest(ham: np.ndarray, n: int) -> np.ndarray:
    """Positions of the ``n`` smallest of ``ham`` (small non-negative integers), in no particular order;
    ties at the border go to the lower positions. A histogram finds the border distance, then everything
    below it plus enough at it: no sort, and ~3x cheaper than ``argpartition`` (measured, 2,000 of
    binomial distances: 0.28 vs 0.85 ms CPU at 100k values, 2.3 vs 7.2 ms at 1M)."""
    if n >= len(ham):
        return np.arange(len(ham))
    border = int(np.searchsorted(np.cumsum(np.bincount(ham)), n))
    below = np.flatnonzero(ham < border)
    return np.concatenate([below, np.flatnonzero(ham == border)[:n - len(below)]])


class VectorIndex:
    def __init__(self, ids: np.ndarray, vectors: np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray],
                 exact_limit: int | None = None, rescore: int = 2000):
        """``vectors``: float rows, or ``(int8 rows, scales, center)`` already quantized (see :meth:`from_rows`)."""
        exact_limit = EXACT_LIMIT if exact_limit is None else exact_limit
        self.ids = np.asarray(ids, dtype=np.int64)
        self.n = len(self.ids)
        self.rescore = rescore
        self.exact_limit = exact_limit
        self.exact = self.n <= exact_limit and not isinstance(vectors, tuple)
        if self.exact:
            self.f32 = np.ascontiguousarray(vectors, dtype=np.float32)
            return
        if isinstance(vectors, tuple):
            self.q8, self.scale, self.center = vectors
        else:
            self.center = np.asarray(vectors, dtype=np.float32).mean(axis=0, dtype=np.float64).astype(np.float32)
            parts = [_int8(vectors[i:i + 65536], self.center) for i in range(0, self.n, 65536)]
            self.q8 = np.concatenate([p[0] for p in parts])
            self.scale = np.concatenate([p[1] for p in parts])
        nbytes = -(-self.q8.shape[1] // 64) * 8          # whole 64-bit words: popcount per word
        bits = np.zeros((self.n, nbytes), dtype=np.uint8)
        for i in range(0, self.n, 65536):
            # sign bits of the *centred* vectors: raw signs of anisotropic embeddings waste bits
            packed = np.packbits(self.q8[i:i + 65536] > 0, axis=1)
            bits[i:i + 65536, :packed.shape[1]] = packed
        # one row per 64-bit word over all nodes: the Hamming scan is a few long vector ops, no per-row sums
        self.words = np.ascontiguousarray(bits.view(np.uint64).T)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[int, bytes]], dim: int, exact_limit: int | None = None,
                  **kw: int) -> "VectorIndex":
        """Build from ``(node_id, float32 blob)`` rows, 64k rows at a time: beyond ``exact_limit`` rows
        the blocks are quantized to int8 at once (centred on the mean of the rows read so far, at least
        ``exact_limit`` of them), so 1M vectors never sit in memory as float32."""
        exact_limit = EXACT_LIMIT if exact_limit is None else exact_limit
        ids: list[int] = []
        exact_blocks: list[np.ndarray] = []
        q_blocks: list[tuple[np.ndarray, np.ndarray]] = []
        blobs: list[bytes] = []
        center: np.ndarray | None = None

        def flush() -> None:
            nonlocal center
            if blobs:
                exact_blocks.append(np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim))
                blobs.clear()
            if len(ids) > exact_limit and exact_blocks:
                if center is None:
                    center = np.concatenate(exact_blocks).mean(axis=0, dtype=np.float64).astype(np.float32)
                q_blocks.extend(_int8(b, center) for b in exact_blocks)
                exact_blocks.clear()

        for nid, blob in rows:
            ids.append(nid)
            blobs.append(blob)
            if len(blobs) == 65536:
                flush()
        flush()
        id_arr = np.array(ids, dtype=np.int64)
        if q_blocks:
            assert center is not None
            quant = (np.concatenate([b[0] for b in q_blocks]), np.concatenate([b[1] for b in q_blocks]), center)
            return cls(id_arr, quant, exact_limit=exact_limit, **kw)
        mat = np.concatenate(exact_blocks) if exact_blocks else np.zeros((0, dim), dtype=np.float32)
        return cls(id_arr, mat, exact_limit=exact_limit, **kw)

    def updated(self, keep: np.ndarray, ids: np.ndarray, vectors: np.ndarray) -> "VectorIndex | None":
        """A new index of the rows where ``keep`` is true plus ``(ids, vectors)`` (float32 rows), without
        reading anything else: what a long-lived process needs after a few writes. A quantized index keeps
        its centre (new rows are quantized against it). None when the result would cross ``exact_limit``
        either way: build it again with :meth:`from_rows`."""
        ids = np.asarray(ids, dtype=np.int64)
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), (self.f32 if self.exact else self.q8).shape[1])
        all_ids = np.concatenate([self.ids[keep], ids])
        if self.exact:
            if len(all_ids) > self.exact_limit:
                return None
            return VectorIndex(all_ids, np.concatenate([self.f32[keep], vectors]), exact_limit=self.exact_limit,
                               rescore=self.rescore)
        if len(all_ids) <= self.exact_limit:
            return None
        q8, scale = _int8(vectors, self.center)
        return VectorIndex(all_ids, (np.concatenate([self.q8[keep], q8]), np.concatenate([self.scale[keep], scale]),
                                     self.center), exact_limit=self.exact_limit, rescore=self.rescore)

    def knn(self, q: np.ndarray, k: int) -> list[tuple[int, float]]:
        """``[(node_id, cosine)]`` best first (vectors are unit length)."""
        if self.n == 0 or k <= 0:
            return []
        q = np.asarray(q, dtype=np.float32)
        k = min(k, self.n)
        if self.exact:
            sims = _matvec(self.f32, q)
            top = np.argpartition(-sims, k - 1)[:k] if k < self.n else np.arange(self.n)
            top = top[np.argsort(-sims[top], kind="stable")]
            return [(int(self.ids[i]), float(sims[i])) for i in top]
        qbits = np.zeros(self.words.shape[0] * 8, dtype=np.uint8)
        packed = np.packbits(q > self.center)
        qbits[:len(packed)] = packed
        qwords = qbits.view(np.uint64)
        ham = np.zeros(self.n, dtype=np.uint16)
        tmp = np.empty(self.n, dtype=np.uint64)
        for row, qw in zip(self.words, qwords):
            np.bitwise_xor(row, qw, out=tmp)
            ham += np.bitwise_count(tmp)
        cand = hamming_nearest(ham, min(self.n, max(self.rescore, k)))
        sims = _matvec(self.q8[cand].astype(np.float32), q) * self.scale[cand] + float(self.center @ q)
        order = np.argsort(-sims, kind="stable")[:k]
        return [(int(self.ids[cand[i]]), float(sims[i])) for i in order]



# ------------------------------------------------------------------ the persisted sign-bit index
# A one-shot process (``hela ask``) cannot afford to load or build the index above: 14.5 s at 1M nodes.
# The store keeps each large space's sign bits in the database instead (``sign_blocks``, migration 0009:
# 48 bytes a node for 384-d, in blocks of ``SIGN_BLOCK`` nodes, so a cold load reads ~250 rows at 1M),
# and a query is a Hamming scan of the bits followed by an exact float32 rescoring of the best candidates
# read by id. These are the pure parts (no SQL): bits of vectors, blocks as bytes, the scan.

SIGN_BLOCK = 4096  # nodes per stored block: an append rewrites at most one block (~230 kB at 384-d)


def sign_words(vectors: np.ndarray, center: np.ndarray) -> np.ndarray:
    """Sign bits of ``vectors - center`` as ``(words, n)`` uint64, word-major (one row per 64 dimensions,
    zero-padded): the layout the scan reads, and the layout of a stored block."""
    vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, len(center))
    nwords = -(-len(center) // 64)
    bits = np.zeros((len(vectors), nwords * 8), dtype=np.uint8)
    packed = np.packbits(vectors > center, axis=1)
    bits[:, :packed.shape[1]] = packed
    return np.ascontiguousarray(bits.view(np.uint64).T)


def block_bytes(ids: np.ndarray, words: np.ndarray) -> tuple[bytes, bytes]:
    """A block's ``ids`` (int64) and ``bits`` (word-major uint64) columns."""
    return np.asarray(ids, dtype=np.int64).tobytes(), np.ascontiguousarray(words, dtype=np.uint64).tobytes()


def block_arrays(ids: bytes, bits: bytes, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`block_bytes`: ``(ids, words)``."""
    id_arr = np.frombuffer(ids, dtype=np.int64)
    return id_arr, np.frombuffer(bits, dtype=np.uint64).reshape(-(-dim // 64), len(id_arr))


class SignIndex:
    """The loaded sign bits of one space: proposes Hamming-nearest candidates for exact rescoring.

    Kept as the blocks read from the file (zero-copy views of the fetched BLOBs) and scanned block by
    block: a fresh process pays for every new page it touches, and concatenating 1M nodes' bits into one
    array (48 MB) plus full-length temporaries cost more than the scan (measured: 1.0 s of a 2.0 s cold
    query on a busy machine); a block's temporaries (4,096 x 6 words) stay in the CPU cache."""

    def __init__(self, blocks: list[tuple[np.ndarray, np.ndarray]], center: np.ndarray):
        self.blocks = blocks                      # [(ids int64, words (nwords, n) uint64)]
        self.center = np.asarray(center, dtype=np.float32)
        sizes = [len(b[0]) for b in blocks]
        self.starts = np.cumsum([0, *sizes])[:-1]  # position of each block's first node
        self.n = int(sum(sizes))

    @classmethod
    def from_blocks(cls, blocks: Iterable[tuple[bytes, bytes]], dim: int, center: np.ndarray) -> "SignIndex":
        return cls([block_arrays(i, b, dim) for i, b in blocks], center)

    @property
    def ids(self) -> np.ndarray:
        return np.concatenate([b[0] for b in self.blocks]) if self.blocks else np.zeros(0, dtype=np.int64)

    def candidates(self, q: np.ndarray, n: int) -> np.ndarray:
        """Ids of the ``n`` nodes whose bits are nearest to the query's (ties at the border broken by
        position), in no particular order."""
        if n >= self.n:
            return self.ids
        qwords = sign_words(np.asarray(q, dtype=np.float32)[None, :], self.center)
        ham = np.empty(self.n, dtype=np.uint16)
        width = max(len(b[0]) for b in self.blocks)
        tmp = np.empty((len(qwords), width), dtype=np.uint64)
        cnt = np.empty((len(qwords), width), dtype=np.uint8)
        for (ids, words), start in zip(self.blocks, self.starts):
            m = len(ids)
            np.bitwise_xor(words, qwords, out=tmp[:, :m])
            np.bitwise_count(tmp[:, :m], out=cnt[:, :m])
            np.sum(cnt[:, :m], axis=0, dtype=np.uint16, out=ham[start:start + m])
        pos = hamming_nearest(ham, n)
        block = np.searchsorted(self.starts, pos, side="right") - 1
        return np.array([self.blocks[b][0][p - self.starts[b]] for b, p in zip(block.tolist(), pos.tolist())],
                        dtype=np.int64)
