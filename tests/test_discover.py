"""GGUFs already on disk: Ollama's store, LM Studio's folders, llama.cpp's cache (small GGUFs written with
the `gguf` package and laid out like those stores), `hela models list`, and `models.chat: ollama:NAME:TAG`."""

import hashlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.models.discover import find_ggufs, resolve_ollama, search_dirs
from hela_cli.errors import ModelError
from hela_cli.models.gguf import gguf_info
from hela_cli.models import resolve_model
from tests.conftest import SAMPLE

runner = CliRunner()


def write_gguf(path: Path, arch: str, name: str, *, file_type: int = 15, embedding: bool = False,
               n: int = 3000) -> Path:
    import gguf

    path.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    w.add_file_type(file_type)
    w.add_context_length(2048)
    if embedding:
        w.add_pooling_type(gguf.PoolingType.MEAN)
    else:
        w.add_chat_template("{{ messages }}")
    w.add_tensor("token_embd.weight", np.zeros((n // 100, 100), dtype=np.float32))
    w.add_tensor("output_norm.weight", np.ones(100, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def ollama_store(root: Path, name: str, tag: str, gguf_file: Path, namespace: str = "library") -> Path:
    """Lay a GGUF out as Ollama does: blobs/sha256-X and a manifest whose model layer names X."""
    data = gguf_file.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    blobs = root / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    (blobs / f"sha256-{digest}").write_bytes(data)
    cfg = b'{"model_format":"gguf"}'
    (blobs / f"sha256-{hashlib.sha256(cfg).hexdigest()}").write_bytes(cfg)
    manifest = root / "manifests" / "registry.ollama.ai" / namespace / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                   "digest": f"sha256:{hashlib.sha256(cfg).hexdigest()}", "size": len(cfg)},
        "layers": [{"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "0" * 64,
                    "size": 10},
                   {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}",
                    "size": len(data)}]}))
    return blobs / f"sha256-{digest}"


@pytest.fixture()
def home(tmp_path, monkeypatch):
    """A HOME holding an Ollama store, an LM Studio folder, a llama.cpp cache and a corrupt file."""
    h = tmp_path / "home"
    for var in ("OLLAMA_MODELS", "LLAMA_CACHE", "XDG_CACHE_HOME", "HELA_MODELS_SEARCH_PATHS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(h))
    src = write_gguf(tmp_path / "src" / "qwen.gguf", "qwen2", "Qwen2.5 0.5B Instruct", file_type=15)
    ollama_store(h / ".ollama" / "models", "qwen2.5", "0.5b", src)
    write_gguf(h / ".lmstudio" / "models" / "lmstudio-community" / "gemma" / "gemma-q8.gguf", "gemma2",
               "Gemma 2", file_type=7)
    write_gguf(h / ".cache" / "llama.cpp" / "nomic-embed.gguf", "nomic-bert", "Nomic Embed", file_type=1,
               embedding=True)
    (h / ".cache" / "lm-studio" / "models" / "x").mkdir(parents=True)
    (h / ".cache" / "lm-studio" / "models" / "x" / "broken.gguf").write_bytes(b"GGUF\x03\x00\x00\x00garbage")
    return h


def test_header_info(tmp_path):
    info = gguf_info(write_gguf(tmp_path / "m.gguf", "llama", "Tiny Llama", file_type=15, n=3000))
    assert info["name"] == "Tiny Llama" and info["architecture"] == "llama" and info["kind"] == "chat"
    assert info["parameters"] == 3100 and info["parameters_label"] == "3.1K"
    assert info["quantization"] == "Q4_K_M" and info["context_length"] == 2048
    assert info["size_bytes"] == (tmp_path / "m.gguf").stat().st_size
    emb = gguf_info(write_gguf(tmp_path / "e.gguf", "bert", "Enc", file_type=1, embedding=True))
    assert emb["kind"] == "embedding" and emb["quantization"] == "F16"


def test_finds_the_usual_places(home):
    rows = {r["source"] + ":" + (r["name"] or ""): r for r in find_ggufs()}
    q = rows["ollama:Qwen2.5 0.5B Instruct"]
    assert q["ref"] == "ollama:qwen2.5:0.5b" and q["architecture"] == "qwen2" and q["kind"] == "chat"
    assert q["quantization"] == "Q4_K_M" and Path(q["path"]).name.startswith("sha256-")
    g = rows["lmstudio:Gemma 2"]
    assert g["quantization"] == "Q8_0" and g["ref"].endswith("gemma-q8.gguf") and Path(g["ref"]).is_file()
    n = rows["llama.cpp:Nomic Embed"]
    assert n["kind"] == "embedding" and n["architecture"] == "nomic-bert"
    broken = rows["lmstudio:broken.gguf"]
    assert broken["error"] and "corrupt" in broken["error"]
    assert len(rows) == 4  # the config blob and the template layer are not models


def test_search_paths_setting(home, tmp_path):
    assert find_ggufs("none") == []
    extra = tmp_path / "mine"
    write_gguf(extra / "deep" / "a.gguf", "phi3", "Phi")
    rows = find_ggufs(str(extra))
    assert [(r["source"], r["name"]) for r in rows] == [("folder", "Phi")]
    store = tmp_path / "other-ollama"
    ollama_store(store, "phi", "latest", extra / "deep" / "a.gguf", namespace="someone")
    assert search_dirs(str(store)) == [("ollama", store)]
    assert [r["ref"] for r in find_ggufs(str(store))] == ["ollama:someone/phi:latest"]
    assert resolve_ollama("ollama:someone/phi", str(store)).parent == store / "blobs"


def test_resolve_ollama(home):
    blob = resolve_ollama("ollama:qwen2.5:0.5b")
    assert blob.is_file() and blob.parent == home / ".ollama" / "models" / "blobs"
    path, mid = resolve_model("ollama:qwen2.5:0.5b", home / "models", "chat")
    assert path == blob and mid == "ollama:qwen2.5:0.5b"
    for bad, needle in (("ollama:qwen2.5:7b", "no such Ollama model"), ("ollama:", "not an Ollama model name"),
                        ("ollama:../x", "not an Ollama model name")):
        with pytest.raises(ModelError, match=needle):
            resolve_ollama(bad)
    manifest = home / ".ollama" / "models" / "manifests" / "registry.ollama.ai" / "library" / "qwen2.5" / "0.5b"
    blob.unlink()
    with pytest.raises(ModelError, match="missing"):
        resolve_ollama("ollama:qwen2.5:0.5b")
    manifest.write_text("{not json")
    with pytest.raises(ModelError, match="not a readable Ollama manifest"):
        resolve_ollama("ollama:qwen2.5:0.5b")


def test_models_list_cli(home, cli_env, monkeypatch):
    monkeypatch.setenv("HOME", str(home))
    res = runner.invoke(app, ["models", "list", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {r["ref"].split("/")[-1] for r in out["found"]} >= {"ollama:qwen2.5:0.5b", "gemma-q8.gguf",
                                                                "nomic-embed.gguf"}
    assert any(s["source"] == "ollama" and s["exists"] for s in out["searched"])
    from hela_cli.cli import render

    monkeypatch.setattr(render.console, "width", 80)
    text = runner.invoke(app, ["models", "list"]).stdout
    assert "use: ollama:qwen2.5:0.5b" in text
    assert "Qwen2.5 0.5B Instruct  qwen2 · 3.1K · Q4_K_M · chat" in text
    assert "unreadable" in text
    assert not re.search(r"\d\n\s*[MG]B", text)  # "46.2 MB"-like values are never split


def test_chat_from_an_ollama_store(cli_env, model_dir_path, tmp_path, monkeypatch):
    """`models.chat: ollama:NAME:TAG` answers with the blob in place (a real model, linked into a store)."""
    store = tmp_path / "ollama"
    real = model_dir_path / "SmolLM2-135M-Instruct-f16.gguf"
    digest = "ab" * 32
    (store / "blobs").mkdir(parents=True)
    (store / "blobs" / f"sha256-{digest}").symlink_to(real)
    man = store / "manifests" / "registry.ollama.ai" / "library" / "smollm2" / "135m"
    man.parent.mkdir(parents=True)
    man.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model",
                                           "digest": f"sha256:{digest}"}]}))
    monkeypatch.setenv("HELA_MODELS_SEARCH_PATHS", str(store))
    monkeypatch.setenv("HELA_MODELS_CHAT", "ollama:smollm2:135m")
    assert runner.invoke(app, ["ingest", str(SAMPLE / "conversation.json")]).exit_code == 0
    res = runner.invoke(app, ["ask", "What is the name of Jonas's dog?", "-s", "demo", "--quiet"])
    assert res.exit_code == 0, res.output
    assert "tofu" in res.stdout.lower()
    monkeypatch.setenv("HELA_MODELS_CHAT", "ollama:nope")
    res = runner.invoke(app, ["ask", "What is the name of Jonas's dog?", "-s", "demo"])
    assert res.exit_code == 3 and "no such Ollama model" in res.output
    shutil.rmtree(store)
