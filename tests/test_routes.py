"""Models by route (issue 54): what a chat model can do is read from one registry, never from the string's
prefix outside ``hela_cli/models/``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hela_cli.config import Config
from hela_cli.mechanics.judge import batch_capable, batches_hubs, retries_per_hub
from hela_cli.models.routes import hooks_may_use, route, route_kind

PKG = Path(__file__).resolve().parents[1] / "hela_cli"
PREFIXES = ("agent:", "openai:")


def prefix_tests(source: str) -> list[int]:
    """Lines of ``source`` that decide by a route's spelling: ``x.startswith("agent:")`` (a tuple too),
    ``x == "client"`` / ``CLIENT``, ``is_endpoint(...)`` / ``is_local_chat(...)`` on a chat ref."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith":
            args = [a for n in node.args for a in (n.elts if isinstance(n, ast.Tuple) else [n])]
            if any(isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith(PREFIXES)
                   for a in args):
                found.append(node.lineno)
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any((isinstance(s, ast.Constant) and s.value == "client") or
                   (isinstance(s, ast.Name) and s.id == "CLIENT") for s in sides):
                found.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "is_local_chat":
            found.append(node.lineno)
    return found


def test_the_scan_sees_each_form():
    src = ('a.startswith("agent:")\nb.strip().startswith(("x", "openai:"))\nc == CLIENT\n"client" != d\n'
           'is_local_chat(e)\nf.startswith("agents")\ng == "clients"\n')
    assert prefix_tests(src) == [1, 2, 3, 4, 5]


def test_no_route_is_told_by_its_prefix_outside_models():
    bad = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG)
        if rel.parts[0] == "models":
            continue
        lines = prefix_tests(path.read_text(encoding="utf-8"))
        if lines:
            bad[str(rel)] = lines
    assert bad == {}, f"decide by hela_cli.models.routes.route(...), not the spelling: {bad}"


@pytest.mark.parametrize("chat,kind", [("agent:claude-code", "agent"), (" agent:codex@o4 ", "agent"),
                                       ("openai:llama@http://127.0.0.1:8080/v1", "openai"), ("client", "client"),
                                       ("smollm2", "local"), ("/models/x.gguf", "local"), ("ollama:qwen", "local")])
def test_each_spelling_names_its_route(chat, kind):
    assert route_kind(chat) == kind


def test_the_mechanics_read_the_routes_capabilities():
    def cfg(chat: str, work: str = "auto") -> Config:
        c = Config()
        c.models.chat = chat
        c.hooks.model_work = work
        return c

    agent, server, client, local = "agent:claude-code", "openai:m@http://127.0.0.1:9/v1", "client", "smollm2"
    assert [batches_hubs(cfg(c)) for c in (agent, server, client, local)] == [True, True, False, False]
    assert [retries_per_hub(cfg(c)) for c in (agent, server, client, local)] == [False, True, False, False]
    assert [batch_capable(cfg(c)) for c in (agent, server, client, local)] == [True, True, True, False]
    assert [batch_capable(cfg(c), hooks=True) for c in (agent, server, client, local)] == [True, False, False, False]
    assert [batch_capable(cfg(c, "on"), hooks=True) for c in (agent, server, client, local)] == [True, True, False, False]
    assert not any(batch_capable(cfg(c, "off"), hooks=True) for c in (agent, server, client, local))
    assert route(agent).budgeted and not route(server).budgeted
    assert route(server).inline and not route(agent).inline and not route(local).inline
    assert route(client).lent and not any(route(c).lent for c in (agent, server, local))
    assert hooks_may_use(agent, "auto") and not hooks_may_use(server, "auto") and hooks_may_use(server, "on")
