"""``hela mcp``: the MCP server on stdio or streamable HTTP (:mod:`hela_cli.mcp_server`)."""

from __future__ import annotations

from typing import Optional

import typer

from hela_cli.cli.helpers import state
from hela_cli.errors import HelaError, InputError

app = typer.Typer()


@app.command("mcp")
def mcp(
    ctx: typer.Context,
    db: Optional[str] = typer.Option(None, "--db", metavar="PATH", help="Database file (as the global --db; "
                                     "either place works)."),
    config: Optional[str] = typer.Option(None, "--config", metavar="PATH", help="YAML config file (as the "
                                         "global --config)."),
    http: Optional[str] = typer.Option(None, "--http", metavar="HOST:PORT", help="Serve many clients over "
                                       "streamable HTTP at http://HOST:PORT/mcp instead of stdio (bearer token "
                                       "required)."),
    token_file: Optional[str] = typer.Option(None, "--token-file", metavar="PATH", help="With --http: the "
                                             "bearer token clients must send (else $HELA_MCP_TOKEN, else one "
                                             "generated on loopback)."),
) -> None:
    """Run the MCP server on stdio, or over HTTP with --http (tools: remember, recall, ask, reinforce,
    forget, spaces, hubs, memories, update, delete)."""
    try:
        from hela_cli.mcp_server.tools import serve
    except ImportError as e:  # pragma: no cover - mcp is a dependency
        raise HelaError(f"hela mcp needs the MCP SDK ({e}); pip install 'mcp>=2'") from None

    st = state(ctx)
    st.db = db or st.db
    st.config_path = config or st.config_path
    if http is not None:
        from hela_cli.mcp_server.http import serve_http

        serve_http(st.config(), http, token_file)
    elif token_file is not None:
        raise InputError("--token-file needs --http HOST:PORT (the stdio server takes no token)")
    else:
        serve(st.config())
