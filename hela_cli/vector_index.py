"""An in-process vector index for long-lived processes (library use, agents, benchmarks).

sqlite-vec's brute-force KNN costs ~16 ms at 10k and ~1.4 s at 1M 384-d vectors on this machine; a
process that answers many questions can instead keep the space's vectors in memory:

* up to ``EXACT_LIMIT`` (20k) vectors: exact cosine over a float32 matrix (one matvec on this thread);
* above it: 1-bit sign quantization of mean-centred vectors, scanned with XOR + popcount one 64-bit word
  column at a time, then the best ``rescore`` (2000) candidates re-ranked from a float16 copy.
  ``Store.knn`` then recomputes the returned cosines from the stored float32 vectors, so scores stay
  exact; only the choice of the top k is approximate (recall@100 against the exact ranking is measured
  by ``benchmarks/scale.py`` and recorded in BENCHMARKS.md).

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


class VectorIndex:
    def __init__(self, ids: np.ndarray, vectors: np.ndarray, exact_limit: int | None = None, rescore: int = 2000):
        exact_limit = EXACT_LIMIT if exact_limit is None else exact_limit
        self.ids = np.asarray(ids, dtype=np.int64)
        self.n = len(self.ids)
        self.rescore = rescore
        self.exact = self.n <= exact_limit
        if self.exact:
            self.f32 = np.ascontiguousarray(vectors, dtype=np.float32)
        else:
            self.f16 = np.ascontiguousarray(vectors, dtype=np.float16)
            # sign bits of *centred* vectors: sentence embeddings are anisotropic, raw signs waste bits
            self.mean = self.f16.mean(axis=0, dtype=np.float64).astype(np.float32)
            nbytes = -(-vectors.shape[1] // 64) * 8          # whole 64-bit words: popcount per word
            self.bits = np.zeros((self.n, nbytes), dtype=np.uint8)
            for i in range(0, self.n, 65536):
                packed = np.packbits(self.f16[i:i + 65536].astype(np.float32) > self.mean, axis=1)
                self.bits[i:i + 65536, :packed.shape[1]] = packed
            # one row per 64-bit word over all nodes: the Hamming scan is a few long vector ops, no per-row sums
            self.words = np.ascontiguousarray(self.bits.view(np.uint64).T)
            del self.bits

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[int, bytes]], dim: int, exact_limit: int | None = None,
                  **kw: int) -> "VectorIndex":
        """Build from ``(node_id, float32 blob)`` rows, 64k rows at a time: beyond ``exact_limit`` rows
        the blocks are kept as float16 at once, so 1M vectors never sit in memory as float32."""
        exact_limit = EXACT_LIMIT if exact_limit is None else exact_limit
        ids: list[int] = []
        blocks: list[np.ndarray] = []
        blobs: list[bytes] = []

        def flush() -> None:
            if blobs:
                block = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim)
                big = len(ids) > exact_limit
                blocks.append(block.astype(np.float16) if big else block)
                if big and blocks[0].dtype != np.float16:
                    blocks[:] = [b.astype(np.float16) for b in blocks]
                blobs.clear()

        for nid, blob in rows:
            ids.append(nid)
            blobs.append(blob)
            if len(blobs) == 65536:
                flush()
        flush()
        mat = np.concatenate(blocks) if blocks else np.zeros((0, dim), dtype=np.float32)
        return cls(np.array(ids, dtype=np.int64), mat, exact_limit=exact_limit, **kw)

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
        packed = np.packbits(q > self.mean)
        qbits[:len(packed)] = packed
        qwords = qbits.view(np.uint64)
        ham = np.zeros(self.n, dtype=np.uint16)
        tmp = np.empty(self.n, dtype=np.uint64)
        for row, qw in zip(self.words, qwords):
            np.bitwise_xor(row, qw, out=tmp)
            ham += np.bitwise_count(tmp)
        c = min(self.n, max(self.rescore, k))
        cand = np.argpartition(ham, c - 1)[:c]
        sims = _matvec(self.f16[cand].astype(np.float32), q)
        order = np.argsort(-sims, kind="stable")[:k]
        return [(int(self.ids[cand[i]]), float(sims[i])) for i in order]

