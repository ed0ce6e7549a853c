"""Shared fixtures: real default models loaded once per test session, throw-away stores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hela_cli.models import DEFAULT_MODELS, LlamaChat, LlamaEmbedder
from hela_cli.paths import model_dir

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_data"
MODEL_DIR = Path(os.environ.get("HELA_TEST_MODEL_DIR") or model_dir(os.environ.get("HELA_MODELS_DIR", "")))


def _model_path(alias: str) -> Path:
    path = MODEL_DIR / DEFAULT_MODELS[alias].filename
    if not path.exists():
        pytest.fail(f"{path} missing: run `make models` (hela models pull) before the tests")
    return path


@pytest.fixture(scope="session")
def model_dir_path() -> Path:
    _model_path("minilm")
    _model_path("smollm2")
    return MODEL_DIR


@pytest.fixture(scope="session")
def embedder() -> LlamaEmbedder:
    path = _model_path("minilm")
    return LlamaEmbedder(path, f"minilm:{path.name}")


@pytest.fixture(scope="session")
def chat() -> LlamaChat:
    path = _model_path("smollm2")
    return LlamaChat(path, f"smollm2:{path.name}", n_ctx=4096)


@pytest.fixture()
def cli_env(tmp_path, model_dir_path, monkeypatch):
    """Environment for CliRunner tests: a private database and the shared model dir."""
    monkeypatch.setenv("HELA_DB", str(tmp_path / "hela.db"))
    monkeypatch.setenv("HELA_MODELS_DIR", str(model_dir_path))
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HELA_CONFIG", raising=False)
    return tmp_path
