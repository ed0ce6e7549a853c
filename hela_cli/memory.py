"""``Memory``: the library facade. One store, lazily loaded models, the operations the CLI exposes.

    from hela_cli.memory import Memory
    from hela_cli.config import load_config

    mem = Memory(load_config(overrides={"db": "my.db"}))
    mem.ingest(["chat.jsonl"], space="alice")
    result = mem.ask("Where does Alice work?", space="alice")
    print(result["answer"])
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

from hela_cli.text.private import strip_private
from hela_cli.config import Config
from hela_cli.models.endpoints import endpoint_chat, endpoint_embedder, is_endpoint
from hela_cli.models.routes import budget_row, refusal, route
from hela_cli.errors import HelaError, InputError, ModelError, StoreError
from hela_cli.models import ChatModel, Embedder, LlamaChat, LlamaEmbedder, resolve_model
from hela_cli.paths import model_dir
from hela_cli.paths import default_db_path
from hela_cli.mechanics.request import RecallRequest
from hela_cli.mechanics.retrieval import Retrieval, learn_from_retrieval, retrieve
from hela_cli.store import Space, Store
from hela_cli.text.redact import redact as redact_secrets   # `redact` names the add/ingest argument

#: the space a command without ``--space`` uses when the database has no space, or several
DEFAULT_SPACE = "default"


class Memory:
    def __init__(self, config: Config, store: Store | None = None, embedder: Embedder | None = None,
                 chat: ChatModel | None = None, store_progress: Callable[[str], None] | None = None):
        """``store_progress``: where the database reports long steps when it is opened here (a migration of
        an existing file, a first index build); None: silent (the CLI passes a stderr writer)."""
        self.config = config
        self._store = store  # opened on first use: bad input or a model fault never creates/touches it
        self._store_progress = store_progress
        self._embedder = embedder
        self._chat = chat
        self._tokenizer: Any = None
        self._decay_recorded = False

    @property
    def store(self) -> Store:
        """The database, opened (and created if missing) on first use."""
        return self._open_store(must_exist=False)

    def _open_store(self, must_exist: bool) -> Store:
        """``must_exist``: reads (ask, consolidate, forget) must not create an empty database."""
        if self._store is None:
            r = self.config.retrieval
            self._store = Store.open(self.config.db, must_exist=must_exist, vector_cache=r.vector_cache,
                                     sign_index_min=r.sign_index_min, sign_rescore=r.sign_rescore,
                                     vector_cache_auto=r.vector_cache_auto, progress=self._store_progress)
        if not self._decay_recorded:   # spaces older than migration 0016: this configuration's decay (issue 41)
            self._decay_recorded = True
            self._store.record_decay(self.config.hebbian.decay)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---------------------------------------------------------------- models (lazy)
    @property
    def model_dir(self) -> Path:
        return model_dir(self.config.models.dir)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None and is_endpoint(self.config.models.embedder):
            self._embedder = endpoint_embedder(self.config.models)
        if self._embedder is None:
            path, mid = resolve_model(self.config.models.embedder, self.model_dir, "embedder",
                                      self.config.models.search_paths)
            self._embedder = LlamaEmbedder(path, mid, n_ctx=self.config.models.embed_ctx,
                                           n_threads=self.config.models.n_threads)
        return self._embedder

    @property
    def loaded_embedder(self) -> Embedder | None:
        """The embedder if this Memory has one already (given or loaded), else None: nothing is loaded."""
        return self._embedder

    @property
    def chat(self) -> ChatModel:
        if self._chat is None and not route(self.config.models.chat).in_process:
            if route(self.config.models.chat).kind == "agent":   # the coding agent's CLI (models/agent.py)
                from hela_cli.models.agent import agent_chat

                self._chat = agent_chat(self.config.models, self.config.db or str(default_db_path()))
            else:
                self._chat = endpoint_chat(self.config.models)
        if self._chat is None:
            path, mid = resolve_model(self.config.models.chat, self.model_dir, "chat",
                                      self.config.models.search_paths)
            self._chat = LlamaChat(path, mid, n_ctx=self.config.models.chat_ctx,
                                   n_threads=self.config.models.n_threads,
                                   flash_attn=self.config.models.chat_flash_attn)
        return self._chat

    def count_tokens(self, text: str) -> int:
        """Tokens as the chat model counts them (its vocabulary only is loaded when no chat is needed)."""
        if self._chat is not None or not route(self.config.models.chat).in_process:
            return self.chat.count_tokens(text)
        if self._tokenizer is None:  # a cached copy of the vocabulary; llama.cpp's only for other tokenizers
            from hela_cli.models import VocabTokenizer
            from hela_cli.models.tokencount import bpe_token_counter

            path, _ = resolve_model(self.config.models.chat, self.model_dir, "chat",
                                    self.config.models.search_paths)
            self._tokenizer = bpe_token_counter(path) or VocabTokenizer(path)
        return self._tokenizer.count_tokens(text)

    def _context_tokens_if_chat(self, context: str) -> int | None:
        """Without an answer the chat model only counts the context's tokens: when no chat model can be
        found (not downloaded, a path that does not exist) the count is None rather than a refusal, since
        retrieval needs none. A chat model that is there but unreadable is still an error."""
        if self._chat is None and not route(self.config.models.chat).in_process:
            try:
                return self.count_tokens(context)
            except ModelError:  # a server down, no client model: retrieval alone needs none
                return None
        if self._chat is None and self._tokenizer is None:
            try:
                resolve_model(self.config.models.chat, self.model_dir, "chat", self.config.models.search_paths)
            except ModelError:
                return None
        return self.count_tokens(context)

    # ---------------------------------------------------------------- operations
    def ingest(self, paths: Sequence[str | Path], fmt: str = "auto", space: str | None = None,
               progress: Callable[[int, int], None] | None = None, *, redact: bool | None = None) -> dict[str, Any]:
        """Ingest transcript files (a directory: the agent session files under it); ``redact`` replaces secrets
        with ``[REDACTED:kind]`` before anything is embedded or stored: True for every file, False for none, None
        (default) as configured: AI-assistant transcripts (``ingest.redact_assistant``, on) and the other
        formats by ``ingest.redact`` (off)."""
        from hela_cli.ingest import ingest_conversations, parse_all  # parsers: not needed to ask

        convs = parse_all(paths, fmt, self.config.ingest.tool_output_chars, self.config.ingest.private_tag)  # everything validated before any write
        if not any(c.turns for c in convs):
            raise HelaError(f"{', '.join(map(str, paths))}: no turns to ingest")
        embedder = self.embedder  # a model fault is reported before the database is touched
        return ingest_conversations(self.store, embedder, convs, self._redacting(redact), space, progress)

    def reembed(self, space: str | None = None, progress: Callable[[int, int], None] | None = None
                ) -> dict[str, Any]:
        """Re-embed the database with the configured embedder (``models.embedder``) and bind it to it; see
        :mod:`hela_cli.maintenance.reembed` (resumable, swapped in one transaction). The binding covers every space, so
        every space is re-embedded: ``space``, when given, must exist and be the database's only space."""
        from hela_cli.maintenance.reembed import reembed

        store = self._open_store(must_exist=True)
        if space is not None:
            store.require_space(space)
            others = sorted(r["name"] for r in store.spaces() if r["name"] != space)
            if others:
                raise StoreError(f"{store.path}: the embedder binding covers the whole database, and it holds "
                                 f"{len(others)} other space(s) ({', '.join(others[:5])}); re-embed them all "
                                 f"(omit --space)")
        embedder = self.embedder  # a model fault is reported before the database is touched
        return reembed(store, embedder, self.config, progress)

    def add(self, space: str, text: str, *, speaker: str | None = None, time: Any = None,
            session: str | None = None, source_id: str | None = None, role: str | None = None,
            redact: bool | None = None, supersedes: int | Sequence[int] | None = None) -> int:
        """Remember one turn now (``hela add``); returns its node id.

        The turn is stored exactly as ingest stores one (embedding of the turn with its preceding turn
        of the session, keywords, keyword postings) and linked to the newest earlier turn of its session.

        * ``speaker``: who said it (default ``role``, else ``"user"``).
        * ``time``: when (a date string, epoch seconds or a ``datetime``; no zone means UTC); default the
          wall clock now. The space's "now" for retrieval stays its newest memory.
        * ``session``: the session id; without one the turn joins the session of the space's newest turn
          when it is at most :data:`hela_cli.ingest.SESSION_GAP_HOURS` hours from it, else starts a new one.
        * ``source_id``: makes the write idempotent: if the space already holds a turn with this id,
          nothing is added and that turn's id is returned. Without it, the same text twice is two memories.
        * ``redact``: replace secrets with ``[REDACTED:kind]`` before the turn is embedded or stored
          (default ``ingest.redact``; :func:`hela_cli.text.redact.redact`).

        * ``supersedes``: the id(s) of earlier memories of the space this one replaces (a fact that changed:
          :meth:`supersede`); written in the same transaction as the turn.

        The space is created if needed. Raises :class:`~hela_cli.errors.InputError` for bad input (nothing
        written).
        """
        turn = {"text": text, "speaker": speaker, "role": role, "time": time, "session": session,
                "id": source_id}
        marks = None if supersedes is None else [supersedes]
        return self.add_batch(space, [turn], redact=redact, supersedes=marks)["ids"][0]

    def supersede(self, old: int, new: int, *, space: str | None = None, undo: bool = False,
                  detector: str = "explicit", confidence: float = 1.0, status: str = "superseded",
                  invalid_at: float | None = None) -> dict[str, Any]:
        """Mark memory ``old`` as superseded by the later memory ``new`` of the same space (a fact that
        changed: ``hela supersede``), or with ``undo`` remove that mark. ``space`` defaults to the one space
        holding both. ``invalid_at`` (from when the old one no longer holds) defaults to the new memory's
        time; ``status`` ``"possible"`` marks without asserting. Nothing is deleted; recall brings the
        successor with the old memory and marks it (docs/retrieval.md, "Facts that change").

        Returns ``{"space", "old", "new", "undone", "mark"}`` (``mark``: the stored row, None after an undo;
        ``undone``: rows removed). Raises :class:`~hela_cli.errors.InputError`, writing nothing, for an
        unknown id, memories of two spaces, ``old`` not earlier than ``new``, or an undo of no mark."""
        for v in (old, new):
            if not isinstance(v, int) or isinstance(v, bool):
                raise InputError(f"memory ids must be integers, not {v!r}")
        if space is None:
            space = self.space_of([old, new])
            if space is None:
                found = self._open_store(must_exist=True).node_space_names({old, new})
                missing = [i for i in (old, new) if i not in found]
                if missing:
                    raise InputError(f"no memory {missing[0]}")
                raise InputError(f"memories {old} and {new} are in different spaces "
                                 f"('{found[old]}', '{found[new]}'): a memory supersedes one of its own space")
        sp = self.space(space)
        store = self.store
        if undo:
            store.resolve_nodes(sp.id, sp.name, [old, new])
            n = store.unmark_superseded(sp.id, old, new)
            if not n:
                raise InputError(f"memory {old} is not marked as superseded by {new}")
            return {"space": space, "old": old, "new": new, "undone": n, "mark": None}
        row = store.mark_superseded(sp.id, old, new, invalid_at=invalid_at, detector=detector,
                                    confidence=confidence, status=status)
        return {"space": space, "old": old, "new": new, "undone": 0, "mark": row}

    def add_many(self, space: str, turns: Sequence[Any], *, redact: bool | None = None) -> list[int]:
        """Remember several turns in order, all or nothing (one write transaction); returns one node id per
        turn (for a duplicate source id, the id of the turn already stored). A turn is a mapping with
        ``text`` (or ``content``) and optional ``speaker`` (or ``role``), ``time``, ``session``, ``id``
        (or ``source_id``), with the meaning they have in :meth:`add`."""
        return self.add_batch(space, turns, redact=redact)["ids"]

    def add_batch(self, space: str, turns: Sequence[Any], *, redact: bool | None = None,
                  supersedes: Sequence[Any] | None = None) -> dict[str, Any]:
        """:meth:`add_many` with the full report: ``{"space", "added": [new ids], "skipped": [{"id",
        "source_id"}], "ids": [id per turn], "supersessions": [{"old", "new", "status", "detector",
        "confidence"}] (automatic detection, ``supersession.detect``), "seconds"}``. ``turns`` are mappings (validated here, an error
        names ``turn N``) or :class:`~hela_cli.formats.Turn` objects from
        :func:`hela_cli.ingest.turn_from_mapping`. ``supersedes``: per turn, None or the id(s) of earlier
        memories of the space that turn replaces (:meth:`supersede`), marked in the same transaction (a bad
        id writes nothing)."""
        if supersedes is not None and any(x is not None for x in supersedes):
            return self._add_superseding(space, turns, redact, supersedes)
        from hela_cli.formats import Turn
        from hela_cli.ingest import add_turns, turn_from_mapping

        if isinstance(turns, (str, bytes)) or not isinstance(turns, Sequence):
            raise HelaError("turns must be a list of turns", 2)
        checked = [t if isinstance(t, Turn) else turn_from_mapping(t, f"turn {i + 1}") for i, t in enumerate(turns)]
        if not checked:
            raise HelaError("no turns to add", 2)
        Store.check_space_name(space)
        embedder = self.embedder  # a model fault is reported before the database is touched
        return add_turns(self.store, embedder, space, checked, self._redacting(redact))

    def judge(self, space: str, *, max_changes: int | None = None, max_hubs: int | None = None,
              dry_run: bool = False) -> dict[str, Any]:
        """The deferred, batched model work of ``space`` (:mod:`hela_cli.mechanics.judge`): the hubs to distil
        and the change candidates the rules left undecided, in ONE call of the chat model (an ``agent:``
        route, an ``openai:`` endpoint or the MCP client's model; an in-process GGUF is refused, and so is an
        agent route whose budget for today is spent: :class:`~hela_cli.errors.ModelError`). At most
        ``max_changes`` pairs (default :data:`~hela_cli.mechanics.judge.MAX_CHANGES`) and ``max_hubs`` hubs
        (default ``consolidation.max_hubs_per_run``; 0: changes only). ``dry_run``: what would be asked, no
        model, nothing written (``items``: each hub with its cluster, each pair with both texts).

        Returns ``{"space", "model", "calls", "hubs", "changes", "dropped", ...counts, "items", "usage"}``:
        ``calls`` 0 when nothing earned a call; ``items`` what became of each hub and pair (verdict, reason,
        status: :func:`~hela_cli.mechanics.judge.apply_batch`); ``usage`` the tokens the model reported for
        the call (``{}`` when it reports none). A model fault raises :class:`~hela_cli.errors.ModelError`."""
        from hela_cli.mechanics.judge import MAX_CHANGES, batch_capable, pending, run_batch

        for name, value in (("max_changes", max_changes), ("max_hubs", max_hubs)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise InputError(f"{name} must be a number of items, 0 or more")
        cfg = self.config
        chat = cfg.models.chat.strip()
        if not dry_run:
            if not batch_capable(cfg):
                raise ModelError(f"models.chat is '{chat}': the batched judge needs an agent: route, an openai: "
                                 f"endpoint or the MCP client's model (an in-process GGUF is too small)")
            refused = refusal(cfg.models)
            if refused is not None:
                from hela_cli.models.agent import AgentBudgetSpent

                raise AgentBudgetSpent(refused[0], first=refused[1])
        store = self._open_store(must_exist=True)
        sp = self.space(space)
        work = pending(store, sp, cfg, max_hubs=max_hubs, changes=None if max_changes != 0 else False,
                       max_changes=MAX_CHANGES if max_changes is None else max_changes)
        rep: dict[str, Any] = {"space": space, "model": chat, "dry_run": dry_run, "calls": 0,
                               "hubs": len(work.hubs), "changes": len(work.changes), "dropped": False, "usage": {}}
        if dry_run or work.empty:
            rep["items"] = [{"hub": p.node_id, "cluster": list(p.cluster), "action": p.action} for p in work.hubs] + [
                {"pair": [r["old_id"], r["new_id"]], "earlier": work.turns[r["old_id"]].get("text"),
                 "later": work.turns[r["new_id"]].get("text"), "detector": r.get("detector")} for r in work.changes]
            return rep
        items: list[dict[str, Any]] = []
        rep.update(run_batch(store, sp, cfg, self.chat, self.embedder, work, items))
        last = getattr(self.chat, "last", None) or {}
        rep["usage"] = {k: last[k] for k in ("input_tokens", "output_tokens", "estimated") if k in last}
        rep["items"] = items
        budget = budget_row(cfg.models)   # what today's budget has left after the call
        if budget is not None:
            rep["budget"] = budget
        return rep

    def _add_superseding(self, space: str, turns: Sequence[Any], redact: bool | None,
                         supersedes: Sequence[Any]) -> dict[str, Any]:
        """:meth:`add_batch` with explicit supersession marks, all in one write transaction."""
        if isinstance(supersedes, (str, bytes)) or len(supersedes) != len(turns):
            raise InputError("supersedes: give one entry (None, an id or a list of ids) per turn")
        olds: list[list[int]] = []
        for i, x in enumerate(supersedes):
            ids = [] if x is None else [x] if isinstance(x, int) and not isinstance(x, bool) else x
            if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence) or \
                    not all(isinstance(v, int) and not isinstance(v, bool) for v in ids):
                raise InputError(f"turn {i + 1}: supersedes must be a memory id or a list of memory ids")
            olds.append(list(dict.fromkeys(ids)))
        sp = self.space(space)   # the memories replaced are in this space: it exists
        store = self.store
        store.resolve_nodes(sp.id, sp.name, [v for ids in olds for v in ids])   # an unknown id: nothing written
        self.embedder  # noqa: B018 - a model fault is reported before the transaction
        with store.transaction(space=sp.id):
            rep = self.add_batch(space, turns, redact=redact)
            for nid, ids in zip(rep["ids"], olds):
                for old in ids:
                    store.mark_superseded(sp.id, old, nid, detector="explicit")
        return rep

    def _redacting(self, redact: bool | None) -> Config:
        """The configuration with ``ingest.redact`` set to ``redact`` (None: as configured; False: assistant
        transcripts are not redacted either)."""
        if redact is None:
            return self.config
        if redact:
            return self.config.replace(**{"ingest.redact": True})
        return self.config.replace(**{"ingest.redact": False, "ingest.redact_assistant": False})

    def _check_embedder(self) -> None:
        info = self.store.embedder_info()
        if info is not None:
            self.store.bind_embedder(self.embedder.model_id, self.embedder.dim)

    def retrieve(self, question: str, space: str, request: RecallRequest | None = None, *, now: float | None = None,
                 learn: bool | None = None, log: bool = True, **options: Any) -> Retrieval:
        """Dual-path retrieval (:func:`hela_cli.mechanics.retrieval.retrieve`) of ``request`` (a
        :class:`~hela_cli.mechanics.request.RecallRequest`), or of the request its ``options`` make
        (``k``, ``speaker``, ``session``, ``since`` / ``until`` (any date ``hela add --time`` reads),
        ``current_only``, ``as_of``: :meth:`RecallRequest.of <hela_cli.mechanics.request.RecallRequest.of>`).
        Learns from the result (Eq.1) unless ``learn`` (default ``retrieval.learn``) is off. A learning
        retrieval is logged (``log``) in the asks log; its id is ``recall_id``, which :meth:`reinforce` names
        (docs/feedback.md). A read-only one (``learn=False``) writes nothing and has no recall id. Facts that
        change: docs/retrieval.md, "Facts that change". Secrets in the question are redacted first
        (:func:`hela_cli.text.redact.redact`): neither the asks log nor the query vector it keeps holds one."""
        request = _request(request, options)
        if not question.strip():
            raise HelaError("the question is empty")
        question = redact_secrets(strip_private(question, self.config.ingest.private_tag))
        sp = self.space(space)
        learn = self.config.retrieval.learn if learn is None else learn
        res = self._retrieve(sp, question, request, now=now, learn=learn)
        if learn and log and res.memories:
            res.recall_id = self._log(sp.id, question, None, res.memories, res.step, "recall", res.query_vector)
        return res

    def learn_recall(self, space: str, question: str, res: Retrieval, used: list[dict[str, Any]], *,
                     learn: bool = True) -> int | None:
        """Learn from the part of a read-only retrieval (``learn=False``) that was put to use: Eq.1 over
        ``used`` (a subset of ``res.memories``) and one asks-log row, as a learning :meth:`retrieve` does for
        all of its memories. Returns the recall id (None when ``used`` is empty). The prompt hook learns from
        the memories it injected, not from those under its relevance floor. ``learn`` off: the asks-log row
        alone (a recall feedback can name later, :meth:`reinforce`), no Eq.1: the prompt hook's default, which
        learns only from what the agent's reply used (``hooks.learn_injected``, docs/agents.md)."""
        if not used:
            return None
        sp = self.space(space)
        part = Retrieval(memories=used, semantic=res.semantic, query_keywords=res.query_keywords, now=res.now,
                         step=res.step, query_vector=res.query_vector)
        if learn:
            learn_from_retrieval(self.store, sp, part, self.config)
        # the caller's prompt may not be redacted (retrieve redacted only its own copy)
        return self._log(sp.id, redact_secrets(strip_private(question, self.config.ingest.private_tag)), None, used,
                         part.step, "recall", res.query_vector)

    def _log(self, space_id: int, question: str, answer: str | None, memories: list[dict[str, Any]], step: int,
             kind: str, vector: Any = None) -> int | None:
        """One asks-log row (the recall id; None when one of the memories was deleted meanwhile). With
        ``answer.log`` off the row keeps no question or answer text, only the retrieved ids and scores that
        feedback needs. ``question`` comes redacted (:meth:`retrieve`, :meth:`ask` and :meth:`learn_recall` redact
        it first: :func:`hela_cli.text.redact.redact`); the answer is redacted here (it may restate a secret the
        question held)."""
        from hela_cli.mechanics.feedback import retrieval_record

        keep = self.config.answer.log
        return self.store.log_ask(space_id, question if keep else "",
                                  redact_secrets(answer) if keep and answer is not None else None,
                                  [m["id"] for m in memories], step, kind=kind,
                                  retrieval=retrieval_record(memories), vector=vector,
                                  keep_recalls=self.config.answer.keep_recalls)

    def reinforce(self, space: str, used: Sequence[int], *, recall_id: int | None = None) -> dict[str, Any]:
        """Feedback: the memories of a recall (``recall_id``, default the space's most recent recall or
        ask) that the caller used. Applies the feedback rule (:func:`hela_cli.mechanics.dynamics.feedback_pairs`;
        see :mod:`hela_cli.mechanics.feedback`); no model is loaded. A recall takes feedback once. Raises
        :class:`~hela_cli.errors.InputError`, writing nothing, for an unknown recall id, a recall of another
        space, or memories that recall did not return. Returns ``{"space", "recall_id", "used",
        "strengthened", "weakened", "step"}``."""
        from hela_cli.mechanics.feedback import apply_feedback, check_feedback

        if isinstance(used, (str, bytes)) or not isinstance(used, Sequence):
            raise HelaError("used must be a list of memory ids", 2)
        sp = self.space(space)
        row, ids = check_feedback(self.store, sp, used, recall_id)
        rep = apply_feedback(self.store, sp, row["retrieval"], ids, self.config, when=time.time(),
                             recall_id=row["id"])
        return {"space": space, "recall_id": row["id"], **rep}

    def _config(self, k: int | None) -> Config:
        return self.config if k is None else self.config.replace(**{"retrieval.k": k})

    def _retrieve(self, sp: Space, question: str, request: RecallRequest, *, now: float | None,
                  learn: bool | None) -> Retrieval:
        self._check_embedder()
        return retrieve(self.store, sp, self.embedder, question, self.config, now=now, learn=learn, request=request)

    def ask(self, question: str, space: str, request: RecallRequest | None = None, *, now: float | None = None,
            llm: bool = True, learn: bool | None = None, on_text: Callable[[str], None] | None = None,
            **options: Any) -> dict[str, Any]:
        """Retrieve, answer with the chat model using prompt A.2 (:func:`hela_cli.answering.answer.answer`), then
        learn (Eq.1). Nothing else: a due auto-consolidation is the caller's to run, after it has shown the
        answer (:meth:`consolidate_if_due`; it can take a minute on a CPU).

        Learning is applied only once everything else succeeded: a failed ask (a model fault, a
        prompt over the context window) writes nothing. Returns the stable ``hela ask --json`` object
        (``consolidation`` is None: a caller that runs one reports it); ``citations`` are the memories the
        answer rests on (:func:`hela_cli.answering.citations.select_citations`, empty without an answer). Without
        ``llm``, ``context_tokens`` is None when no chat model is found (retrieval alone needs none).
        ``request`` / ``options``: as in :meth:`retrieve`. ``on_text`` gets the answer as it is generated, in pieces that join to the result's ``answer``
        (streaming; see :func:`hela_cli.answering.answer.answer`).
        """
        t0 = time.perf_counter()
        request = _request(request, options)
        learn = self.config.retrieval.learn if learn is None else learn
        if llm:
            self.chat  # noqa: B018 - load (and validate) the chat model before retrieving
        if not question.strip():
            raise HelaError("the question is empty")
        question = redact_secrets(strip_private(question, self.config.ingest.private_tag))   # as in retrieve: nothing logged, embedded or sent to a model holds it
        sp = self.space(space)  # resolved once: retrieval, learning and the log use this space
        cfg = self._config(request.k)
        res = self._retrieve(sp, question, request, now=now, learn=False)
        from hela_cli.answering.answer import answer as generate_answer   # here: a hook's recall needs none of
        from hela_cli.answering.citations import select_citations         # the answering modules (~20 ms of
        from hela_cli.answering.prompts import answer_messages            # its imports)

        messages = answer_messages(question, res.memories, res.semantic)
        context = "\n".join(m["content"] for m in messages)
        tokens = self.count_tokens(context) if llm else self._context_tokens_if_chat(context)
        answer = None
        timings = dict(res.timings_ms)
        if llm:
            t1 = time.perf_counter()
            answer = generate_answer(self.chat, messages, res.memories, cfg.answer, on_text=on_text)
            timings["generate"] = (time.perf_counter() - t1) * 1000
        # a database opened read-only answers and learns nothing (the store is open by now: never opened here,
        # which would create a database a read must not)
        read_only = bool(getattr(self._store, "read_only", False))
        learn = learn and not read_only
        if learn and res.memories:
            learn_from_retrieval(self.store, sp, res, cfg)
            timings["learn"] = res.timings_ms["learn"]
        timings["total"] = (time.perf_counter() - t0) * 1000
        result = {
            "question": question,
            "space": space,
            "answer": answer,
            "citations": select_citations(answer, res.memories, question=question),
            "memories": res.memories,
            "semantic": res.semantic,
            "context": context,
            "context_tokens": tokens,
            "query_keywords": res.query_keywords,
            "now": res.now,
            "step": res.step,
            "recall_id": None,
            "timings_ms": {k: round(v, 2) for k, v in timings.items()},
            "consolidation": None,
        }
        if not read_only and ((learn and res.memories) or (llm and cfg.answer.log)):
            # a learning ask always gets a row: its id is the recall id feedback names (answer.log off keeps no
            # text in it)
            result["recall_id"] = self._log(sp.id, question, answer, res.memories, res.step, "ask", res.query_vector)
        if result["recall_id"] is not None and learn and cfg.answer.cite_feedback:
            used = [c["id"] for c in result["citations"] if c["overlap"] > 0]
            if used:
                result["feedback"] = self.reinforce(space, used, recall_id=result["recall_id"])
        return result

    # ---------------------------------------------------------------- consolidation / forgetting
    def space(self, name: str) -> Space:
        """An existing space (:class:`~hela_cli.errors.StoreError` if the database or the space is
        missing), without creating an empty database as a side effect."""
        return self._open_store(must_exist=True).require_space(name)

    def default_space(self, space: str | None = None) -> str:
        """``space`` if given, else the database's only space when it has exactly one, else ``"default"``
        (what a command without ``--space`` uses; no database file is created to find out)."""
        if space is not None:
            return space   # an empty or bad name is refused by the command with one line
        if not self._database_exists():
            return DEFAULT_SPACE
        return self.store.only_space() or DEFAULT_SPACE

    def _database_exists(self) -> bool:
        from hela_cli.store.target import is_postgres

        if self._store is not None or self.config.db == ":memory:" or is_postgres(self.config.db):
            return True
        return Path(self.config.db or default_db_path()).expanduser().exists()

    def space_of(self, node_ids: Sequence[int]) -> str | None:
        """The one space holding all of ``node_ids``, or None (unknown ids, several spaces, no database):
        commands that name memories by id need no ``--space``."""
        ids = {int(i) for i in node_ids}
        found = self._open_store(must_exist=True).node_space_names(ids)
        names = set(found.values())
        return names.pop() if len(found) == len(ids) and len(names) == 1 else None

    def spaces(self) -> list[dict[str, Any]]:
        """Every space with its counts (``Store.spaces``); an empty list, and no file created, when the
        database does not exist yet."""
        return self.store.spaces() if self._database_exists() else []

    def consolidate(self, space: str, *, dry_run: bool = False, auto: bool = False,
                    max_hubs: int | None = None, progress: Callable[[int, int, Any], None] | None = None) -> dict[str, Any]:
        """Reflective consolidation of a space (see :mod:`hela_cli.mechanics.consolidate`). ``dry_run`` lists hubs
        and clusters without loading a model or writing; models load only if a hub needs distilling.
        ``auto`` (auto-consolidation) does not retry hubs that failed with an unchanged cluster. With an
        ``agent:`` route or an ``openai:`` server as the chat model, the hubs go to it in batches (one call
        per ``consolidation.max_hubs_per_run`` hubs: :func:`hela_cli.mechanics.judge.distill_batch`); an
        in-process GGUF gets prompt A.1 per hub."""
        from hela_cli.mechanics.consolidate import consolidate
        from hela_cli.mechanics.judge import batches_hubs, distill_batch, retries_per_hub

        sp = self.space(space)

        def embedder() -> Embedder:
            self._check_embedder()
            return self.embedder

        def batch(chat: Any, emb: Any, plans: list[Any]) -> tuple[dict[int, dict[str, Any]], int]:
            return distill_batch(self.store, sp, self.config, chat, emb, plans)

        return consolidate(self.store, sp, self.config, embedder=embedder, chat=lambda: self.chat,
                           dry_run=dry_run, retry_failed=not auto, max_hubs=max_hubs, progress=progress,
                           batch=batch if batches_hubs(self.config) else None,
                           per_hub_fallback=retries_per_hub(self.config))

    def consolidate_if_due(self, space: str) -> dict[str, Any] | None:
        """Auto-consolidation, for callers to run after a learning ``ask`` with an answer (``hela ask`` after
        printing it, the MCP server after sending it, ``hela bench``): runs when ``consolidation.auto`` is on
        and ``consolidation.auto_every`` learning steps passed since the last run. Cheap when nothing is due
        or no hub needs distilling (one edge aggregate, no model). Returns a summary, or None if not due;
        an error is reported in the summary instead of being raised."""
        from hela_cli.mechanics.consolidate import needs_auto

        if not needs_auto(self.space(space), self.config):
            return None
        try:
            rep = self.consolidate(space, auto=True, max_hubs=self.config.consolidation.max_hubs_per_run)
        except HelaError as e:
            return {"error": e.message, "seconds": 0.0}
        return {k: v for k, v in rep.items() if k != "hubs"}

    maybe_consolidate = consolidate_if_due  # the earlier name

    def link(self, space: str, *, top_k: int | None = None, weight: float | None = None,
             min_score: float | None = None) -> dict[str, Any]:
        """Ingest links for an existing space, as ingest writes them now: with ``ingest.fixed_links`` the
        conversation links become fixed priors again (:func:`hela_cli.ingest.link_conversation`), and with
        ``ingest.keyword_links`` (or ``top_k``) the cold-start keyword links are added
        (:func:`hela_cli.ingest.link_keywords`). Arguments left None take the configuration's values. No
        model is loaded."""
        import time as _time

        from hela_cli.errors import InputError
        from hela_cli.ingest import link_conversation, link_keywords

        changes = {k: v for k, v in (("ingest.keyword_links", top_k), ("ingest.keyword_link_weight", weight),
                                      ("ingest.keyword_link_min_score", min_score)) if v is not None}
        cfg = self.config.replace(**changes)
        if cfg.ingest.keyword_links <= 0 and not cfg.ingest.fixed_links:
            raise InputError("nothing to link: ingest.fixed_links is off and ingest.keyword_links is 0 (give the "
                             "number of keyword partners per memory with --top-k)")
        sp = self.space(space)
        t0 = _time.perf_counter()
        conv = link_conversation(self.store, space, cfg) if cfg.ingest.fixed_links else 0
        n = link_keywords(self.store, space, cfg)
        return {"space": space, "conversation_links": conv, "links_written": n,
                "nodes": self.store.count_nodes(sp.id), "edges": self.store.count_edges(sp.id),
                "seconds": round(_time.perf_counter() - t0, 3)}

    def backup(self, dest: str | Path, *, force: bool = False) -> dict[str, Any]:
        """A consistent, user-only copy of the whole database file at ``dest`` while other processes may
        write (``VACUUM INTO`` in one read transaction, checked, then renamed into place); ``dest`` must not
        exist unless ``force``. Returns ``{"path", "bytes", "integrity", "counts", "seconds"}``."""
        t0 = time.perf_counter()
        rep = self._open_store(must_exist=True).backup_to(dest, force=force)
        return {**rep, "seconds": round(time.perf_counter() - t0, 3)}

    def import_export(self, path: str | Path, *, space: str | None = None, reembed: bool = False) -> dict[str, Any]:
        """Restore what ``hela export --format json --vectors`` wrote into a new or empty ``space`` (default:
        the exported space's name), all in one transaction; see :mod:`hela_cli.maintenance.importing`. ``reembed``: embed
        the texts again with the configured embedder (required for an export from another embedder or one
        without vectors). The report's ``ids`` maps each exported memory id to its new id."""
        from hela_cli.maintenance.importing import import_export, load_export

        t0 = time.perf_counter()
        exp = load_export(path, reembed=reembed)  # checked before the database is opened or created
        if space is not None:
            Store.check_space_name(space)
        rep = import_export(lambda: self.store, exp, self.config, lambda: self.embedder, space=space,
                            reembed=reembed)
        return {**rep, "seconds": round(time.perf_counter() - t0, 3)}

    def forget(self, space: str, *, apply: bool = False, now: float | None = None) -> dict[str, Any]:
        """Forgetting candidates (dry run) or their removal (``apply``); see :mod:`hela_cli.mechanics.forget`."""
        from hela_cli.mechanics.forget import forget

        return forget(self.store, self.space(space), self.config, apply=apply, now=now)

    # ---------------------------------------------------------------- correcting memory (hela_cli/maintenance/correct.py)
    def memories(self, space: str, *, speaker: str | None = None, session: str | None = None, since: Any = None,
                 until: Any = None, contains: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """The space's memories matching the filters, newest first (``hela memories``); dates: anything
        ``hela add --time`` reads. No model is loaded."""
        from hela_cli.maintenance.correct import list_memories, parse_filters

        filters = parse_filters(speaker=speaker, session=session, since=since, until=until, contains=contains)
        return list_memories(self._open_store(True), self.space(space),
                             filters, limit)

    def delete(self, space: str, ids: Sequence[int] = (), *, source_ids: Sequence[str] = (),
               session: str | None = None, speaker: str | None = None, before: Any = None,
               contains: str | None = None, confirm: bool = False) -> dict[str, Any]:
        """Delete memories completely (see :mod:`hela_cli.store.correct`): by ``ids`` / ``source_ids`` (an
        unknown one is an :class:`~hela_cli.errors.InputError`, nothing changed) or by filter, which needs
        ``confirm=True``. The embedder loads to re-embed the turns that had a deleted one as context; when
        it cannot, the delete still happens and ``note`` says so."""
        from hela_cli.maintenance.correct import delete, parse_filters

        filters = parse_filters(speaker=speaker, session=session, before=before, contains=contains)
        store, sp = self._open_store(True), self.space(space)
        notes: list[str] = []

        def embedder() -> Embedder | None:
            try:  # the next turns were embedded with the deleted ones as context: re-embed them without
                self._check_embedder()
                return self.embedder
            except HelaError as e:
                notes.append(f"the turns after the deleted ones keep their vectors ({e.message})")
                return None

        rep = delete(store, sp, list(ids), list(source_ids), filters, confirm=confirm,
                     embedder=embedder if store.embedder_info() is not None else None, cfg=self.config)
        if notes:
            rep["note"] = notes[0]
        return rep

    def edit(self, space: str, node_id: int | None = None, text: str = "", *, source_id: str | None = None
             ) -> dict[str, Any]:
        """Replace a memory's text, keeping its id, time, session, speaker and learned links; the previous
        text goes to its history (:meth:`history`). Re-embeds with the configured embedder."""
        from hela_cli.maintenance.correct import edit

        sp = self.space(space)
        if not isinstance(text, str) or not text.strip():
            raise HelaError("the new text is empty (to remove a memory, delete it)", 2)
        self._check_embedder()
        return edit(self.store, self.embedder, sp, self.config, text, node_id=node_id, source_id=source_id)

    def history(self, space: str, node_id: int | None = None, *, source_id: str | None = None) -> dict[str, Any]:
        """A memory's earlier texts and its current one, oldest first."""
        from hela_cli.maintenance.correct import history

        return history(self.store, self.space(space), node_id=node_id, source_id=source_id)

    def drop_space(self, space: str) -> dict[str, Any]:
        """Delete a space and all it holds, completely."""
        store = self._open_store(True)
        return {"space": space, **store.drop_space(store.require_space(space).id)}

    def rename_space(self, old: str, new: str) -> None:
        self._open_store(True).rename_space(old, new)

    def space_decay(self, space: str, decay: float | None = None) -> dict[str, Any]:
        """The space's Eq.1 decay (``hela spaces decay``); with ``decay``, changed to it: the space's learned
        weights rebased, current weights unchanged, each later learning step decaying by ``decay``. Writers
        configured with another ``hebbian.decay`` keep the space's (docs/retrieval.md)."""
        if decay is None:
            store = self._open_store(True)
            return {"space": space, "decay": store.space_decay(store.require_space(space).id)}
        store = self._open_store(True)
        sp = store.require_space(space)
        before = store.space_decay(sp.id)
        if not (0.0 < decay <= 1.0):
            raise InputError(f"hela spaces decay: {decay:g} is not in (0, 1]")
        learned = store.set_space_decay(sp.id, float(decay))
        return {"space": space, "decay": float(decay), "previous": before, "rebased_edges": learned}


def _request(request: RecallRequest | None, options: dict[str, Any]) -> RecallRequest:
    """The recall request a caller gave, or the one its keyword options make (never both)."""
    if request is None:
        return RecallRequest.of(**options)
    if options:
        raise InputError(f"give a RecallRequest or its options ({', '.join(sorted(options))}), not both")
    if not isinstance(request, RecallRequest):
        raise InputError(f"request must be a RecallRequest, not {type(request).__name__}")
    return request
