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

    # ------------------------------------------------------------------ tools (plain, synchronous)
    def remember(self, space: str, turns: list[TurnIn], redact: bool | None = None) -> dict[str, Any]:
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

    def recall(self, space: str, query: str, k: int | None = None, learn: bool = True, explain: bool = False,
               now: str | None = None, speaker: str | None = None, session: str | None = None,
               since: str | None = None, until: str | None = None, current_only: bool = False,
               as_of: str | None = None) -> dict[str, Any]:
        res = self.memory.retrieve(query, space, k=k, now=self._now(now), learn=learn, speaker=speaker,
                                   session=session, since=since, until=until, current_only=current_only,
                                   as_of=as_of)
        out: dict[str, Any] = {"space": space, "query": query, "recall_id": res.recall_id, "now": _date(res.now),
                               "memories": [_memory_out(m, explain) for m in res.memories],
                               "semantic": [_semantic_out(r) for r in res.semantic]}
        if explain:
            out["query_keywords"] = res.query_keywords
            out["timings_ms"] = {k: round(v, 2) for k, v in res.timings_ms.items()}
        return out

    def memories(self, space: str, speaker: str | None = None, session: str | None = None,
                 since: str | None = None, until: str | None = None, contains: str | None = None,
                 limit: int | None = 50) -> dict[str, Any]:
        rows = self.memory.memories(space, speaker=speaker, session=session, since=since, until=until,
                                    contains=contains, limit=limit)
        return {"space": space, "memories": [{k: v for k, v in r.items() if k != "timestamp"} for r in rows]}

    def update(self, space: str, text: str, id: int | None = None, source_id: str | None = None) -> dict[str, Any]:
        if (id is None) == (source_id is None):
            raise InputError("update: give the memory's id or its source_id")
        rep = self.memory.edit(space, id, text, source_id=source_id)
        return {"space": space, "id": rep["id"], "source_id": rep["source_id"], "text": rep["text"],
                "previous": rep["previous"], "semantic_deleted": rep["semantic"]}

    def delete(self, space: str, ids: list[int] | None = None, source_ids: list[str] | None = None,
               session: str | None = None, speaker: str | None = None, before: str | None = None,
               contains: str | None = None, confirm: bool = False) -> dict[str, Any]:
        rep = self.memory.delete(space, ids or [], source_ids=source_ids or [], session=session, speaker=speaker,
                                 before=before, contains=contains, confirm=confirm)
        scrub = rep.get("scrub")
        return {"space": space, "deleted": rep["deleted"], "semantic_deleted": rep["semantic"],
                "asks_deleted": rep["asks"], "bytes_verified": None if scrub is None else scrub["verified"]}

    def ask(self, space: str, question: str, learn: bool = True, now: str | None = None) -> dict[str, Any]:
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

    def reinforce(self, space: str, used: list[int], recall_id: int | None = None) -> dict[str, Any]:
        """Feedback on a recall: the memories of it the agent used (``Memory.reinforce``)."""
        return self.memory.reinforce(space, used, recall_id=recall_id)

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

    def forget(self, space: str, apply: bool = False) -> dict[str, Any]:
        rep = self.memory.forget(space, apply=apply)
        cands = [{"id": c["id"], "source_id": c["source_id"], "date": _date(c["timestamp"]),
                  "speaker": c["speaker"], "text": c["text"], "total_weight": c["total_weight"],
                  "idle_days": c["idle_days"], "access_count": c["access_count"]}
                 for c in rep["candidates"] if c["candidate"]]
        return {"space": space, "applied": rep["applied"], "nodes": rep["nodes"], "candidates": cands,
                "removed": rep["removed"]}

    def spaces(self) -> dict[str, Any]:
        return {"spaces": [{"name": r["name"], "nodes": r["nodes"], "edges": r["edges"], "semantic": r["semantic"],
                            "retrievals": r["steps"], "first": _date(r["first_ts"]), "last": _date(r["last_ts"])}
                           for r in self.memory.spaces()]}

    def hubs(self, space: str, top: int = 10) -> dict[str, Any]:
        from hela_cli.maintenance.inspection import hubs

        sp = self.memory.space(space)
        return {"space": space, "hubs": hubs(self.memory.store, sp, self.memory.config, top=top)}

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

    # the SDK resolves the `ctx: Context` annotation of the ask tool in this module's globals (imported here,
    # not at the top: the library imports this module without the SDK's CLI stack)
    globals()["Context"] = Context
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
    read_only = ToolAnnotations(readOnlyHint=True)

    @server.tool(description="Remember one or more conversation turns (as `hela add`): each becomes a memory "
                             "linked to the previous turn of its session. Returns the new memory ids; turns "
                             "whose id is already stored are skipped.")
    async def remember(space: Space, turns: Annotated[list[TurnIn], Field(min_length=1, description="Turns in "
                                                                          "order.")],
                       redact: Annotated[bool | None, Field(description="Secrets (API keys, tokens, "
                                                            "passwords) are replaced with [REDACTED:kind] before "
                                                            "storing: on by default; false is honoured only where "
                                                            "the server allows it (ingest.redact_assistant: "
                                                            "false).")] = None,
                       ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        return await call(hela.remember, ctx, "remember", space=space, turns=turns, redact=redact)

    @server.tool(description="Memories relevant to a query (retrieval only, no chat model): id, source id, "
                             "date, speaker, text, score and path (base = similarity, hebbian = reached through "
                             "learnt associations, successor = the later memory that replaced a recalled one). "
                             "A memory a later one replaced has superseded_by (that memory's id, listed above "
                             "it), invalid_at, supersession_status (superseded | possible) and mark; do not "
                             "treat it as current. Retrieval learns from use unless learn is false.")
    async def recall(space: Space, query: Annotated[str, Field(min_length=1, description="What to look for.")],
                     k: Annotated[int | None, Field(ge=1, le=200, description="How many memories by base "
                                                    "activation (default 10; up to 3 more by association).")] = None,
                     learn: Annotated[bool, Field(description="Apply the Hebbian update (default true).")] = True,
                     explain: Annotated[bool, Field(description="Add the score trace of each memory.")] = False,
                     now: Annotated[str | None, Field(description="The present for time decay (default: the "
                                                     "newest memory).")] = None,
                     speaker: Annotated[str | None, Field(description="Only this speaker's memories.")] = None,
                     session: Annotated[str | None, Field(description="Only this session's memories.")] = None,
                     since: Annotated[str | None, Field(description="Only memories at or after this date.")] = None,
                     until: Annotated[str | None, Field(description="Only memories at or before this date.")] = None,
                     current_only: Annotated[bool, Field(description="Leave out memories a later one superseded "
                                                         "(possibly superseded ones stay, marked).")] = False,
                     as_of: Annotated[str | None, Field(description="Recall as of this date: later memories and "
                                                        "later supersessions are ignored.")] = None,
                     ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        return await call(hela.recall, ctx, space=space, query=query, k=k, learn=learn, explain=explain, now=now,
                          speaker=speaker, session=session, since=since, until=until, current_only=current_only,
                          as_of=as_of)

    @server.tool(description="Answer a question from memory with the local chat model; returns the answer and "
                             "the memories it came from.")
    async def ask(space: Space, question: Annotated[str, Field(min_length=1)],
                  learn: Annotated[bool, Field(description="Apply the Hebbian update (default true).")] = True,
                  now: Annotated[str | None, Field(description="The present for time decay.")] = None,
                  ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        hela.attach(ctx)  # models.chat: client answers (and consolidates) through this client's sampling
        return await call(hela.ask, ctx, space=space, question=question, learn=learn, now=now)

    @server.tool(description="Feedback on a recall or ask: the ids of its memories you actually used in your "
                             "reply. hela strengthens the associations between them and the query's best matches, "
                             "so later related queries bring them in. Once per recall; ids must come from that "
                             "recall.")
    async def reinforce(space: Space, used: Annotated[list[int], Field(description="Memory ids from that "
                                                                       "recall's result that you used.")],
                        recall_id: Annotated[int | None, Field(description="The recall_id of the recall or ask "
                                                               "(default: the space's latest).")] = None,
                        ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        return await call(hela.reinforce, ctx, "reinforce", space=space, used=used, recall_id=recall_id)

    @server.tool(description="Forgetting: list the memories that are weak, idle and never used (dry run), or "
                             "remove them with apply=true.")
    async def forget(space: Space, apply: Annotated[bool, Field(description="Remove the candidates "
                                                                "(default false: dry run).")] = False,
                     ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        return await call(hela.forget, ctx, "forget with apply" if apply else None, space=space, apply=apply)

    @server.tool(description="The memory spaces with their memory, edge and semantic-record counts.",
                 annotations=read_only)
    async def spaces(ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        grant = request_grant(ctx)   # a token sees only its own spaces
        out = await call(hela.spaces, ctx)
        return {"spaces": [s for s in out["spaces"] if grant.allows(s["name"])]}

    @server.tool(description="The strongest hubs of a space (as `hela inspect hubs`): memories at the centre "
                             "of many strong associations, with their clusters.", annotations=read_only)
    async def hubs(space: Space, top: Annotated[int, Field(ge=1, le=200)] = 10,
                   ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        return await call(hela.hubs, ctx, space=space, top=top)

    @server.tool(description="List memories of a space, newest first, with filters (as `hela memories`): id, "
                             "source id, date, speaker, session, text.", annotations=read_only)
    async def memories(space: Space,
                       speaker: Annotated[str | None, Field(description="Only this speaker's memories.")] = None,
                       session: Annotated[str | None, Field(description="Only this session.")] = None,
                       since: Annotated[str | None, Field(description="Only at or after this date.")] = None,
                       until: Annotated[str | None, Field(description="Only at or before this date.")] = None,
                       contains: Annotated[str | None, Field(description="Only texts holding this (any case)."
                                                             )] = None,
                       limit: Annotated[int, Field(ge=1, le=1000, description="At most this many (default 50)."
                                                   )] = 50,
                       ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        return await call(hela.memories, ctx, space=space, speaker=speaker, session=session, since=since, until=until,
                          contains=contains, limit=limit)

    @server.tool(description="Replace a memory's text (as `hela edit`): it keeps its id, time, session, speaker "
                             "and learned links; the previous text goes to its history. Name it by id or "
                             "source_id.")
    async def update(space: Space, text: Annotated[str, Field(min_length=1, description="The new text.")],
                     id: Annotated[int | None, Field(description="The memory id.")] = None,
                     source_id: Annotated[str | None, Field(description="Or its source id.")] = None,
                     ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        return await call(hela.update, ctx, "update", space=space, text=text, id=id, source_id=source_id)

    @server.tool(description="Delete memories completely (as `hela delete`): by ids or source_ids, or by filter "
                             "(session, speaker, before, contains), which needs confirm=true. Also removes the "
                             "asks that retrieved them and the semantic records citing them.",
                 annotations=ToolAnnotations(destructiveHint=True))
    async def delete(space: Space,
                     ids: Annotated[list[int] | None, Field(description="Memory ids.")] = None,
                     source_ids: Annotated[list[str] | None, Field(description="Source ids.")] = None,
                     session: Annotated[str | None, Field(description="Filter: this session.")] = None,
                     speaker: Annotated[str | None, Field(description="Filter: this speaker.")] = None,
                     before: Annotated[str | None, Field(description="Filter: before this date.")] = None,
                     contains: Annotated[str | None, Field(description="Filter: texts holding this.")] = None,
                     confirm: Annotated[bool, Field(description="Required for a delete by filter.")] = False,
                     ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        return await call(hela.delete, ctx, "delete", space=space, ids=ids, source_ids=source_ids, session=session,
                          speaker=speaker, before=before, contains=contains, confirm=confirm)

    server.hela = hela  # type: ignore[attr-defined]
    server.hela_limiter = limiter  # type: ignore[attr-defined]  # the hooks' fast path runs under it too
    return server


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
