"""Configuration: defaults < YAML file < environment ``HELA_*`` < command-line flags.

Every knob lives in one of the section dataclasses below. Defaults are the paper's values where it gives
one and they held up; where it leaves a value open hela chose one (m, alpha, delta_hub, delta_prune,
delta_age, ...), and some defaults were changed after measuring (beta, theta, time decay, links): docs/retrieval.md
"where hela departs from the paper" lists each. ``config.example.yaml`` documents every knob. Environment variables are named
``HELA_<SECTION>_<KEY>`` (e.g. ``HELA_RETRIEVAL_K=20``); ``HELA_DB`` and ``HELA_CONFIG`` are the
two top-level ones.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from hela_cli.errors import HelaError


@dataclass
class ModelsConfig:
    embedder: str = "minilm"          # alias ("minilm"), a path to any embedding GGUF, or openai:MODEL@BASE_URL
    chat: str = "smollm2"             # alias ("smollm2"), a chat GGUF path, openai:MODEL@BASE_URL, or "client"
                                      # (inside `hela mcp`: the MCP client's model through sampling), or
                                      # agent:claude-code|codex|gemini[@MODEL] (the coding agent's CLI, headless)
    agent_budget: str = "24 calls, 150000 tokens"  # per day and agent, for agent: routes ("off": none); at the
                                      # cap no call until the next day (docs/models.md)
    allow_remote: str = ""            # hosts (comma-separated) an openai: endpoint may be on besides loopback
    timeout: float = 120.0            # seconds an openai: endpoint may take to reply
    request_extra: str = ""           # JSON object merged into each openai: chat request (server-specific
                                      # options, e.g. {"repeat_penalty": 1.0} for llama-cpp-python's server)
    dir: str = ""                     # model cache dir; "" -> <user data dir>/models
    n_threads: int = 0                # 0 -> number of CPU cores
    chat_ctx: int = 4096              # chat model context window (tokens)
    chat_flash_attn: bool = True      # llama.cpp flash attention for the chat model (prompt processing 1.4x on CPU)
    embed_ctx: int = 512              # embedder context window (tokens)
    search_paths: str = ""            # where `models list` finds GGUFs and ollama:NAME:TAG resolves; "" -> the
                                      # usual places (Ollama, LM Studio, llama.cpp cache), "none", or dirs joined by ":"


@dataclass
class IngestConfig:
    initial_weight: float = 0.5       # weight linking consecutive turns of a session (measured; see BENCHMARKS.md)
    context_window: int = 1           # embed a turn together with this many preceding turns
    max_turn_chars: int = 2000        # longer turns are embedded from their first N chars (text kept whole;
                                      # as context of the next turn: their last N, when embed_tokens > 0)
    embed_tokens: int = 256           # embedding text budget (embedder tokens): the turn first, then the end of
                                      # its preceding turn(s); 0: no budget (context first, the window cuts the end)
    passage_chars: int = 0            # turns longer than this also get passage vectors (passages <= N chars); 0: off
    batch_size: int = 64              # turns per transaction / embedding batch
    associate: bool = False           # "association on ingest": co-activate a new turn with similar old ones
    associate_top: int = 3            # r: how many similar earlier memories a new turn co-activates with
    associate_min_sim: float = 0.6    # similarity floor for association on ingest
    fixed_links: bool = True          # ingest links: fixed priors Eq.1's decay does not erode (paper: they decay)
    keyword_links: int = 10           # cold start: link each new turn to its top-K turns of other sessions
                                      # sharing rare keywords (dynamics.keyword_partners); 0: off
    keyword_link_weight: float = 0.25 # ... initial weight of such a link (conversation links: initial_weight)
    keyword_link_min_score: float = 6.0  # ... a pair needs this sum of IDFs of shared rare keywords
    private_tag: str = "private"      # <private>...</private> is removed before anything else (text/private.py); comma-separated tags
    redact: bool = False              # replace secrets with [REDACTED:kind] before a turn is embedded or stored
                                      # (text/redact.py); `hela add|ingest --redact`; on for a hook's capture
    redact_assistant: bool = True     # ... always for AI-assistant input: coding-agent sessions (Claude Code,
                                      # Codex, Gemini CLI) and ChatGPT / Claude exports given to ingest, and MCP
                                      # `remember` calls (docs/agents.md); `--no-redact` / redact=False opts out
    tool_output_chars: int = 0        # coding-agent transcripts: keep each tool's output as a turn of at most
                                      # N characters; 0: tool outputs are not stored (a call is one short line)


@dataclass
class RetrievalConfig:
    k: int = 10                       # Eq.5: top-k by base activation
    m: int = 3                        # Eq.5: up to m extra (flipped) nodes ranked by spread activation
    alpha: float = 1.0                # Eq.3: weight of keyword_match
    tau_days: float = 60.0            # Eq.3: time constant of exp(-dt/tau)
    time_decay: bool = False          # Eq.3: apply exp(-dt/tau); off -> factor 1 (on costs ~46 recall points on LoCoMo)
    beta: float = 1.0                 # Eq.4: spreading coefficient (paper: 0.1; measured default)
    theta: float = 1.0                # Eq.4: only nodes with S_base > theta spread (paper: 0.6; measured default)
    spreading: bool = True            # Eq.4 on/off (ablation)
    bm25_weight: float = 0.5          # weight of the normalised BM25 score folded into keyword_match
    speaker_keywords: bool = True     # a node's speaker name counts among its keywords
    vector_candidates: int = 100      # KNN candidate pool from sqlite-vec
    keyword_candidates: int = 100     # BM25 keyword candidate pool
    semantic_k: int = 0               # semantic records merged into the answer context (paper: 5; see docs/retrieval.md)
    semantic_min_confidence: float = 0.5  # traits the distiller rated below this stay out of the context
    learn: bool = True                # apply Eq.1 after each retrieval
    vector_cache: bool = False        # in-process vector index at any size (long-lived processes); off: only up to 20k nodes
    vector_cache_auto: int = 200_000  # ... and from a space's 2nd search in one process, up to this many nodes (0: never)
    sign_index_min: int = 20_000      # spaces above this many nodes search the sign bits persisted in the file
    sign_rescore: int = 2000          # ... and rescore this many Hamming-nearest candidates exactly
    passages: bool = True             # a memory's cosine is the best of its main and passage vectors (when stored)
    keyword_idf: bool = False         # weight each query keyword by its IDF in the space (speaker names included)
    date_prior: float = 0.5           # weight of the question's own time window (0: off), see dynamics.window_factor
    date_prior_relative: float = 0.9  # ... of a window relative to the moment of asking ("3 days ago", "yesterday",
                                      # "on Monday"), resolved against --now / a hook's prompt time / the clock
    date_slack_days: float = 7.0      # ... memories up to this many days after the window still match fully
    vocatives: bool = True            # a speaker's name that a turn only addresses them by ("Thanks, Melanie!") is
                                      # not a keyword of that turn (text/turns.py only_addressed)
    bm25_names: bool = False          # the speakers' names in a question are BM25 search terms (off: only the
                                      # question's other words are, the names count through speaker keywords)
    person_prior: float = 0.0         # a question naming some, not all, of the space's speakers: memories neither
                                      # spoken by nor mentioning them get Eq.3 x (1 - this) (dynamics.person_factor)
    session_decay: float = 1.0        # coverage: the k base memories are picked by S_base * this ** (memories of the
                                      # same session already picked) (dynamics.session_cover; 1: the top-k, Eq.5)
    replies: int = 1                  # a recalled question or complaint brings the next turn of its session (its
                                      # reply), placed right below it, within the k + m budget; at most this many
                                      # (0: off; text/turns.py says which turns ask for a reply)
    focus_weight: float = 0.0         # a second dense probe with the question's focus words (text/question_focus.py:
                                      # no question words, names, framing words): cos = (1 - w) cos + w cos_focus
    focus_max: bool = False           # ... fused by max instead: cos = max(cos, cos_focus) (focus_weight ignored)
    list_slots: int = 0               # a question asking for several things ("What books has Tim read?") moves this
                                      # many of the k base slots to the m spreading slots (k + m unchanged)
    soft_keywords: float = 0.0        # word-level semantic keyword match: a question keyword a memory lacks counts its
                                      # best cosine with one of the memory's keywords when >= this (0: off; the
                                      # keywords' vectors are embedded and kept per process)
    trace_weight: float = 1.0         # flipped-path bonus from similar earlier recalls to what they used (0: off)
    trace_min_sim: float = 0.6        # ... for earlier queries at least this similar (dynamics.trace_bonus; a
                                      # cosine on the default embedder's scale, like theta)
    trace_max_slots: int = 1          # ... at most this many of the m flipped slots go to traced memories, the
                                      # most similar traces first (dynamics.trace_slot_cap; 0: no cap)


@dataclass
class HebbianConfig:
    eta: float = 0.02                 # Eq.1 learning rate
    decay: float = 0.995              # Eq.1 per-step decay factor
    cap: float = 1.0                  # weights are capped at this value
    pair_margin: float = 0.0          # Eq.1 reinforces pairs among memories with S_base >= margin * top (0: all)
    eta_by_score: bool = False        # ... each pair at eta * r_a * r_b, r = S_base / top (dynamics.reinforcement)
    learn_spread: bool = True         # memories the spreading bonus brought in take part in Eq.1 (the paper)
    coretrieval: bool = True          # a learning retrieval applies Eq.1 to every co-retrieved pair (the paper)
    # feedback on a recall (Memory.reinforce; docs/feedback.md; dynamics.feedback_pairs)
    feedback_eta: float = 0.5         # ... each pair of used memories gains this
    feedback_anchors: int = 10        # ... each used memory is tied to this many best unused memories by S_base
    feedback_anchor_eta: float = 0.1  # ... at this rate
    feedback_depress: float = 1.0     # ... a memory spreading brought in and not used: its edges keep 1 - this


@dataclass
class ConsolidationConfig:
    delta_hub: float = 3.0            # Eq.2: hub if D(v) = sum_j w_vj > delta_hub
    neighbour_min_weight: float = 0.05  # cluster = hub + neighbours with w >= this
    max_neighbours: int = 8           # ... at most this many, strongest first
    auto: bool = True                 # consolidate automatically when hubs appear
    auto_every: int = 50              # ... checked every N learning steps
    max_hubs_per_run: int = 3         # an automatic run distils at most this many hubs (strongest first)
    redistill_change: float = 0.3     # re-distil a hub only if its cluster changed by this share
    max_tokens: int = 512             # generation budget per distillation
    merge_similarity: float = 0.92    # semantic records closer than this merge their evidence


@dataclass
class ForgettingConfig:
    delta_prune: float = 0.05         # total edge weight below this ...
    delta_age_days: float = 30.0      # ... idle longer than this (vs the space's "now") ...
    # ... and never accessed: all three must hold


@dataclass
class AnswerConfig:
    max_tokens: int = 64              # answer length budget
    temperature: float = 0.0
    log: bool = True                  # keep the question and answer text in the `asks` log (a learning ask or
                                      # recall always gets a row: its id is the recall id feedback names)
    cite_feedback: bool = False       # an answered ask reinforces the citations that share words with its answer
    keep_recalls: int = 10000         # recalls that never got feedback are kept for the newest N per space (older
                                      # ones can no longer take feedback; asks and recalls with feedback stay); 0: all


@dataclass
class HooksConfig:                    # `hela hook EVENT` inside coding agents (docs/agents.md)
    budget_s: float = 2.0             # a start or prompt hook prints nothing and exits 0 after this long
    capture_budget_s: float = 10.0    # ... an inline capture past this commits nothing; a detached child redoes it
    capture_inline: int = 24          # capture more new turns than this in a detached child process
    detached_budget_s: float = 300.0  # ... which stops after this long (one per session, max_detached in all)
    max_detached: int = 2             # ... at most this many detached capture children at a time
    server: str = "auto"              # auto: hela's own local server, started by a hook, gone when idle | off: every
                                      # hook in its own process | a `hela mcp --http` URL on the same database
    server_idle: float = 30.0         # ... the auto server exits after this many minutes without a request
    start_tokens: int = 1500          # session-start brief budget (tokens estimated as characters / 4)
    start_sessions: int = 3           # ... the gist of this many recent sessions
    prompt_tokens: int = 800          # prompt recall budget
    prompt_k: int = 8                 # ... at most this many memories
    prompt_min_score: float = 0.5     # ... floor on the retrieval score (S of Eq.5), before the relevance decision
    relevance: bool = True            # inject only memories with topical evidence (mechanics/relevance.py); off: the floor alone
    meaning_margin: float = 0.45      # ... evidence by meaning: cosine less the memory's background cosine at least this
    anchored_margin: float = 0.10     # ... or at least this when the prompt points at the project or two rare keywords match
    learn_injected: bool = False      # every injected memory learns (Eq.1) at the prompt; off: only what the reply used (feedback)
    prompt_min_chars: int = 12        # shorter prompts ("ok", "yes, go on") get no recall
    line_chars: int = 400             # a memory's text is cut to this many characters in injected context
    tool_calls: bool = True           # a tool call becomes one short line (tool name + its short input)
    tool_outputs: bool = False        # tool outputs are stored too (cut to line_chars)
    redact: bool = True               # secrets become [REDACTED:kind] before anything is stored or logged
    feedback: bool = True             # capture strengthens the injected memories the final answer echoed (the only hook learning by default)
    path_tokens: int = 300            # recall by file (before an edit) budget; 0 turns it off
    path_k: int = 6                   # ... at most this many memories
    gist: str = "auto"                # session gist in the brief: auto (abstractive with an openai: models.chat) | extractive
    gist_timeout_s: float = 1.0       # ... the abstractive summary's time limit (then the extractive gist)
    model_work: str = "auto"          # a detached capture child spends ONE call of the chat model on the hubs
                                      # to distil and the undecided changes: auto (models.chat an agent: route) |
                                      # on (also an openai: endpoint) | off (docs/models.md)


@dataclass
class SupersessionConfig:             # facts that change: automatic detection at write time (docs/retrieval.md)
    detect: bool = True               # ingest, add, MCP remember and hook capture mark replaced memories
    candidates: int = 8               # ... a new turn is compared with this many nearest earlier memories
    min_similarity: float = 0.45      # ... at least this similar (cosine), same speaker, a shared keyword
    max_per_turn: int = 2             # ... and marks at most this many of them
    judge: bool = True                # candidates the rules leave undecided ("possible") go to the deferred,
                                      # batched judge (a capture child's model work: hooks.model_work; never
                                      # an in-process GGUF, never in a write path)


@dataclass
class Config:
    db: str = ""                      # "" -> <user data dir>/hela.db
    models: ModelsConfig = field(default_factory=ModelsConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    hebbian: HebbianConfig = field(default_factory=HebbianConfig)
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    forgetting: ForgettingConfig = field(default_factory=ForgettingConfig)
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    hooks: HooksConfig = field(default_factory=HooksConfig)
    supersession: SupersessionConfig = field(default_factory=SupersessionConfig)

    def replace(self, **changes: Any) -> "Config":
        """Copy with dotted-key overrides, e.g. ``cfg.replace(**{"retrieval.k": 5})``."""
        new = dataclasses.replace(self)
        for section in _SECTIONS:
            setattr(new, section, dataclasses.replace(getattr(self, section)))
        for key, value in changes.items():
            _set(new, key, value, origin="override")
        return new


_SECTIONS = ["models", "ingest", "retrieval", "hebbian", "consolidation", "forgetting", "answer", "hooks",
             "supersession"]


def _coerce(value: Any, typ: Any, key: str, origin: str) -> Any:
    name = typ if isinstance(typ, str) else getattr(typ, "__name__", str(typ))
    try:
        if name == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
                return True
            if isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if name == "int":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        if name == "float":
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if name == "str":
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise ValueError
            return str(value)
    except (TypeError, ValueError):
        pass
    raise HelaError(f"{origin}: '{key}' must be {name}, got {value!r}")


def _set(cfg: Config, key: str, value: Any, origin: str) -> None:
    parts = key.split(".")
    target: Any = cfg
    for part in parts[:-1]:
        if part not in _SECTIONS or not hasattr(target, part):
            raise HelaError(f"{origin}: unknown config key '{key}'")
        target = getattr(target, part)
    leaf = parts[-1]
    fields = {f.name: f for f in dataclasses.fields(target)}
    if leaf not in fields or leaf in _SECTIONS:
        raise HelaError(f"{origin}: unknown config key '{key}'")
    if key == "hooks.server" and isinstance(value, bool):   # YAML reads a bare off / on as a boolean
        value = "auto" if value else "off"
    v = _coerce(value, fields[leaf].type, key, origin)
    _check_range(key, v, origin)
    if key == "hooks.server" and str(v).strip().lower() not in ("", "auto", "off") and \
            not str(v).strip().lower().startswith(("http://", "https://")):
        raise HelaError(f"{origin}: 'hooks.server' must be auto, off or a hela mcp --http URL, got {v!r}")
    setattr(target, leaf, v)


# Allowed values of numeric settings: (low, high, low excluded); None = unbounded. Every float must be
# finite. Out-of-range values used to surface later as crashes (decay 0: division by zero; eta < 0:
# negative weights refused by the database) or silently odd results (k < 0 returned everything).
_RANGES: dict[str, tuple[float | None, float | None, bool]] = {
    "models.n_threads": (0, None, False), "models.chat_ctx": (16, None, False),
    "models.embed_ctx": (8, None, False), "models.timeout": (0, None, True),
    "ingest.initial_weight": (0, 1e250, False), "ingest.context_window": (0, None, False),
    "ingest.max_turn_chars": (1, None, False), "ingest.embed_tokens": (0, None, False),
    "ingest.passage_chars": (0, None, False), "ingest.batch_size": (1, None, False),
    "ingest.associate_top": (0, None, False), "ingest.associate_min_sim": (-1, 1, False),
    "ingest.keyword_links": (0, None, False), "ingest.keyword_link_weight": (0, 1e250, False),
    "ingest.keyword_link_min_score": (0, None, False), "ingest.tool_output_chars": (0, None, False),
    "retrieval.k": (1, None, False), "retrieval.m": (0, None, False), "retrieval.alpha": (0, None, False),
    "retrieval.tau_days": (0, None, True), "retrieval.beta": (0, None, False),
    "retrieval.bm25_weight": (0, 1, False), "retrieval.vector_candidates": (0, None, False),
    "retrieval.keyword_candidates": (0, None, False), "retrieval.semantic_k": (0, None, False),
    "retrieval.semantic_min_confidence": (0, 1, False),
    "retrieval.date_prior": (0, 1, False), "retrieval.date_prior_relative": (0, 1, False), "retrieval.sign_index_min": (0, None, False),
    "retrieval.vector_cache_auto": (0, None, False),
    "retrieval.sign_rescore": (1, None, False), "retrieval.date_slack_days": (0, None, False),
    # any decay in (0, 1] works (edge amplitudes are rebased before the factor can underflow); weights are
    # stored as weight / factor with factor >= 2^-64, so a weight above ~1e288 could not be stored: the
    # weight settings stop at 1e250
    "hebbian.eta": (0, 1e250, False), "hebbian.decay": (0, 1, True), "hebbian.cap": (0, 1e250, True),
    "hebbian.pair_margin": (0, 1, False),
    "consolidation.delta_hub": (0, None, False), "consolidation.neighbour_min_weight": (0, None, False),
    "consolidation.max_neighbours": (1, None, False), "consolidation.auto_every": (1, None, False),
    "consolidation.redistill_change": (0, 1, False), "consolidation.max_tokens": (1, None, False),
    "consolidation.merge_similarity": (-1, 1, False),
    "forgetting.delta_prune": (0, None, False), "forgetting.delta_age_days": (0, None, False),
    "answer.max_tokens": (1, None, False), "answer.temperature": (0, None, False),
    "hooks.budget_s": (0, None, True), "hooks.capture_budget_s": (0, None, True),
    "hooks.capture_inline": (0, None, False), "hooks.start_tokens": (0, None, False),
    "hooks.start_sessions": (0, None, False), "hooks.prompt_tokens": (0, None, False),
    "hooks.prompt_k": (1, None, False), "hooks.prompt_min_chars": (0, None, False),
    "hooks.line_chars": (40, None, False), "hooks.detached_budget_s": (0, None, True),
    "hooks.max_detached": (1, None, False), "hooks.path_tokens": (0, None, False),
    "hooks.path_k": (1, None, False), "hooks.gist_timeout_s": (0, None, True),
    "hooks.meaning_margin": (-2, 2, False), "hooks.anchored_margin": (-2, 2, False),
    "supersession.candidates": (1, None, False), "supersession.min_similarity": (-1, 1, False),
    "supersession.max_per_turn": (1, None, False),
}


#: ``models.agent_budget``: "N calls, T tokens" (either part; k / M suffixes), "off" or "0" (the parse itself:
#: hela_cli/models/agent.py ``parse_budget``)
_BUDGET = re.compile(r"off|0|none|no|(?:\s*[\d_,.]+\s*[km]?\s*(?:calls?|tokens?)\s*[,;/]?\s*){1,2}")


def _check_range(key: str, value: Any, origin: str) -> None:
    if key == "hooks.gist" and value not in ("auto", "extractive"):
        raise HelaError(f"{origin}: 'hooks.gist' must be auto or extractive, got {value!r}")
    if key == "hooks.model_work" and value not in ("auto", "on", "off"):
        raise HelaError(f"{origin}: 'hooks.model_work' must be auto, on or off, got {value!r}")
    if key == "models.agent_budget" and not _BUDGET.fullmatch(str(value).strip().lower()):
        raise HelaError(f"{origin}: 'models.agent_budget' must be calls and tokens per day, e.g. "
                        f"'24 calls, 150000 tokens' (or 'off'), got {value!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise HelaError(f"{origin}: '{key}' must be a finite number, got {value!r}")
    lo, hi, lo_open = _RANGES.get(key, (None, None, False))
    bad_lo = lo is not None and (value <= lo if lo_open else value < lo)
    bad_hi = hi is not None and value > hi
    if bad_lo or bad_hi:
        low = f"> {lo}" if lo_open else f">= {lo}"
        want = f"{low} and <= {hi}" if hi is not None else low
        raise HelaError(f"{origin}: '{key}' must be {want}, got {value!r}")


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML config file into a flat ``{"section.key": value}`` dict (errors name the file)."""
    import yaml  # local import: only needed when a config file is used

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HelaError(f"{p}: config file not found") from None
    except IsADirectoryError:
        raise HelaError(f"{p}: is a directory, not a config file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise HelaError(f"{p}: cannot read config file ({e.__class__.__name__})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(e, "problem", None) or "invalid YAML"
        raise HelaError(f"{p}: {where}{problem}") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise HelaError(f"{p}: top level must be a mapping of sections, got {type(data).__name__}")
    return _flatten(data)


def load_config(path: str | Path | None = None, env: Mapping[str, str] | None = None,
                overrides: Mapping[str, Any] | None = None) -> Config:
    """Build the effective config: defaults < YAML < ``HELA_*`` env < ``overrides`` (flags).

    ``path`` defaults to ``$HELA_CONFIG``. ``overrides`` values of ``None`` are ignored (unset flags).
    """
    env = os.environ if env is None else env
    cfg = Config()
    path = path or env.get("HELA_CONFIG") or None
    if path:
        for key, value in load_yaml(path).items():
            _set(cfg, key, value, origin=str(path))
    for name, value in env.items():
        if not name.startswith("HELA_") or name == "HELA_CONFIG":
            continue
        rest = name[5:].lower()
        if rest == "db":
            cfg.db = value
            continue
        for section in _SECTIONS:
            if rest.startswith(section + "_"):
                _set(cfg, f"{section}.{rest[len(section) + 1:]}", value, origin=f"environment {name}")
                break
    for key, value in (overrides or {}).items():
        if value is not None:
            _set(cfg, key, value, origin="option") if "." in key else setattr(cfg, key, value)
    return cfg
