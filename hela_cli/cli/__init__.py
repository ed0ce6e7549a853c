"""The command line: the only package of hela that imports typer, rich or click.

``app`` (the Typer application) and ``main`` (the console-script entry point) live in :mod:`.commands`; the
commands of ``bench``, ``consolidate`` / ``forget`` / ``inspect`` / ``export`` in :mod:`.bench_cmd` and
:mod:`.inspect_cmd`; terminal rendering in :mod:`.render` and :mod:`.explain`.
"""

from hela_cli.cli.commands import app, main

__all__ = ["app", "main"]
