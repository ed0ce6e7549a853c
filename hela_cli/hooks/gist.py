"""A session's gist, without a model: the task asked, the files changed, the commands that failed then
passed (and those still failing), the decisions stated and the commits, in a few lines, read from the
session's memories as the capture stored them (their lines read by :mod:`hela_cli.text.session_lines`). The
session-start brief shows one per recent session (hooks/context.py ``start_context``). Each piece is cut by
:func:`hela_cli.text.session_lines.cut` (redacted whole first).

With an ``openai:`` chat endpoint configured (``models.chat``) and ``hooks.gist`` ``auto``, the brief asks
it for an abstractive summary of each session instead (:func:`abstractive`), within
``hooks.gist_timeout_s``; any fault (slow, down, refused) falls back to the extractive gist. A gist a chat
model wrote at the session's end, in the batched model work of a capture child (``hela_cli/hooks/modelwork.py``,
an ``agent:`` route), is shown as it was stored (:func:`written_lines`): the brief never waits for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hela_cli.text.coding import is_decision
from hela_cli.text.content import is_content_free
from hela_cli.text.session_lines import (answer_text, changed_paths, command_result, commit_text, cut,
                                         decisions_said, line_kind, without_files)


@dataclass
class Gist:
    session: str
    date: str
    turns: int
    asked: str = ""
    asked_id: int | None = None
    changed: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)      # commands that failed, then passed
    failing: list[str] = field(default_factory=list)    # commands whose last run failed: "cmd: error"
    decisions: list[tuple[int, str]] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)        # the memories the gist shows


def _cmd_key(cmd: str) -> str:
    return " ".join(cmd.split()[:4])


def session_gist(rows: list[dict[str, Any]], session: str = "") -> Gist:
    """The gist of one session from its memories (``rows`` oldest first: dicts with id, text, speaker /
    role, date)."""
    g = Gist(session=session, date=str(rows[-1].get("date") or "")[:16] if rows else "", turns=len(rows))
    last: dict[str, tuple[int, str, str]] = {}   # command key -> (exit, shown command, error)
    failed_before: set[str] = set()
    for r in rows:
        text = without_files(str(r.get("text") or ""))
        who = (r.get("speaker") or r.get("role") or "").lower()
        if not g.asked and who == "user" and not text.startswith("[") and not is_content_free(text):
            g.asked, g.asked_id = text, r["id"]
        if changed := changed_paths(text):
            g.changed += [p for p in dict.fromkeys(changed) if p not in g.changed]
            continue
        if (commit := commit_text(text)) is not None:
            g.commits.append(commit)
            g.ids.append(r["id"])
            continue
        if found := command_result(text):
            cmd, code, err = found
            key = _cmd_key(cmd)
            if code != 0:
                failed_before.add(key)
            elif key in failed_before and cmd not in g.fixed:
                g.fixed.append(cmd)
            last[key] = (code, cmd, err)
            continue
        if line_kind(text) == "answer":
            g.decisions.append((r["id"], answer_text(text)))
            continue
        if who in ("user", "assistant") and not text.startswith("[") and is_decision(text):
            said = decisions_said(text, limit=2)
            if said:
                g.decisions.append((r["id"], said))
    g.failing = [f"{cmd}: {err}" if err else cmd for code, cmd, err in last.values() if code != 0]
    if g.asked_id is not None:
        g.ids.insert(0, g.asked_id)
    g.ids += [i for i, _ in g.decisions]
    return g


def gist_lines(g: Gist, limit: int = 400, marks: Any = None) -> list[str]:
    """The gist as a few lines: a head line (date, session, task) and indented details, each cut. ``marks``
    (:class:`hela_cli.facts.recall.Marks`): a memory shown that was superseded carries its mark."""
    from hela_cli.text.marks import with_mark

    def mark(text: str, nid: int | None) -> str:
        return with_mark(text, marks.fields(nid)) if marks and nid is not None else text

    head = f"- {g.date} session {g.session[:12]} ({g.turns} memories)"
    if g.asked:
        head += ": asked: " + mark(f"{cut(g.asked, limit // 2)} [#{g.asked_id}]", g.asked_id)
    out = [head]
    if g.changed:
        more = f" (+{len(g.changed) - 8} more)" if len(g.changed) > 8 else ""
        out.append(f"  changed: {', '.join(g.changed[:8])}{more}")
    if g.fixed:
        out.append("  failed then passed: " + cut("; ".join(f"`{c}`" for c in g.fixed[:3]), limit // 2))
    if g.failing:
        out.append("  still failing: " + cut("; ".join(g.failing[:2]), limit // 2))
    for i, d in g.decisions[:3]:
        out.append("  decided: " + mark(f"{cut(d, limit // 2)} [#{i}]", i))
    if g.commits:
        out.append("  committed: " + cut("; ".join(g.commits[:3]), limit // 2))
    return out


def written_lines(g: Gist, row: dict[str, Any], limit: int = 400) -> list[str]:
    """The gist a chat model wrote at the session's end (``store.session_gists`` row) in the brief's shape:
    the head line, then its lines (the brief never waits for a model: it was written by a capture child)."""
    by = str(row.get("model") or "a model")
    head = f"- {g.date} session {g.session[:12]} ({g.turns} memories, summarized by {by}):"
    return [head] + [f"  {cut(ln, limit)}" for ln in str(row.get("text") or "").splitlines() if ln.strip()][:3]


# ------------------------------------------------------------------------------------------ abstractive
SUMMARY_PROMPT = ("You summarize coding sessions for the developer who continues the work. For the session "
                  "below, write at most three short lines: what was asked, what was changed and why, what "
                  "still fails. Use only what the notes say. No preamble.")


def wants_abstractive(cfg: Any) -> bool:
    from hela_cli.models.routes import route

    return cfg.hooks.gist == "auto" and route(cfg.models.chat).inline


def abstractive(cfg: Any, gists: list[Gist], limit: int = 400, marks: Any = None) -> list[list[str]] | None:
    """An abstractive summary of each session (its extractive gist as the notes), from the configured
    ``openai:`` chat endpoint; None on any fault (the caller keeps the extractive gists)."""
    from hela_cli.errors import HelaError
    from hela_cli.models.endpoints import OpenAIChat

    m = cfg.models
    try:
        chat = OpenAIChat(m.chat, n_ctx=m.chat_ctx, timeout=cfg.hooks.gist_timeout_s,
                          allow_remote=m.allow_remote, request_extra=m.request_extra)
    except HelaError:
        return None
    out = []
    try:
        for g in gists:
            notes = "\n".join(gist_lines(g, limit, marks))
            text = chat.generate([{"role": "system", "content": SUMMARY_PROMPT},
                                  {"role": "user", "content": notes}], max_tokens=120)
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()][:3]
            if not lines:
                return None
            head = f"- {g.date} session {g.session[:12]} ({g.turns} memories, summarized by {m.chat.rpartition('@')[0]}):"
            out.append([head] + [f"  {cut(ln.lstrip('-* '), limit)}" for ln in lines])
    except (HelaError, OSError):
        return None
    finally:
        chat.close()
    return out
