"""Every top-level ``hela`` command, one module each, named after the command (``import_`` for ``hela import``).

A module holds ``app = typer.Typer()`` and its command, ``@app.command("NAME")``; a command with subcommands
is ``app = typer.Typer(name="NAME", help=...)`` with ``@app.command("SUB")`` (and ``@app.callback`` when the
group runs alone, as ``hela spaces``). :mod:`hela_cli.cli.root` adds each module's ``app`` to the root, in
the order of ``COMMANDS`` (the order of ``hela --help``). A new command: a new module here, one entry below.
"""

from hela_cli.cli.commands import (add, ask, backup, bench, consolidate, copy, delete, demo, edit, export, forget,
                                   history, hook, hooks, import_, ingest, inspect, judge, link, mcp, memories, models,
                                   reembed, reinforce, spaces, supersede, tokens, ui)

#: in ``hela --help`` order
COMMANDS = (ingest, reembed, add, ask, mcp, consolidate, judge, forget, link, export, backup, import_, memories, delete, edit,
            history, supersede, ui, reinforce, copy, hook, models, spaces, tokens, bench, inspect, hooks, demo)

__all__ = ["COMMANDS"]
