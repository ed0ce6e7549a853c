"""The ``hela ui`` web app (Starlette): server-rendered pages over :mod:`hela_cli.ui.views`, behind a token.

Access: every request needs the session's token, given once as ``?token=`` (the page then sets a cookie
named after the port and redirects to the same address without it, so the token stays out of history and
referrers) or by that cookie. Anything else gets 403. The cookie is ``HttpOnly`` and ``SameSite=Strict``:
another site cannot make the browser send it, and a POST whose ``Origin`` is another site is refused too, so
a learning recall cannot be triggered from outside.

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
from hela_cli.errors import HelaError, StoreLocked
from hela_cli.ui import graph, views

STATIC = Path(__file__).parent / "static"


class TokenGate:
    """ASGI middleware: the token as ``?token=`` (sets the cookie, redirects without it) or the cookie."""

    def __init__(self, app: Any, token: str, cookie: str):
        self.app, self.token, self.cookie = app, token, cookie

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        req = Request(scope)
        given = req.query_params.get("token")
        if given is not None and secrets.compare_digest(given.encode(), self.token.encode()):
            rest = [(k, v) for k, v in req.query_params.multi_items() if k != "token"]
            target = req.url.path + (f"?{urlencode(rest)}" if rest else "")
            resp: Response = RedirectResponse(target, status_code=303)
            resp.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path="/")
            await resp(scope, receive, send)
            return
        have = req.cookies.get(self.cookie, "")
        origin = req.headers.get("origin")
        if req.method not in ("GET", "HEAD") and origin is not None and \
                origin.split("://", 1)[-1] != req.headers.get("host", ""):
            have = ""   # a write from another site's page: refused even if its browser sent the cookie
        if have and secrets.compare_digest(have.encode(), self.token.encode()):
            await self.app(scope, receive, send)
            return
        resp = HTMLResponse(FORBIDDEN, status_code=403)
        await resp(scope, receive, send)


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


def create_app(mem: Any, token: str, cookie: str = "hela-ui", learn_default: bool = False) -> Starlette:
    """The app over ``mem`` (a :class:`~hela_cli.memory.Memory` whose store is open). ``learn_default``:
    recall learns (Eq.1) unless the page says otherwise (``hela ui --learn``); off by default."""
    env = _env()
    lock = threading.Lock()
    store = mem.store
    store.set_query_only(True)

    def page(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        html = env.get_template(template).render(request=request, url=url, version=__version__, db=store.path,
                                                 status=status, **ctx)
        return HTMLResponse(html, status_code=status)

    def url(path: str, **params: Any) -> str:
        q = {k: v for k, v in params.items() if v not in (None, "", False)}
        return path + (f"?{urlencode(q)}" if q else "")

    def guarded(fn: Callable[[Request], Response]) -> Callable[[Request], Response]:
        def handler(request: Request) -> Response:
            try:
                with lock:
                    return fn(request)
            except HelaError as e:
                back_space = request.query_params.get("space")
                status = 500 if isinstance(e, StoreLocked) else 404 if "unknown" in e.message else 400
                return page(request, "error.html", status=status,
                            message=e.message, space=back_space)
            except Exception as e:  # noqa: BLE001 - a page, never a traceback (the database, a model fault)
                return page(request, "error.html", status=500, message=unexpected(e),
                            space=request.query_params.get("space"))
        handler.__name__ = fn.__name__
        return handler

    def int_param(request: Request, key: str, default: int) -> int:
        value = request.query_params.get(key)
        if value in (None, ""):
            return default
        try:
            return int(value)
        except ValueError:
            raise HelaError(f"{key}: not a number: {value[:40]!r}", 2) from None

    def home(request: Request) -> Response:
        return page(request, "spaces.html", spaces=views.spaces(store))

    def memories(request: Request) -> Response:
        sp = views.space(store, request.query_params.get("space", ""))
        params = dict(request.query_params)
        f = views.parse_filter(params)
        oldest = params.get("order") == "oldest"
        data = views.memories(store, sp, f, page=int_param(request, "page", 1), oldest_first=oldest)
        params.pop("deleted", None)
        return page(request, "memories.html", space=sp.name, summary=views.summary(store, sp), data=data,
                    params=params, searched=bool(f.terms), deleted=request.query_params.get("deleted"))

    def memory(request: Request) -> Response:
        try:
            node_id = int(request.path_params["node_id"])
        except ValueError:
            raise HelaError(f"unknown memory id {request.path_params['node_id'][:40]!r}") from None
        data = views.memory(store, mem.config, node_id)
        versions = mem.history(data["space"], node_id)["versions"]
        return page(request, "memory.html", m=data, space=data["space"], versions=versions,
                    edited=request.query_params.get("edited") == "1")

    def node_of(request: Request) -> dict[str, Any]:
        try:
            node_id = int(request.path_params["node_id"])
        except ValueError:
            raise HelaError(f"unknown memory id {request.path_params['node_id'][:40]!r}") from None
        node = store.get_node(node_id)
        if node is None:
            raise HelaError(f"unknown memory id {node_id}")
        node["space"] = store.node_space_name(node_id)
        return node

    def writing(fn: Callable[[], Any]) -> Any:
        """Run a write the user confirmed, with the connection's query_only lifted for it alone."""
        store.set_query_only(False)
        try:
            return fn()
        finally:
            store.set_query_only(True)

    def delete_confirm(request: Request) -> Response:
        node = node_of(request)
        return page(request, "delete.html", m=node, space=node["space"])

    def delete_do(request: Request, form: Any) -> Response:
        node = node_of(request)
        if form.get("confirm") != "1":
            return page(request, "delete.html", m=node, space=node["space"])
        writing(lambda: mem.delete(node["space"], [node["id"]]))
        return RedirectResponse(url("/memories", space=node["space"], deleted=node["id"]), status_code=303)

    def edit_form(request: Request) -> Response:
        node = node_of(request)
        return page(request, "edit.html", m=node, space=node["space"], text=node["text"], review=False)

    def edit_do(request: Request, form: Any) -> Response:
        node = node_of(request)
        text = str(form.get("text", ""))
        if not text.strip():
            raise HelaError("the new text is empty (to remove a memory, delete it)", 2)
        if form.get("confirm") != "1":   # first the user sees old and new side by side
            return page(request, "edit.html", m=node, space=node["space"], text=text, review=True)
        writing(lambda: mem.edit(node["space"], node["id"], text))
        return RedirectResponse(url(f"/memory/{node['id']}", edited=1), status_code=303)

    def posted(fn: Callable[[Request, Any], Response]) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            from starlette.concurrency import run_in_threadpool

            form = await request.form()
            return await run_in_threadpool(guarded(lambda r: fn(r, form)), request)
        return handler

    def recall(request: Request) -> Response:
        sp = views.space(store, request.query_params.get("space", ""))
        q = (request.query_params.get("q") or "").strip()
        return page(request, "recall.html", space=sp.name, q=q, learn_default=learn_default,
                    result=_recall(sp.name, q, learn_default) if q else None)

    async def recall_learn(request: Request) -> Response:
        form = await request.form()
        space_name, q = str(form.get("space", "")), str(form.get("q", "")).strip()
        learn = form.get("learn") == "1"
        from starlette.concurrency import run_in_threadpool

        def run() -> Response:
            try:
                with lock:
                    sp = views.space(store, space_name)
                    if not q:
                        raise HelaError("the question is empty", 2)
                    return page(request, "recall.html", space=sp.name, q=q, learn_default=learn_default,
                                result=_recall(sp.name, q, learn))
            except HelaError as e:
                status = 500 if isinstance(e, StoreLocked) else 404 if "unknown" in e.message else 400
                return page(request, "error.html", status=status,
                            message=e.message, space=space_name)
            except Exception as e:  # noqa: BLE001
                return page(request, "error.html", status=500, message=unexpected(e), space=space_name)

        return await run_in_threadpool(run)

    def _recall(space_name: str, q: str, learn: bool) -> dict[str, Any]:
        if learn:
            store.set_query_only(False)
        try:
            data = views.recall(mem, space_name, q, learn=learn)
        finally:
            store.set_query_only(True)
        data["svg"] = graph.recall_svg(data, lambda i: url(f"/memory/{i}"))
        return data

    def hubs(request: Request) -> Response:
        sp = views.space(store, request.query_params.get("space", ""))
        return page(request, "hubs.html", space=sp.name, summary=views.summary(store, sp),
                    hubs=views.hubs(store, sp, mem.config, top=int_param(request, "top", 30)))

    def neighbourhood(request: Request) -> Response:
        sp = views.space(store, request.query_params.get("space", ""))
        node_id = int_param(request, "id", -1)
        data = views.hub_graph(store, sp, mem.config, node_id)
        data["svg"] = graph.neighbourhood_svg(data, lambda i: url("/graph", space=sp.name, id=i))
        return page(request, "graph.html", space=sp.name, g=data, weak=views.WEAK_LINK)

    def semantic(request: Request) -> Response:
        sp = views.space(store, request.query_params.get("space", ""))
        return page(request, "semantic.html", space=sp.name, summary=views.summary(store, sp),
                    data=views.semantic(store, sp, page=int_param(request, "page", 1)))

    def heatmap(request: Request) -> Response:
        sp = views.space(store, request.query_params.get("space", ""))
        hubs_only = request.query_params.get("hubs") == "1"
        return page(request, "heatmap.html", space=sp.name, hubs_only=hubs_only,
                    n=int_param(request, "n", 20),
                    hm=views.heatmap(store, sp, mem.config, nodes=int_param(request, "n", 20), hubs_only=hubs_only))

    def not_found(request: Request, exc: Exception) -> Response:
        return page(request, "error.html", status=404, message=f"no page at {request.url.path}", space=None)

    routes = [Route("/", guarded(home)), Route("/memories", guarded(memories)),
              Route("/memory/{node_id}", guarded(memory)),
              Route("/memory/{node_id}/delete", guarded(delete_confirm)),
              Route("/memory/{node_id}/delete", posted(delete_do), methods=["POST"]),
              Route("/memory/{node_id}/edit", guarded(edit_form)),
              Route("/memory/{node_id}/edit", posted(edit_do), methods=["POST"]),
              Route("/recall", guarded(recall)),
              Route("/recall", recall_learn, methods=["POST"]), Route("/hubs", guarded(hubs)),
              Route("/graph", guarded(neighbourhood)), Route("/semantic", guarded(semantic)),
              Route("/heatmap", guarded(heatmap)),
              Mount("/static", StaticFiles(directory=STATIC), name="static")]
    app = Starlette(routes=routes, exception_handlers={404: not_found})
    app.add_middleware(TokenGate, token=token, cookie=cookie)
    return app
