"""An in-process vector index for long-lived processes (library use, agents, benchmarks).

sqlite-vec's brute-force KNN costs ~75 ms at 100k and ~0.7 s at 1M 384-d vectors on this class of
machine; a process that answers many questions can instead keep the space's vectors in memory:

* up to ``exact_limit`` vectors: exact cosine over a float32 matrix (one BLAS matvec);
* above it: 1-bit sign quantization (of mean-centred vectors) scanned with XOR + popcount, then the best ``rescore`` candidates are
  re-ranked exactly from a float16 copy (recall@100 of the exact ranking is measured in BENCHMARKS.md).

The index is a cache: the database stays the source of truth. It is rebuilt when the space's
``nodes_version`` (bumped on every insert/delete) changes. No SQL here.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np


class VectorIndex:
    def __init__(self, ids: np.ndarray, vectors: np.ndarray, exact_limit: int = 200_000, rescore: int = 2000):
        self.ids = np.asarray(ids, dtype=np.int64)
        self.n = len(self.ids)
        self.rescore = rescore
        self.exact = self.n <= exact_limit
        if self.exact:
            self.f32 = np.ascontiguousarray(vectors, dtype=np.float32)
        else:
            self.f16 = np.ascontiguousarray(vectors, dtype=np.float16)
            # sign bits of *centred* vectors: sentence embeddings are anisotropic, raw signs waste bits
            self.mean = vectors.mean(axis=0, dtype=np.float64).astype(np.float32)
            self.bits = np.empty((self.n, (vectors.shape[1] + 7) // 8), dtype=np.uint8)
            for i in range(0, self.n, 65536):
                self.bits[i:i + 65536] = np.packbits(vectors[i:i + 65536] > self.mean, axis=1)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[int, bytes]], dim: int, **kw: int) -> "VectorIndex":
        ids, blobs = [], []
        for nid, blob in rows:
            ids.append(nid)
            blobs.append(blob)
        mat = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), dim) if ids else \
            np.zeros((0, dim), dtype=np.float32)
        return cls(np.array(ids, dtype=np.int64), mat, **kw)

    def knn(self, q: np.ndarray, k: int) -> list[tuple[int, float]]:
        """``[(node_id, cosine)]`` best first (vectors are unit length)."""
        if self.n == 0 or k <= 0:
            return []
        q = np.asarray(q, dtype=np.float32)
        k = min(k, self.n)
        if self.exact:
            sims = self.f32 @ q
            top = np.argpartition(-sims, k - 1)[:k] if k < self.n else np.arange(self.n)
            top = top[np.argsort(-sims[top], kind="stable")]
            return [(int(self.ids[i]), float(sims[i])) for i in top]
        qbits = np.packbits(q > self.mean)
        ham = np.bitwise_count(np.bitwise_xor(self.bits, qbits)).sum(axis=1, dtype=np.int32)
        c = min(self.n, max(self.rescore, k))
        cand = np.argpartition(ham, c - 1)[:c]
        sims = self.f16[cand].astype(np.float32) @ q
        order = np.argsort(-sims, kind="stable")[:k]
        return [(int(self.ids[cand[i]]), float(sims[i])) for i in order]

