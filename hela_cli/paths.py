"""Where hela keeps its files: a per-user data dir (never /tmp), created user-only (0700/0600)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def data_dir() -> Path:
    """``$HELA_HOME`` or ``$XDG_DATA_HOME/hela`` or ``~/.local/share/hela``."""
    if os.environ.get("HELA_HOME"):
        return Path(os.environ["HELA_HOME"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "hela"


def default_db_path() -> Path:
    return data_dir() / "hela.db"


def sample_data() -> Path:
    """The folder of sample files shipped inside the package (``hela demo``; also ``sample_data/`` of a clone):
    ``conversation.json`` (LoCoMo-shaped, with ``qa``), ``questions.json``, ``chat.jsonl``, ``conversation.txt``."""
    return Path(__file__).resolve().parent / "sample_data"


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


def file_cache(source: Path, what: str) -> Path:
    """A cache file in the data dir for something derived from ``source`` (a model file), keyed by its
    name, size and mtime so that a changed or truncated file never meets a stale entry."""
    st = Path(source).stat()
    return data_dir() / "cache" / f"{Path(source).name}.{st.st_size}.{st.st_mtime_ns}.{what}.json"


def read_cache(cache: Path) -> Any:
    """The JSON in ``cache``, or None when it is missing or unreadable."""
    import json

    try:
        return json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_cache(cache: Path, data: Any) -> None:
    """Write ``data`` as JSON atomically; a read-only home just means no cache."""
    import json

    try:
        ensure_private_dir(cache.parent)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass


def db_identity(db: str) -> str:
    """What names one database whatever the path that reaches it: a SQLite file's device and inode (its
    absolute path while it does not exist), a Postgres URL's host, port, database and user (no password)."""
    if db.startswith(("postgres://", "postgresql://")):
        from urllib.parse import urlsplit

        u = urlsplit(db)
        return f"postgres://{u.username or ''}@{u.hostname or ''}:{u.port or 5432}{u.path or '/'}"
    if db == ":memory:":
        return f"memory:{os.getpid()}"   # never shared
    path = Path(db or default_db_path()).expanduser().absolute()
    try:
        st = path.stat()
    except OSError:
        return f"sqlite:{path}"
    return f"sqlite:{st.st_dev}:{st.st_ino}"
