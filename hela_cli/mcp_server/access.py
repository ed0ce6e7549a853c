"""Who may do what on a shared server: tokens per client, scoped to spaces (``hela tokens``).

A shared ``hela mcp --http`` (and ``hela ui`` served to a team) accepts two kinds of bearer token:

* **the server token** (``--token-file``, ``$HELA_MCP_TOKEN`` or the generated one): every space, read and
  write, as before tokens per client existed ("all spaces");
* **a client token** made by ``hela tokens add NAME --space A [--space B ...] [--read-only]``: only the
  spaces it names (or every space with ``--all-spaces``), and with ``--read-only`` no writes.

A client token is ``hela_`` and 43 characters of :func:`secrets.token_urlsafe` (256 random bits). It is
printed once by ``hela tokens add`` and never stored: the database keeps its SHA-256 digest
(:mod:`hela_cli.store.tokens`). A plain hash is enough here, with neither a salt nor a slow KDF: those make
guessing a *low-entropy* password from its hash expensive, and nobody can guess 256 random bits, salted or
not; a key (a keyed hash) would be one more secret to keep beside the database and would protect nothing
more. The digest is also what the server looks the token up by (one indexed read), so every request sees
the database as it is: a token revoked (its row deleted) is refused from the next request on.

What a token allows is a :class:`Grant`: its spaces (None: every space) and whether it may write. The MCP
tools, ``POST /hook`` and ``hela ui`` check it before they touch a space (:meth:`Grant.check_space`,
:meth:`Grant.check_write`); a space outside the grant is refused exactly as a space that does not exist
would be named, and listing spaces shows only the grant's.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from hela_cli.errors import AccessDenied, HelaError, InputError

TOKEN_PREFIX = "hela_"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")
TOUCH_EVERY_S = 60.0   # "last used" is written at most once a minute per token (a write per request is not worth it)


@dataclass(frozen=True)
class Grant:
    """What one token allows: ``spaces`` (None: every space) and ``write``. ``name``: the token's name as
    errors and logs show it (never the token)."""

    name: str
    spaces: frozenset[str] | None
    write: bool
    digest: str | None = field(default=None, repr=False, compare=False)

    def allows(self, space: str) -> bool:
        return self.spaces is None or space in self.spaces

    def check_space(self, space: Any) -> None:
        if not isinstance(space, str) or not self.allows(space):
            raise AccessDenied(f"token '{self.name}' has no access to space {_shown(space)}")

    def check_write(self, what: str) -> None:
        if not self.write:
            raise AccessDenied(f"token '{self.name}' is read-only: {what} needs a token with write access")

    def visible(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if self.allows(n)]

    def claims(self) -> dict[str, Any]:
        """The grant as the SDK's ``AccessToken.claims`` carry it to the tools."""
        return {"hela_grant": {"name": self.name, "write": self.write,
                               "spaces": None if self.spaces is None else sorted(self.spaces)}}

    @classmethod
    def from_claims(cls, claims: Any) -> "Grant | None":
        g = (claims or {}).get("hela_grant") if isinstance(claims, dict) else None
        if not isinstance(g, dict):
            return None
        spaces = g.get("spaces")
        return cls(str(g.get("name")), None if spaces is None else frozenset(spaces), bool(g.get("write")))


#: the server token's grant: every space, read and write
ALL = Grant("server", None, True)
#: nothing at all (a request that reached a tool without an authenticated user: never expected)
NOTHING = Grant("unauthenticated", frozenset(), False)


def _shown(space: Any) -> str:
    text = repr(space) if not isinstance(space, str) else f"'{space}'"
    return text if len(text) <= 60 else text[:57] + "..."


def digest(token: str) -> str:
    """The SHA-256 of a token, hex: what the database keeps."""
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def same(a: str, b: str) -> bool:
    """Constant-time equality of two digests (of equal length whatever was guessed)."""
    return hmac.compare_digest(a.encode("ascii", "replace"), b.encode("ascii", "replace"))


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        shown = repr(name) if len(repr(name)) <= 60 else repr(name)[:57] + "..."
        raise InputError(f"token name {shown}: 1-64 letters, digits, '.', '_', '-' or '@', starting with a "
                         f"letter or digit")
    return name


# ----------------------------------------------------------------------------------- hela tokens
def add(store: Any, name: str, spaces: list[str], read_only: bool = False, all_spaces: bool = False
        ) -> tuple[str, dict[str, Any]]:
    """Make a token for ``name`` and store its digest; returns ``(token, row without digest)``. The token is
    returned once: nothing can show it again. Refuses (:class:`InputError`, nothing written) a taken or bad
    name, no space and no ``all_spaces``, both, or a bad space name."""
    check_name(name)
    if all_spaces and spaces:
        raise InputError("give --space NAME (one or more) or --all-spaces, not both")
    if not all_spaces and not spaces:
        raise InputError("give the spaces this token may use: --space NAME (repeat it), or --all-spaces")
    names: list[str] = []
    for s in spaces:
        try:
            store.check_space_name(s)
        except HelaError as e:
            raise InputError(f"--space: {e.message}") from None
        if s not in names:
            names.append(s)
    token = new_token()
    if not store.add_token(name, digest(token), None if all_spaces else names, "read" if read_only else "write",
                           time.time()):
        raise InputError(f"a token named '{name}' exists already (hela tokens revoke {name} first)")
    row = next(r for r in store.tokens() if r["name"] == name)
    return token, public(row)


def public(row: dict[str, Any]) -> dict[str, Any]:
    """A token's row as ``hela tokens list`` shows it: never the digest."""
    return {k: row[k] for k in ("name", "spaces", "scope", "created_at", "last_used")}


def listing(store: Any) -> list[dict[str, Any]]:
    return [public(r) for r in store.tokens()]


def revoke(store: Any, name: str) -> None:
    if not store.revoke_token(name):
        raise InputError(f"no token named {_shown(name)} (hela tokens list shows them)")


def grant_of(row: dict[str, Any]) -> Grant:
    spaces = row.get("spaces")
    return Grant(row["name"], None if spaces is None else frozenset(spaces), row.get("scope") == "write",
                 digest=row.get("digest"))


# ----------------------------------------------------------------------------------- the server's side
class Verifier:
    """A server's check of a bearer token -> its :class:`Grant`, or None (401).

    The server token is compared in constant time with its digest. Any other token is looked up by its
    digest in the database on every request (revocation holds from the next request), on a connection of
    its own (``lookup``), so a check never waits for a tool call or a hook that holds the server's Memory;
    the caller runs :meth:`grant` in a worker thread. "Last used" is written at most once a minute per token,
    by a thread of its own on another connection (a write waits for the database's writer; a check must not):
    a write that fails (the database busy) is left for the next one."""

    def __init__(self, shared: str | None, db: str | None):
        self._shared = digest(shared) if shared else None
        self._db = db
        self._store: Any = None
        self._touched: dict[str, float] = {}
        self._pool: Any = None
        self._touch_store: Any = None
        import threading

        self._lock = threading.Lock()

    @property
    def has_shared(self) -> bool:
        return self._shared is not None

    def _lookup_store(self) -> Any:
        if self._store is None:
            from hela_cli.store import Store

            self._store = Store.open(self._db, must_exist=True)
        return self._store

    def grant(self, token: str) -> Grant | None:
        """The token's grant (None: refused). Blocking (a database read): run it in a worker thread."""
        if not token:
            return None
        d = digest(token)
        if self._shared is not None and same(d, self._shared):
            return ALL
        if not token.startswith(TOKEN_PREFIX):   # not a client token: no database read for it
            return None
        from hela_cli.errors import StoreError

        with self._lock:   # one connection, one reader at a time
            try:
                row = self._lookup_store().token_by_digest(d)
            except StoreError:   # no database yet (nobody has made a token), or it cannot be read now
                self.close_lookup()
                return None
        if row is None:
            return None
        self._touch(d)
        return grant_of(row)

    def has_client_tokens(self) -> bool:
        from hela_cli.errors import StoreError

        with self._lock:
            try:
                return bool(self._lookup_store().tokens())
            except StoreError:
                self.close_lookup()
                return False

    def _touch(self, d: str) -> None:
        now = time.time()
        if now - self._touched.get(d, 0.0) < TOUCH_EVERY_S:
            return
        self._touched[d] = now
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hela-token-touch")
        self._pool.submit(self._write_touch, d, now)

    def _write_touch(self, d: str, when: float) -> None:
        try:
            if self._touch_store is None:
                from hela_cli.store import Store

                self._touch_store = Store.open(self._db, must_exist=True)
            self._touch_store.touch_token(d, when)
        except Exception:  # noqa: BLE001 - "last used" is informative; the next request writes it again
            self._touched.pop(d, None)

    def close_lookup(self) -> None:
        if self._store is not None:
            try:
                self._store.close()
            finally:
                self._store = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._touch_store is not None:
            self._touch_store.close()
            self._touch_store = None
        with self._lock:
            self.close_lookup()

    async def verify_token(self, token: str) -> Any:
        """The SDK's ``TokenVerifier``: an ``AccessToken`` carrying the grant in its claims (never the token)."""
        import anyio
        from mcp.server.auth.provider import AccessToken

        grant = await anyio.to_thread.run_sync(self.grant, token)
        if grant is None:
            return None
        client = "hela" if grant is ALL else f"token:{grant.name}"
        return AccessToken(token="(not kept)", client_id=client, scopes=["write" if grant.write else "read"],
                           claims=grant.claims())
