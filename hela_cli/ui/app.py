"""The ``hela ui`` web app (Starlette): server-rendered pages over :mod:`hela_cli.ui.views`, behind a token.

Access: every request needs a token, given once as ``?token=`` (exchanged for a random session id in a
cookie named after the port; the page redirects to the same path without it, so the token stays out of
history, referrers and every cookie) or that session. Two tokens open it: the session's own (every space, as before), and a client token of
``hela tokens add`` (:mod:`hela_cli.mcp_server.access`), looked up in the database on every request (a
revoked one is refused from the next request): its pages show only its spaces (the space list too), a
memory of another space is refused with 403, and a read-only one can neither edit nor delete, and its
recalls do not learn. Anything else gets 403. The cookie is ``HttpOnly`` and ``SameSite=Strict``:
another site cannot make the browser send it, and a POST whose ``Origin`` is another site is refused too, so
a learning recall cannot be triggered from outside; a GET never learns, and no page can be framed.

The database: one connection with ``PRAGMA query_only`` on (this process writes nothing unless a learning
recall is asked for, which lifts it for that call only), shared by the handlers under one lock (SQLite
connections are not for concurrent use; a page takes milliseconds, see BENCHMARKS.md).
"""

from __future__ import annotations

import secrets
import threading
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hela_cli import __version__
from hela_cli.text.dates import fmt_ts
from hela_cli.errors import AccessDenied, HelaError, StoreLocked
from hela_cli.mcp_server.access import ALL, Grant
from hela_cli.ui import graph, views

STATIC = Path(__file__).parent / "static"


class TokenGate:
    """ASGI middleware: the token as ``?token=`` is exchanged once for a random session id (the cookie, named
    for the port: ``HttpOnly``, ``SameSite=Strict``, host-only), then the page redirects to the same path
    without it; every later request carries the session id, never the token (a browser sends a
    127.0.0.1 cookie to every port of the host: another local server the user visits gets an id that
    means nothing to it). Each request's session is checked again against its token (a revoked client token
    is refused at once). ``verify(token)`` is the token's :class:`~hela_cli.mcp_server.access.Grant` or None
    (blocking: a client token is read from the database, in a worker thread); the grant goes to the
    handlers in ``scope["hela_grant"]``. Every response refuses to be framed (``X-Frame-Options: DENY``,
    CSP ``frame-ancestors 'none'``); a request that is not a GET or HEAD needs a same-origin ``Origin``
    (or, without one, no ``Sec-Fetch-Site: cross-site``)."""

    MAX_SESSIONS = 64   # browser sessions kept; the oldest is dropped first (its page asks for the token again)

    def __init__(self, app: Any, verify: Callable[[str], Grant | None], cookie: str):
        self.app, self.verify, self.cookie = app, verify, cookie
        self.sessions: dict[str, str] = {}   # session id -> the token it was exchanged for (insertion order)

    async def _grant(self, token: str) -> Grant | None:
        if not token:
            return None
        from starlette.concurrency import run_in_threadpool

        return await run_in_threadpool(self.verify, token)

    def _new_session(self, token: str) -> str:
        sid = secrets.token_urlsafe(32)
        self.sessions[sid] = token
        while len(self.sessions) > self.MAX_SESSIONS:
            self.sessions.pop(next(iter(self.sessions)))
        return sid

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def framed_never(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"),
                            (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]
                message = {**message, "headers": headers}
            await send(message)

        req = Request(scope)
        given = req.query_params.get("token")
        if given is not None and await self._grant(given) is not None:
            rest = [(k, v) for k, v in req.query_params.multi_items() if k != "token"]
            # a path of this page only: "//evil.example/" would be another site to the browser
            target = "/" + req.url.path.lstrip("/\\") + (f"?{urlencode(rest)}" if rest else "")
            resp: Response = RedirectResponse(target, status_code=303)
            resp.set_cookie(self.cookie, self._new_session(given), httponly=True, samesite="strict", path="/")
            await resp(scope, receive, framed_never)
            return
        token = self.sessions.get(req.cookies.get(self.cookie, ""), "")
        if req.method not in ("GET", "HEAD"):
            origin = req.headers.get("origin")
            if origin is not None:
                if origin.split("://", 1)[-1] != req.headers.get("host", ""):
                    token = ""   # a write from another site's page: refused even if its browser sent the cookie
            elif req.headers.get("sec-fetch-site", "") == "cross-site":
                token = ""
        grant = await self._grant(token)
        if grant is not None:
            scope["hela_grant"] = grant
            await self.app(scope, receive, framed_never)
            return
        resp = HTMLResponse(FORBIDDEN, status_code=403)
        await resp(scope, receive, framed_never)


def session_verifier(token: str, clients: Any = None) -> Callable[[str], Grant | None]:
    """The gate's check: the session's ``token`` opens every space; else ``clients.grant(token)`` (a
    :class:`~hela_cli.mcp_server.access.Verifier` over the database) when given."""
    def verify(given: str) -> Grant | None:
        if secrets.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode()):
            return ALL
        return clients.grant(given) if clients is not None else None
    return verify


FORBIDDEN = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>hela ui: token needed</title>
</head><body><main><h1>Token needed</h1><p>This page is served by <code>hela ui</code> for the person who
started it. Open the address with its token (<code>?token=...</code>) that <code>hela ui</code> wrote to its
URL file when it started.</p></main></body></html>"""


def unexpected(e: Exception) -> str:
    text = " ".join(str(e).split())[:300]   # a lock held too long is the store's StoreLocked (a HelaError)
    return f"unexpected {e.__class__.__name__}: {text}"


def _num(x: Any, nd: int = 3) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def _env() -> Environment:
    env = Environment(loader=PackageLoader("hela_cli.ui", "templates"), autoescape=select_autoescape(["html"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["ts"] = fmt_ts
    env.filters["num"] = _num
    env.filters["preview"] = lambda s, n=160: views.inspection.preview(s, n)
    return env


def create_app(mem: Any, token: str, cookie: str = "hela-ui", learn_default: bool = False,
               clients: Any = None) -> Starlette:
    """The app over ``mem`` (a :class:`~hela_cli.memory.Memory` whose store is open). ``learn_default``:
    recall learns (Eq.1) unless the page says otherwise (``hela ui --learn``); off by default. ``clients``:
    a :class:`~hela_cli.mcp_server.access.Verifier` that also admits client tokens (their spaces only)."""
    site = _Site(mem, learn_default)

    def not_found(request: Request, exc: Exception) -> Response:
        return site.page(request, "error.html", status=404, message=f"no page at {request.url.path}", space=None)

    routes = [*_browse_routes(site), *_correct_routes(site), *_recall_routes(site), *_graph_routes(site),
              Mount("/static", StaticFiles(directory=STATIC), name="static")]
    app = Starlette(routes=routes, exception_handlers={404: not_found})
    app.add_middleware(TokenGate, verify=session_verifier(token, clients), cookie=cookie)
    return app


class _Site:
    """What every page shares: the memory and its store (``query_only`` but for a confirmed write), the
    templates, the one lock around the store, rendering, error pages, parameters."""

    def __init__(self, mem: Any, learn_default: bool):
        self.mem, self.store, self.learn_default = mem, mem.store, learn_default
        self.env = _env()
        self.lock = threading.Lock()
        self.store.set_query_only(True)

    def page(self, request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(request=request, url=url, version=__version__,
                                                      db=self.store.path, status=status, **ctx)
        return HTMLResponse(html, status_code=status)

    def error(self, request: Request, e: Exception, space: Any) -> HTMLResponse:
        """The error page: a HelaError's message (404 for an unknown name, else 400), anything else 500."""
        if isinstance(e, HelaError):
            status = 500 if isinstance(e, StoreLocked) else 403 if isinstance(e, AccessDenied) else \
                404 if "unknown" in e.message else 400
            return self.page(request, "error.html", status=status, message=e.message, space=space)
        return self.page(request, "error.html", status=500, message=unexpected(e), space=space)

    def guarded(self, fn: Callable[[Request], Response]) -> Callable[[Request], Response]:
        """A handler run under the lock; an error is a page, never a traceback (the database, a model fault)."""
        def handler(request: Request) -> Response:
            try:
                with self.lock:
                    return fn(request)
            except Exception as e:  # noqa: BLE001
                return self.error(request, e, request.query_params.get("space"))
        handler.__name__ = fn.__name__
        return handler

    def posted(self, fn: Callable[[Request, Any], Response]) -> Callable[[Request], Any]:
        """A form handler: the form read, then ``fn(request, form)`` as :meth:`guarded` in a worker thread."""
        async def handler(request: Request) -> Response:
            from starlette.concurrency import run_in_threadpool

            form = await request.form()
            return await run_in_threadpool(self.guarded(lambda r: fn(r, form)), request)
        return handler

    @staticmethod
    def grant(request: Request) -> Grant:
        """What the request's token allows (the gate put it there)."""
        return request.scope.get("hela_grant") or Grant("unauthenticated", frozenset(), False)

    def space(self, request: Request) -> Any:
        name = request.query_params.get("space", "")
        if name:
            self.grant(request).check_space(name)
        return views.space(self.store, name)

    def node_of(self, request: Request) -> dict[str, Any]:
        """The memory of the path's ``node_id``, with its space's name (one the token may see)."""
        node_id = _node_id(request)
        node = self.store.get_node(node_id)
        name = None if node is None else self.store.node_space_name(node_id)
        if node is None or not self.grant(request).allows(name):   # another space's memory: as if absent
            raise HelaError(f"unknown memory id {node_id}")
        node["space"] = name
        return node

    def writing(self, fn: Callable[[], Any]) -> Any:
        """Run a write the user confirmed, with the connection's query_only lifted for it alone."""
        self.store.set_query_only(False)
        try:
            return fn()
        finally:
            self.store.set_query_only(True)

    def recall(self, space_name: str, q: str, learn: bool) -> dict[str, Any]:
        """One recall's data and its SVG graph; a learning recall lifts query_only for that call only."""
        if learn:
            self.store.set_query_only(False)
        try:
            data = views.recall(self.mem, space_name, q, learn=learn)
        finally:
            self.store.set_query_only(True)
        data["svg"] = graph.recall_svg(data, lambda i: url(f"/memory/{i}"))
        return data


def url(path: str, **params: Any) -> str:
    """``path`` with the given query parameters (empty ones left out)."""
    q = {k: v for k, v in params.items() if v not in (None, "", False)}
    return path + (f"?{urlencode(q)}" if q else "")


def int_param(request: Request, key: str, default: int) -> int:
    value = request.query_params.get(key)
    if value in (None, ""):
        return default
    try:
        return int(value)
    except ValueError:
        raise HelaError(f"{key}: not a number: {value[:40]!r}", 2) from None


def _node_id(request: Request) -> int:
    try:
        return int(request.path_params["node_id"])
    except ValueError:
        raise HelaError(f"unknown memory id {request.path_params['node_id'][:40]!r}") from None


# ----------------------------------------------------------------------------------- route groups
def _browse_routes(site: _Site) -> list[Route]:
    """The spaces, a space's memories (filtered, paginated), one memory with its versions."""
    store = site.store

    def home(request: Request) -> Response:
        grant = site.grant(request)
        return site.page(request, "spaces.html", spaces=[r for r in views.spaces(store) if grant.allows(r["name"])])

    def memories(request: Request) -> Response:
        sp = site.space(request)
        params = dict(request.query_params)
        f = views.parse_filter(params)
        oldest = params.get("order") == "oldest"
        data = views.memories(store, sp, f, page=int_param(request, "page", 1), oldest_first=oldest)
        params.pop("deleted", None)
        return site.page(request, "memories.html", space=sp.name, summary=views.summary(store, sp), data=data,
                         params=params, searched=bool(f.terms), deleted=request.query_params.get("deleted"))

    def memory(request: Request) -> Response:
        node_id = _node_id(request)
        site.node_of(request)   # a memory of a space the token may see
        data = views.memory(store, site.mem.config, node_id)
        versions = site.mem.history(data["space"], node_id)["versions"]
        return site.page(request, "memory.html", m=data, space=data["space"], versions=versions,
                         edited=request.query_params.get("edited") == "1")

    return [Route("/", site.guarded(home)), Route("/memories", site.guarded(memories)),
            Route("/memory/{node_id}", site.guarded(memory))]


def _correct_routes(site: _Site) -> list[Route]:
    """Delete and edit one memory: a confirmation page first, then the write (POST)."""
    mem = site.mem

    def delete_confirm(request: Request) -> Response:
        node = site.node_of(request)
        return site.page(request, "delete.html", m=node, space=node["space"])

    def delete_do(request: Request, form: Any) -> Response:
        node = site.node_of(request)
        if form.get("confirm") != "1":
            return site.page(request, "delete.html", m=node, space=node["space"])
        site.grant(request).check_write("delete")
        site.writing(lambda: mem.delete(node["space"], [node["id"]]))
        return RedirectResponse(url("/memories", space=node["space"], deleted=node["id"]), status_code=303)

    def edit_form(request: Request) -> Response:
        node = site.node_of(request)
        return site.page(request, "edit.html", m=node, space=node["space"], text=node["text"], review=False)

    def edit_do(request: Request, form: Any) -> Response:
        node = site.node_of(request)
        text = str(form.get("text", ""))
        if not text.strip():
            raise HelaError("the new text is empty (to remove a memory, delete it)", 2)
        if form.get("confirm") != "1":   # first the user sees old and new side by side
            return site.page(request, "edit.html", m=node, space=node["space"], text=text, review=True)
        site.grant(request).check_write("edit")
        site.writing(lambda: mem.edit(node["space"], node["id"], text))
        return RedirectResponse(url(f"/memory/{node['id']}", edited=1), status_code=303)

    return [Route("/memory/{node_id}/delete", site.guarded(delete_confirm)),
            Route("/memory/{node_id}/delete", site.posted(delete_do), methods=["POST"]),
            Route("/memory/{node_id}/edit", site.guarded(edit_form)),
            Route("/memory/{node_id}/edit", site.posted(edit_do), methods=["POST"])]


def _recall_routes(site: _Site) -> list[Route]:
    """One recall and how it spread: without learning (GET), or as the form says (POST)."""
    learn_default = site.learn_default

    def recall(request: Request) -> Response:
        sp = site.space(request)
        q = (request.query_params.get("q") or "").strip()
        # a GET never learns (an <img> on another local page must not advance Eq.1): the form's default says
        # what its POST will do
        default = learn_default and site.grant(request).write   # a read-only token's recalls do not learn
        return site.page(request, "recall.html", space=sp.name, q=q, learn_default=default,
                         result=site.recall(sp.name, q, False) if q else None)

    async def recall_learn(request: Request) -> Response:
        form = await request.form()
        space_name, q = str(form.get("space", "")), str(form.get("q", "")).strip()
        grant = site.grant(request)
        learn = form.get("learn") == "1" and grant.write   # a read-only token's recalls do not learn
        from starlette.concurrency import run_in_threadpool

        def run() -> Response:
            try:
                with site.lock:
                    grant.check_space(space_name)
                    sp = views.space(site.store, space_name)
                    if not q:
                        raise HelaError("the question is empty", 2)
                    return site.page(request, "recall.html", space=sp.name, q=q, learn_default=learn_default,
                                     result=site.recall(sp.name, q, learn))
            except Exception as e:  # noqa: BLE001
                return site.error(request, e, space_name)

        return await run_in_threadpool(run)

    return [Route("/recall", site.guarded(recall)), Route("/recall", recall_learn, methods=["POST"])]


def _graph_routes(site: _Site) -> list[Route]:
    """The graph views: hubs, a memory's neighbourhood, semantic records, the edge-weight heatmap."""
    store, mem = site.store, site.mem

    def hubs(request: Request) -> Response:
        sp = site.space(request)
        return site.page(request, "hubs.html", space=sp.name, summary=views.summary(store, sp),
                         hubs=views.hubs(store, sp, mem.config, top=int_param(request, "top", 30)))

    def neighbourhood(request: Request) -> Response:
        sp = site.space(request)
        node_id = int_param(request, "id", -1)
        data = views.hub_graph(store, sp, mem.config, node_id)
        data["svg"] = graph.neighbourhood_svg(data, lambda i: url("/graph", space=sp.name, id=i))
        return site.page(request, "graph.html", space=sp.name, g=data, weak=views.WEAK_LINK)

    def semantic(request: Request) -> Response:
        sp = site.space(request)
        return site.page(request, "semantic.html", space=sp.name, summary=views.summary(store, sp),
                         data=views.semantic(store, sp, page=int_param(request, "page", 1)))

    def heatmap(request: Request) -> Response:
        sp = site.space(request)
        hubs_only = request.query_params.get("hubs") == "1"
        return site.page(request, "heatmap.html", space=sp.name, hubs_only=hubs_only,
                         n=int_param(request, "n", 20),
                         hm=views.heatmap(store, sp, mem.config, nodes=int_param(request, "n", 20), hubs_only=hubs_only))

    return [Route("/hubs", site.guarded(hubs)), Route("/graph", site.guarded(neighbourhood)),
            Route("/semantic", site.guarded(semantic)), Route("/heatmap", site.guarded(heatmap))]
