"""A GGUF header reader: validates a model file and reads the metadata hela needs before llama.cpp sees it
(a truncated or corrupt file must be an error, not a crash)."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

from hela_cli.errors import ModelError


_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q",
                 12: "<d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9
_U64 = struct.Struct("<Q")
# (block size, bytes per block) of the common ggml tensor types; others come from the gguf package, whose
# import alone took longer than the whole header walk (tests check this table against it)
_TYPE_SIZES = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
               9: (32, 40), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),
               15: (256, 292), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 30: (1, 2)}
_META_SUFFIXES = (".pooling_type", ".context_length", ".embedding_length")


def _scan_gguf(buf: Any, size: int, info: dict[str, Any] | None = None, prefix: str | None = None
               ) -> tuple[dict[str, Any], list[tuple[str, int, int]], int]:
    """Walk a GGUF (v2/v3) header: ``(selected metadata, [(tensor, offset, n_bytes)], data start)``.

    ``info``, when given, also receives the ``general.*`` keys, whether the file has a chat template
    and ``n_params`` (the number of weights of all tensors). ``prefix``: also return every key starting
    with it, arrays decoded as lists (e.g. ``"tokenizer."``).

    A direct walk of the header instead of ``gguf.GGUFReader``, which builds a numpy view per vocabulary
    string and took seconds on every model load. Every length is bounds-checked, so a corrupt count or
    a truncated file is a ``ValueError``, never a huge allocation.
    """
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

    def value(vtype: int, keep: bool = False) -> Any:
        nonlocal pos
        if vtype in _GGUF_SCALARS:
            return take(_GGUF_SCALARS[vtype])
        if vtype == _GGUF_STRING:
            return string()
        if vtype == _GGUF_ARRAY:
            etype, count = take("<I"), take("<Q")
            if count > size - pos:
                raise ValueError(f"array of {count} items at byte {pos} runs past the end of the file")
            if keep:
                return [value(etype) for _ in range(count)]
            if etype in _GGUF_SCALARS:  # skip fixed-size items in one step
                n = count * struct.calcsize(_GGUF_SCALARS[etype])
                if pos + n > size:
                    raise ValueError(f"array at byte {pos} runs past the end of the file")
                pos += n
            elif etype == _GGUF_STRING:  # skip the strings (a vocabulary: 30-50k) without decoding them
                unpack, p = _U64.unpack_from, pos
                for _ in range(count):
                    if p + 8 > size:
                        raise ValueError(f"header truncated at byte {p}")
                    p += 8 + unpack(buf, p)[0]
                    if p > size:
                        raise ValueError(f"string at byte {p} runs past the end of the file")
                pos = p
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
        keep = prefix is not None and key.startswith(prefix)
        v = value(take("<I"), keep)
        if key == "general.alignment" and isinstance(v, int) and v > 0:
            alignment = v
        if keep or key == "general.architecture" or key.endswith(_META_SUFFIXES):
            meta[key] = v
        if info is not None and (key.startswith("general.") or key == "tokenizer.chat_template"):
            info[key] = v
    tensors = []
    n_params = 0
    for _ in range(n_tensors):
        name = string()
        n_dims = take("<I")
        if n_dims > 8:
            raise ValueError(f"tensor {name} has {n_dims} dimensions")
        n_el = 1
        for _ in range(n_dims):
            n_el *= take("<Q")
        ttype, offset = take("<I"), take("<Q")
        if ttype in _TYPE_SIZES:
            block, type_size = _TYPE_SIZES[ttype]
        else:
            from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

            try:
                block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ttype)]
            except (ValueError, KeyError):
                raise ValueError(f"tensor {name} has unknown type {ttype}") from None
        tensors.append((name, offset, n_el // block * type_size))
        n_params += n_el
    if info is not None:
        info["n_params"] = n_params
    data_start = -(-pos // alignment) * alignment
    return meta, tensors, data_start


def check_gguf(path: Path, info: dict[str, Any] | None = None, prefix: str | None = None,
               cache: bool = False) -> dict[str, Any]:
    """Validate a GGUF file before llama.cpp sees it (a truncated file must not crash the process).

    Returns selected metadata (architecture, pooling type, context length; with ``prefix`` also every key
    starting with it, arrays included); ``info`` see ``_scan_gguf``. ``cache``: keep the result in the
    user's cache dir, keyed by the file's name, size and mtime (a changed or truncated file is walked
    again): walking past a 30k-string vocabulary took 15 ms of every one-shot ``hela ask``; use it only
    for small results (no vocabulary prefix).
    """
    if cache and info is None:
        from hela_cli.paths import file_cache, read_cache, write_cache

        try:
            where = file_cache(path, f"gguf-{prefix or ''}")
        except OSError as e:
            raise ModelError(f"{path}: cannot read model file ({e.strerror or e})") from None
        meta = read_cache(where)
        if isinstance(meta, dict):
            return meta
        meta = check_gguf(path, prefix=prefix)
        write_cache(where, meta)
        return meta
    import mmap

    try:
        with open(path, "rb") as f:
            magic = f.read(4)
            if magic != b"GGUF":
                raise ModelError(f"{path}: not a GGUF model file (bad magic bytes)")
            size = os.fstat(f.fileno()).st_size
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                meta, tensors, data_start = _scan_gguf(buf, size, info, prefix)
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



# architectures that are sentence encoders even when a file lacks the pooling key
_ENCODERS = ("bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "t5encoder", "modern-bert", "neo-bert")


def _quant_name(file_type: Any) -> str | None:
    """``general.file_type`` as llama.cpp names it (15 -> "Q4_K_M")."""
    if not isinstance(file_type, int):
        return None
    from gguf.constants import LlamaFileType

    try:
        name = LlamaFileType(file_type).name
    except ValueError:
        return f"type {file_type}"
    return name.removeprefix("MOSTLY_").removeprefix("ALL_")


def _size_label(n: int) -> str:
    for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= div:
            return f"{n / div:.1f}".rstrip("0").rstrip(".") + unit
    return str(n)


def gguf_info(path: str | Path) -> dict[str, Any]:
    """What ``hela models list`` shows about a GGUF, from its header only (no weights are read):
    ``{name, architecture, parameters, parameters_label, quantization, kind, context_length, size_bytes}``;
    ``kind`` is "embedding" (a sentence encoder: pooling type or encoder architecture) or "chat".
    Raises :class:`ModelError` for a file that is not a valid GGUF."""
    path = Path(path)
    info: dict[str, Any] = {}
    meta = check_gguf(path, info)
    arch = str(meta.get("general.architecture") or "?")
    embedding = f"{arch}.pooling_type" in meta or arch in _ENCODERS
    n = int(info.get("n_params") or 0)
    return {
        "name": info.get("general.name") or info.get("general.basename") or path.stem,
        "architecture": arch,
        "parameters": n,
        "parameters_label": info.get("general.size_label") or _size_label(n),
        "quantization": _quant_name(info.get("general.file_type")),
        "kind": "embedding" if embedding else "chat",
        "chat_template": "tokenizer.chat_template" in info,
        "context_length": meta.get(f"{arch}.context_length"),
        "size_bytes": path.stat().st_size,
    }
