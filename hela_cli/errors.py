"""The one exception type for user-facing errors.

Core code raises :class:`HelaError` with a one-line message naming the file and
place; ``hela_cli.cli.root`` (``HelaGroup``) maps it to that message on stderr and the exit code.
"""

from __future__ import annotations


class HelaError(Exception):
    """A problem the user can fix: bad input, missing model, wrong flags."""

    exit_code: int = 1

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message


class InputError(HelaError):
    """Unreadable or malformed input file (exit 2)."""

    exit_code = 2


class ModelError(HelaError):
    """A model file is missing, corrupt or of the wrong kind (exit 3)."""

    exit_code = 3


class StoreError(HelaError):
    """The database cannot be used as asked (exit 4)."""

    exit_code = 4


class StoreReadOnly(StoreError):
    """A write to a database opened read-only (a read-only mount, directory or file, an immutable file):
    reading works, the write is refused as one line (exit 4, as every store error)."""


class StoreFull(StoreError):
    """The disk (or the database's size limit) is full: the transaction that met it wrote nothing; what
    committed before stays (SQLite ``SQLITE_FULL``, Postgres SQLSTATE 53100 disk_full)."""


class StoreLocked(StoreError):
    """Another process held the database's write lock longer than the busy timeout (exit 70, as before).

    Raised by the store from the driver's error code (SQLite ``SQLITE_BUSY`` / ``SQLITE_LOCKED``; Postgres
    SQLSTATE 55P03 lock_not_available, 40P01 deadlock_detected, 40001 serialization_failure), never guessed
    from an exception's text."""

    exit_code = 70


class AccessDenied(HelaError):
    """A shared server's token does not allow this: a space outside its list, a write with a read-only token
    (``hela_cli/mcp_server/access.py``); exit 77 (``EX_NOPERM``)."""

    exit_code = 77
