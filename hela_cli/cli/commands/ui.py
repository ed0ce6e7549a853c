"""``hela ui``: serve the local web page (CLI-only module; the app is :mod:`hela_cli.ui`)."""

from __future__ import annotations

import signal

from typing import Any, Optional

import typer

from hela_cli.cli.helpers import state, store_progress
from hela_cli.cli.render import err_console, text
from hela_cli.errors import HelaError

app = typer.Typer()


@app.command("ui")
def ui(
    ctx: typer.Context,
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port to listen on (default: a free one)."),
    host: Optional[str] = typer.Option(None, "--host", metavar="HOST",
                                       help="Address to bind (default 127.0.0.1). Another address exposes "
                                            "the page beyond this machine; the token is still required."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Do not open a browser: print the address "
                                                            "with its access token to open."),
    learn: bool = typer.Option(False, "--learn", help="Recall learns (Eq.1) by default; the page can still "
                                                      "recall without learning. Default: learning off."),
) -> None:
    """Browse the memory graph and one recall in a local web page (Ctrl-C stops it)."""
    try:
        import python_multipart  # noqa: F401 - the form of "Recall and learn"

        import hela_cli.ui.app  # noqa: F401 - jinja2
        from hela_cli.ui.server import serve
    except ImportError as e:  # jinja2 and python-multipart are the ui extra
        raise HelaError(f"hela ui needs its extra: pip install 'hela[ui]' ({e})") from None

    cfg = state(ctx).config()

    def ready(s: Any) -> None:
        err_console.print(text(f"hela ui: serving {s.db} at {s.url} (Ctrl-C stops it)"), soft_wrap=True)
        if no_browser:   # the person opens it: the address with its token, as Jupyter prints it
            err_console.print(text("hela ui: open this address (it holds the access token):"), soft_wrap=True)
            err_console.print(text(f"    {s.token_url}"), soft_wrap=True)
        err_console.print(text(f"hela ui: the address with its access token is also in {s.url_file}"),
                          soft_wrap=True)
        if not s.loopback:
            err_console.print(text(f"hela ui: listening on {s.host}, beyond this machine; the token is still "
                                   f"required"), style="yellow", soft_wrap=True)

    try:
        serve(cfg, host=host, port=port, open_browser=not no_browser, learn=learn, on_ready=ready,
              store_progress=store_progress)
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it shut down on: a normal stop
        # the one Ctrl-C may be delivered twice on its way out (asyncio's runner and uvicorn each pass it
        # on): once stopped, a second one must not kill the process by the signal (exit -2, seen 2 in 30)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    err_console.print("hela ui: stopped")
