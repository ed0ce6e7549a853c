"""Where ``models.chat`` points, and what a model there can do: one registry, read by the mechanics.

A route is named by the form of ``models.chat``: ``agent:NAME[@MODEL]`` (a coding agent's CLI,
:mod:`hela_cli.models.agent`), ``openai:MODEL@URL`` (an OpenAI-compatible server,
:mod:`hela_cli.models.endpoints`), ``client`` (the MCP client's model through sampling,
:mod:`hela_cli.models.sampling`), anything else a GGUF run in this process (an alias, ``ollama:``, a path).
Code outside ``models/`` asks :func:`route` what a model can do (``route(cfg.models.chat).batches``), never
the string's prefix, so a new route is one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hela_cli.models.endpoints import AGENT, CLIENT, PREFIX as OPENAI


@dataclass(frozen=True)
class Route:
    """What the chat model of one route can do.

    * ``kind``: ``local`` / ``openai`` / ``agent`` / ``client``.
    * ``batches``: it can run the batched prompts (consolidation's hubs in one call, the changes' judge);
      an in-process GGUF cannot (the 135M default does not follow them) and the client's model keeps prompt
      A.1, one call per hub.
    * ``judges``: it can decide pairs in a batch at all (``hela judge``): the batching routes and the client.
    * ``retries_per_hub``: hubs a batch failed are distilled again one by one (an ``openai:`` server: a small
      model behind it may not follow the batch prompt); an agent's calls are budgeted, so it does not.
    * ``budgeted``: its calls count against ``models.agent_budget`` (:func:`refusal`, :func:`budget_row`).
    * ``from_hooks``: the hooks' background work may use it with ``hooks.model_work: auto`` (``on`` also
      takes every batching route).
    * ``in_process``: its weights load into this process (a model file to find, a context window to fit).
    * ``inline``: it answers within a hook's own time (a server already running: no process to start, no
      weights to load, no budget), so a hook may ask it with a timeout (the brief's gist, ``hooks.gist``).
    * ``lent``: it exists only inside ``hela mcp``, lent by the client's session (sampling): the server
      makes it, and a session that cannot sample cannot ask.
    """
    kind: str
    batches: bool
    judges: bool
    retries_per_hub: bool
    budgeted: bool
    from_hooks: bool
    in_process: bool
    inline: bool
    lent: bool = False


ROUTES: dict[str, Route] = {
    "local": Route("local", batches=False, judges=False, retries_per_hub=False, budgeted=False, from_hooks=False,
                   in_process=True, inline=False),
    "openai": Route("openai", batches=True, judges=True, retries_per_hub=True, budgeted=False, from_hooks=False,
                    in_process=False, inline=True),
    "agent": Route("agent", batches=True, judges=True, retries_per_hub=False, budgeted=True, from_hooks=True,
                   in_process=False, inline=False),
    "client": Route("client", batches=False, judges=True, retries_per_hub=False, budgeted=False,
                    from_hooks=False, in_process=False, inline=False, lent=True),
}


def route_kind(chat: str) -> str:
    """The route ``models.chat`` names (see the module's docstring)."""
    ref = str(chat).strip()
    if ref.startswith(AGENT):
        return "agent"
    if ref.startswith(OPENAI):
        return "openai"
    if ref == CLIENT:
        return "client"
    return "local"


def route(chat: str) -> Route:
    """The :class:`Route` of ``models.chat``."""
    return ROUTES[route_kind(chat)]


def hooks_may_use(chat: str, model_work: str) -> bool:
    """Whether the hooks' background work calls the chat model: ``hooks.model_work`` ``auto`` = the routes
    made for it (an agent's own model), ``on`` = every batching route, ``off`` = never."""
    r = route(chat)
    return (model_work == "auto" and r.from_hooks) or (model_work == "on" and r.batches)


def refusal(models: Any) -> tuple[str, bool] | None:
    """For a budgeted route: why today's budget refuses one more call (the message, and whether it is the
    first refusal of the day), None when the call may go (and for every route without a budget). A
    malformed route or budget raises :class:`~hela_cli.errors.HelaError`."""
    if not route(models.chat).budgeted:
        return None
    from hela_cli.models.agent import Ledger, parse_budget, parse_ref

    agent, _ = parse_ref(models.chat.strip())
    return Ledger().refuse(agent, parse_budget(models.agent_budget))


def budget_row(models: Any) -> dict[str, Any] | None:
    """For a budgeted route: today's use of its budget (``calls``, ``tokens``, ``cap_calls``, ``cap_tokens``);
    None for the others."""
    if not route(models.chat).budgeted:
        return None
    from hela_cli.models.agent import budget_status, parse_ref

    agent = parse_ref(models.chat.strip())[0]
    row = next(b for b in budget_status(models) if b["agent"] == agent)
    return {k: row[k] for k in ("calls", "tokens", "cap_calls", "cap_tokens")}


__all__ = ["ROUTES", "Route", "budget_row", "hooks_may_use", "refusal", "route", "route_kind"]
