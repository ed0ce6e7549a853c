"""The click that typer runs on: its own copy (typer >= 0.26 vendors click as ``typer._click``) or click
itself (older typer).

What typer raises and passes around comes from that copy; comparing it with the real click's classes never
matches (``hela --db X bench ...`` ignored X because ``ParameterSource.COMMANDLINE`` of the real click is
not the copy's), and ``import click`` besides cost 26-30 ms of every command (``python -X importtime``)."""

try:
    from typer._click import core, exceptions
except ImportError:  # pragma: no cover - typer < 0.26 runs on click itself
    from click import core, exceptions  # type: ignore[no-redef]

__all__ = ["core", "exceptions"]
