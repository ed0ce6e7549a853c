"""Secret redaction on ordinary conversation text (issue 32): how many turns :func:`hela_cli.text.redact.redact`
changes, and which. The dev files hold no secrets, so every changed turn is a false positive.

    python benchmarks/redact_false_positives.py /work/shared/data/locomo_dev.json [more files] [--show 20]

Each file is read with hela's parser (any format ``hela ingest`` reads); prints, per file, the turns, the
turns changed, the kinds of the marks put in, the redaction time per turn, and up to ``--show`` changed turns.
"""

from __future__ import annotations

import argparse
import collections
import re
import time

from hela_cli.formats import parse_file
from hela_cli.text.redact import redact


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--show", type=int, default=20)
    args = ap.parse_args()
    for path in args.files:
        turns = [t for c in parse_file(path) for t in c.turns]
        kinds: collections.Counter[str] = collections.Counter()
        changed = []
        t0 = time.perf_counter()
        for t in turns:
            out = redact(t.text)
            if out != t.text:
                changed.append((t.source_id, t.text, out))
                kinds.update(re.findall(r"\[REDACTED:([a-z0-9-]+)\]", out))
        per_turn_us = (time.perf_counter() - t0) / max(1, len(turns)) * 1e6
        print(f"{path}: {len(turns)} turns, {len(changed)} changed ({100 * len(changed) / max(1, len(turns)):.2f} %), "
              f"marks {dict(kinds)}, {per_turn_us:.0f} us per turn")
        for sid, before, after in changed[:args.show]:
            i = next(k for k, (a, b) in enumerate(zip(before, after)) if a != b)  # around the first change
            print(f"  {sid}: {before[max(0, i - 60):i + 80]!r}\n    -> {after[max(0, i - 60):i + 80]!r}")


if __name__ == "__main__":
    main()
