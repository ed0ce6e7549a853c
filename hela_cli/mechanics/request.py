"""One recall request: what a recall asks for besides its question and its space, as one frozen value.

It is built where a request enters (``hela ask``'s options, MCP ``recall``'s arguments, a hook, a ``hela ui``
form) with :meth:`RecallRequest.of`, which validates it and reads its dates, and passed whole through
:class:`~hela_cli.memory.Memory` to :func:`hela_cli.mechanics.retrieval.retrieve`. A new filter is a field here,
its check in :meth:`RecallRequest.of`, and its use in retrieval: no signature in between changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hela_cli.errors import InputError
from hela_cli.text.dates import parse_time


def _epoch(value: Any, option: str) -> float | None:
    """A date as UTC epoch seconds: a number as it is, a text as ``hela add --time`` reads it."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return float(parse_time(value, option)[0])


@dataclass(frozen=True)
class RecallRequest:
    """``speaker`` / ``session``: recall only what this speaker said / only this session. ``since`` /
    ``until`` (UTC epoch seconds): only memories in that window. ``current_only``: leave out memories a later
    one superseded for certain. ``as_of`` (UTC epoch seconds): recall as of that time (later memories and
    later supersessions ignored; it is the space's "now"). ``k``: the top-k of Eq.5 for this recall (None:
    ``retrieval.k``). The filters restrict the candidates before ranking (docs/correcting.md)."""
    speaker: str | None = None
    session: str | None = None
    since: float | None = None
    until: float | None = None
    current_only: bool = False
    as_of: float | None = None
    k: int | None = None

    @classmethod
    def of(cls, *, speaker: str | None = None, session: str | None = None, since: Any = None, until: Any = None,
           current_only: bool = False, as_of: Any = None, k: int | None = None) -> "RecallRequest":
        """The request from what a caller gave: texts checked, dates read (any date ``hela add --time``
        reads, or epoch seconds; the error names the option). Raises :class:`~hela_cli.errors.InputError`."""
        for key, value in (("speaker", speaker), ("session", session)):
            if value is not None and (not isinstance(value, str) or not value):
                raise InputError(f"--{key}: give a non-empty text")
        lo, hi = _epoch(since, "--since"), _epoch(until, "--until")
        if lo is not None and hi is not None and lo > hi:
            raise InputError("--since is after --until: no memory can match")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise InputError("k: give a number of memories >= 1")
        return cls(speaker=speaker, session=session, since=lo, until=hi, current_only=bool(current_only),
                   as_of=_epoch(as_of, "--as-of"), k=k)

    def filters(self) -> dict[str, Any] | None:
        """The candidate filters as the store takes them (``until`` bounded by ``as_of``); None: none."""
        out: dict[str, Any] = {key: value for key, value in (("speaker", self.speaker), ("session", self.session),
                                                             ("since", self.since), ("until", self.until))
                               if value is not None}
        if self.as_of is not None:
            out["until"] = self.as_of if self.until is None else min(self.until, self.as_of)
        return out or None


#: a recall of the whole space, as configured
EVERYTHING = RecallRequest()

__all__ = ["EVERYTHING", "RecallRequest"]
