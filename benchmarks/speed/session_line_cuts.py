"""What redacting before every cut costs (issue 44, not a test): the one cut of the stored lines
(:func:`hela_cli.text.session_lines.cut`) against the plain cut it replaced (flatten, cut, no redaction).

    python benchmarks/speed/session_line_cuts.py ../shared/data/longmemeval_s_dev30.json [--items 10] [--limit 400]

* display: each turn of the first ``--items`` LongMemEval-S haystacks cut to ``--limit`` characters as the
  hooks show a memory (``hooks.line_chars``): the share of turns the redacting cut redacts (longer than the
  limit, or holding a line break), CPU microseconds per turn: the old plain cut, the redacting cut (what a
  gist piece pays) and the cut of stored text (``stored=True``: markers kept whole, no second redaction;
  what the prompt recall, the brief's memories and the recall by file pay);
* a failing command's result line: a pytest-like output of 1, 10 and 30 kB (Claude Code keeps at most 30k
  characters of a tool's output), its first error line picked and cut as before (no redaction) and now (the
  output redacted whole first): CPU milliseconds per result;
* the first redaction in a fresh process (detect-secrets' plugins imported): CPU milliseconds, as a hook meets it.

Times are CPU time of this process (``time.process_time``), so a busy machine does not inflate them.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from hela_cli.text.coding import first_error_line
from hela_cli.text.session_lines import ERROR_CHARS, cut, error_line


def plain_cut(text: str, limit: int) -> str:
    """The cut before issue 44: one line, cut, no redaction."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def turns(path: Path, items: int) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))[:items]
    return [t["content"] for item in data for session in item["haystack_sessions"] for t in session
            if isinstance(t.get("content"), str)]


def per_call_us(fn, texts: list[str], *args) -> float:
    """CPU microseconds per call (process time: the machine's other load left out)."""
    t = time.process_time()
    for x in texts:
        fn(x, *args)
    return (time.process_time() - t) / len(texts) * 1e6


def pytest_output(size: int) -> str:
    lines = ["Exit code 1", "============================= test session starts =============================="]
    i = 0
    while sum(len(x) + 1 for x in lines) < size:
        lines.append(f"tests/test_module_{i % 40}.py::test_case_{i} PASSED                              [{i % 100:3d}%]")
        i += 1
    lines += ["E   AssertionError: 9.99 != 9.98", "1 failed, %d passed in 3.21s" % i]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lme", type=Path)
    ap.add_argument("--items", type=int, default=10)
    ap.add_argument("--limit", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    texts = turns(a.lme, a.items)
    cut(" ".join(["x" * 20] * 30), 10)   # the first redaction (plugin import) out of the timings
    redacted = sum(len(" ".join(t.split())) > a.limit or "\n" in t for t in texts)
    old = min(per_call_us(plain_cut, texts, a.limit) for _ in range(a.repeat))
    new = min(per_call_us(cut, texts, a.limit) for _ in range(a.repeat))
    shown = min(per_call_us(lambda t: cut(t, a.limit, stored=True), texts) for _ in range(a.repeat))
    results = {}
    for kb in (1, 10, 30):
        out = [pytest_output(kb * 1000)] * 20
        before = min(per_call_us(lambda o: plain_cut(first_error_line(o), ERROR_CHARS), out) for _ in range(a.repeat))
        after = min(per_call_us(error_line, out) for _ in range(a.repeat))
        results[f"{kb}kB"] = {"before_ms": round(before / 1000, 3), "after_ms": round(after / 1000, 3)}
    first = subprocess.run([sys.executable, "-c", "import time; from hela_cli.text.session_lines import cut; t = time.process_time(); "
                            "cut('token ' + 'a1' * 20 + ' x' * 300, 40); print((time.process_time() - t) * 1000)"], capture_output=True, text=True, check=True)
    print(json.dumps({
        "display": {"turns": len(texts), "limit": a.limit, "redacted_share": round(redacted / len(texts), 3),
                    "plain_cut_us": round(old, 1), "cut_us": round(new, 1), "cut_stored_us": round(shown, 1),
                    "median_chars": statistics.median(len(t) for t in texts)},
        "error_line": results,
        "first_redaction_in_a_process_ms": round(float(first.stdout.strip()), 1),
        "load_average": [round(x, 2) for x in __import__("os").getloadavg()],
    }, indent=1))


if __name__ == "__main__":
    main()
