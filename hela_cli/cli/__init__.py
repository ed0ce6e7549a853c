"""The command line: the only package of hela that imports typer, rich or click.

``app`` (the Typer application) and ``main`` (the console-script entry point) live in :mod:`.app`; each
top-level command is one module of :mod:`.commands`, named after it; :mod:`.helpers` holds what several
commands share (``--space``, the progress bar, read-a-space-then-JSON-or-table, ``--out`` writing); terminal
rendering in :mod:`.render` and :mod:`.explain`.
"""

import os

# numpy's OpenBLAS starts a worker thread per core at import and they spin: 85 instead of 175 ms of CPU for
# `import numpy` with one thread (idle machine). hela's own matrix work runs on one thread anyway (see
# hela_cli.store.vector_index._matvec); a user's explicit setting wins. Set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from hela_cli.cli.app import app, main  # noqa: E402


__all__ = ["app", "main"]
