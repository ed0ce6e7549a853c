"""GGUF models already on disk: Ollama's model store, LM Studio's models folders, llama.cpp's cache.

``hela models list`` shows them (name, architecture, parameters, quantization, size, chat or embedding,
all read from the GGUF header) and ``models.chat`` / ``models.embedder`` can point at one without
copying it: ``ollama:NAME[:TAG]`` resolves through Ollama's manifest to its blob, anything else is a path.

Where to look is ``models.search_paths``: "" means the usual places (below), "none" means nowhere, else a
list of folders separated by ``os.pathsep`` (":" on Linux). A folder holding ``manifests/`` and ``blobs/``
is read as an Ollama store; any other folder is searched for ``*.gguf`` files (4 levels deep).

Ollama's layout: ``<root>/manifests/registry.ollama.ai/library/NAME/TAG`` is a JSON manifest; its layer
with ``mediaType`` ``application/vnd.ollama.image.model`` has ``digest`` ``sha256:X``; the weights are the
GGUF file ``<root>/blobs/sha256-X``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

from hela_cli.errors import ModelError
from hela_cli.models.gguf import gguf_info

__all__ = ["usual_places", "search_dirs", "find_ggufs", "resolve_ollama", "OLLAMA_MODEL_MEDIA_TYPE"]

OLLAMA_MODEL_MEDIA_TYPE = "application/vnd.ollama.image.model"
OLLAMA_REGISTRY = "registry.ollama.ai"
_MAX_DEPTH = 4


def usual_places() -> list[tuple[str, Path]]:
    """``(source, folder)`` where the common local runners keep GGUF files (environment overrides first:
    ``OLLAMA_MODELS``, ``LLAMA_CACHE``)."""
    home = Path.home()
    xdg_cache = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
    return [
        ("ollama", Path(os.environ.get("OLLAMA_MODELS") or home / ".ollama" / "models")),
        ("lmstudio", home / ".lmstudio" / "models"),
        ("lmstudio", xdg_cache / "lm-studio" / "models"),
        ("llama.cpp", Path(os.environ.get("LLAMA_CACHE") or xdg_cache / "llama.cpp")),
    ]


def _is_ollama(folder: Path) -> bool:
    return (folder / "manifests").is_dir() and (folder / "blobs").is_dir()


def search_dirs(setting: str = "") -> list[tuple[str, Path]]:
    """The folders ``models.search_paths`` names, as ``(source, folder)``; missing folders included (the
    caller skips them)."""
    setting = (setting or "").strip()
    if setting.lower() == "none":
        return []
    if not setting:
        return usual_places()
    out = []
    for part in setting.split(os.pathsep):
        if part.strip():
            folder = Path(part.strip()).expanduser()
            out.append(("ollama" if _is_ollama(folder) else "folder", folder))
    return out


def _ollama_models(root: Path) -> Iterator[tuple[str, Path]]:
    """``(ollama:NAME:TAG, blob path)`` for every manifest of the store that has a model layer."""
    base = root / "manifests"
    if not base.is_dir():
        return
    for manifest in sorted(p for p in base.rglob("*") if p.is_file()):
        rel = manifest.relative_to(base).parts
        if len(rel) < 4:  # registry / namespace / name / tag
            continue
        registry, *names, tag = rel
        if registry == OLLAMA_REGISTRY and names[0] == "library":
            names = names[1:]
        ref = ("" if registry == OLLAMA_REGISTRY else f"{registry}/") + "/".join(names)
        try:
            blob = _model_blob(root, manifest)
        except ModelError:
            continue
        yield f"ollama:{ref}:{tag}", blob


def _model_blob(root: Path, manifest: Path) -> Path:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelError(f"{manifest}: not a readable Ollama manifest ({e.__class__.__name__})") from None
    layers = data.get("layers") if isinstance(data, dict) else None
    for layer in layers if isinstance(layers, list) else []:
        if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_MEDIA_TYPE:
            digest = str(layer.get("digest") or "")
            if not digest.startswith("sha256:") or "/" in digest:
                raise ModelError(f"{manifest}: model layer has no sha256 digest")
            blob = root / "blobs" / digest.replace(":", "-", 1)
            if not blob.is_file():
                raise ModelError(f"{manifest}: model blob {blob.name} is missing from {root / 'blobs'}")
            return blob
    raise ModelError(f"{manifest}: no layer of type {OLLAMA_MODEL_MEDIA_TYPE}")


def resolve_ollama(ref: str, setting: str = "") -> Path:
    """``ollama:NAME[:TAG]`` (TAG defaults to ``latest``; NAME may be ``user/name``) -> the GGUF blob, looked
    up in the Ollama stores of ``models.search_paths``."""
    body = ref[len("ollama:"):] if ref.startswith("ollama:") else ref
    name, _, tag = body.partition(":")
    name, tag = name.strip(), (tag.strip() or "latest")
    if not name or any(p in ("", ".", "..") for p in name.split("/")) or "/" in tag or tag in (".", ".."):
        raise ModelError(f"'{ref}': not an Ollama model name (expected ollama:NAME or ollama:NAME:TAG)")
    parts = name.split("/")
    stores = [d for src, d in search_dirs(setting) if src == "ollama"]
    for root in stores:
        rel = [OLLAMA_REGISTRY, "library", *parts] if len(parts) == 1 else [OLLAMA_REGISTRY, *parts]
        manifest = root.joinpath("manifests", *rel, tag)
        if manifest.is_file():
            return _model_blob(root, manifest)
    where = ", ".join(str(r) for r in stores) or "no Ollama store configured (models.search_paths)"
    raise ModelError(f"'{ref}': no such Ollama model in {where} (`ollama pull {name}:{tag}` or check "
                     f"models.search_paths)")


def _gguf_files(folder: Path) -> Iterator[Path]:
    """``*.gguf`` files under ``folder``, at most ``_MAX_DEPTH`` levels down, without following links out."""
    stack = [(folder, 0)]
    while stack:
        d, depth = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False) and depth < _MAX_DEPTH:
                stack.append((Path(e.path), depth + 1))
            elif e.name.lower().endswith(".gguf") and e.is_file():
                yield Path(e.path)


def find_ggufs(setting: str = "", exclude: set[Path] | None = None) -> list[dict[str, Any]]:
    """Every GGUF found in the search folders: ``{source, ref, path, name, architecture, parameters,
    parameters_label, quantization, kind, size_bytes, error}``. ``ref`` is what ``models.chat`` /
    ``models.embedder`` accept. A file whose header cannot be read is listed with ``error`` set."""
    rows: list[dict[str, Any]] = []
    seen = {p.resolve() for p in (exclude or set())}
    for source, folder in search_dirs(setting):
        if not folder.is_dir():
            continue
        if source == "ollama" or _is_ollama(folder):
            found = list(_ollama_models(folder))
        else:
            found = [(str(p), p) for p in _gguf_files(folder)]
        for ref, path in found:
            real = path.resolve()
            if real in seen:
                continue
            seen.add(real)
            row: dict[str, Any] = {"source": source, "ref": ref, "path": str(path), "error": None}
            try:
                row.update(gguf_info(path))
            except ModelError as e:
                row.update({"name": path.name, "architecture": None, "parameters": None,
                            "parameters_label": None, "quantization": None, "kind": None,
                            "size_bytes": path.stat().st_size, "error": e.message})
            rows.append(row)
    return rows
