"""Where hela keeps its files: a per-user data dir (never /tmp), created user-only (0700/0600)."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """``$HELA_HOME`` or ``$XDG_DATA_HOME/hela`` or ``~/.local/share/hela``."""
    if os.environ.get("HELA_HOME"):
        return Path(os.environ["HELA_HOME"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "hela"


def default_db_path() -> Path:
    return data_dir() / "hela.db"


def model_dir(configured: str = "") -> Path:
    return Path(configured).expanduser() if configured else data_dir() / "models"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 for the directories we create."""
    path = Path(path)
    if not path.exists():
        old = os.umask(0o077)
        try:
            path.mkdir(parents=True, exist_ok=True)
        finally:
            os.umask(old)
    return path
