"""Count a chat model's tokens without llama.cpp: byte-level BPE from a cached copy of the GGUF's vocabulary.

``hela ask --no-llm`` reports how many tokens its context would cost the chat model, but generates nothing.
Loading the chat model's vocabulary through llama.cpp for that took ~0.3 s of a one-shot process (more
than the retrieval). :func:`bpe_token_counter` reads the tokenizer (merges, special tokens) from the GGUF
once, keeps it as a JSON file in the user's cache dir (keyed by the model file's name, size and mtime),
and counts tokens in Python with the same pre-tokenizer rules and merge order as llama.cpp. Only
byte-level BPE vocabularies with a known pre-tokenizer (``gpt2``, ``smollm``) are handled;
:func:`bpe_token_counter` returns None for any other, and the caller falls back to llama.cpp. The tests
compare counts with llama.cpp's on real text.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

# GPT-2's pre-tokenizer (as llama.cpp implements it: contractions, letters, digits, other symbols, spaces)
_GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
_PRE = {"gpt2": (False, _GPT2), "smollm": (True, _GPT2)}  # name -> (every digit its own piece, regex)
_CACHE_VERSION = 1


def _byte_chars() -> list[str]:
    """GPT-2's reversible byte -> printable character map."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


class BpeCounter:
    def __init__(self, merges: list[str], specials: list[str], pre: str):
        import regex

        digits, pattern = _PRE[pre]
        self._ranks = {m: i for i, m in enumerate(merges)}
        self._split = regex.compile(pattern).findall
        self._digits = regex.compile(r"(\p{N})").split if digits else None
        specials = sorted((s for s in specials if s), key=len, reverse=True)
        self._specials = regex.compile("|".join(regex.escape(s) for s in specials)) if specials else None
        self._bytes = _byte_chars()
        self._word = lru_cache(maxsize=65536)(self._bpe)

    def _bpe(self, word: str) -> int:
        parts = list(word)
        ranks = self._ranks
        while len(parts) > 1:
            best, best_rank = -1, len(ranks)
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + " " + parts[i + 1])
                if r is not None and r < best_rank:
                    best, best_rank = i, r
            if best < 0:
                break
            parts[best:best + 2] = [parts[best] + parts[best + 1]]
        return len(parts)

    def _count_plain(self, text: str) -> int:
        pieces = [p for p in self._digits(text) if p] if self._digits else [text]
        n = 0
        chars = self._bytes
        for piece in pieces:
            for word in self._split(piece):
                n += self._word("".join(chars[b] for b in word.encode("utf-8")))
        return n

    def count_tokens(self, text: str) -> int:
        """Tokens as llama.cpp's ``tokenize(text, add_bos=False, special=True)`` counts them."""
        if self._specials is None:
            return self._count_plain(text)
        n, pos = 0, 0
        for m in self._specials.finditer(text):
            n += self._count_plain(text[pos:m.start()]) + 1
            pos = m.end()
        return n + self._count_plain(text[pos:])


def _read_tokenizer(path: Path) -> dict[str, Any] | None:
    from hela_cli.models.gguf import check_gguf

    meta = check_gguf(path, prefix="tokenizer.ggml.")
    if meta.get("tokenizer.ggml.model") != "gpt2" or meta.get("tokenizer.ggml.pre", "gpt2") not in _PRE:
        return None
    tokens, types = meta.get("tokenizer.ggml.tokens"), meta.get("tokenizer.ggml.token_type")
    merges = meta.get("tokenizer.ggml.merges")
    if not tokens or not merges or not types or len(types) != len(tokens):
        return None
    # control (3) and user-defined (4) tokens are matched whole in the text (llama.cpp's special=True)
    specials = [t for t, k in zip(tokens, types) if k in (3, 4)]
    return {"v": _CACHE_VERSION, "pre": meta.get("tokenizer.ggml.pre", "gpt2"), "merges": merges,
            "specials": specials}


def bpe_token_counter(path: str | Path) -> BpeCounter | None:
    """A Python token counter for the GGUF at ``path``, or None when its tokenizer is not handled here."""
    from hela_cli.paths import file_cache, read_cache, write_cache

    path = Path(path)
    cache = file_cache(path, "tokenizer")
    data = read_cache(cache)
    if not isinstance(data, dict) or data.get("v") != _CACHE_VERSION:
        data = _read_tokenizer(path)  # raises ModelError for a corrupt file
        if data is None:
            return None
        write_cache(cache, data)  # a read-only home: count without caching
    if data.get("pre") not in _PRE:
        return None
    return BpeCounter(data["merges"], data["specials"], data["pre"])
