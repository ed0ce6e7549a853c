"""Coding-memory benchmark: does what hela's hooks inject in a later session hold what the earlier sessions
decided, agreed, tried and changed, and at what cost in tokens? (not a test; benchmarks/agents/coding_memory/README.md)

    python benchmarks/agents/coding_memory.py [--kinds decision,failure] [--limit N] [--json out.json]

1. Replay: each session of ``benchmarks/agents/coding_memory/data/<project>/`` (real, public Claude Code sessions as
   Claude Code JSONL) goes through hela's own capture, in this process, through ``hela_cli.hooks.process.main``:
   the code path of ``hela hook SessionEnd`` (the capture budget and the inline limit raised so that nothing is
   handed to a detached child). Sessions in the order of their first timestamp.
2. Ask: each question of ``questions.json`` is a prompt a developer types in a LATER session (one later session
   per question kind). hela answers with what its hooks inject: the ``SessionStart`` brief once per later
   session, then the ``UserPromptSubmit`` context per prompt; where the capture has a ``PreToolUse`` hook
   (path recall) and the question names a file (``edit``), that hook's context for an ``Edit`` of the file too
   (row ``hela+path``).
3. Score: a question is answered when its context holds one of the gold records (``evidence``: the
   transcript records, by ``uuid``, that hold the answer). Tokens are characters / 4 (what the hooks count).

Baselines, each given hela's per-prompt budget (``hooks.prompt_tokens``) and hela's line length
(``hooks.line_chars``), over the same transcripts (every record's text, tool outputs included, as a reader of
the JSONL sees it):

* ``none``: nothing injected;
* ``grep``: the lines of the transcripts that hold a keyword of the prompt (hela's stemmed keywords, as a
  case-insensitive substring of the line), most distinct keywords first, then newest first;
* ``bm25``: the transcript records (turns) ranked by Okapi BM25 (k1 1.2, b 0.75) over the same keywords.

Prints one table per run (answered = questions whose context holds gold evidence; tok/prompt = mean tokens
injected per prompt; per 1k tok = answered questions per 1,000 injected tokens; tok/session = the later
sessions' mean, brief included) and one JSON object (``--json`` too).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
from hooks_replay import CWD, DATA, environment, hook, hook_env, session_files  # noqa: E402 (the line above)

QUESTIONS = HERE / "coding_memory" / "questions.json"
SYSTEMS = ("none", "grep", "bm25", "hela", "hela+path")


# ------------------------------------------------------------------------------------------ the hooks
def has_path_recall() -> bool:
    """Does the capture side answer Claude Code's ``PreToolUse`` (recall by the file being touched)?"""
    from hela_cli.hooks.agents import AGENTS

    return AGENTS["claude-code"].role("PreToolUse") is not None


def replay(files: list[Path]) -> dict[str, Any]:
    """Capture each session as ``hela hook SessionEnd`` does; returns counts and CPU seconds."""
    c0, t0, added = time.process_time(), time.perf_counter(), 0
    for path in files:
        session = path.stem
        _, log = hook("SessionEnd", {"session_id": session, "transcript_path": str(path), "cwd": CWD,
                                     "hook_event_name": "SessionEnd"})
        if log.get("result") not in ("ok", "empty"):
            raise RuntimeError(f"capture of {path.name} failed: {log.get('result')} {log.get('detail', '')}")
        added += log.get("added", 0)
    return {"sessions": len(files), "memories": added, "capture_cpu_s": round(time.process_time() - c0, 1),
            "capture_wall_s": round(time.perf_counter() - t0, 1)}


_MEMORY_ID = re.compile(r"\[#(\d+)\b")


def context_sources(context: str) -> set[str]:
    """The transcript uuids (source ids) of the memories a context names as ``#ID``."""
    from hela_cli.config import load_config
    from hela_cli.store import Store

    ids = [int(x) for x in _MEMORY_ID.findall(context)]
    if not ids:
        return set()
    with Store.open(load_config().db, must_exist=True) as store:
        nodes = store.get_nodes(ids)
    return {n["source_id"] for n in nodes.values() if n.get("source_id")}


# ------------------------------------------------------------------------------------------ baselines
@dataclass
class Corpus:
    """Every record of the transcripts with its text (tool outputs included) and its lines."""
    records: list[tuple[str, str, str]] = field(default_factory=list)   # (uuid, text, ISO time)
    lines: list[tuple[str, str, str]] = field(default_factory=list)     # (uuid, line, ISO time)

    @classmethod
    def read(cls, files: list[Path]) -> "Corpus":
        """The records as a reader of the JSONL sees them, independent of hela's parser (so that a change
        to the capture leaves the baselines as they were): a prompt's or answer's text, a tool call as its
        name and input, a tool's output."""
        c = cls()
        for path in files:
            for line in path.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                if rec.get("type") not in ("user", "assistant"):
                    continue
                text = _record_text(rec["message"].get("content"))
                if not text:
                    continue
                ts = rec.get("timestamp") or ""
                c.records.append((rec["uuid"], text, ts))
                c.lines += [(rec["uuid"], ln.strip(), ts) for ln in text.splitlines() if ln.strip()]
        return c


def _record_text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    parts = []
    for b in content or []:
        if b.get("type") == "text":
            parts.append(b["text"])
        elif b.get("type") == "tool_use":
            parts.append(f"{b['name']}: " + " ".join(str(v) for v in b.get("input", {}).values() if v))
        elif b.get("type") == "tool_result":
            out = b.get("content")
            parts.append(out if isinstance(out, str) else "\n".join(x.get("text", "") for x in out or []))
    return "\n".join(p.strip() for p in parts if p and p.strip())


def _fill(items: list[tuple[str, str]], budget: int, line_chars: int) -> tuple[str, set[str]]:
    """Lines ``- text`` (cut to ``line_chars``) in order until ``budget`` tokens; the text and the uuids."""
    from hela_cli.hooks.context import approx_tokens

    out, used, uuids = [], 0, set()
    for uuid, text in items:
        flat = " ".join(text.split())
        line = "- " + (flat if len(flat) <= line_chars else flat[:line_chars - 1] + "…")
        cost = approx_tokens(line) + 1
        if used + cost > budget:
            break
        out.append(line)
        used += cost
        uuids.add(uuid)
    return "\n".join(out), uuids


def grep_context(corpus: Corpus, prompt: str, budget: int, line_chars: int) -> tuple[str, set[str]]:
    from hela_cli.text.keywords import keywords

    kws = keywords(prompt)
    scored = []
    for i, (uuid, line, ts) in enumerate(corpus.lines):
        low = line.lower()
        n = sum(1 for k in kws if k in low)
        if n:
            scored.append((n, ts, i, uuid, line))
    scored.sort(reverse=True)   # most keywords, then newest
    return _fill([(u, ln) for *_, u, ln in scored], budget, line_chars)


class BM25:
    def __init__(self, corpus: Corpus, k1: float = 1.2, b: float = 0.75):
        from hela_cli.text.keywords import stem, tokens

        self.corpus, self.k1, self.b = corpus, k1, b
        self.docs = [Counter(stem(t) for t in tokens(text)) for _, text, _ in corpus.records]
        self.lens = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lens) / max(1, len(self.lens))
        self.df = Counter(t for d in self.docs for t in d)

    def context(self, prompt: str, budget: int, line_chars: int) -> tuple[str, set[str]]:
        from hela_cli.text.keywords import keywords

        n, kws = len(self.docs), keywords(prompt)
        scores = []
        for i, d in enumerate(self.docs):
            s = 0.0
            for k in kws:
                tf = d.get(k, 0)
                if tf:
                    idf = math.log(1 + (n - self.df[k] + 0.5) / (self.df[k] + 0.5))
                    s += idf * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg))
            if s > 0:
                scores.append((-s, i))
        scores.sort()
        recs = self.corpus.records
        return _fill([(recs[i][0], recs[i][1]) for _, i in scores], budget, line_chars)


# ------------------------------------------------------------------------------------------ the run
def run(work: Path, data: Path = DATA, questions: Path = QUESTIONS, kinds: list[str] | None = None,
        limit: int | None = None, sessions: int | None = None) -> dict[str, Any]:
    """Replay, ask, score. ``kinds`` / ``limit`` (per kind) / ``sessions`` (the first N) make a slice."""
    from hela_cli.config import load_config
    from hela_cli.hooks.context import approx_tokens

    qs = json.loads(questions.read_text(encoding="utf-8"))["questions"]
    if kinds:
        qs = [q for q in qs if q["kind"] in kinds]
    if limit:
        per: Counter = Counter()
        qs = [q for q in qs if (per.update([q["kind"]]) or per[q["kind"]] <= limit)]
    files = session_files(data, sessions)
    corpus = Corpus.read(files)
    known = {u for u, _, _ in corpus.records}
    for q in qs:
        q["evidence"] = [u for u in q["evidence"] if u in known]   # a slice of the sessions holds less
    qs = [q for q in qs if q["evidence"]]
    bm25 = BM25(corpus)
    with environment(hook_env(work)):
        cfg = load_config()
        budget, line_chars = cfg.hooks.prompt_tokens, cfg.hooks.line_chars
        rep = replay(files)
        path_recall = has_path_recall()
        rows: list[dict[str, Any]] = []
        briefs: dict[str, int] = {}
        for q in qs:
            session = f"later-{q['kind']}"
            if session not in briefs:
                brief, _ = hook("SessionStart", {"session_id": session, "cwd": CWD, "source": "startup",
                                                 "hook_event_name": "SessionStart"})
                briefs[session] = approx_tokens(brief) if brief else 0
            gold = set(q["evidence"])
            t0 = time.process_time()
            ctx, _ = hook("UserPromptSubmit", {"session_id": session, "cwd": CWD, "prompt": q["prompt"],
                                               "hook_event_name": "UserPromptSubmit"})
            cpu = time.process_time() - t0
            got = {"hela": (ctx, context_sources(ctx))}
            if path_recall and q.get("edit"):
                pctx, _ = hook("PreToolUse", {"session_id": session, "cwd": CWD, "tool_name": "Edit",
                                              "tool_input": {"file_path": f"{CWD}/{q['edit']}", "old_string": "",
                                                             "new_string": ""},
                                              "hook_event_name": "PreToolUse"})
                both = "\n".join(x for x in (ctx, pctx) if x)
                got["hela+path"] = (both, context_sources(both))
            elif path_recall:
                got["hela+path"] = got["hela"]
            got["grep"] = grep_context(corpus, q["prompt"], budget, line_chars)
            got["bm25"] = bm25.context(q["prompt"], budget, line_chars)
            got["none"] = ("", set())
            row = {"id": q["id"], "kind": q["kind"], "session": session, "hela_cpu_ms": round(cpu * 1000, 1)}
            for name, (text, uuids) in got.items():
                hits = gold & uuids
                row[name] = {"answered": bool(hits), "recall": round(len(hits) / len(gold), 3),
                             "tokens": approx_tokens(text) if text else 0}
                if name.startswith("hela"):   # what the context spent its lines on
                    lines = [ln for ln in text.splitlines() if _MEMORY_ID.search(ln)]
                    row[name].update(lines=len(lines), tool_lines=sum("[tool]" in ln for ln in lines),
                                     context=text)   # in --json only: what a reader checks a miss against
            rows.append(row)
            print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "context"} if isinstance(v, dict) else v
                              for k, v in row.items()}), file=sys.stderr, flush=True)
    return {"data": str(data.relative_to(HERE.parent)) if data.is_relative_to(HERE.parent) else str(data),
            **rep, "questions": len(rows), "prompt_tokens": budget, "line_chars": line_chars,
            "prompt_min_score": cfg.hooks.prompt_min_score, "path_recall": path_recall,
            "embedder": cfg.models.embedder, "briefs": briefs, "summary": summarize(rows, briefs), "rows": rows}


def budget_curve(data: Path, questions: Path, budgets: list[int], line_chars: int) -> list[dict[str, Any]]:
    """grep and BM25 at each of ``budgets`` tokens per prompt (no hela, no model): what each answers when it
    spends about as much as hela does."""
    from hela_cli.hooks.context import approx_tokens

    qs = json.loads(questions.read_text(encoding="utf-8"))["questions"]
    corpus = Corpus.read(session_files(data))
    bm25 = BM25(corpus)
    out = []
    for budget in budgets:
        for name in ("grep", "bm25"):
            answered = tokens = 0
            for q in qs:
                text, uuids = (grep_context(corpus, q["prompt"], budget, line_chars) if name == "grep"
                               else bm25.context(q["prompt"], budget, line_chars))
                tokens += approx_tokens(text) if text else 0
                answered += bool(set(q["evidence"]) & uuids)
            out.append({"system": name, "budget": budget, "answered": answered, "of": len(qs),
                        "tok_prompt": round(tokens / len(qs), 1),
                        "per_1k_tok": round(1000 * answered / tokens, 2) if tokens else None})
    return out


def summarize(rows: list[dict[str, Any]], briefs: dict[str, int]) -> dict[str, dict[str, Any]]:
    """Per system, all kinds and each kind: answered (share), recall, tokens per prompt, answered per 1k
    tokens, tokens per later session (hela: the brief included)."""
    out: dict[str, dict[str, Any]] = {}
    systems = [s for s in SYSTEMS if rows and s in rows[0]]
    kinds = ["all", *sorted({r["kind"] for r in rows})]
    for s in systems:
        out[s] = {}
        for k in kinds:
            rs = [r for r in rows if k in ("all", r["kind"])]
            tok = sum(r[s]["tokens"] for r in rs)
            answered = sum(r[s]["answered"] for r in rs)
            sessions = {r["session"] for r in rs}
            brief = sum(briefs.get(x, 0) for x in sessions) if s.startswith("hela") else 0
            out[s][k] = {"n": len(rs), "answered": round(answered / len(rs), 3),
                         "recall": round(sum(r[s]["recall"] for r in rs) / len(rs), 3),
                         "tok_prompt": round(tok / len(rs), 1),
                         "per_1k_tok": round(1000 * answered / tok, 2) if tok else None,
                         "tok_session": round((tok + brief) / len(sessions), 1)}
    return out


def table(summary: dict[str, dict[str, Any]]) -> str:
    kinds = list(next(iter(summary.values())))
    head = "| system | " + " | ".join(f"{k} answered" for k in kinds) + " | tok/prompt | per 1k tok | tok/session |"
    lines = [head, "|" + "---|" * (len(kinds) + 4)]
    for s, by in summary.items():
        a = by["all"]
        cells = [f"{by[k]['answered']:.2f}" for k in kinds]
        lines.append(f"| {s} | " + " | ".join(cells) + f" | {a['tok_prompt']:.0f} | "
                     f"{a['per_1k_tok'] if a['per_1k_tok'] is not None else '-'} | {a['tok_session']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--kinds", default="", help="comma-separated question kinds (default: all)")
    ap.add_argument("--limit", type=int, default=0, help="at most this many questions per kind")
    ap.add_argument("--sessions", type=int, default=0, help="replay only the first N sessions")
    ap.add_argument("--dir", type=Path, default=None, help="keep the database here (default: a temporary one)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--curve", default="", help="also grep and BM25 at these budgets (tokens per prompt, comma-separated)")
    ap.add_argument("--no-hela", action="store_true", help="only the --curve (seconds: no capture, no model)")
    args = ap.parse_args()
    budgets = [int(b) for b in args.curve.split(",") if b]
    if budgets:
        from hela_cli.config import load_config

        curve = budget_curve(args.data, args.questions, budgets, load_config().hooks.line_chars)
        print("| system | budget | answered | tok/prompt | per 1k tok |\n|---|---|---|---|---|")
        for c in curve:
            print(f"| {c['system']} | {c['budget']} | {c['answered']} / {c['of']} | {c['tok_prompt']:.0f} | {c['per_1k_tok']} |")
        if args.no_hela:
            return
    with tempfile.TemporaryDirectory() as tmp:
        work = args.dir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        res = run(work, args.data, args.questions, [k for k in args.kinds.split(",") if k] or None,
                  args.limit or None, args.sessions or None)
    print(table(res["summary"]))
    out = {k: v for k, v in res.items() if k != "rows"}
    print(json.dumps(out))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
