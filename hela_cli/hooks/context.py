"""What the hooks put in front of the model: the session-start brief of a project, the recall for a prompt
and the recall by file (before an edit), as plain text within a token budget (tokens estimated as
characters / 4: the agent's tokenizer is not hela's; no padding, nothing when nothing qualifies).

Every path leaves out content-free turns ("Noted.", "Done.": :func:`hela_cli.text.content.is_content_free`)
and the memories already injected in the same agent session (:mod:`hela_cli.hooks.injected`), and records
what it injected there. The prompt recall and the brief leave out bare tool-call lines too
(:func:`hela_cli.text.session_lines.is_tool_line`): only the recall by file uses them. A memory's text is cut
to ``hooks.line_chars`` by :func:`hela_cli.text.session_lines.cut` as stored text: a marker whole, not
redacted again (the store's redaction applied when it was written; a second one would cost about a
millisecond of CPU a line on every prompt and edit: BENCHMARKS.md). The session gists, once per session
start, cut through the redacting cut (:mod:`hela_cli.hooks.gist`)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any

from hela_cli.config import Config
from hela_cli.hooks import injected
from hela_cli.facts.recall import Marks
from hela_cli.mechanics.request import RecallRequest
from hela_cli.memory import Memory
from hela_cli.text.content import is_content_free
from hela_cli.text.dates import format_iso
from hela_cli.text.marks import with_mark
from hela_cli.text.prompt_cues import named_things, names_in
from hela_cli.text.session_lines import (cut, file_memory_kind, is_passed_command, is_receipt, is_tool_line,
                                         line_kind, plain_answer, without_files)


def injectable(m: dict[str, Any], named: list[str] | None = None) -> bool:
    """May this memory be recalled by meaning (the prompt recall, the brief's relevant memories)? Not a
    content-free turn ("Noted.", "Done."), nor a command that merely passed (the session gist counts it,
    alone it says nothing), nor a bare tool-call line (it says a file was touched, not what happened there;
    the recall by file uses it: :func:`hela_cli.text.session_lines.file_memory_kind`), nor a tool's receipt
    (a file created or updated, a listing, the agent's own tool error:
    :func:`hela_cli.text.session_lines.is_receipt`) unless the prompt ``named`` the file or command it holds
    (then after what was said: :func:`prompt_context`)."""
    text = str(m.get("text") or "")
    if is_passed_command(text) or is_tool_line(text):
        return False
    if is_receipt(text):
        return bool(named) and names_in(text, named or [])
    return not is_content_free(text)


def _says_something(m: dict[str, Any]) -> bool:
    return not is_receipt(str(m.get("text") or ""))


def approx_tokens(text: str) -> int:
    return -(-len(text) // 4)


def memory_line(m: dict[str, Any], limit: int) -> str:
    """``- [#ID DATE SPEAKER] text``: the id is what ``hela memories`` / ``hela delete`` take; a superseded
    memory ends with its mark, ``(superseded by #N, DATE)`` (:func:`hela_cli.text.marks.with_mark`)."""
    ts = m.get("timestamp")
    date = format_iso(ts)[:10] if isinstance(ts, (int, float)) else str(m.get("date") or "")[:10]
    who = m.get("speaker") or ""
    return with_mark(f"- [#{m['id']} {date} {who}] {cut(m.get('text', ''), limit, stored=True)}", m)


def _fill(header: str, sections: list[tuple[str, list[str]]], budget: int) -> tuple[str, int]:
    """Header and sections, lines in order until the budget is spent; a section without a line is left out.
    Returns the text ('' when no line fits) and the number of lines."""
    out, used, n = [header], approx_tokens(header), 0
    for title, lines in sections:
        taken = []
        cost = approx_tokens(title) + 1 if title else 0
        for line in lines:
            c = approx_tokens(line) + 1
            if used + cost + c > budget:
                break
            taken.append(line)
            cost += c
        if taken:
            out += ([title] if title else []) + taken
            used += cost
            n += len(taken)
    return ("\n".join(out) if n else ""), n


# ------------------------------------------------------------------------------------------ prompt recall
# context the agents put into the prompt they hand a hook: Gemini CLI (-p) prepends the SessionStart hook's
# context as <hook_context>...</hook_context>; Claude Code's reminders. Not the user's words: not a query.
_INJECTED = re.compile(r"<(hook_context|system-reminder)>.*?</\1>", re.S)


def user_prompt(prompt: str) -> str:
    """The prompt less the context blocks an agent injected into it."""
    return _INJECTED.sub("", prompt).strip() if "<" in prompt else prompt.strip()


def is_trivial(prompt: str, cfg: Config) -> bool:
    from hela_cli.text.keywords import keywords, query_text

    text = prompt.strip()
    return len(text) < cfg.hooks.prompt_min_chars or not keywords(query_text(text))   # what recall reads


PROMPT_SPARE = 12  # candidates retrieved beyond hooks.prompt_k: the filters (floor, session, injected, relevance) drop some


def prompt_context(mem: Memory, space: str, prompt: str, session: str | None, now: float | None = None,
                   cfg: Config | None = None) -> tuple[str, dict[str, Any]]:
    """The memories relevant to ``prompt`` (score at or above ``hooks.prompt_min_score``; none of the current
    session, which the agent already has) within ``hooks.prompt_tokens``; learning from those injected.
    ``now``: what "yesterday" or "3 days ago" in the prompt count from (the hook passes the time of the
    event). ``cfg``: the hook's settings (default ``mem.config``; a server passes the client's). Returns the
    context ('' for none) and facts for the hook log."""
    cfg = cfg or mem.config
    h = cfg.hooks
    t1 = time.perf_counter()
    res = mem.retrieve(prompt, space, RecallRequest(k=h.prompt_k + PROMPT_SPARE), learn=False, now=now)
    t2 = time.perf_counter()
    limit = h.line_chars
    shown = injected.already(mem.config.db, space, session)
    named = named_things(prompt)
    candidates = [m for m in res.memories if m["score"] >= h.prompt_min_score and m.get("session") != session
                  and m["id"] not in shown and injectable(m, named)]
    verdicts = relevance_of(mem, space, prompt, candidates, res.query_vector, cfg, res.query_keywords, named)
    kept = [m for m in candidates if verdicts is None or verdicts[m["id"]].relevant]
    kept.sort(key=lambda m: not _says_something(m))   # a receipt the prompt named comes after what was said
    t3 = time.perf_counter()
    header = "Memories from earlier sessions of this project (hela; `hela memories` / `hela delete ID` to see or remove):"
    lines = [memory_line(m, limit) for m in kept[:h.prompt_k]]
    text, n = _fill(header, [("", lines)], h.prompt_tokens)
    used = kept[:n]
    injected.remember(mem.config.db, space, session, [m["id"] for m in used])
    # Eq.1 at the prompt only with hooks.learn_injected; with hooks.feedback the recall is logged so that the
    # reply's echo (the capture of the turn) strengthens what was used (docs/agents.md, "What the hooks learn")
    learn = cfg.retrieval.learn and h.learn_injected
    recall_id = (mem.learn_recall(space, prompt, res, used, learn=learn)
                 if used and cfg.retrieval.learn and (learn or h.feedback) else None)
    t4 = time.perf_counter()
    return text, {"memories": [m["id"] for m in used], "recall_id": recall_id, "injected": used,
                  "below_floor": sum(1 for m in res.memories if m["score"] < h.prompt_min_score),
                  "not_relevant": len(candidates) - len(kept),
                  "evidence": [verdicts[m["id"]].evidence for m in used] if verdicts is not None else None,
                  "timings_ms": {"retrieve": round((t2 - t1) * 1000, 1), "relevance": round((t3 - t2) * 1000, 1),
                                 "learn": round((t4 - t3) * 1000, 1)}}


def relevance_of(mem: Memory, space: str, prompt: str, memories: list[dict[str, Any]], query_vector: Any,
                 cfg: Config, query_keywords: list[str], named: list[str]) -> dict[int, Any] | None:
    """Each memory's relevance verdict (:func:`hela_cli.mechanics.relevance.judge`), or None with
    ``hooks.relevance`` off (every memory passes)."""
    if not cfg.hooks.relevance:
        return None
    from hela_cli.mechanics.relevance import judge

    return judge(mem.store, mem.space(space).id, mem.embedder, prompt, memories, query_vector,
                 meaning_margin=cfg.hooks.meaning_margin, anchored_margin=cfg.hooks.anchored_margin,
                 query_keywords=query_keywords, named=named)


# ------------------------------------------------------------------------------------------ session start
def _git(root: Path, *args: str) -> str:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=1.0)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout if out.returncode == 0 else ""


def repository_query(root: Path) -> str:
    """The repository in words: its name, branch, the subjects and files of its last commits."""
    branch = _git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    log = _git(root, "log", "-5", "--name-only", "--format=%s")
    files = []
    for line in log.splitlines():
        line = line.strip()
        if line and line not in files:
            files.append(line)
    return " ".join([root.name, branch if branch != "HEAD" else "", *files[:40]]).strip()


def start_context(mem: Memory, space: str, root: Path, session: str | None, cfg: Config | None = None,
                  ) -> tuple[str, dict[str, Any]]:
    """The brief: the gist of each of the last ``hooks.start_sessions`` sessions (the task asked, the files
    changed, the commands that failed then passed, the decisions stated, the commits: :mod:`hela_cli.hooks.gist`;
    an abstractive summary with an ``openai:`` chat endpoint) and the memories most relevant to the
    repository, within ``hooks.start_tokens``. Read-only: a session start is not a use of memory. ``cfg``: the
    hook's settings (default ``mem.config``)."""
    from hela_cli.hooks.gist import abstractive, gist_lines, session_gist, wants_abstractive, written_lines

    cfg = cfg or mem.config
    h = cfg.hooks
    limit = h.line_chars
    injected.prune()
    before = injected.already(mem.config.db, space, session)
    recent = mem.memories(space, limit=400)   # newest first
    by_session: dict[str, list[dict[str, Any]]] = {}
    for row in recent:
        if row.get("session") == session:
            continue
        by_session.setdefault(row.get("session") or "", []).append(row)
    gists = [session_gist(rows[::-1], name) for name, rows in list(by_session.items())[:h.start_sessions]]
    marks = Marks(mem.store.supersessions_for(i for g in gists for i in g.ids))   # a changed fact keeps its mark
    blocks = abstractive(cfg, gists, limit, marks) if gists and wants_abstractive(cfg) else None
    summarized = blocks is not None
    written: dict[str, Any] = {}
    if blocks is None:   # a gist a model wrote at the session's end (hooks/modelwork.py), else the extractive one
        sp = mem.store.get_space(space) if gists else None
        written = mem.store.session_gists(sp.id, [g.session for g in gists]) if sp is not None else {}
        blocks = [written_lines(g, written[g.session], limit) if g.session in written else gist_lines(g, limit, marks)
                  for g in gists]
    gist = [line for block in blocks for line in block]
    shown = {i for g in gists for i in g.ids}
    query = repository_query(root)
    relevant: list[str] = []
    relevant_ids: list[int] = []
    if query:
        res = mem.retrieve(query, space, RecallRequest(k=12), learn=False)
        named = named_things(query)
        fit = [m for m in res.memories if m["id"] not in shown and m["id"] not in before
               and m.get("session") != session and injectable(m, named)]
        verdicts = relevance_of(mem, space, query, fit, res.query_vector, cfg, res.query_keywords, named)
        for m in fit:
            if verdicts is not None and not verdicts[m["id"]].relevant:
                continue
            relevant.append(memory_line(m, limit))
            relevant_ids.append(m["id"])
    header = (f"hela memory of this project (space {space}; `hela memories -s {space}` lists it, "
              f"`hela delete ID -s {space}` removes a memory):")
    text, n = _fill(header, [("Recent sessions:", gist), ("Relevant to the repository now:", relevant)],
                    h.start_tokens)
    ids = sorted(i for i in shown | set(relevant_ids) if f"[#{i}]" in text or f"[#{i} " in text) if text else []
    injected.remember(mem.config.db, space, session, ids)
    return text, {"sessions": len(gists), "lines": n, "memories": ids,
                  "summary": "abstractive" if summarized else "extractive", "written": len(written),
                  "at": round(time.time(), 3)}


# ------------------------------------------------------------------------------------------ recall by file
def tool_paths(tool_name: str, tool_input: Any) -> list[str]:
    """The files a tool call is about to change or has touched (its ``tool_input``, as the agents send it)."""
    from hela_cli.formats.agent import files_of

    if isinstance(tool_input, dict) and tool_name in ("apply_patch",) and "input" not in tool_input \
            and isinstance(tool_input.get("command"), str):
        tool_input = {"input": tool_input["command"]}   # Codex hands apply_patch's patch as "command"
    paths = [p for _, p in files_of(tool_name, tool_input)]
    if not paths and isinstance(tool_input, dict):   # a tool the table does not know: its path argument
        paths = [v for k in ("file_path", "path", "absolute_path", "notebook_path")
                 if isinstance(v := tool_input.get(k), str) and v.strip()][:1]
    return list(dict.fromkeys(paths))


def _shown_text(text: str, kind: str) -> str:
    """A memory as the recall by file shows it: without its files tag (the header names the file); a
    decision as its decision sentences; an answer without Claude Code's preamble."""
    from hela_cli.text.coding import decision_sentences

    body = without_files(text)
    if kind != "decision":
        return body
    if line_kind(body) == "answer":
        return plain_answer(body)
    return " ".join(decision_sentences(body, limit=3)) or body   # stored text, shown: not redacted again


def path_context(mem: Memory, space: str, paths: list[str], root: Any, session: str | None,
                 cfg: Config | None = None) -> tuple[str, dict[str, Any]]:
    """What earlier sessions left about ``paths`` (the file an agent is about to edit): the decisions and
    reasons stated about it, the commands that failed there, the commits and the changes that touched it,
    newest first within ``hooks.path_tokens`` / ``hooks.path_k``; '' when none of these exists (reads and
    mere mentions do not count). The index from a path to its memories is their text (the capture writes
    paths relative to the agent's working directory: formats/agent.py), asked through
    ``Memory.memories(contains=...)`` and kept where the text names the file (:func:`mentions_path`): no
    model is loaded. ``root``: the project's directory, or a list (the project's, the agent's working
    directory). ``cfg``: the hook's settings (default ``mem.config``)."""
    from hela_cli.text.coding import mentions_path, path_needles

    h = (cfg or mem.config).hooks
    if h.path_tokens <= 0 or not paths:
        return "", {"paths": len(paths)}
    t0 = time.perf_counter()
    shown = injected.already(mem.config.db, space, session)
    found: dict[int, dict[str, Any]] = {}
    rels = []
    for p in paths:
        for needle in path_needles(p, root):
            rels.append(needle)
            for m in mem.memories(space, contains=needle, limit=200):
                if m["id"] not in found and mentions_path(m.get("text") or "", needle):
                    found[m["id"]] = m
    groups: dict[str, list[dict[str, Any]]] = {"decision": [], "failure": [], "commit": [], "change": []}
    for m in sorted(found.values(), key=lambda r: (-(r.get("ts") or r.get("timestamp") or 0), -r["id"])):
        if m["id"] in shown or (session and m.get("session") == session):
            continue
        kind = file_memory_kind(str(m.get("text") or ""))
        if kind:
            groups[kind].append(m)
    if not any(groups.values()):
        return "", {"paths": len(paths), "found": len(found), "ms": round((time.perf_counter() - t0) * 1000, 1)}
    limit = h.line_chars
    picked: list[tuple[str, dict[str, Any]]] = []
    for kind in ("decision", "failure", "commit", "change"):
        cap = 2 if kind == "change" else h.path_k
        picked += [(kind, m) for m in groups[kind][:cap]]
    picked = picked[:h.path_k]
    titles = {"decision": "Decided / said about it:", "failure": "Failed there before:", "commit": "Commits:",
              "change": "Changed in earlier sessions:"}
    sections = []
    marks = Marks(mem.store.supersessions_for(m["id"] for _, m in picked))   # a changed decision keeps its mark
    for kind in ("decision", "failure", "commit", "change"):
        rows = [m for k, m in picked if k == kind]
        lines = [memory_line({**m, **marks.fields(m["id"]), "text": _shown_text(m["text"], kind)}, limit)
                 for m in rows]
        sections.append((titles[kind], lines))
    header = f"hela: what earlier sessions left about {rels[-1] if rels else paths[0]} (`hela memories --contains PATH`):"
    text, n = _fill(header, sections, h.path_tokens)
    ids = [m["id"] for _, m in picked if f"[#{m['id']} " in text]
    injected.remember(mem.config.db, space, session, ids)
    return text, {"paths": len(paths), "found": len(found), "memories": ids,
                  "ms": round((time.perf_counter() - t0) * 1000, 1)}
