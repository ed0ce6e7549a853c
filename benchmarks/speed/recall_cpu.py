"""CPU time of read-only recalls of the code on ``PYTHONPATH``: an A/B of two checkouts on one space.

    python benchmarks/speed/recall_cpu.py build A.db LOCOMO.json     # the first LoCoMo conversation, hash vectors
    cp A.db B.db
    PYTHONPATH=/path/to/main   python benchmarks/speed/recall_cpu.py time A.db LOCOMO.json 150
    PYTHONPATH=/path/to/branch python benchmarks/speed/recall_cpu.py time B.db LOCOMO.json 150

``build`` ingests the file's first conversation into space ``c`` with the test suite's ``HashEmbedder``
(no model: the vectors are only there to be searched, so a recall's cost is hela's own, not a model's).
``time`` runs 10 warm-up recalls, then the conversation's first N questions as read-only recalls
(``retrieve`` with ``learn=False`` and the question's hash vector) and prints the CPU milliseconds per
recall (``time.process_time``). Alternate the two sides several times and compare medians: one run on a
shared machine is noise. Nothing is written into the repository.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time


def build(db: str, locomo: str) -> None:
    from hela_cli.config import Config
    from hela_cli.memory import Memory
    from hela_cli.store import Store
    from hela_cli.testing import HashEmbedder

    cfg = Config()
    cfg.db = db
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(json.load(open(locomo))[:1], f)
    with Memory(cfg, store=Store(db), embedder=HashEmbedder()) as mem:
        mem.ingest([f.name], space="c")


def timed(db: str, locomo: str, n: int) -> float:
    from hela_cli.config import Config
    from hela_cli.mechanics.retrieval import retrieve
    from hela_cli.store import Store
    from hela_cli.testing import HashEmbedder

    questions = [q["question"] for q in json.load(open(locomo))[0]["qa"]][:n]
    cfg, emb = Config(), HashEmbedder()
    vectors = emb.embed(questions)
    with Store(db) as store:
        space = store.require_space("c")
        for q, v in zip(questions[:10], vectors[:10]):
            retrieve(store, space, emb, q, cfg, learn=False, query_vector=v)
        t0 = time.process_time()
        for q, v in zip(questions, vectors):
            retrieve(store, space, emb, q, cfg, learn=False, query_vector=v)
        return (time.process_time() - t0) / len(questions) * 1000


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "build":
        build(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 5 and sys.argv[1] == "time":
        print(f"{timed(sys.argv[2], sys.argv[3], int(sys.argv[4])):.3f} ms CPU per recall")
    else:
        sys.exit(__doc__)
