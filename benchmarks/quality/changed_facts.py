"""The changed-facts dev suite: automatic supersession detection measured (precision, recall, the share of
memories marked) and recall before / after (is the newest value's evidence recalled, above the old one?).

    python benchmarks/quality/changed_facts.py [--locomo FILE] [--lme FILE] [--lme-items ku|all|ID,...]
                                               [--suite DIR ...] [--no-coding] [--no-ab] [--no-recall]
                                               [--bookminder] [--db-dir DIR] [--records F] [--json F]

* The suite (benchmarks/quality/changed_facts/README.md): the coding-project sessions of ``changed_facts/coding/``
  (one space each) and, with ``--locomo``, the five LoCoMo dev conversations (one space each) with the
  changes annotated in ``changed_facts/locomo.json`` (dia_ids). Each corpus is ingested through
  ``ingest_conversations`` with the default config (``supersession.detect`` on). Throughput A/B in the same
  run: the coding suite and the first ``--ab`` LoCoMo conversations are also ingested with detection off,
  conversation by conversation in alternating order (ingest CPU seconds, ``time.process_time`` of this
  process: the embedder runs in it); and the CPU seconds spent inside detection are counted on every ingest.
* ``--suite DIR``: another folder of project files in the same format, scored the same way (the held-out test
  half, ``changed_facts/test/``); ``--no-coding`` leaves the dev half out.
* Per kind (the first word of a case's annotation, ``CHANGE_KINDS`` and ``DISTRACTOR_KINDS``): how many
  changes are marked superseded / marked at all, how many distractors carry a superseded mark / any mark;
  printed as a table at the end (no sentence of the suite is printed: a test half can be scored unread).
* Detection is scored against the annotations: precision = marks naming an annotated (old, new) pair /
  all marks of the corpus, recall = annotated pairs marked / all annotated pairs; for "superseded" marks
  and for any mark. Marks on an annotated distractor pair are counted by kind. The share of memories
  marked (distinct old memories / memories) is the over-invalidation rate; on LoCoMo every mark outside
  the 12 annotations is written to ``--records`` for review.
* Recall: for each annotated change the old memory's own text is asked (the query closest to the replaced
  fact: the hardest case for its successor), read-only, at the default budget (k + m), with the marks
  (after) and again with every mark of the space removed (before: what detection off gives; the marks are
  the only thing detection writes): is the new memory recalled, ranked above the old one, or only the old
  one?
* ``--lme``: the LongMemEval-S items (default ``ku``: the knowledge-update ones; each has an old and a new
  answer session) ingested with detection on; the item's question asked with the marks (after) and again
  with every mark of the space removed (before: what detection off gives, one ingest instead of two).
  Turn recall (share of ``has_answer`` turns retrieved, as ``hela bench longmemeval``) and, for
  knowledge-update items, whether the newest session's evidence is recalled and ranked above the old one.
* ``--db-dir DIR``: the ingested databases of ``--lme`` and ``--bookminder`` are kept in DIR and later runs
  reuse them (a copy in the temporary folder is read: the kept file is never written), so a change to
  recall alone is measured without the long ingest again. LongMemEval items are named as ``hela bench
  longmemeval --cache-dir`` names them (item id and a key of the haystack, the embedder and the ingest
  settings), so that folder is reused as it is; BookMinder's is ``bookminder-<key>.db`` (the key: the
  sessions, the embedder and the supersession settings). Neither key holds the detection rules' code:
  clear DIR when the rules change.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from hela_cli.config import Config
from hela_cli.memory import Memory  # before llama_cpp: hela_cli.models sets OMP_WAIT_POLICY
from hela_cli.bench.longmemeval import _copy_db
from hela_cli.formats import Conversation, Turn, parse_file
from hela_cli.ingest import ingest_conversations
from hela_cli.store import Store
from hela_cli.text.dates import parse_date

SUITE = Path(__file__).resolve().parent / "changed_facts"
_TURN = re.compile(r"^(?:\[(?P<label>[\w-]+)\]\s+)?(?P<speaker>[\w .'-]+?):\s+(?P<text>.+)$")
_PAIR = re.compile(r"^(?P<what>change|distractor)\s+(?P<old>[\w-]+)\s*->\s*(?P<new>[\w-]+)\s+(?P<kind>.+)$")


def parse_project(path: Path) -> tuple[Conversation, list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """One coding-project file: ``# date ISO`` starts a session, ``[label] speaker: text`` is a turn (the
    label is its source id), ``change OLD -> NEW kind`` / ``distractor OLD -> NEW kind`` annotate pairs."""
    turns: list[Turn] = []
    changes: list[tuple[str, str, str]] = []
    distractors: list[tuple[str, str, str]] = []
    session, ts, n = "", 0.0, 0
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("# date "):
            date = line[len("# date "):].strip()
            ts, session, n = parse_date(date), f"s{len({t.session for t in turns}) + 1}", 0
            continue
        if line.startswith("#"):
            continue
        if (m := _PAIR.match(line)):
            (changes if m["what"] == "change" else distractors).append((m["old"], m["new"], m["kind"].strip()))
            continue
        m = _TURN.match(line)
        if not m or not session:
            raise SystemExit(f"{path}:{i}: not a turn, a date or an annotation: {line!r}")
        speaker = m["speaker"].strip()
        turns.append(Turn(speaker, m["text"].strip(), ts + 60.0 * n, "", session,
                          m["label"] or f"{path.stem}-{i}", speaker if speaker in ("user", "assistant") else None))
        n += 1
    labels = {t.source_id for t in turns}
    for old, new, _ in changes + distractors:
        if old not in labels or new not in labels:
            raise SystemExit(f"{path}: annotation names an unknown turn: {old} -> {new}")
    return Conversation(f"cf-{path.stem}", turns, str(path), keyed=True), changes, distractors


#: the kinds a case is reported by (the first word of its annotation's kind): changes, then distractors
CHANGE_KINDS = ("outright", "unnamed", "life", "agent")
DISTRACTOR_KINDS = ("other-component", "other-environment", "other-person", "additive", "hypothetical", "plan",
                    "question", "negated", "quoted", "now-other-sense")


def kind_of(label: str) -> str:
    """The kind a case is reported by: the first word of its annotation (``unnamed version`` -> ``unnamed``)."""
    return (label.split() or ["?"])[0].lower()


def coding_suite(folder: Path | None = None) -> tuple[list[Conversation], dict[str, list], dict[str, list]]:
    """The project files (``*.txt``) of ``folder`` (default: the dev half, ``changed_facts/coding/``)."""
    convs, gold, dis = [], {}, {}
    for p in sorted((folder or SUITE / "coding").glob("*.txt")):
        conv, ch, di = parse_project(p)
        convs.append(conv)
        gold[conv.name], dis[conv.name] = ch, di
    return convs, gold, dis


def locomo_suite(path: str) -> tuple[list[Conversation], dict[str, list], dict[str, list]]:
    ann = json.loads((SUITE / "locomo.json").read_text(encoding="utf-8"))
    convs = parse_file(path, "locomo")
    gold: dict[str, list] = {c.name: [] for c in convs}
    dis: dict[str, list] = {c.name: [] for c in convs}
    for a in ann["changes"]:
        gold[a["conv"]].append((a["old"], a["new"], a["kind"]))
    for a in ann["distractors"]:
        dis[a["conv"]].append((a["old"], a["new"], a["kind"]))
    return convs, gold, dis


_DETECT_CPU = [0.0]


def _timed_detection() -> None:
    """Count the CPU seconds spent in detection (``detect_and_mark`` as the write paths call it)."""
    from hela_cli.ingest import batch
    from hela_cli.facts import detect as supersession

    inner = supersession.detect_and_mark

    def timed(*args: Any, **kw: Any) -> Any:
        c0 = time.process_time()
        try:
            return inner(*args, **kw)
        finally:
            _DETECT_CPU[0] += time.process_time() - c0

    batch.detect_and_mark = timed


def ingest_ab(convs: list[Conversation], mem_a: Memory, mem_b: Memory, emb: Any, ab: int | None) -> dict[str, float]:
    """Each conversation into B (detection on); the first ``ab`` (None: all) also into A (off), alternating
    which goes first: the throughput A/B in one run. Also the CPU seconds inside detection in B."""
    cpu = {"A": 0.0, "B": 0.0, "B_ab": 0.0}
    wall = {"A": 0.0, "B": 0.0}
    turns_ab = 0
    d0 = _DETECT_CPU[0]
    for i, conv in enumerate(convs):
        both = ab is None or i < ab
        turns_ab += len(conv.turns) if both else 0
        order = [("B", mem_b)] if not both else [("A", mem_a), ("B", mem_b)] if i % 2 == 0 else [("B", mem_b), ("A", mem_a)]
        for side, mem in order:
            c0, w0 = time.process_time(), time.perf_counter()
            ingest_conversations(mem.store, emb, [conv], mem.config, space=conv.name)
            dc, dw = time.process_time() - c0, time.perf_counter() - w0
            cpu[side] += dc
            wall[side] += dw
            if side == "B" and both:
                cpu["B_ab"] += dc
    turns = sum(len(c.turns) for c in convs)
    det = _DETECT_CPU[0] - d0
    return {"turns": turns, "ab_turns": turns_ab, "cpu_s_off": round(cpu["A"], 2), "cpu_s_on": round(cpu["B_ab"], 2),
            "wall_s_off": round(wall["A"], 2),
            "cpu_ratio_on_off": round(cpu["B_ab"] / cpu["A"], 4) if cpu["A"] else None,
            "cpu_s_on_all": round(cpu["B"], 2), "cpu_s_in_detection": round(det, 2),
            "detection_share_of_ingest_cpu": round(100.0 * det / cpu["B"], 2) if cpu["B"] else None}


def marks_by_source(store: Store, space: str) -> list[dict[str, Any]]:
    sp = store.require_space(space)
    rows = store.space_supersessions(sp.id)
    nodes = store.get_nodes({r[k] for r in rows for k in ("old_id", "new_id")})
    return [{**r, "old": nodes[r["old_id"]]["source_id"], "new": nodes[r["new_id"]]["source_id"],
             "old_text": nodes[r["old_id"]]["text"], "new_text": nodes[r["new_id"]]["text"]} for r in rows]


def score(corpus: str, store: Store, convs: list[Conversation], gold: dict[str, list], dis: dict[str, list],
          records: list[dict[str, Any]]) -> dict[str, Any]:
    tp = {"superseded": 0, "any": 0}
    n_marks = {"superseded": 0, "any": 0}
    n_gold = found_s = found_any = 0
    distractor_hits: dict[str, int] = {}
    by_kind: dict[str, dict[str, int]] = {}
    by_detector: dict[str, dict[str, int]] = {}
    marked_old = {"superseded": 0, "possible": 0}
    nodes = 0
    for conv in convs:
        sp = store.require_space(conv.name)
        nodes += store.count_nodes(sp.id)
        marks = marks_by_source(store, conv.name)
        gpairs = {(o, n) for o, n, _ in gold.get(conv.name, [])}
        dpairs = {(o, n): k for o, n, k in dis.get(conv.name, [])}
        n_gold += len(gpairs)
        olds: dict[str, set] = {"superseded": set(), "possible": set()}
        hit_s, hit_any = set(), set()
        for m in marks:
            pair = (m["old"], m["new"])
            ok = pair in gpairs
            olds[m["status"]].add(m["old_id"])
            n_marks["any"] += 1
            tp["any"] += ok
            d = by_detector.setdefault(m["detector"], {"marks": 0, "correct": 0})
            d["marks"] += 1
            d["correct"] += ok
            if m["status"] == "superseded":
                n_marks["superseded"] += 1
                tp["superseded"] += ok
                if ok:
                    hit_s.add(pair)
            if ok:
                hit_any.add(pair)
            if pair in dpairs:
                distractor_hits[dpairs[pair]] = distractor_hits.get(dpairs[pair], 0) + 1
            records.append({"kind": "mark", "corpus": corpus, "space": conv.name, "old": m["old"], "new": m["new"],
                            "status": m["status"], "detector": m["detector"], "confidence": m["confidence"],
                            "annotated": "change" if ok else dpairs.get(pair, "unannotated"),
                            "old_text": m["old_text"][:300], "new_text": m["new_text"][:300]})
        ids = store.ids_by_source(sp.id, [x for o, n, _ in gold.get(conv.name, []) for x in (o, n)])
        for o, n, k in gold.get(conv.name, []):
            if (o, n) not in hit_any and o in ids and n in ids:
                vec = store.node_vectors([ids[o], ids[n]])
                nodes_on = store.get_nodes([ids[o], ids[n]])
                records.append({"kind": "missed", "corpus": corpus, "space": conv.name, "old": o, "new": n,
                                "change": k, "cosine": round(float(vec[ids[o]] @ vec[ids[n]]), 3),
                                "old_text": nodes_on[ids[o]]["text"][:300], "new_text": nodes_on[ids[n]]["text"][:300]})
        dis_s = {(m["old"], m["new"]) for m in marks if m["status"] == "superseded"}
        dis_any = {(m["old"], m["new"]) for m in marks}
        for o, n, k in gold.get(conv.name, []):
            c = by_kind.setdefault(kind_of(k), {"what": "change", "cases": 0, "superseded": 0, "any": 0})
            c["cases"] += 1
            c["superseded"] += (o, n) in hit_s
            c["any"] += (o, n) in hit_any
        for (o, n), k in dpairs.items():
            c = by_kind.setdefault(kind_of(k), {"what": "distractor", "cases": 0, "superseded": 0, "any": 0})
            c["cases"] += 1
            c["superseded"] += (o, n) in dis_s
            c["any"] += (o, n) in dis_any
        found_s += len(hit_s)
        found_any += len(hit_any)
        marked_old["superseded"] += len(olds["superseded"])
        marked_old["possible"] += len(olds["possible"] - olds["superseded"])

    def ratio(a: int, b: int) -> float | None:
        return round(100.0 * a / b, 1) if b else None

    return {"memories": nodes, "annotated_changes": n_gold,
            "marks": n_marks["any"], "marks_superseded": n_marks["superseded"],
            "precision_superseded": ratio(tp["superseded"], n_marks["superseded"]),
            "precision_any": ratio(tp["any"], n_marks["any"]),
            "recall_superseded": ratio(found_s, n_gold), "recall_any": ratio(found_any, n_gold),
            "distractors": sum(len(v) for v in dis.values()), "distractor_marks": distractor_hits,
            "by_detector": by_detector,
            "by_kind": {k: {**v, "superseded_pct": ratio(v["superseded"], v["cases"]),
                            "any_pct": ratio(v["any"], v["cases"])}
                        for k, v in sorted(by_kind.items(), key=lambda kv: _kind_order(kv[0]))},
            "marked_share_superseded": ratio(marked_old["superseded"], nodes),
            "marked_share_possible": ratio(marked_old["possible"], nodes),
            "marked_share_any": ratio(marked_old["superseded"] + marked_old["possible"], nodes)}


def _kind_order(kind: str) -> tuple[int, str]:
    known = [*CHANGE_KINDS, *DISTRACTOR_KINDS]
    return (known.index(kind) if kind in known else len(known), kind)


def kind_table(name: str, det: dict[str, Any]) -> str:
    """The per-kind figures of one corpus as a Markdown table: changes marked superseded / marked at all
    (recall), distractors marked superseded / marked at all (false marks), and the distractors together."""
    rows = [f"| {name}: kind | cases | marked superseded | marked at all |", "| --- | --- | --- | --- |"]
    tot = {"cases": 0, "superseded": 0, "any": 0}
    for k, v in det["by_kind"].items():
        rows.append(f"| {v['what']}: {k} | {v['cases']} | {v['superseded']} ({v['superseded_pct']} %) | "
                    f"{v['any']} ({v['any_pct']} %) |")
        if v["what"] == "distractor":
            for f in tot:
                tot[f] += v[f]
    if tot["cases"]:
        pct = {f: round(100.0 * tot[f] / tot["cases"], 1) for f in ("superseded", "any")}
        rows.append(f"| distractors, all | {tot['cases']} | {tot['superseded']} ({pct['superseded']} %) | "
                    f"{tot['any']} ({pct['any']} %) |")
    rows.append(f"| precision of the marks in these files: superseded / any | | {det['precision_superseded']} % "
                f"| {det['precision_any']} % |")
    return "\n".join(rows)


def _ranks(mem: Memory, space: str, question: str, now: float | None = None) -> dict[str, int]:
    res = mem.retrieve(question, space, learn=False, now=now)
    return {m.get("source_id"): i for i, m in enumerate(res.memories)}


def _unmark_all(mem: Memory, space: str) -> None:
    sp = mem.store.require_space(space)
    for row in mem.store.space_supersessions(sp.id):
        mem.store.unmark_superseded(sp.id, row["old_id"], row["new_id"])


def recall_ab(corpus: str, mem_b: Memory, convs: list[Conversation], gold: dict[str, list],
              records: list[dict[str, Any]]) -> dict[str, Any]:
    """For each annotated change: the old memory's text asked with the marks (after), then again after every
    mark of the space is removed (before: what detection off gives; the marks are the only thing detection
    writes). Read-only retrievals."""
    counts = {side: {"new_recalled": 0, "new_above_old": 0, "old_only": 0} for side in ("before", "after")}
    n = 0
    recs: list[dict[str, Any]] = []
    for side in ("after", "before"):
        for conv in convs:
            if side == "before":
                _unmark_all(mem_b, conv.name)
            text_of = {t.source_id: t.text for t in conv.turns}
            for old, new, kind in gold.get(conv.name, []):
                if side == "after":
                    n += 1
                    recs.append({"kind": "recall", "corpus": corpus, "space": conv.name, "old": old, "new": new})
                rec = next(r for r in recs if r["space"] == conv.name and (r["old"], r["new"]) == (old, new))
                mem = mem_b
                r = _ranks(mem, conv.name, text_of[old])
                ro, rn = r.get(old), r.get(new)
                c = counts[side]
                c["new_recalled"] += rn is not None
                c["new_above_old"] += rn is not None and (ro is None or rn < ro)
                c["old_only"] += ro is not None and rn is None
                rec[side] = {"old_rank": ro, "new_rank": rn}
    records.extend(recs)
    return {"changes": n, **{side: {k: round(100.0 * v / n, 1) if n else None for k, v in c.items()}
                             for side, c in counts.items()}}


def _kept(tmp: Path, name: str, db_dir: str | None, build: Callable[[Memory], None], cfg: Config,
          emb: Any) -> tuple[Memory, float]:
    """A Memory on ``tmp/name``: a copy of ``db_dir/name`` when that was kept, else ``build`` ingests it
    (and a copy is kept in ``db_dir``). Returns it and the ingest CPU seconds (0.0 when reused)."""
    work = tmp / name
    kept = Path(db_dir) / name if db_dir else None
    if kept is not None and kept.exists():
        _copy_db(kept, work)
        cfg.db = str(work)
        return Memory(cfg, store=Store(cfg.db), embedder=emb), 0.0
    cfg.db = str(work)
    mem = Memory(cfg, store=Store(cfg.db), embedder=emb)
    c0 = time.process_time()
    build(mem)
    spent = time.process_time() - c0
    if kept is not None:
        mem.close()
        part = kept.with_name(kept.name + ".part")
        _copy_db(work, part)
        part.replace(kept)
        mem = Memory(cfg, store=Store(cfg.db), embedder=emb)
    return mem, spent


def lme(path: str, which: str, emb: Any, tmp: Path, records: list[dict[str, Any]],
        db_dir: str | None = None) -> dict[str, Any]:
    from hela_cli.bench.longmemeval import _cache_key, _safe, load_items, score_item

    raw = {it["question_id"]: it for it in json.loads(Path(path).read_text(encoding="utf-8"))}
    items = load_items(path)
    if which == "ku":
        items = [it for it in items if it.qtype == "knowledge-update"]
    elif which != "all":
        want = set(which.split(","))
        items = [it for it in items if it.qid in want]
    out: dict[str, Any] = {"items": len(items), "turn_recall_before": 0.0, "turn_recall_after": 0.0,
                           "ku_items": 0, "ku_new_recalled": {"before": 0, "after": 0},
                           "ku_new_above_old": {"before": 0, "after": 0}, "ku_old_only": {"before": 0, "after": 0},
                           "marks": 0, "memories": 0, "cpu_s_ingest": 0.0}
    scored = 0
    for it in items:
        cfg = Config()
        mem, spent = _kept(tmp, f"{_safe(it.qid)}-{_cache_key(it, emb, cfg)}.db", db_dir,
                           lambda m: ingest_conversations(m.store, emb, [it.conv], cfg, space=it.qid), cfg, emb)
        out["cpu_s_ingest"] += spent
        sp = mem.store.require_space(it.qid)
        rows = mem.store.space_supersessions(sp.id)
        out["marks"] += len(rows)
        out["memories"] += mem.store.count_nodes(sp.id)
        # the old and the new answer session (by date) and their has_answer turns
        r = raw[it.qid]
        sess = {sid: (d, [f"{sid}:{ti}" for ti, t in enumerate(s) if t.get("has_answer")])
                for sid, s, d in zip(r["haystack_session_ids"], r["haystack_sessions"], r["haystack_dates"])
                if sid in r["answer_session_ids"]}
        ordered = [v[1] for _, v in sorted(sess.items(), key=lambda kv: parse_date(kv[1][0]))]
        rec: dict[str, Any] = {"kind": "lme", "item": it.qid, "type": it.qtype, "marks": [
            {"old": o["source_id"], "new": n["source_id"], "status": row["status"], "detector": row["detector"]}
            for row in rows for o, n in [(mem.store.get_node(row["old_id"]), mem.store.get_node(row["new_id"]))]]}
        results = {}
        for side in ("after", "before"):
            if side == "before":
                for row in rows:
                    mem.store.unmark_superseded(sp.id, row["old_id"], row["new_id"])
            res = mem.retrieve(it.question, it.qid, learn=False, now=it.now)
            results[side] = res.memories
            ranks = {m.get("source_id"): i for i, m in enumerate(res.memories)}
            sc = score_item(it, res.memories, None, True)
            rec[side] = {"turn_recall": sc["turn_recall"],
                         "gold_ranks": {t: ranks.get(t) for t in it.gold_turns}}
            if sc["turn_recall"] is not None:
                out[f"turn_recall_{side}"] += sc["turn_recall"]
            if it.qtype == "knowledge-update" and len(ordered) == 2:
                old_t, new_t = ordered   # source ids "<session id>:<turn index>", as the parser stores them
                ro = min((ranks[t] for t in old_t if t in ranks), default=None)
                rn = min((ranks[t] for t in new_t if t in ranks), default=None)
                out["ku_new_recalled"][side] += rn is not None
                out["ku_new_above_old"][side] += rn is not None and (ro is None or rn < ro)
                out["ku_old_only"][side] += ro is not None and rn is None
                rec[side].update(old_rank=ro, new_rank=rn)
        if it.qtype == "knowledge-update":
            out["ku_items"] += 1
        if any(score_item(it, results[s], None, True)["turn_recall"] is not None for s in results):
            scored += 1
        records.append(rec)
        mem.close()
    for side in ("before", "after"):
        out[f"turn_recall_{side}"] = round(100.0 * out[f"turn_recall_{side}"] / scored, 1) if scored else None
    out["cpu_s_ingest"] = round(out["cpu_s_ingest"], 1)
    return out


BOOKMINDER = Path(__file__).resolve().parent.parent / "agents" / "coding_memory"


def bookminder(emb: Any, tmp: Path, records: list[dict[str, Any]], db_dir: str | None = None) -> dict[str, Any]:
    """The real BookMinder Claude Code sessions (benchmarks/coding_memory/) imported into one space with
    detection on (agent sessions: the user and the assistant speak for one project); for each question of kind
    ``changed`` (a decision later changed; its evidence is the later state): does a mark name an evidence
    record as the successor of an earlier record, and does the evidence come out above the records it
    replaced? The question asked with the marks (after) and again with every mark removed (before)."""
    qs = [q for q in json.loads((BOOKMINDER / "questions.json").read_text(encoding="utf-8"))["questions"]
          if q["kind"] == "changed"]
    convs = [c for p in sorted((BOOKMINDER / "data" / "bookminder").glob("*.jsonl"))
             for c in parse_file(str(p), "claude_code", tool_output_chars=400)]
    convs.sort(key=lambda c: min(t.timestamp for t in c.turns))
    cfg = Config()
    turns = [[t.speaker, t.text, t.timestamp, t.session, t.source_id] for c in convs for t in c.turns]
    key = hashlib.sha256(json.dumps([turns, emb.model_id, int(emb.dim), repr(cfg.supersession)],
                                    ensure_ascii=False).encode()).hexdigest()[:20]

    def build(m: Memory) -> None:
        for c in convs:
            ingest_conversations(m.store, emb, [c], cfg, space="bookminder")

    mem, spent = _kept(tmp, f"bookminder-{key}.db", db_dir, build, cfg, emb)
    sp = mem.store.require_space("bookminder")
    rows = mem.store.space_supersessions(sp.id)
    n_nodes = mem.store.count_nodes(sp.id)
    nodes = mem.store.get_nodes({r[k] for r in rows for k in ("old_id", "new_id")})
    out: dict[str, Any] = {"memories": n_nodes, "marks": len(rows),
                           "marks_superseded": sum(r["status"] == "superseded" for r in rows),
                           "marked_share": round(100.0 * len({r["old_id"] for r in rows}) / n_nodes, 2),
                           "cpu_s_ingest": round(spent, 1), "changed_questions": len(qs),
                           "evidence_marked_as_successor": 0, "current_first": {"before": 0, "after": 0},
                           "evidence_recalled": {"before": 0, "after": 0}}
    for r in rows:
        records.append({"kind": "bookminder-mark", "status": r["status"], "detector": r["detector"],
                        "old": nodes[r["old_id"]]["source_id"], "new": nodes[r["new_id"]]["source_id"],
                        "old_text": nodes[r["old_id"]]["text"][:300], "new_text": nodes[r["new_id"]]["text"][:300]})
    by_new: dict[str, list[str]] = {}
    for r in rows:
        by_new.setdefault(nodes[r["new_id"]]["source_id"], []).append(nodes[r["old_id"]]["source_id"])
    per_q = []
    for q in qs:
        olds = sorted({o for e in q["evidence"] for o in by_new.get(e, [])})
        out["evidence_marked_as_successor"] += bool(olds)
        per_q.append({"kind": "bookminder-question", "id": q["id"], "prompt": q["prompt"], "replaced": olds})
    for side in ("after", "before"):
        if side == "before":
            for r in rows:
                mem.store.unmark_superseded(sp.id, r["old_id"], r["new_id"])
        for rec, q in zip(per_q, qs):
            res = mem.retrieve(q["prompt"], "bookminder", learn=False)
            ranks = {m.get("source_id"): i for i, m in enumerate(res.memories)}
            rg = min((ranks[e] for e in q["evidence"] if e in ranks), default=None)
            ro = min((ranks[o] for o in rec["replaced"] if o in ranks), default=None)
            out["evidence_recalled"][side] += rg is not None
            first = rg is not None and (ro is None or rg < ro)
            out["current_first"][side] += first and bool(rec["replaced"])
            rec[side] = {"evidence_rank": rg, "replaced_rank": ro}
    records.extend(per_q)
    mem.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", help="LoCoMo dev file (the five conversations): annotated changes + over-invalidation")
    ap.add_argument("--lme", help="LongMemEval-S file")
    ap.add_argument("--lme-items", default="ku", help="ku (knowledge-update items), all, or ids")
    ap.add_argument("--records", help="write every mark, miss and recall record here (JSON lines)")
    ap.add_argument("--json", help="write the summary here")
    ap.add_argument("--no-coding", action="store_true", help="skip the coding-project sessions (the dev half)")
    ap.add_argument("--suite", action="append", default=[], metavar="DIR",
                    help="also score the project files of DIR (the same format as changed_facts/coding/; e.g. "
                    "the test half changed_facts/test); repeatable")
    ap.add_argument("--no-ab", action="store_true", help="no detection-off ingest (no throughput A/B)")
    ap.add_argument("--no-recall", action="store_true", help="no recall before / after")
    ap.add_argument("--bookminder", action="store_true", help="the real BookMinder sessions (coding_memory/): "
                    "reversed decisions marked, and current-first")
    ap.add_argument("--db-dir", help="keep the ingested --lme / --bookminder databases here and reuse them "
                    "(read from a copy); the names of `hela bench longmemeval --cache-dir` for LongMemEval items")
    ap.add_argument("--ab", type=int, default=1, help="LoCoMo conversations also ingested with detection off "
                    "for the throughput A/B (the coding suite always is; default 1)")
    a = ap.parse_args()
    records: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="changed-facts-") as d:
        tmp = Path(d)
        cfg_a, cfg_b = Config(), Config()
        cfg_a.supersession.detect = False
        cfg_b.supersession.detect = True
        cfg_a.db, cfg_b.db = str(tmp / "off.db"), str(tmp / "on.db")
        emb = Memory(cfg_b).embedder
        mem_a = Memory(cfg_a, store=Store(cfg_a.db), embedder=emb)
        mem_b = Memory(cfg_b, store=Store(cfg_b.db), embedder=emb)
        corpora = []
        if not a.no_coding:
            corpora.append(("coding", *coding_suite()))
        for folder in a.suite:
            corpora.append((Path(folder).name, *coding_suite(Path(folder))))
        if a.locomo:
            corpora.append(("locomo", *locomo_suite(a.locomo)))
        _timed_detection()
        for name, convs, gold, dis in corpora:
            timing = ingest_ab(convs, mem_a, mem_b, emb, 0 if a.no_ab else None if name != "locomo" else a.ab)
            det = score(name, mem_b.store, convs, gold, dis, records)
            rec = None if a.no_recall else recall_ab(name, mem_b, convs, gold, records)
            summary[name] = {"ingest": timing, "detection": det, "recall": rec}
            print(json.dumps({name: summary[name]}, indent=1), flush=True)
        for name, *_ in corpora:
            print(f"\n{kind_table(name, summary[name]['detection'])}", flush=True)
        mem_a.close()
        mem_b.close()
        if a.bookminder:
            summary["bookminder"] = bookminder(emb, tmp, records, a.db_dir)
            print(json.dumps({"bookminder": summary["bookminder"]}, indent=1), flush=True)
        if a.lme:
            summary["lme"] = lme(a.lme, a.lme_items, emb, tmp, records, a.db_dir)
            print(json.dumps({"lme": summary["lme"]}, indent=1), flush=True)
    if a.records:
        Path(a.records).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    if a.json:
        Path(a.json).write_text(json.dumps(summary, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
