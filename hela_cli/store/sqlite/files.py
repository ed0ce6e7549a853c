"""The SQLite file itself, around the connection: whether a directory can take a file (a database hela cannot
write is opened read-only), and a close that must not checkpoint (a file deleted or replaced under an open
connection: SQLite's last close would unlink ``PATH-wal`` by name, the new file's). Nothing here opens the
database file: closing any descriptor of it drops every POSIX lock the process holds on it, SQLite's too."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE = 1006


def no_checkpoint_on_close(conn: Any, path: str) -> bool:
    """``sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)`` on a Python connection (Python 3.11's
    sqlite3 has no ``setconfig``; 3.12's does). The handle is read from the connection object, where CPython
    keeps it first after the object header, and used only when SQLite itself confirms it names ``path``'s
    database; else nothing is done and False returned."""
    try:
        if hasattr(conn, "setconfig"):   # Python >= 3.12
            conn.setconfig(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, True)
            return True
        import _sqlite3
        import ctypes

        lib = ctypes.CDLL(_sqlite3.__file__)
        handle = ctypes.c_void_p.from_address(id(conn) + ctypes.sizeof(ctypes.c_ssize_t) * 2).value
        if not handle:
            return False
        lib.sqlite3_db_filename.restype = ctypes.c_char_p
        lib.sqlite3_db_filename.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        named = lib.sqlite3_db_filename(handle, b"main") or b""
        if os.path.realpath(os.fsdecode(named)) != os.path.realpath(path):
            return False
        out = ctypes.c_int(-1)
        rc = lib.sqlite3_db_config(ctypes.c_void_p(handle), ctypes.c_int(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE),
                                   ctypes.c_int(1), ctypes.byref(out))
        return rc == 0 and out.value == 1
    except Exception:  # noqa: BLE001 - best effort: the close goes on as SQLite does it
        return False


def unwritable_dir(p: Path) -> bool:
    """Whether no file can be made in the directory ``p``: a read-only mount, no permission, an immutable
    directory (``chattr +i``, which stops root too). Probed by trying, with a file of its own: an ``access``
    check passes for root whatever the mode. Never by opening the database file itself: closing any descriptor
    of a file drops every POSIX lock the process holds on it, SQLite's too (then another connection's close
    checkpoints and unlinks the -wal under this one's feet)."""
    import errno

    try:
        probe = p / f".hela-probe-{os.getpid()}"
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return e.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    return False
