"""What several commands share: the ``--space`` option, the progress bar, reading a space then printing JSON or
a table, writing an ``--out`` / ``--output`` file, and the memory lines of the commands that correct memory."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import typer

from hela_cli.errors import HelaError, InputError
from hela_cli.cli.render import clean, console, err_console, fmt_ts, one_line, print_json, text
from hela_cli.text.marks import supersession_mark

#: a progress callback: ``(done, total)`` or ``(done, total, label)``
Progress = Callable[..., None]


def store_progress(line: str) -> None:
    """The store's progress callback for the CLI: a long step of the database (a migration of an existing
    file, a first index build) as one ``hela:`` line on stderr."""
    print(f"hela: {line}", file=sys.stderr, flush=True)


#: ``--space`` help: what a command uses without the flag
SPACE_HELP = "Memory space (default: HELA_SPACE, else the database's only space, else 'default')."


def space_option(help: str = SPACE_HELP) -> Any:
    """``-s/--space NAME``: the flag, else ``HELA_SPACE``, else None: the command then takes the database's
    only space, else ``default`` (:func:`pick_space`; every command that takes a space)."""
    return typer.Option(None, "--space", "-s", envvar="HELA_SPACE", help=help)


def pick_space(mem: Any, space: Optional[str]) -> str:
    """``--space`` / ``HELA_SPACE`` if given, else the database's only space, else 'default'."""
    return mem.default_space(space)


def state(ctx: typer.Context) -> Any:
    """The global options' state object (``--db``, ``--config``) of the ``hela`` command."""
    return ctx.find_root().obj


@contextlib.contextmanager
def progress_bar(label: str = "loading", *, enabled: bool = True, elapsed: bool = False) -> Iterator[Optional[Progress]]:
    """A transient Rich progress bar on stderr, yielded as a callback ``(done, total[, label])`` (a label
    replaces the description); None when stderr is not a terminal or ``enabled`` is off (``--json``), so the
    caller passes no progress at all or its own plain one. ``elapsed`` adds the elapsed-time column."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TimeElapsedColumn, TimeRemainingColumn

    columns = [BarColumn(), MofNCompleteColumn(), *([TimeElapsedColumn()] if elapsed else []), TimeRemainingColumn()]
    with Bar("[progress.description]{task.description}", *columns, console=err_console, transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int, label: Optional[str] = None) -> None:
            if label is None:
                bar.update(task, completed=done, total=total)
            else:
                bar.update(task, completed=done, total=total, description=clean(label))

        yield update


def space_options(ctx: typer.Context, space: Optional[str], json_out: bool) -> tuple[Optional[str], bool]:
    """An ``inspect`` subcommand's --space / --json, falling back to the ones given to ``hela inspect`` (a
    space of None: the database's only space, else 'default', once the store is open: :func:`store_space`)."""
    parent = ctx.meta.get("hela_inspect", {})
    return space if space is not None else parent.get("space"), json_out or parent.get("json", False)


def store_space(store: Any, space: Optional[str]) -> str:
    """:func:`pick_space` for commands that open the store themselves (read-only, the database exists)."""
    from hela_cli.memory import DEFAULT_SPACE

    return space if space is not None else (store.only_space() or DEFAULT_SPACE)


def open_store(ctx: typer.Context) -> tuple[Any, Any]:
    """(store, config) for read-only commands; never creates a database."""
    from hela_cli.store import Store

    cfg = state(ctx).config()
    store = Store.open(cfg.db, progress=store_progress)
    store.record_decay(cfg.hebbian.decay)   # spaces older than migration 0016 (issue 41)
    return store, cfg


def show_space(ctx: typer.Context, space: Optional[str], json_out: bool, read: Callable[[Any, Any, Any], Any],
               render: Callable[[Any, str, Any], None]) -> None:
    """The read-only pattern: open the database (never created), ``read(store, space, config)`` the named
    space, then print the result as JSON (``--json``) or ``render(result, space name, config)``."""
    space, json_out = space_options(ctx, space, json_out)
    store, cfg = open_store(ctx)
    with store:
        space = store_space(store, space)
        data = read(store, store.require_space(space), cfg)
    if json_out:
        print_json(data)
    else:
        render(data, space, cfg)


def check_out_dir(path: Optional[Path], flag: str = "--out") -> None:
    """Refuse an output file whose directory does not exist, before any work is done."""
    if path is not None and not path.parent.is_dir():
        raise InputError(f"{flag}: directory {path.parent} does not exist")


def write_out(path: Path, data: str, *, private: bool = True) -> None:
    """Write an ``--out`` / ``--output`` file. ``private``: a conversation's text (an export, a heatmap), so
    readable by the user only, ``~`` expanded; else a benchmark summary, default permissions (a bad path
    is then a usage error, exit 2). An OS error is one line naming the file."""
    try:
        if private:
            path = path.expanduser()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
        else:
            path.write_text(data, encoding="utf-8")
    except OSError as e:
        if private:
            raise HelaError(f"{path}: cannot write ({e.strerror})") from None
        raise HelaError(f"{path}: cannot write the summary ({e.strerror})", 2) from None


# ----------------------------------------------------------------------------------- correcting memory
#: ``--space`` help of the commands that take memory ids (``delete``, ``edit``, ``history``)
ID_SPACE_HELP = ("Memory space (default: HELA_SPACE, else the space of the ids given, else the database's "
                 "only space, else 'default').")


def space_of_ids(mem: Any, space: Optional[str], ids: Any) -> str:
    """``--space`` / ``HELA_SPACE`` if given, else the one space holding the memory ids, else the database's
    only space, else 'default'."""
    return mem.default_space(space if space is not None else (mem.space_of(ids) if ids else None))


def memory_line(m: dict[str, Any], width: int) -> str:
    """``ID  YYYY-MM-DD HH:MM  speaker: text`` cut to ``width`` columns."""
    head = f"{m['id']:>6}  {fmt_ts(m['timestamp'])}  "
    body = f"{m['speaker']}: {m['text']}" if m.get("speaker") else m["text"]
    mark = supersession_mark(m)   # facts that change: "(superseded by #N, DATE)" kept whole at the end
    return head + one_line(body, max(width - len(head) - len(mark) - 1, 10)) + (f" {mark}" if mark else "")


def print_changes(changes: list[dict[str, Any]]) -> None:
    """A fact's supersessions (``maintenance.correct.fact_chain``), oldest first: ``#OLD -> #NEW from DATE
    (detector)`` with the two texts below it."""
    if not changes:
        return
    width = min(console.width, 200)
    console.print(text("changes (facts that changed; nothing is deleted):"), style="dim")
    for c in changes:
        how = c["detector"] + ("" if c["status"] == "superseded" else f", possible {c['confidence']:.2f}")
        console.print(text(f"  #{c['old']} -> #{c['new']}  from {c['invalid_at'][:10]} ({how})"), soft_wrap=True,
                      highlight=False)
        for label, body in (("was", c["old_text"]), ("now", c["new_text"]), ("why", c.get("reason"))):
            if body:
                console.print(text(f"    {label}: " + one_line(body, max(width - 9, 10))), soft_wrap=True,
                              highlight=False)


def print_memories(rows: list[dict[str, Any]]) -> None:
    """One :func:`memory_line` per memory, at most 200 columns wide."""
    width = min(console.width, 200)
    for m in rows:
        console.print(text(memory_line(m, width)), soft_wrap=True, highlight=False)


def scrub_warning(scrub: Optional[dict[str, Any]]) -> None:
    """What a delete or edit could not scrub from the file's bytes (or, on Postgres, what stays), if anything."""
    if scrub is not None and scrub.get("verified") is None and scrub.get("note"):   # Postgres: what stays
        err_console.print(text(f"note: {scrub['note']}"), style="dim", soft_wrap=True)
    elif scrub is not None and not scrub["verified"]:
        err_console.print(text("warning: another process kept the database's WAL open; the deleted text may "
                               "stay in the file's bytes until it closes (run the command again then)"),
                          style="yellow", soft_wrap=True)
