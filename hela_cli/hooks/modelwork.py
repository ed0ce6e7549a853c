"""The hooks' model work: one batched call of the chat model per capture child, never on the agent's path.

The prompt hook, the session brief and recall by file never call a model. A capture that stored turns (or
found none new) asks :func:`wanted` whether the configured chat model may work from the hooks
(``hooks.model_work``, :func:`hela_cli.mechanics.judge.batch_capable`) and :func:`has_work` whether anything
earns a call today (the agent's budget not spent; a hub that passed Eq.2 and needs distillation, a change
candidate the rules left undecided, at a session's end the session's gist when it has enough content:
:data:`BATCH_MIN` of them in the middle of a session, any at its end). An
inline capture then hands the session to a detached child (its own
process session, no stdin / stdout of the agent's); the child captures (nothing new, usually) and runs
:func:`run`: :func:`hela_cli.mechanics.judge.run_batch`, ONE call for all of it.

A model fault is "no model now": the capture's log line says why (``model``), nothing else changes. The
first refusal of a day by the agent budget writes one line of its own to the hook log (``event``
``agent-budget``, ``result`` ``capped``), the later ones only count in the ledger.
"""

from __future__ import annotations

import time
from typing import Any

from hela_cli.errors import HelaError
from hela_cli.hooks.log import safe


def wanted(cfg: Any) -> bool:
    from hela_cli.mechanics.judge import batch_capable

    return batch_capable(cfg, hooks=True)


def _budget_left(cfg: Any, hook_agent: str | None) -> bool:
    """False when the configured agent route's budget is spent today (no child is started for nothing); the
    first such refusal of the day writes one line to the hook log."""
    from hela_cli.models.routes import refusal

    try:
        refused = refusal(cfg.models)
    except HelaError:
        return False
    if refused is None:
        return True
    if refused[1]:
        _capped_line(hook_agent, refused[0])
    return False


def _capped_line(hook_agent: str | None, message: str) -> None:
    from hela_cli.hooks import log

    log.append({"agent": hook_agent, "event": "agent-budget", "role": "model", "result": "capped",
                "detail": safe(message)})


#: a capture in the middle of a session starts the model work only for this many items (hubs and pairs) or
#: more, so that a call carries a full batch; at the session's end (:data:`FINAL_EVENTS`) any item earns it
BATCH_MIN = 8
FINAL_EVENTS = ("SessionEnd", "PreCompact", "PreCompress")


#: a session gets a model-written gist at its end when it has at least this many memories and its notes (the
#: extractive gist) say more than their head line
GIST_MIN_MEMORIES = 12


def session_item(mem: Any, space: str, session: Any, limit: int = 400) -> dict[str, Any] | None:
    """The session to summarise at its end, as the batch takes it (``{"session", "turns", "notes", "ids"}``),
    or None: no session, too little content, or a gist already written from as many memories."""
    if not isinstance(session, str) or not session:
        return None
    from hela_cli.hooks.gist import gist_lines, session_gist

    sp = mem.store.get_space(space)
    if sp is None:
        return None
    rows = mem.memories(space, session=session, limit=limit)   # newest first
    if len(rows) < GIST_MIN_MEMORIES:
        return None
    have = mem.store.session_gists(sp.id, [session]).get(session)
    if have is not None and have["turns"] >= len(rows):
        return None
    g = session_gist(rows[::-1], session)
    lines = gist_lines(g, mem.config.hooks.line_chars)
    if len(lines) < 2 or not g.ids:
        return None
    return {"session": session, "turns": len(rows), "notes": "\n".join(lines), "ids": sorted(set(g.ids))}


def _work(mem: Any, space: str, cfg: Any, session: Any, event: str | None) -> Any:
    from hela_cli.mechanics.judge import pending

    sp = mem.store.get_space(space)
    if sp is None:
        return None
    item = session_item(mem, space, session) if event in FINAL_EVENTS else None
    return pending(mem.store, sp, cfg, sessions=[item] if item else None)


def has_work(mem: Any, space: str, cfg: Any, hook_agent: str | None = None, event: str | None = None,
             session: Any = None) -> bool:
    """Enough earns a model call in ``space`` now (reads only, no model), within today's budget: at least
    :data:`BATCH_MIN` items, or any at the end of a session (``event`` in :data:`FINAL_EVENTS`, when the
    session's gist is one of them)."""
    if not wanted(cfg):
        return False
    work = _work(mem, space, cfg, session, event)
    if work is None:
        return False
    return work.items >= (1 if event in FINAL_EVENTS else BATCH_MIN) and _budget_left(cfg, hook_agent)


def run(mem: Any, space: str, cfg: Any, agent: str | None = None, session: Any = None,
        event: str | None = None) -> dict[str, Any]:
    """The batched call for ``space`` (in a detached capture child): the facts for the capture's log line
    (``{"model": {...}}``; ``{}`` when nothing earned a call)."""
    if not wanted(cfg):
        return {}
    from hela_cli.mechanics.judge import run_batch

    t0 = time.perf_counter()
    work = _work(mem, space, cfg, session, event)
    if work is None or work.empty:
        return {}
    sp = work.space
    try:
        rep = run_batch(mem.store, sp, cfg, mem.chat, mem.embedder, work)
    except HelaError as e:
        out: dict[str, Any] = {"hubs": len(work.hubs), "changes": len(work.changes), "sessions": len(work.sessions),
                               "error": safe(e.message)}
        if getattr(e, "first", False):
            _capped_line(agent, e.message)
        return {"model": out}
    chat = mem.chat
    last = getattr(chat, "last", None) or {}
    rep.update({k: last[k] for k in ("input_tokens", "output_tokens", "estimated") if k in last},
               model=getattr(chat, "model_id", None), ms=round((time.perf_counter() - t0) * 1000, 1))
    return {"model": rep}
