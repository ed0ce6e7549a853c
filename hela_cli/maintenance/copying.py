"""``hela copy SRC DEST``: copy spaces between two databases, either backend (a SQLite path or a
``postgresql://`` URL), with vectors, learned weights (raw amplitudes and priors), step counters, semantic
records with evidence and vectors, hub state and the asks log. Each space is written in one transaction
(:mod:`hela_cli.store.transfer`); a copy into a new database keeps every id, so its export equals the
source's (a round trip SQLite -> Postgres -> SQLite gives the same export)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from hela_cli.errors import StoreError
from hela_cli.store import Store


def copy_spaces(src: str, dest: str, spaces: Sequence[str] = (),
                progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Copy ``spaces`` (default: all) of database ``src`` into ``dest`` (created if missing). ``progress``
    gets a line per space copied, and the databases' own long steps (a migration on opening)."""
    if str(src) == str(dest):
        raise StoreError(f"{src}: source and destination are the same database")
    with Store.open(src, must_exist=True, progress=progress) as s:
        names = list(spaces) or [r["name"] for r in s.spaces()]
        for n in names:
            s.require_space(n)
        src_info = s.embedder_info()
        with Store.open(dest, must_exist=False, progress=progress) as d:
            dest_info = d.embedder_info()
            if src_info and dest_info and src_info != dest_info:
                raise StoreError(f"{d.path}: built with embedder '{dest_info[0]}' ({dest_info[1]}-d), the source "
                                 f"with '{src_info[0]}' ({src_info[1]}-d): vectors would not compare")
            copied = []
            for n in names:
                stats = d.space_load(s.space_dump(n))
                copied.append({"space": n, **stats})
                if progress:
                    progress(f"{n}: {stats['nodes']} memories, {stats['edges']} edges, "
                             f"{stats['semantic']} semantic records")
            return {"source": s.path, "destination": d.path, "spaces": copied}
