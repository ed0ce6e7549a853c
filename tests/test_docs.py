"""The user docs cover what hela offers: every command of the ``hela`` CLI and every MCP tool is named in
README.md or in a docs/ page that README.md links, and has help text. The commands and tools are read
from the application itself, so a command added later is checked too."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import typer

from hela_cli.cli import app
from hela_cli.config import Config

REPO = Path(__file__).resolve().parent.parent


def _docs() -> str:
    """README.md and every docs/ page it links (relative links ``docs/NAME.md``)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    pages = sorted(set(re.findall(r"\((docs/[\w./-]+\.md)(?:#[\w-]*)?\)", readme)))
    for page in pages:
        assert (REPO / page).is_file(), f"README.md links {page}, which does not exist"
    return "\n".join([readme, *((REPO / p).read_text(encoding="utf-8") for p in pages)])


def _commands(cmd, path: list[str]):
    """(command path, click command) for every command and group below ``cmd``."""
    subs = getattr(cmd, "commands", None) or {}
    if path:
        yield path, cmd
    for name, sub in sorted(subs.items()):
        yield from _commands(sub, [*path, name])


def test_every_cli_command_is_documented_and_has_help():
    docs = _docs()
    commands = list(_commands(typer.main.get_command(app), []))
    assert len(commands) > 15 and ["inspect", "hubs"] in [p for p, _ in commands]
    no_help = [" ".join(p) for p, c in commands if not (c.help or c.short_help or "").strip()]
    missing = [f"hela {' '.join(p)}" for p, _ in commands if f"hela {' '.join(p)}" not in docs]
    assert not no_help, f"commands without help: {no_help}"
    assert not missing, f"not in README.md or a docs/ page it links: {missing}"


def test_every_mcp_tool_is_documented_and_has_a_description(tmp_path):
    from mcp import Client

    from hela_cli.mcp_server.tools import build_server

    server = build_server(Config(db=str(tmp_path / "d.db")))

    async def tools() -> list:
        async with Client(server) as c:
            return (await c.list_tools()).tools

    found = anyio.run(tools)
    docs = _docs()
    assert {"remember", "recall", "ask"} <= {t.name for t in found}
    assert not [t.name for t in found if not (t.description or "").strip()]
    assert not [t.name for t in found if f"`{t.name}`" not in docs], "MCP tools missing from the docs"
    assert not (tmp_path / "d.db").exists()  # listing the tools opens nothing


def test_the_readme_library_example_runs(cli_env, monkeypatch, capsys):
    """The README's agent loop, as written (real default embedder): it recalls before it writes, so the
    first answer comes from the earlier turn, not from the question."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Library: an agent loop"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(cli_env)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("What is my cat called? -> ") and "Miso" in out[0]
    from hela_cli import Memory, load_config

    with Memory(load_config(overrides={"db": str(cli_env / "agent.db")})) as mem:
        assert mem.spaces()[0]["nodes"] == 5
