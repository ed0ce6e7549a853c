"""Use as feedback (``hooks.feedback``, off by default): the memories a prompt hook injected whose distinctive
terms reappear in the assistant's final message are reported through ``Memory.reinforce`` when the turn is
captured. The prompt hook keeps what it injected per agent session in hela's home (``hooks-state/``, user-only,
one small JSON file per session, removed once used); the capture hook reads it with the final message
(Claude Code and Codex ``last_assistant_message``, Gemini CLI ``prompt_response``). The echo test itself is
:func:`hela_cli.mechanics.feedback.echoed_memories` (its precision: BENCHMARKS.md)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from hela_cli.paths import data_dir, ensure_private_dir


def _state_path(session: str) -> Path:
    return data_dir() / "hooks-state" / (hashlib.sha256(session.encode("utf-8")).hexdigest()[:24] + ".json")


def remember_injected(session: str | None, space: str, recall_id: int | None, memories: list[dict[str, Any]],
                      prompt: str) -> None:
    """Keep what a prompt hook injected (and its prompt, redacted: its words say nothing about use) for the
    capture of the same turn."""
    if not session or recall_id is None or not memories:
        return
    path = _state_path(session)
    ensure_private_dir(path.parent)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    from hela_cli.text.redact import redact   # also with hooks.redact off: the state file never holds a secret

    data = {"space": space, "recall_id": recall_id, "time": time.time(), "prompt": redact(prompt),
            "memories": [{"id": m["id"], "text": m["text"]} for m in memories]}
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def reinforce_echoed(mem: Any, session: str | None, message: str | None) -> dict[str, Any] | None:
    """Reinforce the injected memories ``message`` echoes; None when there is nothing to do. The state is
    removed whatever the outcome (feedback is given once per recall)."""
    if not session or not message:
        return None
    path = _state_path(session)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    try:
        path.unlink()
    except OSError:
        pass
    from hela_cli.mechanics.feedback import echoed_memories

    used = echoed_memories(state["memories"], message, prompt=state.get("prompt"))
    if not used:
        return {"echoed": []}
    rep = mem.reinforce(state["space"], used, recall_id=state["recall_id"])
    return {"echoed": used, "strengthened": rep.get("strengthened")}
