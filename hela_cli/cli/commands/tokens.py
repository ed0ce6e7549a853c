"""``hela tokens add | list | revoke``: client tokens of a shared server (:mod:`hela_cli.mcp_server.access`)."""

from __future__ import annotations

from typing import List, Optional

import typer

from hela_cli.cli.helpers import state, store_progress
from hela_cli.cli.render import console, err_console, fmt_ts, print_json, table, text

HELP = ("Tokens per client for a shared server (`hela mcp --http`, `hela ui`): each teammate's client gets its "
        "own token, limited to the spaces it names, read-only or not.\n\n"
        "`hela tokens add NAME --space A [--space B ...] [--read-only]` prints a new token once (on stdout) and "
        "stores only its SHA-256 hash in the database; `hela tokens list` shows name, spaces, scope, created and "
        "last used (never a token); `hela tokens revoke NAME` deletes it, and a running server refuses it from "
        "its next request.\n\n"
        "A client sends it as `Authorization: Bearer TOKEN` (the hooks' fast path: HELA_MCP_TOKEN). A token "
        "never sees a space outside its list (`spaces` lists only its own); a read-only token cannot remember, "
        "update, delete, supersede, reinforce or forget, and its recalls do not learn. The server's own token "
        "(--token-file, $HELA_MCP_TOKEN, or the generated one) still opens every space. See docs/sharing.md.")

app = typer.Typer(name="tokens", context_settings={"help_option_names": ["-h", "--help"]}, help=HELP,
                  no_args_is_help=True)


def _spaces(row: dict) -> str:
    return "(all spaces)" if row["spaces"] is None else ", ".join(row["spaces"])


@app.command("add")
def add(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The client's name (a person or a machine), e.g. ana-laptop."),
    space: Optional[List[str]] = typer.Option(None, "--space", "-s", metavar="NAME",
                                              help="A space the token may use (repeat for several)."),
    all_spaces: bool = typer.Option(False, "--all-spaces", help="Every space, present and future (instead of "
                                                                "--space)."),
    read_only: bool = typer.Option(False, "--read-only", help="Recall, ask and list only: no writes."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object (with the token)."),
) -> None:
    """Make a client token: printed once on stdout, only its hash is stored."""
    from hela_cli.mcp_server import access
    from hela_cli.store import Store

    cfg = state(ctx).config()
    with Store.open(cfg.db, must_exist=False, progress=store_progress) as s:
        token, row = access.add(s, name, list(space or []), read_only=read_only, all_spaces=all_spaces)
    if json_out:
        print_json({**row, "token": token})
        return
    err_console.print(text(f"token '{row['name']}' for {_spaces(row)} ({row['scope']}); shown this once, only "
                           f"its hash is kept:"), soft_wrap=True)
    print(token, flush=True)


@app.command("list")
def list_(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The tokens: name, spaces, scope, created, last used (never a token)."""
    from hela_cli.mcp_server import access
    from hela_cli.store import Store

    cfg = state(ctx).config()
    with Store.open(cfg.db, progress=store_progress) as s:
        rows = access.listing(s)
        path = s.path
    if json_out:
        print_json(rows)
        return
    t = table(str(path), [("name", "key"), ("spaces", "text"), ("scope", "key"), ("created", "key"),
                          ("last used", "key")])
    for r in rows:
        t.add_row(text(r["name"]), text(_spaces(r)), r["scope"], fmt_ts(r["created_at"]), fmt_ts(r["last_used"]))
    console.print(t)


@app.command("revoke")
def revoke(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The token's name."),
) -> None:
    """Delete a token: a running server refuses it from its next request."""
    from hela_cli.mcp_server import access
    from hela_cli.store import Store

    cfg = state(ctx).config()
    with Store.open(cfg.db, progress=store_progress) as s:
        access.revoke(s, name)
    console.print(text(f"revoked token '{name}'"))
