"""The command line: the only package of hela that imports typer, rich or click.

``app`` (the Typer application) and ``main`` (the console-script entry point) live in :mod:`.commands`; a
command group or a larger command has its own ``<name>_cmd`` module (``bench``, ``consolidate``, ``forget``,
``link``, ``inspect``, ``export``); :mod:`.helpers` holds the progress bar, the read-a-space-then-JSON-or-
table pattern and ``--out`` writing; terminal rendering in :mod:`.render` and :mod:`.explain`.
"""

import os

# numpy's OpenBLAS starts a worker thread per core at import and they spin: 85 instead of 175 ms of CPU for
# `import numpy` with one thread (idle machine). hela's own matrix work runs on one thread anyway (see
# hela_cli.store.vector_index._matvec); a user's explicit setting wins. Set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
from typing import Any  # noqa: E402


def main() -> None:
    """The console script. ``hela hook ...`` (what coding agents run on every prompt) goes straight to
    :func:`hela_cli.hooks.run.main` without importing Typer, Rich or the command modules (about a third of
    the start-up of a plain command); every other command goes through the Typer app."""
    if sys.argv[1:2] == ["hook"] and "--help" not in sys.argv and "-h" not in sys.argv:
        from hela_cli.hooks.run import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    from hela_cli.cli.commands import main as cli_main

    cli_main()


def __getattr__(name: str) -> Any:
    if name == "app":
        from hela_cli.cli.commands import app

        return app
    raise AttributeError(name)


__all__ = ["app", "main"]
