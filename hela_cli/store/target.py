"""What a ``--db`` value names: a SQLite file (a path) or a Postgres database (a ``postgresql://`` URL).

A value that looks like a URL (``scheme://...``) of a scheme hela does not serve is refused: a path such
as ``mysql://h/db`` would otherwise become a directory ``mysql:`` holding a new SQLite file. Messages about
a URL name its host and database, never its password (:func:`describe`).
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

from hela_cli.errors import InputError

POSTGRES_SCHEMES = ("postgresql", "postgres")
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


def url_scheme(value: object) -> str | None:
    """The scheme of a ``--db`` value that looks like a URL, else None (a file path)."""
    m = _URL.match(str(value)) if value is not None else None
    return m.group(1).lower() if m else None


def is_postgres(value: object) -> bool:
    """True for a ``postgresql://`` / ``postgres://`` URL; InputError for a URL of another scheme."""
    scheme = url_scheme(value)
    if scheme is None:
        return False
    if scheme in POSTGRES_SCHEMES:
        return True
    raise InputError(f"--db {describe(str(value))}: hela serves SQLite files (a path) and Postgres "
                     f"(postgresql://user@host:port/dbname), not '{scheme}://'")


def password_of(url: str) -> str | None:
    """The password written in ``url`` (to scrub it from any message), or None."""
    try:
        pw = urlsplit(url).password
    except ValueError:
        pw = None
    return unquote(pw) if pw else None


def describe(url: str) -> str:
    """``scheme://host/dbname`` of ``url`` without user, password or query (for messages). Host and
    database missing from the URL come from libpq's variables (``PGHOST``, ``PGDATABASE``) as libpq
    resolves them."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        try:
            port = parts.port
        except ValueError:  # a port that is not a number: name the host without it
            port = None
        db = unquote(parts.path.lstrip("/"))
        query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
    except ValueError:
        return "<unparsable URL>"
    host = host or unquote(query.get("host", "")) or os.environ.get("PGHOST", "") or "localhost"
    port = port or query.get("port") or os.environ.get("PGPORT")
    db = db or unquote(query.get("dbname", "")) or os.environ.get("PGDATABASE", "") or \
        os.environ.get("PGUSER", "") or "(default)"
    where = f"{host}:{port}" if port and not host.startswith("/") else host
    return f"{parts.scheme}://{where}/{db}"


def scrub(message: str, url: str) -> str:
    """``message`` (e.g. a driver's error text) with the URL's password and the raw URL removed."""
    out = message.replace(url, describe(url)) if url else message
    pw = password_of(url)
    if pw:
        out = out.replace(pw, "***")
    return out
