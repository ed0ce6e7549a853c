"""``hela mcp``: hela as an MCP server over stdio, built on the official MCP Python SDK (``mcp``).

One :class:`~hela_cli.memory.Memory` per server process: the database opens and the models load on the
first call that needs them, then stay loaded. The server answers ``initialize`` and ``tools/list`` before
any of it is imported: this module imports only the standard library, pydantic (which the SDK imports
anyway) and hela's errors and version at the top; the memory stack (``hela_cli.memory``: numpy, the store, the
models, retrieval) is imported by the first tool call (``tests/test_mcp_start.py`` holds that; the start-up
figures are in docs/benchmarks/agents.md, "MCP start-up"). Tool calls run one at a time in a worker thread (the event
loop keeps answering the protocol). Every failure - unknown space, bad arguments, a model fault, anything
unexpected - comes back as an MCP tool error (``is_error``) carrying the CLI's one-line message; the
server keeps serving and never sends a traceback. The database is shared safely with CLI processes (WAL,
``BEGIN IMMEDIATE`` writes), as between any two hela processes.

Tools: ``remember``, ``recall``, ``ask``, ``reinforce``, ``forget``, ``spaces``, ``hubs``, ``memories``,
``update``, ``delete`` (schemas in README.md).

Over HTTP every call is checked against the caller's token before it runs (:func:`request_grant`,
:mod:`hela_cli.mcp_server.access`): a space outside the token's list is refused, ``spaces`` lists only the
token's, and a read-only token's writes (``remember``, ``update``, ``delete``, ``reinforce``, ``forget``
with ``apply``) are refused while its ``recall`` and ``ask`` do not learn. Over stdio every space is open.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, AsyncIterator, Callable

from pydantic import BaseModel, ConfigDict, Field

from hela_cli import __version__
from hela_cli.errors import HelaError, InputError
from hela_cli.text.redact import redact as redact_secrets   # `redact` names remember's argument

if TYPE_CHECKING:  # imported by the first call that needs them (see the module's docstring)
    from hela_cli.config import Config
    from hela_cli.memory import Memory

logger = logging.getLogger("hela.mcp")

INSTRUCTIONS = (
    "hela is a local associative memory. Write each new conversation turn with `remember`; call `recall` "
    "to get the memories relevant to a query (ids, dates, speakers, scores); `ask` answers a question with "
    "the local chat model from memory. After replying, call `reinforce` with the recall_id and the ids of the "
    "memories you used: hela learns which memories belong together. Memories live in named spaces (one per "
    "user or agent).")

Space = Annotated[str, Field(description="Memory space (one per user or agent), e.g. \"alice\".")]


class TurnIn(BaseModel):
    """One turn to remember (the keys of a `hela add -` JSON line)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="What was said.")
    speaker: str | None = Field(None, description="Who said it (default: role, else \"user\").")
    role: str | None = Field(None, description="Chat role (user / assistant), kept with the turn.")
    time: str | float | None = Field(None, description="When: a date string (no zone = UTC) or epoch seconds; "
                                                       "default now.")
    session: str | None = Field(None, description="Session id; default: the newest turn's session if within "
                                                  "6 hours, else a new one.")
    id: str | None = Field(None, description="Source id: a turn with an id already in the space is skipped.")
    supersedes: list[int] | None = Field(None, description="Ids of earlier memories of the space this turn "
                                                           "replaces (a fact that changed); recall then brings "
                                                           "this turn with them and marks them superseded.")


def _date(ts: float | None) -> str | None:
    from hela_cli.text.dates import format_iso

    return None if ts is None else format_iso(ts)


def _memory_out(m: dict[str, Any], explain: bool = False) -> dict[str, Any]:
    from hela_cli.text.marks import supersession_mark

    out = {"id": m["id"], "source_id": m["source_id"], "date": _date(m["timestamp"]), "speaker": m["speaker"],
           "text": m["text"], "session": m["session"], "score": round(m["score"], 6), "path": m["path"],
           # facts that change: who replaced this memory, from when, how sure; which memories it replaced
           "superseded_by": m.get("superseded_by"), "invalid_at": _date(m.get("invalid_at")),
           "supersession_status": m.get("supersession_status"), "supersedes": m.get("supersedes") or [],
           "mark": supersession_mark(m) or None}
    if explain:
        out.update({k: round(m[k], 6) for k in ("base_score", "cos", "keyword", "time_factor", "spread_bonus")})
        out["spread_from"] = [{"id": s["id"], "contribution": round(s["contribution"], 6)} for s in m["spread_from"]]
    return out


def _semantic_out(r: dict[str, Any]) -> dict[str, Any]:
    return {k: r.get(k) for k in ("id", "kind", "text", "confidence", "similarity", "stale") if k in r}


@dataclass(frozen=True)
class ToolSpec:
    """How one tool is served: its ``description``; what it writes (``writes``: the action a read-only token
    is refused, or a function of the call's arguments giving it, or None for a read); its MCP annotations
    (``read_only``, ``destructive``); whether it may use the client's model (``samples``: the session is
    attached first) and whether its result lists spaces (``lists_spaces``: only the token's are kept)."""
    description: str
    writes: str | Callable[[dict[str, Any]], str | None] | None = None
    read_only: bool = False
    destructive: bool = False
    samples: bool = False
    lists_spaces: bool = False

    def action(self, arguments: dict[str, Any]) -> str | None:
        return self.writes(arguments) if callable(self.writes) else self.writes


def tool(description: str, **how: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a :class:`HelaServer` method an MCP tool (:class:`ToolSpec`); its signature is its schema."""
    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.hela_tool = ToolSpec(description, **how)  # type: ignore[attr-defined]
        return fn
    return mark


def tool_names() -> list[str]:
    """The tools, in the order they are declared."""
    return [name for name, fn in vars(HelaServer).items() if hasattr(fn, "hela_tool")]


class HelaServer:
    """The tools over one :class:`Memory`. Usable without the protocol (tests, embedding in a host)."""

    def __init__(self, config: Config):
        self.config = config
        self._memory: Memory | None = None
        self.due: set[str] = set()  # spaces whose auto-consolidation may be due (after a learning ask)
        self.session: Any = None  # the MCP session of the latest ask (models.chat: client samples through it)
        self.client_samples = False

    @property
    def memory(self) -> Memory:
        """The :class:`Memory`, imported and made on first use (it opens nothing until a call needs it)."""
        if self._memory is None:
            from hela_cli.memory import Memory
            from hela_cli.models.routes import route

            chat = None
            if route(self.config.models.chat).lent:  # the client's model (hela_cli.models.sampling)
                from hela_cli.models.sampling import SamplingChat

                chat = SamplingChat(lambda: self.session, n_ctx=self.config.models.chat_ctx)
            self._memory = Memory(self.config, chat=chat)
        return self._memory

    def close(self) -> None:
        """Close the database if a call opened it (nothing is imported or opened otherwise)."""
        if self._memory is not None:
            self._memory.close()

    def attach(self, ctx: Any) -> None:
        """Remember the calling client's session and whether it lends its model (sampling)."""
        if ctx is None:
            return
        try:
            self.session, caps = ctx.session, ctx.client_capabilities
        except (AttributeError, ValueError, LookupError):  # no request context (a direct call)
            return
        from hela_cli.models.sampling import client_samples

        self.client_samples = client_samples(caps)

    def consolidate_due(self) -> list[dict[str, Any]]:
        """Run the auto-consolidation of the spaces asked in since the last run, if due (cheap otherwise);
        failures are part of the summaries, never raised."""
        out = []
        while self.due:
            space = self.due.pop()
            try:
                rep = self.memory.consolidate_if_due(space)
            except Exception as e:  # noqa: BLE001 - a background step must not take the server down
                rep = {"error": _error_line(e)}
            if rep is not None:
                out.append({"space": space, **rep})
        return out

    # ------------------------------------------------------------------ the tools (plain, synchronous)
    # Each tool is declared once, here: its arguments' schema is its signature, its description and what it
    # writes are its @tool; build_server registers every one through one wrapper (the token's spaces and scope).
    @tool("Remember one or more conversation turns (as `hela add`): each becomes a memory linked to the previous "
          "turn of its session. Returns the new memory ids; turns whose id is already stored are skipped.",
          writes="remember")
    def remember(self, space: Space, turns: Annotated[list[TurnIn], Field(min_length=1, description="Turns in "
                                                                          "order.")],
                 redact: Annotated[bool | None, Field(description="Secrets (API keys, tokens, passwords) are "
                                                      "replaced with [REDACTED:kind] before storing: on by "
                                                      "default; false is honoured only where the server allows "
                                                      "it (ingest.redact_assistant: false).")] = None
                 ) -> dict[str, Any]:
        if not turns:
            raise InputError("turns: give at least one turn")
        # on by default: the model picks what it stores, often out of tool output, and nobody reads each call;
        # the server's ingest.redact_assistant decides whether a call may turn it off (docs/agents.md)
        cfg = self.memory.config.ingest
        on = bool(redact) or cfg.redact_assistant or (redact is None and cfg.redact)
        rows = [t.model_dump() for t in turns]
        marks = [row.pop("supersedes") for row in rows]
        rep = self.memory.add_batch(space, rows, redact=on, supersedes=marks)   # all None: a plain add
        out = {"space": space, "added": rep["added"], "skipped": rep["skipped"]}
        if rep.get("supersessions"):   # earlier memories these turns replace, found by supersession.detect
            out["replaced"] = [{"old": m["old"], "new": m["new"], "status": m["status"]} for m in rep["supersessions"]]
        return out

    @tool("Memories relevant to a query (retrieval only, no chat model): id, source id, date, speaker, text, score "
          "and path (base = similarity, hebbian = reached through learnt associations, successor = the later "
          "memory that replaced a recalled one). A memory a later one replaced has superseded_by (that memory's "
          "id, listed above it), invalid_at, supersession_status (superseded | possible) and mark; do not treat "
          "it as current. Retrieval learns from use unless learn is false.")
    def recall(self, space: Space, query: Annotated[str, Field(min_length=1, description="What to look for.")],
               k: Annotated[int | None, Field(ge=1, le=200, description="How many memories by base activation "
                                              "(default 10; up to 3 more by association).")] = None,
               learn: Annotated[bool, Field(description="Apply the Hebbian update (default true).")] = True,
               explain: Annotated[bool, Field(description="Add the score trace of each memory.")] = False,
               now: Annotated[str | None, Field(description="The present for time decay (default: the newest "
                                                "memory).")] = None,
               speaker: Annotated[str | None, Field(description="Only this speaker's memories.")] = None,
               session: Annotated[str | None, Field(description="Only this session's memories.")] = None,
               since: Annotated[str | None, Field(description="Only memories at or after this date.")] = None,
               until: Annotated[str | None, Field(description="Only memories at or before this date.")] = None,
               current_only: Annotated[bool, Field(description="Leave out memories a later one superseded "
                                                   "(possibly superseded ones stay, marked).")] = False,
               as_of: Annotated[str | None, Field(description="Recall as of this date: later memories and later "
                                                  "supersessions are ignored.")] = None) -> dict[str, Any]:
        from hela_cli.mechanics.request import RecallRequest

        request = RecallRequest.of(speaker=speaker, session=session, since=since, until=until,
                                   current_only=current_only, as_of=as_of, k=k)
        res = self.memory.retrieve(query, space, request, now=self._now(now), learn=learn)
        out: dict[str, Any] = {"space": space, "query": query, "recall_id": res.recall_id, "now": _date(res.now),
                               "memories": [_memory_out(m, explain) for m in res.memories],
                               "semantic": [_semantic_out(r) for r in res.semantic]}
        if explain:
            out["query_keywords"] = res.query_keywords
            out["timings_ms"] = {k: round(v, 2) for k, v in res.timings_ms.items()}
        return out

    @tool("Answer a question from memory with the local chat model; returns the answer and the memories it came "
          "from.", samples=True)
    def ask(self, space: Space, question: Annotated[str, Field(min_length=1)],
            learn: Annotated[bool, Field(description="Apply the Hebbian update (default true).")] = True,
            now: Annotated[str | None, Field(description="The present for time decay.")] = None) -> dict[str, Any]:
        """As ``hela ask``, except that a due auto-consolidation is left to :meth:`consolidate_due`, which
        the server runs after the answer is sent (it can take a minute with a small CPU model)."""
        from hela_cli.models.routes import route
        from hela_cli.models.sampling import NO_SAMPLING

        if route(self.memory.config.models.chat).lent and not self.client_samples:
            raise HelaError(NO_SAMPLING)
        res = self.memory.ask(question, space, now=self._now(now), learn=learn)
        if learn and res["memories"]:
            self.due.add(space)
        return {"space": space, "question": question, "answer": res["answer"], "recall_id": res["recall_id"],
                "memories": [_memory_out(m) for m in res["memories"]],
                "semantic": [_semantic_out(r) for r in res["semantic"]],
                "timings_ms": res["timings_ms"]}

    @tool("Feedback on a recall or ask: the ids of its memories you actually used in your reply. hela strengthens "
          "the associations between them and the query's best matches, so later related queries bring them in. "
          "Once per recall; ids must come from that recall.", writes="reinforce")
    def reinforce(self, space: Space, used: Annotated[list[int], Field(description="Memory ids from that recall's "
                                                                       "result that you used.")],
                  recall_id: Annotated[int | None, Field(description="The recall_id of the recall or ask (default: "
                                                         "the space's latest).")] = None) -> dict[str, Any]:
        """Feedback on a recall: the memories of it the agent used (``Memory.reinforce``)."""
        return self.memory.reinforce(space, used, recall_id=recall_id)

    @tool("Forgetting: list the memories that are weak, idle and never used (dry run), or remove them with "
          "apply=true.", writes=lambda args: "forget with apply" if args.get("apply") else None)
    def forget(self, space: Space, apply: Annotated[bool, Field(description="Remove the candidates (default false: "
                                                                "dry run).")] = False) -> dict[str, Any]:
        rep = self.memory.forget(space, apply=apply)
        cands = [{"id": c["id"], "source_id": c["source_id"], "date": _date(c["timestamp"]),
                  "speaker": c["speaker"], "text": c["text"], "total_weight": c["total_weight"],
                  "idle_days": c["idle_days"], "access_count": c["access_count"]}
                 for c in rep["candidates"] if c["candidate"]]
        return {"space": space, "applied": rep["applied"], "nodes": rep["nodes"], "candidates": cands,
                "removed": rep["removed"]}

    @tool("The memory spaces with their memory, edge and semantic-record counts.", read_only=True, lists_spaces=True)
    def spaces(self) -> dict[str, Any]:
        return {"spaces": [{"name": r["name"], "nodes": r["nodes"], "edges": r["edges"], "semantic": r["semantic"],
                            "retrievals": r["steps"], "first": _date(r["first_ts"]), "last": _date(r["last_ts"])}
                           for r in self.memory.spaces()]}

    @tool("The strongest hubs of a space (as `hela inspect hubs`): memories at the centre of many strong "
          "associations, with their clusters.", read_only=True)
    def hubs(self, space: Space, top: Annotated[int, Field(ge=1, le=200)] = 10) -> dict[str, Any]:
        from hela_cli.maintenance.inspection import hubs

        sp = self.memory.space(space)
        return {"space": space, "hubs": hubs(self.memory.store, sp, self.memory.config, top=top)}

    @tool("List memories of a space, newest first, with filters (as `hela memories`): id, source id, date, "
          "speaker, session, text.", read_only=True)
    def memories(self, space: Space,
                 speaker: Annotated[str | None, Field(description="Only this speaker's memories.")] = None,
                 session: Annotated[str | None, Field(description="Only this session.")] = None,
                 since: Annotated[str | None, Field(description="Only at or after this date.")] = None,
                 until: Annotated[str | None, Field(description="Only at or before this date.")] = None,
                 contains: Annotated[str | None, Field(description="Only texts holding this (any case).")] = None,
                 limit: Annotated[int, Field(ge=1, le=1000, description="At most this many (default 50).")] = 50
                 ) -> dict[str, Any]:
        rows = self.memory.memories(space, speaker=speaker, session=session, since=since, until=until,
                                    contains=contains, limit=limit)
        return {"space": space, "memories": [{k: v for k, v in r.items() if k != "timestamp"} for r in rows]}

    @tool("Replace a memory's text (as `hela edit`): it keeps its id, time, session, speaker and learned links; "
          "the previous text goes to its history. Name it by id or source_id.", writes="update")
    def update(self, space: Space, text: Annotated[str, Field(min_length=1, description="The new text.")],
               id: Annotated[int | None, Field(description="The memory id.")] = None,
               source_id: Annotated[str | None, Field(description="Or its source id.")] = None) -> dict[str, Any]:
        if (id is None) == (source_id is None):
            raise InputError("update: give the memory's id or its source_id")
        rep = self.memory.edit(space, id, text, source_id=source_id)
        return {"space": space, "id": rep["id"], "source_id": rep["source_id"], "text": rep["text"],
                "previous": rep["previous"], "semantic_deleted": rep["semantic"]}

    @tool("Delete memories completely (as `hela delete`): by ids or source_ids, or by filter (session, speaker, "
          "before, contains), which needs confirm=true. Also removes the asks that retrieved them and the "
          "semantic records citing them.", writes="delete", destructive=True)
    def delete(self, space: Space,
               ids: Annotated[list[int] | None, Field(description="Memory ids.")] = None,
               source_ids: Annotated[list[str] | None, Field(description="Source ids.")] = None,
               session: Annotated[str | None, Field(description="Filter: this session.")] = None,
               speaker: Annotated[str | None, Field(description="Filter: this speaker.")] = None,
               before: Annotated[str | None, Field(description="Filter: before this date.")] = None,
               contains: Annotated[str | None, Field(description="Filter: texts holding this.")] = None,
               confirm: Annotated[bool, Field(description="Required for a delete by filter.")] = False
               ) -> dict[str, Any]:
        rep = self.memory.delete(space, ids or [], source_ids=source_ids or [], session=session, speaker=speaker,
                                 before=before, contains=contains, confirm=confirm)
        scrub = rep.get("scrub")
        return {"space": space, "deleted": rep["deleted"], "semantic_deleted": rep["semantic"],
                "asks_deleted": rep["asks"], "bytes_verified": None if scrub is None else scrub["verified"]}

    @staticmethod
    def _now(value: str | None) -> float | None:
        if value is None:
            return None
        from hela_cli.text.dates import parse_time

        return parse_time(value, "now")[0]


def request_grant(ctx: Any) -> Any:
    """What the calling client's token allows (:class:`hela_cli.mcp_server.access.Grant`): read from the HTTP
    request that carried this call (the SDK's auth middleware put the verified token there). No HTTP request
    (stdio, a direct call): every space. An HTTP request without a verified token: nothing."""
    from hela_cli.mcp_server.access import ALL, NOTHING, Grant

    try:
        request = ctx.request_context.request
    except (AttributeError, ValueError, LookupError):   # no request context: a direct call
        return ALL
    if request is None:
        return ALL
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    token = getattr(user, "access_token", None)
    return (Grant.from_claims(getattr(token, "claims", None)) or NOTHING) if token is not None else NOTHING


def _error_line(e: BaseException) -> str:
    """A failure as the one line the client gets, secrets redacted (a driver's message may quote a connection
    string; an input error may quote the argument)."""
    if isinstance(e, HelaError):
        return redact_secrets(e.message)
    msg = " ".join(str(e).split())   # a lock held too long is the store's StoreLocked (a HelaError)
    return redact_secrets(f"unexpected {e.__class__.__name__}: {msg}")


def build_server(config: Config, **options: Any) -> Any:
    """The SDK server (``mcp.server.mcpserver.MCPServer``) with hela's tools registered; ``options`` go to
    ``MCPServer`` (the HTTP server's ``token_verifier`` and ``auth``, see :mod:`hela_cli.mcp_server.http`)."""
    try:
        import anyio
        from mcp.server.mcpserver import Context, MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import ToolAnnotations
    except ImportError as e:  # pragma: no cover - mcp is a dependency
        raise HelaError(f"the MCP SDK is not installed ({e}); pip install 'mcp>=2'") from None

    from pydantic import ValidationError

    class HelaToolError(ToolError):
        """A hela failure: its message is the CLI's one line, sent as is."""

    class Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as e:  # one line, no SDK prefix: the message the CLI would print
                cause = e.__cause__
                if isinstance(cause, HelaToolError):
                    raise cause from None
                if isinstance(cause, ValidationError):
                    what = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                                     for err in cause.errors())
                    raise HelaToolError(f"{name}: invalid arguments: {what}") from None
                raise HelaToolError(redact_secrets(" ".join(str(e).split()))) from None

    hela = HelaServer(config)
    limiter = anyio.CapacityLimiter(1)  # one call at a time: one connection, one set of models
    background: list[Any] = []  # the lifespan's task group

    async def consolidate_due() -> None:
        for rep in await anyio.to_thread.run_sync(hela.consolidate_due, limiter=limiter):
            if rep.get("error"):
                logger.warning("auto-consolidation of '%s' failed: %s", rep["space"], rep["error"])

    async def call(fn: Callable[..., dict[str, Any]], ctx: Any = None, write: str | None = None,
                   **kwargs: Any) -> dict[str, Any]:
        """``fn(**kwargs)`` in the worker thread, one call at a time, once the caller's token allows it: the
        space (``kwargs["space"]``) in its list, a write (``write``: what the call does) only with write
        access; a read-only token's recall and ask do not learn (hela_cli/mcp_server/access.py)."""
        grant = request_grant(ctx)
        try:
            if "space" in kwargs:
                grant.check_space(kwargs["space"])
            if write is not None:
                grant.check_write(write)
        except HelaError as e:
            raise HelaToolError(_error_line(e)) from None
        if not grant.write and kwargs.get("learn"):
            kwargs["learn"] = False

        def run() -> dict[str, Any]:
            try:
                return fn(**kwargs)
            except Exception as e:  # noqa: BLE001 - every failure is a tool error, never a crash
                raise HelaToolError(_error_line(e)) from None

        try:
            return await anyio.to_thread.run_sync(run, limiter=limiter)
        finally:
            if hela.due and background:  # after the answer: the next call waits for it (one at a time)
                background[0].start_soon(consolidate_due)

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            background.append(tg)
            yield None
            background.clear()

    server = Server("hela", lifespan=lifespan, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING",
                    **options)
    for name in tool_names():
        _register(server, hela, name, call, Context, ToolAnnotations)
    server.hela = hela  # type: ignore[attr-defined]
    return server


def _register(server: Any, hela: HelaServer, name: str, call: Callable[..., Any], context_type: Any,
              annotations_type: Any) -> None:
    """Serve the method ``name`` of ``hela`` as a tool: the SDK reads its schema from the method's own
    signature (plus the request context), and every call goes through ``call`` (the token's spaces and
    scope; one call at a time in the worker thread)."""
    import inspect
    import typing

    method = getattr(hela, name)
    spec: ToolSpec = method.hela_tool
    hints = typing.get_type_hints(method, include_extras=True)
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in inspect.signature(method).parameters.values()]
    params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=context_type))

    async def handler(ctx: Any = None, **arguments: Any) -> dict[str, Any]:
        if spec.samples:
            hela.attach(ctx)  # models.chat: client answers (and consolidates) through this client's sampling
        out = await call(method, ctx, spec.action(arguments), **arguments)
        if spec.lists_spaces:   # a token sees only its own spaces
            grant = request_grant(ctx)
            out = {**out, "spaces": [s for s in out["spaces"] if grant.allows(s["name"])]}
        return out

    handler.__name__ = handler.__qualname__ = name
    handler.__doc__ = method.__doc__
    handler.__signature__ = inspect.Signature(params, return_annotation=dict[str, Any])  # type: ignore[attr-defined]
    handler.__annotations__ = {**{p.name: p.annotation for p in params}, "return": dict[str, Any]}
    notes = annotations_type(readOnlyHint=True) if spec.read_only else \
        annotations_type(destructiveHint=True) if spec.destructive else None
    server.add_tool(handler, name=name, description=spec.description, annotations=notes)


def serve(config: Config) -> None:
    """Run the server on stdin/stdout until the client closes it (or Ctrl-C: exit 130 at once; the SDK's
    stdin reader thread would otherwise keep the process alive until the next input line)."""
    import os
    import signal
    import sys

    server = build_server(config)

    def interrupted(signum: int, frame: Any) -> None:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
        os._exit(130)  # like a crash for the database: WAL keeps it whole

    signal.signal(signal.SIGINT, interrupted)
    try:
        server.run("stdio")
    finally:
        server.hela.close()
