"""``hela ui``: a local web page for the memory graph and for one recall.

* :mod:`hela_cli.ui.views` - the data of each page as plain dicts (reads through the store);
* :mod:`hela_cli.ui.graph` - recall and neighbourhood graphs as inline SVG (hand-written radial layout);
* :mod:`hela_cli.ui.app` - the Starlette app: server-rendered pages (Jinja2), token gate, read-only store;
* :mod:`hela_cli.ui.server` - start-up: database check, token, URL file, browser, uvicorn.

No typer / rich here: the command itself is :mod:`hela_cli.cli.commands.ui`.
"""
