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


# ----------------------------------------------------------------------------------- ARCHITECTURE.md
PACKAGE = REPO / "hela_cli"


def _architecture_tree() -> list[str]:
    """The paths of ARCHITECTURE.md's tree (the code block between ``<!-- tree -->`` and ``<!-- /tree -->``),
    relative to the repository: one name per line, two spaces of indent per level."""
    doc = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = doc.split("<!-- tree -->", 1)[1].split("<!-- /tree -->", 1)[0]
    lines = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("```")]
    stack: list[str] = []
    paths = []
    for ln in lines:
        depth = (len(ln) - len(ln.lstrip(" "))) // 2
        name = ln.split()[0]
        assert re.fullmatch(r"[\w.]+/?", name), f"ARCHITECTURE.md tree: not a file or folder name: {ln!r}"
        assert depth <= len(stack), f"ARCHITECTURE.md tree: {name} is indented below no folder"
        stack = stack[:depth]
        paths.append("/".join([*stack, name.rstrip("/")]) + ("/" if name.endswith("/") else ""))
        if name.endswith("/"):
            stack.append(name.rstrip("/"))
    return paths


def test_architecture_tree_matches_the_package():
    """Every path the tree names exists, and every package and top-level module of hela_cli is in it, so the
    document cannot drift from the code unnoticed (a new package or module is added to it in the same change)."""
    named = _architecture_tree()
    assert named[0] == "hela_cli/" and len(named) > 50
    missing = [p for p in named if not (REPO / p).exists() or (REPO / p).is_dir() != p.endswith("/")]
    assert not missing, f"ARCHITECTURE.md names what does not exist: {missing}"
    packages = sorted(f"{d.parent.relative_to(REPO).as_posix()}/" for d in PACKAGE.rglob("__init__.py"))
    top_modules = sorted(p.relative_to(REPO).as_posix() for p in PACKAGE.glob("*.py"))
    absent = [p for p in [*packages, *top_modules] if p not in named]
    assert not absent, f"not in ARCHITECTURE.md's tree: {absent}"


def test_architecture_names_only_what_exists():
    """The prose too: every `path/to/module.py`, `folder/` and `hela_cli.dotted.name` in backticks names a
    module or package (a dotted name may end in one attribute); paths are read from the repository root, from
    hela_cli/, or, for a bare file name, anywhere below hela_cli/; an upper-case name (``formats/NAME.py``) is a
    placeholder."""
    doc = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    bad = []
    for token in sorted(set(re.findall(r"`([^`\s]+)`", doc))):
        if re.search(r"(^|/)[A-Z]+(\.py|/|$)", token):
            continue
        if re.fullmatch(r"[\w/]+\.py|[\w/]*\w/", token):
            bases = [REPO, PACKAGE]
            if "/" not in token.rstrip("/"):
                bases += [p.parent for p in PACKAGE.rglob(token.rstrip("/"))]
            if not any((b / token).exists() for b in bases):
                bad.append(token)
        elif re.fullmatch(r"hela_cli(\.\w+)+", token):
            parts = token.split(".")
            found = [n for n in range(len(parts), 0, -1)
                     if (REPO.joinpath(*parts[:n]).with_suffix(".py").is_file()
                         or (REPO.joinpath(*parts[:n]) / "__init__.py").is_file())]
            if not found or len(parts) - found[0] > 1:
                bad.append(token)
    assert not bad, f"ARCHITECTURE.md names modules or folders that do not exist: {bad}"


def test_modules_over_500_lines_say_why():
    """A module of hela_cli over 500 lines is named, with its reason, in ARCHITECTURE.md's "Modules over 500
    lines, and why"."""
    doc = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = doc.split("### Modules over 500 lines, and why", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([\w/]+\.py)`", section))
    long = [p.relative_to(PACKAGE).as_posix() for p in sorted(PACKAGE.rglob("*.py"))
            if len(p.read_text(encoding="utf-8").splitlines()) > 500]
    missing = [p for p in long if p not in named]
    assert not missing, f"over 500 lines, not in ARCHITECTURE.md's list: {missing}"
