"""Is a recalled memory relevant to a prompt, or merely its best match? (issue 52; docs/retrieval.md,
"Relevance: what the hooks inject").

Retrieval always returns its best memories, however poor; a score floor cannot tell them apart, because one
common word shared with a memory (the haiku prompt's "first") carries a keyword match of 0.7. The decision
here asks for topical evidence instead, per memory, measured against the space itself:

* **margin**: the prompt's cosine with the memory less the memory's *background*, the highest cosine any of
  :data:`hela_cli.text.background.BACKGROUND` (prompts about no project in particular) has with it. A git
  memory of a coding project comes close to every git question; it is evidence for a prompt only when the
  prompt comes closer to it than generic questions do. The background vectors are computed once per
  embedder and kept in hela's cache.
* evidence **by meaning**: margin >= ``hooks.meaning_margin``;
* evidence **anchored**: margin >= ``hooks.anchored_margin`` and an anchor: the prompt speaks of the project
  (:func:`hela_cli.text.prompt_cues.refers_to_project`: "we", "this repo", "last time") or two keywords
  that are rare in the space (in at most ``RARE_SHARE`` of its memories) match the memory together, or
  margin >= ``ONE_RARE_MARGIN`` and one such keyword matches;
* evidence **by name**: the memory holds a file, path, identifier or command the prompt names
  (:func:`hela_cli.text.prompt_cues.named_things`).

A memory with none of these is not relevant. The prompt hook and the start brief inject relevant memories
only; ``hela ask`` and MCP ``recall`` return their memories as before (they do not report a verdict yet).
Pure but for the store and embedder reads."""

from __future__ import annotations

import base64
import hashlib
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from hela_cli.text.background import BACKGROUND
from hela_cli.text.keywords import keywords, query_text
from hela_cli.text.prompt_cues import named_things, names_in, refers_to_project

RARE_SHARE = 0.01        # a keyword held by at most this share of a space's memories is rare there
RARE_MIN_DF = 3          # ... and always one held by at most this many
MEANING_MARGIN = 0.45    # defaults of hooks.meaning_margin / hooks.anchored_margin (chosen on the dev half)
ANCHORED_MARGIN = 0.10
ONE_RARE_MARGIN = 0.30   # ... or this when one rare keyword of the space matches

_CACHE: dict[str, np.ndarray] = {}


@dataclass(frozen=True)
class Verdict:
    """One memory's relevance to one prompt: ``evidence`` is "name", "meaning", "anchored" or None."""
    relevant: bool
    evidence: str | None
    margin: float
    background: float


def _unit(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(n == 0, 1.0, n)


def _fingerprint(model_id: str) -> str:
    return hashlib.sha256(("\n".join(BACKGROUND) + "\x00" + model_id).encode("utf-8")).hexdigest()[:16]


def background_vectors(embedder: Any) -> np.ndarray:
    """The background prompts' unit vectors for ``embedder``: from this process, else hela's cache
    (``cache/relevance-background.<fingerprint>.json`` in the data dir: one file per embedder and background
    list, never in the database, which a prompt hook only reads), else embedded now (about 60 short texts)
    and cached."""
    from hela_cli.models.base import embed_queries
    from hela_cli.paths import data_dir, read_cache, write_cache

    key = _fingerprint(str(getattr(embedder, "model_id", "")))
    if key in _CACHE:
        return _CACHE[key]
    path = data_dir() / "cache" / f"relevance-background.{key}.json"
    vecs = None
    raw = read_cache(path)
    dim = int(getattr(embedder, "dim", 0) or 0)
    if isinstance(raw, str):
        try:
            arr = np.frombuffer(base64.b64decode(raw), dtype=np.float32)
            if dim and arr.size == dim * len(BACKGROUND):
                vecs = arr.reshape(len(BACKGROUND), dim)
        except ValueError:
            vecs = None
    if vecs is None:
        vecs = _unit(embed_queries(embedder, list(BACKGROUND))).astype(np.float32)
        write_cache(path, base64.b64encode(vecs.tobytes()).decode("ascii"))
    _CACHE[key] = vecs
    return vecs


def rare_keywords(store: Any, space_id: int, terms: Sequence[str]) -> set[str]:
    """The ``terms`` that are rare in the space (held by few of its memories, but by one at least)."""
    if not terms:
        return set()
    n = max(1, int(store.count_nodes(space_id)))
    limit = max(RARE_MIN_DF, int(math.floor(RARE_SHARE * n)))
    return {t for t, df in store.term_counts(space_id, list(terms)).items() if 0 < df <= limit}


def judge(store: Any, space_id: int, embedder: Any, prompt: str, memories: Sequence[dict[str, Any]],
          query_vector: np.ndarray | None, *, meaning_margin: float = MEANING_MARGIN,
          anchored_margin: float = ANCHORED_MARGIN, query_keywords: Sequence[str] | None = None,
          named: Sequence[str] | None = None) -> dict[int, Verdict]:
    """The verdict of each of ``memories`` (a retrieval's rows: ``id``, ``text``, ``cos``) for ``prompt``.
    ``query_vector``: the prompt's embedding as retrieval computed it (embedded here when None);
    ``query_keywords`` / ``named``: the prompt's keywords and named things when the caller has them."""
    if not memories:
        return {}
    from hela_cli.models.base import embed_queries

    ids = [int(m["id"]) for m in memories]
    q = _unit(query_vector if query_vector is not None else embed_queries(embedder, [prompt])[0])
    bg = background_vectors(embedder)
    vecs = store.node_vectors(ids, space_id)
    named = list(named) if named is not None else named_things(prompt)
    project = refers_to_project(prompt)
    q_kw = list(query_keywords) if query_keywords is not None else keywords(query_text(prompt))
    rare = rare_keywords(store, space_id, q_kw)
    node_kw = {nid: set(row.get("keywords") or ()) for nid, row in store.get_nodes(ids).items()} if rare else {}
    out: dict[int, Verdict] = {}
    for m in memories:
        nid = int(m["id"])
        v = vecs.get(nid)
        if v is None:
            out[nid] = Verdict(False, None, 0.0, 0.0)
            continue
        u = _unit(v)
        cos = float(u @ q)
        back = float((bg @ u).max()) if len(bg) else 0.0
        margin = cos - back
        if names_in(str(m.get("text") or ""), named):
            evidence: str | None = "name"
        elif margin >= meaning_margin:
            evidence = "meaning"
        elif margin >= anchored_margin and (project or len(rare & node_kw.get(nid, set())) >= 2):
            evidence = "anchored"
        elif margin >= max(anchored_margin, ONE_RARE_MARGIN) and rare & node_kw.get(nid, set()):
            evidence = "anchored"
        else:
            evidence = None
        out[nid] = Verdict(evidence is not None, evidence, margin, back)
    return out
