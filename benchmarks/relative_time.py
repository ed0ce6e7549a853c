"""Relative time in a question, tried as a new user would (issue 32): four memories added 1, 3, 9 and 40 days
before now with the real default embedder, then questions that name a time relative to now.

    python benchmarks/relative_time.py [--space-now]

Prints, per question, the age in days of the memories in retrieval order (the memory the question names
should come first). ``--space-now``: leave ``now`` to retrieval (the space's newest memory, one day old)
instead of passing the wall clock as a hook does. Uses a temporary database.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from hela_cli.config import Config
from hela_cli.memory import Memory

DAY = 86_400.0
MEMORIES = [(1, "I fixed the flaky login test in the auth service"),
            (3, "I refactored the payment module and split the invoice class"),
            (9, "I wrote the onboarding docs for the public API"),
            (40, "I upgraded the Postgres database to version 16")]
QUESTIONS = ["What did I do 3 days ago?", "What did I do yesterday?", "What did I do last week?",
             "What did I do 9 days ago?", "What did we change yesterday?", "What did I work on this morning?",
             "What did I do on Monday?", "What did I do last month?", "What did I do 40 days ago?",
             "What did we change in the login test yesterday?"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--space-now", action="store_true")
    args = ap.parse_args()
    now = time.time()
    with tempfile.TemporaryDirectory() as d, Memory(Config(db=os.path.join(d, "t.db"))) as mem:
        for age, text in MEMORIES:
            mem.add("me", text, time=now - age * DAY)
        print(time.strftime("now: %A %Y-%m-%d %H:%M %Z", time.localtime(now)))
        for q in QUESTIONS:
            res = mem.retrieve(q, "me", learn=False, now=None if args.space_now else now)
            print(f"{q:50s} {[round((now - m['timestamp']) / DAY) for m in res.memories]}")


if __name__ == "__main__":
    main()
