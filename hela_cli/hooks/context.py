"""What the start and prompt hooks put in front of the model: the session-start brief of a project and the
recall for a prompt, as plain text within a token budget (tokens estimated as characters / 4: the agent's
tokenizer is not hela's; no padding, nothing when nothing qualifies)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any

from hela_cli.config import Config
from hela_cli.mechanics.succession import Marks
from hela_cli.memory import Memory
from hela_cli.text.dates import format_iso
from hela_cli.text.marks import with_mark


def approx_tokens(text: str) -> int:
    return -(-len(text) // 4)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def memory_line(m: dict[str, Any], limit: int) -> str:
    """``- [#ID DATE SPEAKER] text``: the id is what ``hela memories`` / ``hela delete`` take; a superseded
    memory ends with its mark, ``(superseded by #N, DATE)`` (:func:`hela_cli.text.marks.with_mark`)."""
    ts = m.get("timestamp")
    date = format_iso(ts)[:10] if isinstance(ts, (int, float)) else str(m.get("date") or "")[:10]
    who = m.get("speaker") or ""
    return with_mark(f"- [#{m['id']} {date} {who}] {_one_line(m.get('text', ''), limit)}", m)


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
    from hela_cli.text.keywords import keywords

    text = prompt.strip()
    return len(text) < cfg.hooks.prompt_min_chars or not keywords(text)


def prompt_context(mem: Memory, space: str, prompt: str, session: str | None, now: float | None = None
                   ) -> tuple[str, dict[str, Any]]:
    """The memories relevant to ``prompt`` (score at or above ``hooks.prompt_min_score``; none of the current
    session, which the agent already has) within ``hooks.prompt_tokens``; learning from those injected.
    ``now``: what "yesterday" or "3 days ago" in the prompt count from (the hook passes the time of the
    event). Returns the context ('' for none) and facts for the hook log."""
    h = mem.config.hooks
    t1 = time.perf_counter()
    res = mem.retrieve(prompt, space, k=h.prompt_k + 4, learn=False, now=now)
    t2 = time.perf_counter()
    limit = h.line_chars
    candidates = [m for m in res.memories if m["score"] >= h.prompt_min_score and m.get("session") != session]
    header = "Memories from earlier sessions of this project (hela; `hela memories` / `hela delete ID` to see or remove):"
    lines = [memory_line(m, limit) for m in candidates[:h.prompt_k]]
    text, n = _fill(header, [("", lines)], h.prompt_tokens)
    used = candidates[:n]
    recall_id = mem.learn_recall(space, prompt, res, used) if used and mem.config.retrieval.learn else None
    t3 = time.perf_counter()
    return text, {"memories": [m["id"] for m in used], "recall_id": recall_id, "injected": used,
                  "below_floor": sum(1 for m in res.memories if m["score"] < h.prompt_min_score),
                  "timings_ms": {"retrieve": round((t2 - t1) * 1000, 1),
                                 "learn": round((t3 - t2) * 1000, 1)}}


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


def start_context(mem: Memory, space: str, root: Path, session: str | None) -> tuple[str, dict[str, Any]]:
    """The brief: the gist of the last ``hooks.start_sessions`` sessions (the first request and the last
    answer of each, with date and size) and the memories most relevant to the repository, within
    ``hooks.start_tokens``. Read-only: a session start is not a use of memory."""
    h = mem.config.hooks
    limit = h.line_chars
    recent = mem.memories(space, limit=400)   # newest first
    by_session: dict[str, list[dict[str, Any]]] = {}
    for row in recent:
        if row.get("session") == session:
            continue
        by_session.setdefault(row.get("session") or "", []).append(row)
    gist, shown = [], set()
    marks = Marks(mem.store.supersessions_for(r["id"] for r in recent))   # a changed fact keeps its mark here too
    for name, rows in list(by_session.items())[:h.start_sessions]:
        rows = rows[::-1]   # oldest first
        first = next((r for r in rows if (r.get("speaker") or "").lower() == "user"), rows[0])
        last = next((r for r in reversed(rows) if (r.get("speaker") or "").lower() == "assistant"), None)
        date = str(rows[-1].get("date") or "")[:16]
        shown |= {first["id"], *([last["id"]] if last else [])}
        gist.append(f"- {date} session {name[:12]} ({len(rows)} turns shown): asked: "
                    + with_mark(f"{_one_line(first['text'], limit // 2)} [#{first['id']}]", marks.fields(first["id"]))
                    + (" | last answer: " + with_mark(f"{_one_line(last['text'], limit // 2)} [#{last['id']}]",
                                                      marks.fields(last["id"])) if last else ""))
    query = repository_query(root)
    relevant: list[str] = []
    if query:
        res = mem.retrieve(query, space, k=12, learn=False)
        relevant = [memory_line(m, limit) for m in res.memories
                    if m["id"] not in shown and m.get("session") != session]
    header = (f"hela memory of this project (space {space}; `hela memories -s {space}` lists it, "
              f"`hela delete ID -s {space}` removes a memory):")
    text, n = _fill(header, [("Recent sessions:", gist), ("Relevant to the repository now:", relevant)],
                    h.start_tokens)
    return text, {"sessions": len(gist), "lines": n, "at": round(time.time(), 3)}
