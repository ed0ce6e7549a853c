"""Secret redaction on ordinary conversation text (issue 32): how many turns :func:`hela_cli.text.redact.redact`
changes, and which. The dev files hold no secrets, so every changed turn is a false positive.

    python benchmarks/quality/redact_false_positives.py /work/shared/data/locomo_dev.json [more files] [--show 20]
    python benchmarks/quality/redact_false_positives.py --lines hela_cli/**/*.py docs/*.md   # code and docs, per line

Each file is read with hela's parser (any format ``hela ingest`` reads), or with ``--lines`` one line as one
turn (source code and docs full of the words key, token and password: what coding transcripts are made of);
prints, per file (``--lines``: for all of them), the turns, the turns changed, the kinds of the marks put in,
the redaction CPU time per turn, and up to ``--show`` changed turns.
"""

from __future__ import annotations

import argparse
import collections
import re
import time

from pathlib import Path

from hela_cli.formats import Turn, parse_file
from hela_cli.text.redact import redact


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--show", type=int, default=20)
    ap.add_argument("--lines", action="store_true", help="each line of the files is a turn (all files together)")
    args = ap.parse_args()
    if args.lines:
        lines = [Turn("line", line, 0.0, "", "", f"{path}:{i}") for path in args.files
                 for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1) if line.strip()]
        report(f"{len(args.files)} files, by line", lines, args.show)
        return
    for path in args.files:
        report(path, [t for c in parse_file(path) for t in c.turns], args.show)


def report(path: str, turns: list[Turn], show: int) -> None:
    kinds: collections.Counter[str] = collections.Counter()
    changed = []
    t0 = time.process_time()   # CPU time: the machine is shared
    for t in turns:
        out = redact(t.text)
        if out != t.text:
            changed.append((t.source_id, t.text, out))
            kinds.update(re.findall(r"\[REDACTED:([a-z0-9-]+)\]", out))
    per_turn_us = (time.process_time() - t0) / max(1, len(turns)) * 1e6
    print(f"{path}: {len(turns)} turns, {len(changed)} changed ({100 * len(changed) / max(1, len(turns)):.2f} %), "
          f"marks {dict(kinds)}, {per_turn_us:.0f} us CPU per turn")
    for sid, before, after in changed[:show]:
        i = next(k for k, (a, b) in enumerate(zip(before, after)) if a != b)  # around the first change
        print(f"  {sid}: {before[max(0, i - 60):i + 80]!r}\n    -> {after[max(0, i - 60):i + 80]!r}")


if __name__ == "__main__":
    main()
