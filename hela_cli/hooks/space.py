"""The space of a project: by default derived from the git top-level directory (its name plus a short hash
of its absolute path, so two repositories called ``api`` never share memories), else from the directory
itself; ``--space`` pins one. No ``git`` process is started: the top level is the nearest directory holding
a ``.git`` entry (a directory, or the file of a worktree or submodule)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any


def project_root(cwd: Path | str) -> Path:
    """The git top-level directory holding ``cwd``, else ``cwd`` itself (absolute, symlinks resolved)."""
    start = Path(cwd).expanduser()
    try:
        start = start.resolve()
    except OSError:
        start = start.absolute()
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return start


def project_space(cwd: Path | str) -> str:
    """``<top-level name>-<6 hex of sha256(its path)>``, e.g. ``api-3f2a1c``."""
    root = project_root(cwd)
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-") or "root"
    return f"{name[:60]}-{hashlib.sha256(str(root).encode('utf-8')).hexdigest()[:6]}"


def has_database(mem: Any) -> bool:
    """Does ``mem``'s configured database exist? (A Postgres URL counts as existing.) Nothing is created to find
    out. Here rather than with the capture, so that a prompt hook does not import the transcript parsers."""
    from hela_cli.store.target import is_postgres

    db = mem.config.db
    if is_postgres(db) or db == ":memory:":
        return True
    from hela_cli.paths import default_db_path

    return Path(db or default_db_path()).expanduser().exists()
