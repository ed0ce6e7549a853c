"""``hela import``: restore a space from what ``hela export --format json --vectors`` wrote.

The export is read and checked completely before anything is written; every problem is one
:class:`~hela_cli.errors.InputError` naming the file and the place (``a.json: nodes[3]: missing 'text'``).
Then everything is written in one transaction into a new or empty space:

* memories with every exported column (text, speaker, role, time, original time string, session, keywords,
  order, content hash, source file, access count and last access) and their vectors and passage vectors.
  Memory ids are given by the database; each memory keeps its exported ``source_id`` or, without one,
  gets its exported id as its source id. The report maps every exported id to its new id;
* edges with their stored ``prior`` and ``amp`` and the space's ``step`` / ``base_step`` /
  ``consolidated_step`` and the exported ``hebbian.decay``, which the space keeps, so every current weight
  ``prior + amp * decay ** (step - base_step)`` is what it was, bit for bit, whatever the importing or
  reading process's own ``hebbian.decay`` (a process configured with another decay learns under the
  space's; ``hela spaces decay`` changes it, current weights unchanged). An export written before ``prior`` / ``amp`` were exported gives
  each edge its current weight as a learned amplitude;
* semantic records with their times, evidence (mapped ids), forgotten-evidence counts and vectors, and the
  hubs' consolidation bookkeeping (cluster ids mapped; ids of memories forgotten before the export, which
  no longer exist, become distinct negative ids so that a cluster's change is measured as before);
* supersession marks (facts that changed: which memory replaced which, from when, by which detector).

Vectors come from the export when it was written by the configured embedder (model id and dimension). An
export from another embedder, or one written without ``--vectors``, is refused unless ``reembed``: then
every memory, passage and record is embedded again with the configured embedder, as ingest and
consolidation embed them (the turn with its preceding turns of the session; "Subject: text").

Not restored: the asks log (``hela ask``'s record of questions and answers) - it is not part of an export.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from hela_cli.text.private import strip_private
from hela_cli.config import Config
from hela_cli.errors import InputError, StoreError
from hela_cli.maintenance.exporting import EXPORT_FORMAT
from hela_cli.formats import Turn
from hela_cli.ingest import embed_passages, embedding_texts
from hela_cli.models import Embedder
from hela_cli.store import Store

KINDS = ("trait", "fact", "knowledge")


# ----------------------------------------------------------------------------------- reading / checking
def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


INT_MAX = 2 ** 63 - 1   # what both engines store in an integer column (SQLite INTEGER, Postgres bigint)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -INT_MAX - 1 <= v <= INT_MAX


def _time(v: Any) -> bool:
    """A time in epoch seconds within the years ``hela add --time`` accepts."""
    from hela_cli.text.dates import EPOCH_MAX, EPOCH_MIN

    return _num(v) and EPOCH_MIN <= v < EPOCH_MAX


def _text(v: Any) -> bool:
    """A string that is text: no lone surrogate (it could not be stored or printed as UTF-8)."""
    if not isinstance(v, str):
        return False
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Checker:
    """Field checks that raise one ``FILE: PLACE: problem`` line."""

    def __init__(self, path: str):
        self.path = path

    def fail(self, where: str, what: str) -> InputError:
        return InputError(f"{self.path}: {where}: {what}" if where else f"{self.path}: {what}")

    def obj(self, v: Any, where: str) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise self.fail(where, f"expected an object, got {type(v).__name__}")
        return v

    def lst(self, parent: dict[str, Any], key: str, where: str, required: bool = True) -> list[Any]:
        if key not in parent:
            if required:
                raise self.fail(where, f"missing '{key}'")
            return []
        v = parent[key]
        if not isinstance(v, list):
            raise self.fail(f"{where}.{key}" if where else key, f"expected a list, got {type(v).__name__}")
        return v

    def field(self, o: dict[str, Any], key: str, where: str, kind: str, required: bool = True) -> Any:
        if key not in o or (o[key] is None and required):
            if required:
                raise self.fail(where, f"missing '{key}'")
            return None
        v = o[key]
        if v is None:
            return None
        ok = {"str": _text(v), "int": _int(v), "num": _num(v), "time": _time(v),
              "nonneg": _num(v) and v >= 0, "count": _int(v) and v >= 0}[kind]
        if not ok:
            want = {"str": "a string of text (no lone surrogates)", "int": "an integer within 64 bits",
                    "num": "a finite number", "time": "a time in epoch seconds within the years hela accepts",
                    "nonneg": "a finite number >= 0", "count": "an integer >= 0 within 64 bits"}[kind]
            raise self.fail(where, f"'{key}' must be {want}, got {json.dumps(v)[:40]}")
        return v

    def vector(self, v: Any, where: str, dim: int | None) -> np.ndarray:
        if not isinstance(v, list) or not v or not all(_num(x) for x in v):
            raise self.fail(where, "a vector must be a non-empty list of finite numbers")
        if dim is not None and len(v) != dim:
            raise self.fail(where, f"vector has {len(v)} numbers, the export's embedder has {dim}")
        with np.errstate(over="ignore", invalid="ignore"):
            arr = np.asarray(v, dtype=np.float32)
        if not np.isfinite(arr).all():
            raise self.fail(where, "a vector's numbers must be finite as 32-bit floats (one overflows)")
        return arr


def read_export(path: str | Path) -> dict[str, Any]:
    """The export's JSON (``InputError`` naming the file for an unreadable file or broken JSON)."""
    p = Path(path).expanduser()
    try:
        raw = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, not an export file") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{p}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise InputError(f"{p}: cannot read ({e.strerror})") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise InputError(f"{p}: line {e.lineno} column {e.colno}: not valid JSON ({e.msg})") from None
    except RecursionError:
        raise InputError(f"{p}: nested too deeply to be an export") from None
    return data


def check_export(data: Any, path: str, need_vectors: bool) -> dict[str, Any]:
    """Validate an export completely; returns it normalised: ``{"space", "embedder", "decay", "nodes",
    "edges", "semantic", "hubs"}`` with vectors as float32 arrays (None without ``need_vectors``)."""
    c = _Checker(path)
    d = c.obj(data, "")
    if d.get("format") != EXPORT_FORMAT:
        raise c.fail("format", f"not a hela export (expected \"format\": \"{EXPORT_FORMAT}\"; write one with "
                               "`hela export --format json --vectors`)")
    if d.get("version") != 1:
        raise c.fail("version", f"unsupported export version {json.dumps(d.get('version'))} (this hela reads 1)")
    space = c.obj(d.get("space"), "space")
    step = c.field(space, "step", "space", "int")
    base_step = c.field(space, "base_step", "space", "int", required=False)
    consolidated = c.field(space, "consolidated_step", "space", "int", required=False) or 0
    if step < 0 or (base_step is not None and not 0 <= base_step <= step):
        raise c.fail("space", f"inconsistent counters (step {step}, base_step {base_step})")
    emb = d.get("embedder")
    embedder = None
    if emb is not None:
        emb = c.obj(emb, "embedder")
        embedder = (c.field(emb, "model", "embedder", "str"), c.field(emb, "dim", "embedder", "int"))
    heb = c.obj(d.get("hebbian", {}), "hebbian")
    decay = c.field(heb, "decay", "hebbian", "num", required=False)
    if decay is not None and not 0 < decay <= 1:
        raise c.fail("hebbian", f"'decay' must be in (0, 1], got {decay}")
    dim = embedder[1] if embedder else None
    if need_vectors and not d.get("vectors"):
        raise c.fail("vectors", "the export holds no vectors (write it with `hela export --format json "
                                "--vectors`, or import with --reembed)")

    nodes, ids = [], set()
    for i, n in enumerate(c.lst(d, "nodes", "")):
        w = f"nodes[{i}]"
        n = c.obj(n, w)
        nid = c.field(n, "id", w, "int")
        if nid in ids:
            raise c.fail(w, f"duplicate id {nid}")
        ids.add(nid)
        text = strip_private(c.field(n, "text", w, "str"))   # the default tag: an export carries no config
        if not text.strip():
            raise c.fail(w, "'text' is empty")
        kws = n.get("keywords", [])
        if isinstance(kws, str):
            kws = kws.split()
        if not isinstance(kws, list) or not all(_text(k) and k and " " not in k for k in kws):
            raise c.fail(w, "'keywords' must be a list of words")
        row = {"id": nid, "text": text, "keywords": kws, "ts": c.field(n, "ts", w, "time"),
               "ord": c.field(n, "ord", w, "int"), "hash": c.field(n, "hash", w, "str"),
               "access_count": c.field(n, "access_count", w, "count", required=False) or 0,
               "last_access": c.field(n, "last_access", w, "time", required=False)}
        for k in ("speaker", "role", "time_str", "source_id", "session", "source"):
            row[k] = c.field(n, k, w, "str", required=False)
        row["vector"] = c.vector(n.get("vector"), f"{w}.vector", dim) if need_vectors else None
        row["passages"] = ([c.vector(p, f"{w}.passages[{k}]", dim)
                            for k, p in enumerate(c.lst(n, "passages", w, required=False))]
                           if need_vectors else [])
        nodes.append(row)
    hashes: dict[str, int] = {}
    for i, n in enumerate(nodes):
        if n["hash"] in hashes:
            raise c.fail(f"nodes[{i}]", f"same 'hash' as nodes[{hashes[n['hash']]}] (a memory twice)")
        hashes[n["hash"]] = i

    edges, pairs = [], set()
    for i, e in enumerate(c.lst(d, "edges", "")):
        w = f"edges[{i}]"
        e = c.obj(e, w)
        a, b = c.field(e, "source", w, "int"), c.field(e, "target", w, "int")
        for end in (a, b):
            if end not in ids:
                raise c.fail(w, f"node {end} is not in the export's nodes")
        if a == b:
            raise c.fail(w, "an edge from a node to itself")
        pair = (min(a, b), max(a, b))
        if pair in pairs:
            raise c.fail(w, f"duplicate edge {pair[0]}-{pair[1]}")
        pairs.add(pair)
        weight = c.field(e, "weight", w, "nonneg")
        prior = c.field(e, "prior", w, "nonneg", required=False)
        amp = c.field(e, "amp", w, "nonneg", required=False)
        if (prior is None) != (amp is None):
            raise c.fail(w, "'prior' and 'amp' come together")
        edges.append({"pair": pair, "weight": weight, "prior": prior, "amp": amp})
    raw = all(e["amp"] is not None for e in edges)
    if not raw and any(e["amp"] is not None for e in edges):
        raise c.fail("edges", "some edges have 'prior' / 'amp' and some do not")
    if raw and edges and base_step is None:
        raise c.fail("space", "missing 'base_step' (needed with the edges' 'amp')")

    semantic = []
    for i, r in enumerate(c.lst(d, "semantic", "", required=False)):
        w = f"semantic[{i}]"
        r = c.obj(r, w)
        kind = c.field(r, "kind", w, "str")
        if kind not in KINDS:
            raise c.fail(w, f"unknown kind '{kind}' (one of {', '.join(KINDS)})")
        text = c.field(r, "text", w, "str")
        if not text.strip():
            raise c.fail(w, "'text' is empty")
        ev = c.lst(r, "evidence", w)
        for n in ev:
            if not _int(n) or n not in ids:
                raise c.fail(w, f"evidence {json.dumps(n)} is not in the export's nodes")
        hub = c.field(r, "hub_id", w, "int", required=False)
        now = time.time()
        created = c.field(r, "created_at", w, "time", required=False)
        rec = {"kind": kind, "text": text, "subject": c.field(r, "subject", w, "str", required=False),
               "confidence": c.field(r, "confidence", w, "num", required=False),
               "date": c.field(r, "date", w, "str", required=False), "hub_id": hub,
               "forgotten_evidence": c.field(r, "forgotten_evidence", w, "int", required=False) or 0,
               "created_at": created if created is not None else now,
               "updated_at": c.field(r, "updated_at", w, "time", required=False) or created or now,
               "evidence": ev}
        rec["vector"] = c.vector(r.get("vector"), f"{w}.vector", dim) if need_vectors else None
        semantic.append(rec)

    hubs = []
    for i, h in enumerate(c.lst(d, "hubs", "", required=False)):
        w = f"hubs[{i}]"
        h = c.obj(h, w)
        nid = c.field(h, "node_id", w, "int")
        if nid not in ids:
            raise c.fail(w, f"node {nid} is not in the export's nodes")
        cluster = c.lst(h, "cluster", w)
        if not all(_int(x) for x in cluster):
            raise c.fail(w, "'cluster' must be a list of node ids")
        hubs.append({"node_id": nid, "cluster": cluster, "distilled_step": c.field(h, "distilled_step", w, "int"),
                     "status": c.field(h, "status", w, "str")})
    supersessions = []
    for i, r in enumerate(c.lst(d, "supersessions", "", required=False)):
        w = f"supersessions[{i}]"
        r = c.obj(r, w)
        pair = (c.field(r, "old_id", w, "int"), c.field(r, "new_id", w, "int"))
        for nid in pair:
            if nid not in ids:
                raise c.fail(w, f"node {nid} is not in the export's nodes")
        status = c.field(r, "status", w, "str")
        conf = c.field(r, "confidence", w, "num", required=False)
        if status not in ("superseded", "possible"):
            raise c.fail(w, f"status must be 'superseded' or 'possible', not {status!r}")
        supersessions.append({"old_id": pair[0], "new_id": pair[1], "invalid_at": c.field(r, "invalid_at", w, "time"),
                              "detector": c.field(r, "detector", w, "str"), "status": status,
                              "confidence": 1.0 if conf is None else conf,
                              "created_at": c.field(r, "created_at", w, "time", required=False),
                              "reason": c.field(r, "reason", w, "str", required=False)})
    name = space.get("name")
    return {"name": name if _text(name) else None, "step": step,
            "base_step": base_step if base_step is not None else step, "consolidated_step": consolidated,
            "embedder": embedder, "decay": decay, "nodes": nodes, "edges": edges, "raw_edges": raw,
            "semantic": semantic, "hubs": hubs, "supersessions": supersessions}


# ----------------------------------------------------------------------------------- re-embedding
def reembed_export(exp: dict[str, Any], embedder: Embedder, cfg: Config) -> None:
    """Fill the export's vectors with ``embedder``, as ingest and consolidation embed: each memory with its
    preceding turns of the session (``ingest.context_window``, ``ingest.embed_tokens``), the passages of
    long turns (``ingest.passage_chars``), each record as "Subject: text"."""
    nodes = sorted(exp["nodes"], key=lambda n: (n["ord"], n["id"]))
    sessions: dict[str | None, list[tuple[dict[str, Any], Turn]]] = {}
    jobs: list[tuple[dict[str, Any], list[Turn], int]] = []
    for n in nodes:
        t = Turn(n["speaker"] or "", n["text"], n["ts"], n["time_str"] or "", n["session"], n["source_id"], n["role"])
        if n["session"] is None:  # no session: no context (as `hela reembed`)
            jobs.append((n, [t], 0))
            continue
        turns = sessions.setdefault(n["session"], [])
        turns.append((n, t))
        jobs.append((n, [x for _, x in turns], len(turns) - 1))
    bs = max(1, cfg.ingest.batch_size)
    for s in range(0, len(jobs), bs):
        chunk = jobs[s:s + bs]
        texts = [embedding_texts(turns, [i], embedder, cfg)[0] for _, turns, i in chunk]
        for (n, _, _), v in zip(chunk, embedder.embed(texts)):
            n["vector"] = np.asarray(v, dtype=np.float32)
    size = cfg.ingest.passage_chars
    for n in nodes:
        n["passages"] = []
    if size > 0:
        for s in range(0, len(nodes), bs):
            chunk = nodes[s:s + bs]
            got = embed_passages(embedder, [(k, n["speaker"], n["text"]) for k, n in enumerate(chunk)], size)
            for k, vecs in got.items():
                chunk[k]["passages"] = list(np.asarray(vecs, dtype=np.float32))
    recs = exp["semantic"]
    for s in range(0, len(recs), bs):
        chunk = recs[s:s + bs]
        vecs = embedder.embed([f"{r['subject']}: {r['text']}" if r["subject"] else r["text"] for r in chunk])
        for r, v in zip(chunk, vecs):
            r["vector"] = np.asarray(v, dtype=np.float32)


# ----------------------------------------------------------------------------------- import
_HELD = {"nodes": "memories", "edges": "edges", "semantic": "semantic records", "hubs": "hub states",
         "asks": "logged asks"}


def _not_empty(name: str, held: dict[str, int]) -> StoreError:
    what = ", ".join(f"{n} {_HELD[k]}" for k, n in held.items() if n)
    return StoreError(f"space '{name}' is not empty ({what}); import into a new or empty space (-s NAME)")


def load_export(path: str | Path, reembed: bool = False) -> dict[str, Any]:
    """Read and check the export at ``path`` (every problem an ``InputError``; nothing is opened or
    written). Without ``reembed`` its vectors are required."""
    exp = check_export(read_export(path), str(Path(path).expanduser()), need_vectors=not reembed)
    exp["file"] = str(Path(path).expanduser())
    return exp


def import_export(store: Callable[[], Store], exp: dict[str, Any], cfg: Config, embedder: Callable[[], Embedder],
                  space: str | None = None, reembed: bool = False) -> dict[str, Any]:
    """Restore the export ``exp`` (:func:`load_export`) into ``space`` (default: the exported space's name),
    which must be new or empty. ``store`` and ``embedder`` are called when needed (the database is opened,
    or created, only once the file passed its checks). Returns ``{"space", "file", "memories", "edges",
    "semantic", "hubs", "supersessions", "step", "embedder", "reembedded", "ids": {exported id: new id},
    "seconds"}``."""
    t0 = time.perf_counter()
    p = exp["file"]
    name = space or exp["name"] or "default"
    Store.check_space_name(name)
    store = store()
    sp = store.get_space(name)
    if sp is not None and any(store.space_contents(sp.id).values()):
        raise _not_empty(name, store.space_contents(sp.id))
    bound = store.embedder_info()
    emb = embedder()
    target = (emb.model_id, int(emb.dim))
    if bound is not None and bound != target:
        raise StoreError(f"{store.path}: this database was built with embedder '{bound[0]}' ({bound[1]}-d); the "
                         f"configured embedder is '{target[0]}' ({target[1]}-d); configure the database's one")
    if not reembed and exp["embedder"] != target:
        got = f"'{exp['embedder'][0]}' ({exp['embedder'][1]}-d)" if exp["embedder"] else "an unknown embedder"
        raise InputError(f"{p}: embedder: exported with {got}, the configured embedder is '{target[0]}' "
                         f"({target[1]}-d); import with --reembed to embed the texts again")
    if reembed:
        reembed_export(exp, emb, cfg)
    step, base_step = exp["step"], exp["base_step"]
    # the amplitudes as exported, with the decay they were stored under (issue 41): the space keeps it, so
    # every reader computes the exported weights whatever its own hebbian.decay, and every writer learns
    # under it (store/edges.py; `hela spaces decay` changes it)
    decay: float | None = exp["decay"]
    edge_rows: list[tuple[tuple[int, int], float, float]]
    if exp["raw_edges"]:
        edge_rows = [(e["pair"], e["prior"], e["amp"]) for e in exp["edges"]]
        if decay is None:   # an export that did not say: it was read with the configured decay
            decay = cfg.hebbian.decay
    else:  # an older export: current weights only
        edge_rows = [(e["pair"], 0.0, e["weight"]) for e in exp["edges"]]
        base_step = step

    nodes = sorted(exp["nodes"], key=lambda n: n["id"])  # new ids keep the exported ids' order
    with store.transaction():
        store.bind_embedder(*target)
        sp = store.ensure_space(name)
        if any(store.space_contents(sp.id).values()):  # another process wrote meanwhile
            raise _not_empty(name, store.space_contents(sp.id))
        rows = [{"text": n["text"], "speaker": n["speaker"], "role": n["role"], "ts": n["ts"],
                 "time_str": n["time_str"], "keywords": n["keywords"],
                 "source_id": n["source_id"] if n["source_id"] is not None else str(n["id"]),
                 "session": n["session"], "ord": n["ord"], "hash": n["hash"], "source": n["source"]}
                for n in nodes]
        vectors = np.asarray([n["vector"] for n in nodes], dtype=np.float32).reshape(len(nodes), target[1])
        new_ids = store.insert_nodes(sp.id, rows, vectors) if rows else []
        if any(i == -1 for i in new_ids):  # pragma: no cover - hashes were checked unique, the space is empty
            raise StoreError(f"{p}: a memory could not be written")
        ids = {n["id"]: nid for n, nid in zip(nodes, new_ids)}
        store.restore_node_state([(ids[n["id"]], n["access_count"], n["last_access"]) for n in nodes])
        passages = {ids[n["id"]]: np.asarray(n["passages"], dtype=np.float32) for n in nodes if n["passages"]}
        if passages:
            store.insert_passages(sp.id, passages)
        store.restore_counters(sp.id, step, base_step, exp["consolidated_step"], decay)
        store.restore_edges(sp.id, [(ids[a], ids[b], prior, amp) if ids[a] < ids[b] else (ids[b], ids[a], prior, amp)
                                    for (a, b), prior, amp in edge_rows])
        for r in exp["semantic"]:
            rec = {**r, "hub_id": ids.get(r["hub_id"])}  # a hub forgotten before the export: none
            store.restore_semantic(sp.id, rec, [ids[n] for n in r["evidence"]], r["vector"])
        gone: dict[int, int] = {}  # cluster ids of memories forgotten before the export: distinct, never real
        for h in exp["hubs"]:
            cluster = [ids[x] if x in ids else gone.setdefault(x, -1 - len(gone)) for x in h["cluster"]]
            store.restore_hub(sp.id, ids[h["node_id"]], cluster, h["distilled_step"], h["status"])
        store.restore_supersessions(sp.id, [{**r, "old_id": ids[r["old_id"]], "new_id": ids[r["new_id"]]}
                                            for r in exp["supersessions"]])
    return {"space": name, "file": p, "memories": len(nodes), "edges": len(edge_rows),
            "semantic": len(exp["semantic"]), "hubs": len(exp["hubs"]),
            "supersessions": len(exp["supersessions"]), "step": step,
            "embedder": {"model": target[0], "dim": target[1]}, "reembedded": reembed,
            "ids": {str(k): v for k, v in ids.items()}, "seconds": round(time.perf_counter() - t0, 3)}
