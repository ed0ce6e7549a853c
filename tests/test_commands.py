"""The command line's layout: one module per top-level command in ``hela_cli/cli/commands/``, named after
it, each registered once through ``COMMANDS`` (see ``hela_cli/cli/commands/__init__.py``)."""

from __future__ import annotations

from pathlib import Path

import typer

from hela_cli.cli import app
from hela_cli.cli.commands import COMMANDS

COMMANDS_DIR = Path(__file__).resolve().parent.parent / "hela_cli" / "cli" / "commands"


def _name(module) -> str:
    return module.__name__.rsplit(".", 1)[1].rstrip("_")   # import_ -> import


def test_every_command_module_is_in_COMMANDS_once():
    files = sorted(p.stem for p in COMMANDS_DIR.glob("*.py") if p.stem != "__init__")
    listed = [m.__name__.rsplit(".", 1)[1] for m in COMMANDS]
    assert sorted(listed) == files and len(set(listed)) == len(listed)


def test_each_module_holds_the_command_it_is_named_after_and_nothing_else():
    root = typer.main.get_command(app)
    for module in COMMANDS:
        sub = module.app
        if sub.info.name:   # a group: the module's Typer is the command, its subcommands inside
            assert sub.info.name == _name(module) and not sub.registered_groups
        else:               # one command
            assert [c.name for c in sub.registered_commands] == [_name(module)] and not sub.registered_groups
    assert list(root.commands) == [_name(m) for m in COMMANDS]   # `hela --help` lists them in COMMANDS order
