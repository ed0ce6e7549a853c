"""The ``hela`` application: the root group, its global options (``--db``, ``--config``, ``--version``) and
every command of :mod:`hela_cli.cli.commands` added to it, in ``COMMANDS`` order.

Errors: every :class:`~hela_cli.errors.HelaError` becomes one line on stderr and its exit code, in
:class:`HelaGroup` - the single place where errors are mapped.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import typer
from typer.core import TyperArgument, TyperGroup

from hela_cli import __version__
from hela_cli.config import Config, load_config
from hela_cli.errors import HelaError
from hela_cli.cli.clicklib import core as click_core, exceptions as click_exceptions
from hela_cli.cli.commands import COMMANDS
from hela_cli.cli.helpers import store_progress
from hela_cli.cli.render import clean, console, err_console, text

_NO_ARGS_HELP = (click_exceptions.NoArgsIsHelpError,)
GLOBAL_OPTIONS = ("--db", "--config")
_USAGE_ERRORS = (click_exceptions.UsageError,)
_PASS_THROUGH = (click_exceptions.ClickException, typer.Exit, typer.Abort)


def _error_line(message: str, code: int) -> typer.Exit:
    """Print ``error: MESSAGE`` as one line on stderr (never wrapped) and return the exit to raise."""
    err_console.print(text(f"error: {message}"), style="red", soft_wrap=True)
    return typer.Exit(code)


def _usage_exit(e: Exception) -> typer.Exit:
    ctx = getattr(e, "ctx", None)
    where = f"{ctx.command_path}: " if ctx is not None else ""
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    msg = " ".join(str(e.format_message()).split())  # type: ignore[attr-defined]
    return _error_line(f"{where}{msg}{hint}", 2)


def _not_text(arg: str) -> bool:
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class HelaGroup(TyperGroup):
    """Top-level group: maps errors to one line + exit code, never a traceback."""

    def parse_args(self, ctx: click_core.Context, args: list[str]) -> list[str]:
        for i, arg in enumerate(args, 1):   # bytes that are not UTF-8 arrive as lone surrogates (PEP 383)
            if _not_text(arg):
                raise _error_line(f"argument {i} is not valid UTF-8 text", 2) from None
        try:
            return super().parse_args(ctx, self._globals_first(ctx, list(args)))
        except _NO_ARGS_HELP:
            raise
        except _USAGE_ERRORS as e:  # a bad global option: one line, exit 2
            raise _usage_exit(e) from None

    def _globals_first(self, ctx: click_core.Context, args: list[str]) -> list[str]:
        """``hela ask "..." --db team.db`` as ``hela --db team.db ask "..."``: the global options (``--db``,
        ``--config``) given after the command move in front of it, unless that command has an option of the
        same name (``hela mcp --db``, ``hela bench ... --db``); nothing after ``--`` moves."""
        i = 0
        while i < len(args) and args[i].startswith("-"):   # the global options before the command
            if args[i] == "--":
                return args
            i += 2 if args[i] in GLOBAL_OPTIONS else 1
        own: set[str] = set()
        group: Any = self
        j = i
        while j < len(args) and hasattr(group, "get_command"):   # down to the (sub)command named
            word = args[j]
            try:
                cmd = None if word.startswith("-") else group.get_command(ctx, word)
            except Exception:  # noqa: BLE001 - an unknown command: click reports it
                cmd = None
            if cmd is None:
                if word.startswith("-") and word.partition("=")[0] not in GLOBAL_OPTIONS:
                    j += 1   # an option of the group itself
                    continue
                break
            own |= {o.split("=")[0] for p in cmd.params for o in getattr(p, "opts", [])}
            group, j = cmd, j + 1
        if group is self:
            return args
        j = i + 1
        front, rest, k = [], args[:i] + args[i:j], j
        while k < len(args):
            word = args[k]
            if word == "--":
                rest += args[k:]
                break
            name, eq, _ = word.partition("=")
            if name in GLOBAL_OPTIONS and name not in own:
                if eq:
                    front.append(word)
                    k += 1
                    continue
                if k + 1 < len(args):
                    front += [word, args[k + 1]]
                    k += 2
                    continue
            rest.append(word)
            k += 1
        return front + rest

    def invoke(self, ctx: click_core.Context) -> Any:
        try:
            return super().invoke(ctx)
        except HelaError as e:
            raise _error_line(e.message, e.exit_code) from None
        except _NO_ARGS_HELP:
            raise
        except _USAGE_ERRORS as e:  # bad flags / unknown command: one line, exit 2
            raise _usage_exit(e) from None
        except _PASS_THROUGH:
            raise
        except BrokenPipeError:  # the reader went away (`hela ... | head`): click exits quietly
            raise
        except UnicodeDecodeError as e:  # standard input or a file that is not UTF-8, before anything is written
            raise _error_line(f"input is not valid UTF-8 text (byte {e.start})", 2) from None
        except UnicodeEncodeError:  # a lone surrogate in input text that no check caught earlier
            raise _error_line("input is not valid UTF-8 text (a lone surrogate)", 2) from None
        except RecursionError:
            raise _error_line("input nested too deeply", 2) from None
        except KeyboardInterrupt:
            err_console.print("interrupted", style="red")
            raise typer.Exit(130) from None
        except Exception as e:  # noqa: BLE001 - last resort: no traceback for users
            if os.environ.get("HELA_DEBUG"):
                raise
            msg = f"unexpected {e.__class__.__name__}: {clean(e)} (set HELA_DEBUG=1 for a traceback)"
            raise _error_line(msg, 70) from None


def _readable_metavar(self: Any, ctx: Any, *, usage: bool = False) -> str:
    """An argument as ``--help`` shows it: ``QUESTION``, ``PATHS...``, ``[SPACE]`` (typer 0.28 writes a required
    one as ``{question}``, which reads as a literal brace pair)."""
    var = self.metavar or (self.name or "").upper()
    if self.nargs != 1 and not var.endswith("..."):
        var += "..."
    return f"[{var}]" if usage and not self.required and not var.startswith("[") else var


TyperArgument.make_metavar = _readable_metavar   # hela's CLI only: this module is imported by no library path

app = typer.Typer(cls=HelaGroup, no_args_is_help=True, add_completion=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="hela: local-first Hebbian associative memory for LLM agents (HeLa-Mem).")


class State:
    """The global options (``--db``, ``--config``): ``ctx.obj`` of every command (:func:`helpers.state`)."""

    def __init__(self, db: Optional[str], config: Optional[str]):
        self.db = db
        self.config_path = config

    def config(self, **overrides: Any) -> Config:
        ov = dict(overrides)
        if self.db:
            ov["db"] = self.db
        return load_config(self.config_path, overrides=ov)

    def memory(self, **overrides: Any) -> Any:
        from hela_cli.memory import Memory

        return Memory(self.config(**overrides), store_progress=store_progress)


def _version(value: bool) -> None:
    if value:
        console.print(f"hela {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    db: Optional[str] = typer.Option(None, "--db", envvar="HELA_DB", metavar="PATH",
                                     help="Database file (default: ~/.local/share/hela/hela.db)."),
    config: Optional[str] = typer.Option(None, "--config", envvar="HELA_CONFIG", metavar="PATH",
                                         help="YAML config file (see config.example.yaml)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    ctx.obj = State(db, config)


for command in COMMANDS:
    app.add_typer(command.app)


def main() -> None:
    app(prog_name="hela")


if __name__ == "__main__":  # pragma: no cover
    main()
