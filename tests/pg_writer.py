"""One writer process of the many-writers test (tests/test_postgres_writers.py): adds turns (some shared
with the other writers), asks with learning, consolidates and forgets in one space, then prints JSON
``{"learned": [steps...], "added": n}``. Usage: ``python tests/pg_writer.py DB TAG ROUNDS [SPACE]`` (space
``shared`` by default)."""

from __future__ import annotations

import json
import re
import sys

from hela_cli.testing import HashEmbedder
from hela_cli.config import Config
from hela_cli.memory import Memory

T0 = 1_700_000_000.0


class DistillChat:
    """A chat model that distils every cluster into one fact citing its first turn (no model file)."""

    model_id, n_ctx = "test:distill", 4096

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def generate(self, messages, *, max_tokens=256, temperature=0.0, json_schema=None, stop=None):
        if json_schema is None:
            return "an answer"
        ids = json_schema["properties"]["facts"]["items"]["properties"]["evidence"]["items"]["enum"]
        prompt = " ".join(str(m.get("content", "")) for m in messages)
        said = re.findall(r"says: (turn \d+ about the [A-Za-z ]+)", prompt)  # a fact stated in the cluster
        return json.dumps({"traits": [], "knowledge": [],
                           "facts": [{"subject": "x", "text": said[0] if said else "nothing", "date": "",
                                      "evidence": ids[:1]}]})


def main(db: str, tag: str, rounds: int, space: str = "shared") -> None:
    cfg = Config()
    cfg.db = db
    cfg.consolidation.delta_hub = 0.5   # hubs appear quickly, so consolidation writes records
    mem = Memory(cfg, embedder=HashEmbedder(), chat=DistillChat())
    learned, added = [], 0
    topics = ["hiking trip", "dog named Tofu", "Lisbon flat", "piano lessons", "garden bike repair"]
    for i in range(rounds):
        mem.add(space, f"{tag} says: turn {i} about the {topics[i % 5]}", speaker=tag, time=T0 + 60 * i)
        added += 1
        if i % 4 == 0:  # the same turn (same source id) from every writer: stored once
            mem.add(space, f"everyone: common turn {i} about the {topics[i % 5]}", speaker="all", time=T0 + 60 * i,
                    source_id=f"common-{i}")
        res = mem.retrieve(f"what about the {topics[(i + 1) % 5]}?", space, now=T0 + 86400, learn=True)
        if res.memories:
            learned.append(res.step)
        if i % 8 == 7:
            mem.consolidate(space)
            mem.forget(space, apply=True, now=T0 + 86400)
    mem.close()
    print(json.dumps({"learned": learned, "added": added}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), *sys.argv[4:5])
