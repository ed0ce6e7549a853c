"""Facts that change, detected at write time: which earlier memory a new turn replaces.

Called by the write paths (batch ingest, ``hela add`` / ``Memory.add`` / MCP ``remember``, hook capture)
inside their write transaction, after the new turns are stored (``supersession.detect``). No large model:

1. a cheap gate: a new turn without any change cue or slot value (:func:`hela_cli.facts.rules.has_signal`,
   most turns) costs one regex pass and no search;
2. candidates: the ``supersession.candidates`` nearest *earlier* memories of the space (vector KNN) with a
   cosine of at least ``supersession.min_similarity``, and as many sharing the new turn's keywords (BM25 over
   the keyword postings: the same subject named), said by the same speaker (a person's own facts, the
   user's facts about themselves) and sharing a content keyword with the new turn;
3. the decision: :func:`hela_cli.facts.rules.decide` ("superseded" only with a cue tied to the old text or
   a differing slot plus a cue; "possible", which hides nothing, under doubt); at most
   ``supersession.max_per_turn`` marks per new turn;
4. no model in a write path: the pairs the rules leave undecided are marked ``possible`` and judged later,
   in one batched call off the hook's path (:mod:`hela_cli.mechanics.judge`, ``supersession.judge``). A
   library caller may still pass a per-pair ``judge`` function (:func:`judge_prompt`, :func:`parse_judgement`).

The marks go through the store's ``mark_superseded`` (``invalid_at`` = the new turn's time).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from hela_cli.config import Config
from hela_cli.store.base import source_hash
from hela_cli.text.session_lines import line_kind
from hela_cli.facts.rules import NO_CHANGE, Verdict, anchors, decide, has_signal, sentences
from hela_cli.text.keywords import keywords

#: a chat function for the judge: prompt -> reply text (None: no judge)
Judge = Callable[[str], str]


@dataclass(frozen=True)
class Found:
    """One detected supersession: ``old_id`` is replaced (``status``) by ``new_id``."""
    old_id: int
    new_id: int
    confidence: float
    status: str          # "superseded" or "possible"
    detector: str        # "cue", "slot" (model-free) or "judge" (confirmed by the chat model)
    reason: str
    similarity: float


#: an assistant's turn longer than this is an explanation, not a statement of the project's state (LongMemEval's
#: assistant answers: 90 % of the detector's marks there, none a change; a coding agent's "Done: Hugo upgraded
#: to 0.134" is short)
ASSISTANT_STATEMENT_CHARS = 400


_VOICES = ("user", "assistant")


def _voice(node: dict[str, Any]) -> str:
    return (node.get("role") or node.get("speaker") or "").strip().lower()


def agent_turn(node: dict[str, Any]) -> bool:
    """A turn of a coding agent's session (captured by a hook, imported from a transcript, or added with its
    own id): the user or the assistant, stored under the id the agent gave it (its content hash is the id's).
    A chat's turns (LongMemEval, a ChatGPT export) are stored by position and are not."""
    sid = node.get("source_id")
    return _voice(node) in _VOICES and bool(sid) and node.get("hash") == source_hash(sid)


def _statement(node: dict[str, Any]) -> bool:
    """A turn that can state a fact of its speaker's: any turn but a chat assistant's long answer (an
    agent's long answer, a plan or a summary, is read sentence by sentence); a tool call or its result is not."""
    if line_kind(node.get("text")) in ("tool", "result", "commit", "tool_output") or _voice(node) == "tool":
        return False
    return _voice(node) != "assistant" or len(node.get("text") or "") <= ASSISTANT_STATEMENT_CHARS \
        or agent_turn(node)


def _same_subject(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """The same speaker says both (a person's own facts; the user's facts about their project); in an agent
    session the user and the assistant speak for one project (the user's reversal replaces what the assistant
    decided or recorded)."""
    a, b = (old.get("speaker") or "").strip().lower(), (new.get("speaker") or "").strip().lower()
    if not _statement(old):
        return False
    return (bool(a) and a == b) or (agent_turn(old) and agent_turn(new))


def _team(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Two named speakers of one space (not a chat's or an agent's user and assistant: a chat assistant's
    answer is general knowledge, an agent's is handled by :func:`_same_subject`): a team speaks for its project,
    so another member's change of a project fact replaces it (the verdict must be about a project's fact, see
    :attr:`~hela_cli.facts.rules.Verdict.project`); a person's life stays their own."""
    a, b = (old.get("speaker") or "").strip().lower(), (new.get("speaker") or "").strip().lower()
    return bool(a) and bool(b) and a != b and _statement(old) and a not in _VOICES and b not in _VOICES


#: at most this many times ``supersession.candidates`` earlier memories are decided for one new turn
MAX_DECISIONS = 3

#: a long text is compared by these parts (lines, then sentences), at most this many of each side
MAX_PARTS = 8


def _parts(text: str, other_keywords: set[str]) -> list[str]:
    """A long text (an agent's plan or summary) as the lines or sentences that share a keyword with the other
    text; a short one as itself."""
    if len(text) <= ASSISTANT_STATEMENT_CHARS:
        return [text]
    units = [u for line in text.splitlines() for u in sentences(line) if u.strip()]
    return [u for u in units if other_keywords & set(keywords(u))][:MAX_PARTS] or []


def decide_long(old_text: str, new_text: str, similarity: float = 0.0, told: bool = True) -> Verdict:
    """:func:`~hela_cli.facts.rules.decide` for texts of any length: a long one is read by line and sentence
    (a summary holds many facts), the surest verdict of the parts is kept."""
    if len(old_text) <= ASSISTANT_STATEMENT_CHARS and len(new_text) <= ASSISTANT_STATEMENT_CHARS:
        return decide(old_text, new_text, similarity=similarity, told=told)
    best = NO_CHANGE
    # the new text's parts that say a change at all (most lines of a summary do not), each against the old
    # text's parts that share a keyword with it: a few decisions, not parts x parts
    news = [n for n in _parts(new_text, set(keywords(old_text))) if has_signal(n)][:MAX_PARTS]
    for n in news:
        for o in _parts(old_text, set(keywords(n)))[:MAX_PARTS]:
            v = decide(o, n, similarity=similarity, told=told)
            if v.status and (best.status is None or (v.status == "superseded", v.confidence)
                             > (best.status == "superseded", best.confidence)):
                best = v
    return best


def _earlier(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return (old["ts"], old["ord"], old["id"]) < (new["ts"], new["ord"], new["id"])


def detect(store: Any, space_id: int, new_ids: Sequence[int], vectors: Any, cfg: Config,
           judge: Judge | None = None) -> list[Found]:
    """The supersessions the new memories ``new_ids`` (with their ``vectors``, aligned) bring to earlier
    memories of the space. Reads only; call inside the write transaction that stored them (so that the
    KNN sees them) and pass the result to :func:`mark`."""
    sc = cfg.supersession
    nodes = store.get_nodes([i for i in new_ids if i != -1])
    out: list[Found] = []
    speaker_kw = {k for n in nodes.values() for k in keywords(n.get("speaker") or "")}
    for nid, vec in zip(new_ids, vectors):
        node = nodes.get(nid)
        if node is None or not _statement(node) or not has_signal(node["text"]):
            continue
        mine = set(node["keywords"]) - speaker_kw
        told = agent_turn(node) and _voice(node) == "user"
        hits = dict((o, s) for o, s in store.knn(space_id, vec, sc.candidates + len(new_ids) + 1)
                    if o != nid and s >= sc.min_similarity)
        by_words = [o for o, _ in store.keyword_search(space_id, sorted(mine), sc.candidates + len(new_ids) + 1)
                    if o != nid and o not in hits]
        anchor = anchors(node["text"])   # "everyone is on Teams": the earlier memories that name a chat tool
        by_class = [o for o, _ in store.keyword_search(space_id, sorted(anchor), 2 * sc.candidates + len(new_ids) + 1)
                    if o != nid and o not in hits] if anchor else []
        by_class = [o for o in by_class if o not in by_words]
        knn_order = [o for o, _ in sorted(hits.items(), key=lambda h: -h[1])]
        if by_words or by_class:   # the same subject named: "webpack", "CONFIG_FREERTOS_HZ" (cosine for the record)
            vecs = store.node_vectors(by_words + by_class)
            hits.update((o, float(vecs[o] @ vec)) for o in by_words + by_class if o in vecs)
        olds = store.get_nodes(list(hits))
        # the three lists taken in turn (nearest, most words shared, the kind named), each in its own order
        order = [o for trio in itertools.zip_longest(knn_order, by_words, by_class) for o in trio if o is not None]
        found: list[Found] = []
        decided = 0
        for o in order:
            if o not in hits:
                continue
            sim = hits[o]
            old = olds.get(o)
            if old is None or not _earlier(old, node) \
                    or not (mine & set(old["keywords"]) or (anchor & set(old["keywords"]))):
                continue
            same = _same_subject(old, node)
            if not same and not _team(old, node):
                continue
            if decided >= MAX_DECISIONS * sc.candidates:
                break   # a busy agent session: every earlier turn shares a word and speaks with one voice
            decided += 1
            # a user's short orders to an agent count; "No worries, John!" in chat and the assistant's
            # "Let's remove the old venv" (narrating its next step) do not
            v = decide_long(old["text"], node["text"], similarity=sim, told=told)
            if v.status is None or (not same and not v.project):
                continue
            f = Found(o, nid, v.confidence, v.status, v.detector, v.reason, round(float(sim), 4))
            long_ = max(len(old["text"]), len(node["text"])) > ASSISTANT_STATEMENT_CHARS
            own = v.detector == "cue" and (told or _voice(node) != "assistant")
            if long_ and f.status == "superseded" and not own:
                # read by parts, a long answer's verdict is a guess (on the real BookMinder sessions about 3
                # in 10 were right, 91 of 125 marks between two assistant answers): possible, which hides
                # nothing and waits for a judge; a change said outright by a person (the user's own reversal
                # that names what the plan said, a long pasted turn that opens with "we replaced X with Y")
                # stays certain
                f = Found(o, nid, min(f.confidence, 0.5), "possible", f.detector, f.reason, f.similarity)
            if judge is not None:
                f = _judged(judge, old["text"], node["text"], f)
                if f is None:
                    continue
            found.append(f)
            if len(found) >= sc.candidates:
                break
        found.sort(key=lambda f: (f.status != "superseded", -f.confidence, -f.similarity, -f.old_id))
        out.extend(found[:sc.max_per_turn])
    return out


def mark(store: Any, space_id: int, found: Sequence[Found]) -> int:
    """Write ``found`` through the store's ``mark_superseded`` (``invalid_at``: the new memory's time).
    An explicit mark already on a pair is never overridden (the store's rule). Returns the marks written."""
    for f in found:
        store.mark_superseded(space_id, f.old_id, f.new_id, detector=f.detector, confidence=f.confidence,
                              status=f.status)
    return len(found)


def detect_and_mark(store: Any, space_id: int, new_ids: Sequence[int], vectors: Any, cfg: Config,
                    judge: Judge | None = None) -> list[Found]:
    """:func:`detect` then :func:`mark`, when ``supersession.detect`` is on (else nothing)."""
    if not cfg.supersession.detect or not len(new_ids):
        return []
    found = detect(store, space_id, new_ids, vectors, cfg, judge)
    mark(store, space_id, found)
    return found


# ----------------------------------------------------------------------------------------------- the judge

JUDGE_PROMPT = """Two statements from the same person's memory, the first said earlier than the second.
Does the later statement REPLACE a fact of the earlier one (the earlier fact no longer holds: a new value,
a move, a switch, a reversed decision)? Answer NO when the later one adds to it, is about someone else, is a
plan, a question or a hypothetical, or quotes the past.

Earlier: {old}
Later: {new}

Answer with one word: YES, MAYBE or NO."""

_ANSWER = re.compile(r"\b(yes|maybe|no)\b", re.I)


def judge_prompt(old_text: str, new_text: str, limit: int = 600) -> str:
    """The judge's prompt for one candidate pair (each text cut to ``limit`` characters)."""
    return JUDGE_PROMPT.format(old=" ".join(old_text.split())[:limit], new=" ".join(new_text.split())[:limit])


def parse_judgement(reply: str) -> str | None:
    """"yes", "maybe" or "no" from the judge's reply (its first such word), None when it says none."""
    m = _ANSWER.search(reply or "")
    return m.group(1).lower() if m else None


def _judged(judge: Judge, old_text: str, new_text: str, f: Found) -> Found | None:
    """The judge's word on a candidate: yes -> superseded (detector ``judge``); maybe -> possible; no ->
    dropped. A judge that fails or answers nothing leaves the model-free verdict as it was."""
    try:
        word = parse_judgement(judge(judge_prompt(old_text, new_text)))
    except Exception:   # a judge is optional: an endpoint down must not fail a write
        return f
    if word == "no":
        return None
    if word == "yes":
        return Found(f.old_id, f.new_id, max(f.confidence, 0.9), "superseded", "judge", f.reason, f.similarity)
    if word == "maybe":
        return Found(f.old_id, f.new_id, min(f.confidence, 0.5), "possible", "judge", f.reason, f.similarity)
    return f
