"""Model faults (issue 6): missing, corrupt or truncated GGUF files, a chat model given as the embedder (and
the reverse), an embedder whose dimension differs from the database's, a prompt that exceeds the chat
model's context window. Every case: one clear error line, exit code 3 (model) or 4 (database), no
traceback, no crash, and nothing written (the database is byte-for-byte unchanged, or never created).

Cases where llama.cpp itself loads the file run in a real ``hela`` process, so a segfault would show as a
negative return code instead of killing the test run; cases refused before llama.cpp sees the file run
in-process through CliRunner.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.errors import ModelError
from hela_cli.models.gguf import check_gguf
from hela_cli.models import DEFAULT_MODELS
from hela_cli.store import Store
from tests.conftest import MODEL_DIR
from tests.reliability import build_base_db, db_state, file_digest, hela, hela_env, messages_file, one_line

runner = CliRunner()
MINILM = MODEL_DIR / DEFAULT_MODELS["minilm"].filename
SMOLLM = MODEL_DIR / DEFAULT_MODELS["smollm2"].filename


@pytest.fixture(scope="module")
def base_db(tmp_path_factory, embedder) -> Path:
    return build_base_db(tmp_path_factory.mktemp("mfbase") / "base.db", embedder)


@pytest.fixture()
def db(cli_env, base_db) -> Path:
    path = cli_env / "hela.db"
    shutil.copy(base_db, path)
    return path


@pytest.fixture(scope="module")
def bad_models(tmp_path_factory) -> dict[str, Path]:
    """Broken copies of the real models."""
    d = tmp_path_factory.mktemp("badmodels")
    emb, chat = MINILM.read_bytes(), SMOLLM.read_bytes()
    out: dict[str, Path] = {}

    def put(name: str, data: bytes) -> None:
        out[name] = d / f"{name}.gguf"
        out[name].write_bytes(data)

    put("half", emb[: len(emb) // 2])
    put("header-cut", emb[:1000])
    put("magic-only", b"GGUF")
    put("garbage", b"GGUF" + os.urandom(4096))
    put("not-gguf", b"this is a text file, not a model\n" * 100)
    put("chat-half", chat[: len(chat) // 2])
    # header intact, weights destroyed: the first tensor (token embeddings) all 0xFF (f16 NaN)
    from hela_cli.models.gguf import _scan_gguf

    _, tensors, start = _scan_gguf(emb, len(emb))
    nan = bytearray(emb)
    _, off, n = tensors[0]
    nan[start + off: start + off + n] = b"\xff" * n
    put("nan-weights", bytes(nan))
    # a metadata value that makes llama.cpp refuse the file: 60 layers declared, 6 present
    meta = bytearray(emb)
    key = b"bert.block_count"
    i = meta.find(key) + len(key) + 4
    struct.pack_into("<I", meta, i, 60)
    put("bad-metadata", bytes(meta))
    return out


def refused(res, code: int, needle: str, before, db: Path) -> str:
    """A clean refusal (CliRunner result or CompletedProcess) that left ``db`` as ``before``."""
    rc = getattr(res, "exit_code", getattr(res, "returncode", None))
    stdout, stderr = res.stdout, res.stderr
    assert rc is not None and rc >= 0, f"killed by signal {-rc}: {stderr[-2000:]}"
    assert rc == code, (rc, stdout[-1000:], stderr[-2000:])
    assert "Traceback" not in stdout + stderr and stdout.strip() == ""
    line = one_line(stderr)
    assert line.startswith("error: ") and needle in line, line
    assert (file_digest(db), db_state(db)) == before, "the database changed"
    return line


def snapshot(db: Path):
    return file_digest(db), db_state(db)


# ----------------------------------------------------------------------------------- in-process
@pytest.mark.parametrize("env, needle", [
    ({"HELA_MODELS_EMBEDDER": "/nonexistent/model.gguf"}, "embedder model file not found"),
    ({"HELA_MODELS_EMBEDDER": "smollm2"}, "model alias 'smollm2' is a chat model, not a embedder model"),
    ({"HELA_MODELS_DIR": "EMPTY"}, "is not downloaded; run `hela models pull`"),
    ({"HELA_MODELS_EMBEDDER": "DIR"}, "is a directory, not a GGUF model file"),
])
def test_missing_or_wrong_model_reference(db, tmp_path, env, needle):
    env = {k: str(tmp_path / "empty") if v == "EMPTY" else str(tmp_path) if v == "DIR" else v
           for k, v in env.items()}
    src = tmp_path / "new.jsonl"
    messages_file(src, 3, "new")
    before = snapshot(db)
    res = runner.invoke(app, ["ingest", str(src), "--space", "new"], env=env)
    refused(res, 3, needle, before, db)
    res = runner.invoke(app, ["ask", "hello", "--space", "base", "--no-llm"], env=env)
    refused(res, 3, needle, before, db)


@pytest.mark.parametrize("name, needle", [
    ("half", "corrupt or truncated GGUF file (tensor"),
    ("header-cut", "corrupt or truncated GGUF file"),
    ("magic-only", "corrupt or truncated GGUF file"),
    ("garbage", "corrupt or truncated GGUF file"),
    ("not-gguf", "not a GGUF model file"),
])
def test_corrupt_embedder_refused_before_loading(db, tmp_path, bad_models, name, needle):
    src = tmp_path / "new.jsonl"
    messages_file(src, 3, "new")
    before = snapshot(db)
    env = {"HELA_MODELS_EMBEDDER": str(bad_models[name])}
    res = runner.invoke(app, ["ingest", str(src), "--space", "new"], env=env)
    line = refused(res, 3, needle, before, db)
    assert f"{name}.gguf" in line


def test_every_truncation_point_is_a_model_error(tmp_path):
    """``check_gguf`` (pure Python, runs before llama.cpp) refuses a cut at any point of the file."""
    data = MINILM.read_bytes()
    p = tmp_path / "cut.gguf"
    cuts = [0, 3, 4, 7, 8, 15, 16, 23, 24, 40, 200, 600, 5_000, 600_000, 636_320, 636_321, 10_000_000,
            len(data) - 4096, len(data) - 1]
    for cut in cuts:
        p.write_bytes(data[:cut])
        with pytest.raises(ModelError, match="cut.gguf"):
            check_gguf(p)
    p.write_bytes(data)
    assert check_gguf(p)["general.architecture"] == "bert"


def test_cached_check_never_vouches_for_a_changed_file(tmp_path, monkeypatch):
    """``check_gguf(cache=True)`` (every model load) answers from the user's cache only for the very file it
    walked: after the file is cut in place, the walk runs again and refuses it."""
    import hela_cli.models.gguf as gguf

    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    p = tmp_path / "m.gguf"
    p.write_bytes(MINILM.read_bytes())
    first = check_gguf(p, prefix="hela.", cache=True)
    assert first["general.architecture"] == "bert" and list((tmp_path / "home" / "cache").glob("m.gguf.*"))
    walks = []
    real = gguf._scan_gguf
    monkeypatch.setattr(gguf, "_scan_gguf", lambda *a, **k: walks.append(1) or real(*a, **k))
    assert check_gguf(p, prefix="hela.", cache=True) == first and not walks    # from the cache
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match="corrupt or truncated"):
        check_gguf(p, prefix="hela.", cache=True)
    assert walks


def test_chat_model_given_as_embedder(db, tmp_path):
    src = tmp_path / "new.jsonl"
    messages_file(src, 3, "new")
    before = snapshot(db)
    res = runner.invoke(app, ["ingest", str(src), "--space", "new"], env={"HELA_MODELS_EMBEDDER": str(SMOLLM)})
    refused(res, 3, "has no pooling type, so it is not a sentence-embedding model", before, db)


@pytest.mark.parametrize("chat", ["/nonexistent/chat.gguf", "EMPTYDIR"])
def test_retrieval_alone_needs_no_chat_model(db, tmp_path, chat):
    """`ask --no-llm` with no chat model to be found (a missing path, or the default not downloaded): the
    memories and context as always, `context_tokens` null, a plain line saying it was not counted."""
    env = {"HELA_MODELS_CHAT": chat}
    if chat == "EMPTYDIR":   # a model dir holding the embedder only: the default chat model is not downloaded
        (tmp_path / "models").mkdir()
        (tmp_path / "models" / MINILM.name).symlink_to(MINILM)
        env = {"HELA_MODELS_DIR": str(tmp_path / "models")}
    res = runner.invoke(app, ["ask", "hello", "--space", "base", "--no-llm", "--no-learn", "--json"], env=env)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["memories"] and out["context"] and out["context_tokens"] is None
    res = runner.invoke(app, ["ask", "hello", "--space", "base", "--no-llm", "--no-learn"], env=env)
    assert res.exit_code == 0 and "context tokens not counted (no chat model)" in res.stdout
    res = runner.invoke(app, ["ask", "hello", "--space", "base", "--no-learn"], env=env)   # an answer does need it
    assert res.exit_code == 3 and "chat model" in res.output


def test_embedder_given_as_chat_model(db):
    before = snapshot(db)
    res = runner.invoke(app, ["ask", "hello", "--space", "base"], env={"HELA_MODELS_CHAT": str(MINILM)})
    refused(res, 3, "'bert' is an embedding model, not a chat model", before, db)


@pytest.mark.parametrize("bound", [("other-embedder", 768), ("file:other.gguf", 384)])
def test_embedder_differs_from_database(cli_env, tmp_path, bound):
    db = cli_env / "hela.db"
    with Store(db) as s:
        s.bind_embedder(*bound)
        s.ensure_space("base")
    src = tmp_path / "new.jsonl"
    messages_file(src, 3, "new")
    before = snapshot(db)
    res = runner.invoke(app, ["ingest", str(src), "--space", "new"])
    line = refused(res, 4, f"this database was built with embedder '{bound[0]}' ({bound[1]}-d)", before, db)
    assert "minilm" in line
    res = runner.invoke(app, ["ask", "hello", "--space", "base", "--no-llm"])
    refused(res, 4, "this database was built with embedder", before, db)


def test_model_faults_on_a_new_path_create_no_database(cli_env, tmp_path):
    newdb = tmp_path / "fresh" / "new.db"
    src = tmp_path / "new.jsonl"
    messages_file(src, 3, "new")
    res = runner.invoke(app, ["--db", str(newdb), "ingest", str(src)],
                        env={"HELA_MODELS_EMBEDDER": "/nonexistent/e.gguf"})
    refused(res, 3, "not found", (None, None), newdb)
    assert not newdb.parent.exists()


# ----------------------------------------------------------------------------------- real processes
@pytest.mark.parametrize("name, needle, fresh", [
    ("nan-weights", "non-finite or zero vector (corrupt model file?)", True),
    ("bad-metadata", "llama.cpp could not load the model", True),
    ("half", "corrupt or truncated GGUF file", False),
])
def test_corrupt_embedder_in_a_real_process(tmp_path, base_db, bad_models, name, needle, fresh):
    db = tmp_path / "new" / "hela.db"  # a fresh path: must not even be created
    if not fresh:
        db = tmp_path / "hela.db"
        shutil.copy(base_db, db)
    src = tmp_path / "new.jsonl"
    messages_file(src, 3, "new")
    before = snapshot(db)
    env = hela_env(tmp_path, db, HELA_MODELS_EMBEDDER=str(bad_models[name]))
    refused(hela(["ingest", str(src), "--space", "new"], env), 3, needle, before, db)
    assert db.exists() != fresh


def test_truncated_chat_model_in_a_real_process(tmp_path, base_db, bad_models):
    db = tmp_path / "hela.db"
    shutil.copy(base_db, db)
    before = snapshot(db)
    env = hela_env(tmp_path, db, HELA_MODELS_CHAT=str(bad_models["chat-half"]))
    refused(hela(["ask", "hello", "--space", "base"], env), 3, "chat-half.gguf: corrupt or truncated", before, db)
    # --no-llm still counts context tokens with the chat model's vocabulary: refused before learning
    refused(hela(["ask", "hello", "--space", "base", "--no-llm"], env), 3, "corrupt or truncated", before, db)


def test_prompt_over_the_context_window_writes_nothing(tmp_path, base_db):
    """A tiny chat context: the ask is refused before generating, and its retrieval does not learn."""
    db = tmp_path / "hela.db"
    shutil.copy(base_db, db)
    before = snapshot(db)
    env = hela_env(tmp_path, db, HELA_MODELS_CHAT_CTX="64")
    refused(hela(["ask", "What did we talk about?", "--space", "base"], env), 3,
            "exceeds the chat model's context window of 64 tokens", before, db)


def test_header_reader_type_sizes_match_the_gguf_package():
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    from hela_cli.models.gguf import _TYPE_SIZES

    for ttype, sizes in _TYPE_SIZES.items():
        assert GGML_QUANT_SIZES[GGMLQuantizationType(ttype)] == sizes, ttype
