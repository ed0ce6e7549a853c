"""The fast path's endpoint: a ``hela mcp --http`` server runs a hook's event for it.

The route, ``POST /hook`` in :mod:`hela_cli.mcp_server.http`, checks the request (token, size, JSON) and
calls :func:`serve_event` with the decoded body, the server's open :class:`~hela_cli.memory.Memory` and its
:class:`~hela_cli.config.Config`; it answers the returned JSON with the returned status. The body names the
space the event acts on (``space``, required: the hook resolves it from its project), so the route can
check it against the caller's rights before the call. The client of this endpoint is
:mod:`hela_cli.hooks.client`; the handlers it runs are :mod:`hela_cli.hooks.handlers`."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

from hela_cli.hooks.agents import AGENTS
from hela_cli.hooks.log import safe


def serve_event(body: Any, memory: Any, config: Any) -> tuple[int, dict[str, Any]]:
    """A server's side of the fast path (``POST /hook``, token already checked): run a client's hook event
    with ``memory`` (the server's) through :func:`~hela_cli.hooks.handlers.dispatch`, the hook's ``hooks``
    settings over the server's ``config``. Returns ``(HTTP status, JSON answer)``: ``{"text", "facts"}``,
    ``{"handoff": true}`` (a capture for a child of the hook), ``{"error"}`` (the handler failed: the hook
    logs it); 408 when the request comes later than the hook waits for it (its ``sent`` + ``wait_s``): not
    run. The handlers read the hook's settings (``cfg``), never the server's ``hooks`` section."""
    from hela_cli.hooks.handlers import HandOff, dispatch, hosted
    from hela_cli.paths import db_identity

    if not isinstance(body, dict) or not isinstance(body.get("payload"), dict) or \
            not isinstance(body.get("space"), str) or not body["space"]:
        return 400, {"error": "expected {event, agent, space, payload, hooks, db}"}
    if body.get("db") != db_identity(config.db):
        return 409, {"error": "this server serves another database"}
    agent = AGENTS.get(str(body.get("agent")))
    event = str(body.get("event"))
    role = agent.role(event) if agent else None
    if agent is None or role is None:
        return 400, {"error": safe(f"unknown agent or event: {body.get('agent')!r} {event!r}")}
    try:
        hooks = body.get("hooks") if isinstance(body.get("hooks"), dict) else {}
        cfg = config.replace(**{f"hooks.{k}": v for k, v in hooks.items() if v is not None and k != "server"})
    except Exception as e:  # noqa: BLE001 - a bad setting is the client's error
        return 400, {"error": safe(str(getattr(e, "message", e)))}
    args = SimpleNamespace(event=event, agent=agent.name, space=body["space"], db=None, config=None, server=None,
                           detached=False, lock_fd=None)
    payload = body["payload"]
    sent, wait = body.get("sent"), body.get("wait_s")
    if isinstance(sent, (int, float)) and isinstance(wait, (int, float)) and time.time() > sent + wait:
        # queued past the hook's wait: the hook answered in-process; a recall run now would be recorded as
        # shown to the agent (and learnt from) though the agent never got it
        return 408, {"error": "the hook stopped waiting for this answer; not run"}
    try:   # no raw stdin here: a handler uses it only to start a child, which in a server is a HandOff
        text, facts = hosted(memory, lambda: dispatch(args, role, payload, cfg, b""))
    except HandOff:
        return 200, {"handoff": True}
    except Exception as e:  # noqa: BLE001 - one line back to the hook, which logs it
        from hela_cli.errors import HelaError

        return 200, {"error": safe(e.message if isinstance(e, HelaError) else f"{e.__class__.__name__}: {e}")}
    facts.pop("cpu_ms", None)   # the server process's own counters: the hook logs its own
    if isinstance(facts.get("timings_ms"), dict):
        facts["timings_ms"].pop("start_to_handler", None)
    return 200, {"text": text, "facts": facts}
