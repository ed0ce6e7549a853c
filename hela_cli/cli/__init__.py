"""The command line: the only package of hela that imports typer, rich or click.

``main`` (the console-script entry point) is here: ``hela hook`` and ``hela mcp`` on stdio start without
Typer; everything else goes to ``app`` (the Typer application, loaded on first use) in :mod:`.root`. Each
top-level command is one module of :mod:`.commands`, named after it; :mod:`.helpers` holds what several
commands share (``--space``, the progress bar, read-a-space-then-JSON-or-table, ``--out`` writing); terminal
rendering in :mod:`.render` and :mod:`.explain`.
"""

from __future__ import annotations

import os

# numpy's OpenBLAS starts a worker thread per core at import and they spin: 85 instead of 175 ms of CPU for
# `import numpy` with one thread (idle machine). hela's own matrix work runs on one thread anyway (see
# hela_cli.store.vector_index._matvec); a user's explicit setting wins. Set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402


def _mcp_stdio_options(args: list[str]) -> dict[str, str] | None:
    """The options of ``hela mcp [--db PATH] [--config PATH]`` (the stdio server as MCP clients start it),
    or None for anything else (``--http``, ``--help``, another option), which the Typer app parses."""
    options: dict[str, str] = {}
    while args:
        name, eq, value = args[0].partition("=")
        if name not in ("--db", "--config") or name in options:
            return None
        if not eq:
            if len(args) < 2:
                return None
            value, args = args[1], args[1:]
        options[name], args = value, args[1:]
    return options


def _serve_mcp_stdio(options: dict[str, str]) -> bool:
    """Serve ``hela mcp`` on stdio without importing Typer, Rich or the command modules (~0.1 s of CPU
    before an MCP client's ``initialize`` is answered: docs/benchmarks/agents.md, "MCP start-up"); False when the config
    does not load, so that the Typer app reports it as every command does."""
    from hela_cli.config import load_config
    from hela_cli.errors import HelaError

    try:
        config = load_config(options.get("--config"), overrides={"db": options.get("--db")})
    except HelaError:
        return False
    from hela_cli.mcp_server.tools import serve

    serve(config)
    return True


def _hook(argv: list[str]) -> None:
    """``hela hook``: the managed server's answer when it gives one (:mod:`hela_cli.hooks.fast`: no config, no
    model in this process), else the full hook (:func:`hela_cli.hooks.process.process_main`) with the stdin
    already read. Exits 0 whatever fails, even the import of the hook's own modules (one line on stderr and
    in the hook log when that can still be written): an agent reads exit 2 as "block"."""
    if os.environ.get("HELA_NESTED"):   # a session hela started for a model call: no hook at all
        os._exit(0)
    try:
        from hela_cli.hooks import fast

        answered, got = fast.ask(argv)
    except BaseException as e:  # noqa: BLE001 - the full hook decides
        answered, got = False, (None, f"error ({e.__class__.__name__})")
    if answered:
        try:
            if got:
                sys.stdout.buffer.write(got)
                sys.stdout.buffer.flush()
        except BaseException:  # noqa: BLE001 - a reader that went away
            pass
        os._exit(0)
    try:
        from hela_cli.hooks.process import process_main
    except BaseException as e:  # noqa: BLE001 - a broken install must not block the agent
        try:
            sys.stderr.write(f"hela hook: cannot start ({e.__class__.__name__}: {e})\n")
            from hela_cli.hooks import log

            log.append({"agent": None, "event": argv[0] if argv else None, "result": "error",
                        "detail": f"cannot start: {e.__class__.__name__}: {str(e)[:200]}"})
        except BaseException:  # noqa: BLE001
            pass
        os._exit(0)
    raw, why = got
    process_main(argv, preread=raw, server_note=why)


def main() -> None:
    """The console script. ``hela hook ...`` (what coding agents run on every prompt) goes straight to
    :func:`_hook` without importing Typer, Rich or the command modules (about a third of the start-up of a
    plain command), and so does ``hela mcp`` on stdio with no option but ``--db`` and
    ``--config``; every other command goes through the Typer app."""
    if sys.argv[1:2] == ["hook"] and "--help" not in sys.argv and "-h" not in sys.argv:
        _hook(sys.argv[2:])
    if sys.argv[1:2] == ["mcp"]:
        options = _mcp_stdio_options(sys.argv[2:])
        if options is not None and _serve_mcp_stdio(options):
            return
    from hela_cli.cli.root import main as cli_main

    cli_main()


def __getattr__(name: str) -> object:
    if name == "app":
        from hela_cli.cli.root import app

        return app
    raise AttributeError(name)


__all__ = ["app", "main"]
