"""Does a new statement replace an earlier one? Pure, model-free decision helpers for supersession
(:mod:`hela_cli.facts.detect` finds the candidates and writes the marks).

Two kinds of evidence, surest first:

* a **change cue** whose object the earlier memory names: "we replaced vLLM with SGLang" against "our
  model server is vLLM 0.6"; "switched from X to Y", "X instead of Y", "no longer X", "moved X to Y";
* a **slot** both texts fill with different values: a version of the same named thing ("Postgres 14" ->
  "Postgres 16"), a port, a host, a ``key=value`` setting, an owner, a count of the same thing ("four
  short stories" -> "seven short stories").

What vetoes a cue: a hypothetical or plan ("if we switched", "thinking about moving", a question), a
quoted or reported old message ("you said", "> ..."), someone else's life ("my sister moved to ..."),
and for slots without a cue additive words ("another", "a second", "also").

Over-invalidation is the failure to fear, so :func:`decide` says "superseded" only with a cue tied to the
earlier text (or a differing slot together with a cue) and "possible" (which hides nothing) otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# the cues and the slots live in their own modules; their public names are re-exported here for callers
from hela_cli.facts.cues import (Cue, _ADDITIVE, _GENERIC, _HEDGE, _NEGATED_CHANGE, _OTHER, _QUOTE, _UNITS,
                                 _WE_DID_NOT, _clause_scope, _own, _vetoed, content_tokens, cues, sentences)
from hela_cli.facts.slots import Slot, _TECH, differing_slots, slots
from hela_cli.facts.life import LIFE_ANCHORS, LIFE_EXCLUSIVE, life_changes, life_states
from hela_cli.facts.vocab import EXCLUSIVE, VOCAB, other_subject, vocab_values
from hela_cli.text.keywords import STOP_WORDS, keywords, stem, tokens


# ----------------------------------------------------------------------------------------------- anchors


def anchors(text: str) -> set[str]:
    """The keywords to look up the earlier memories a change in ``text`` may replace: the words of the old
    value a cue names (a long plan that says it ranks low by vector and by all of the turn's words), the
    other names of a vocabulary class it names ("everyone is on Teams": slack, discord, ...) and the words of a
    part of life it tells a change of ("I quit my job": work, company, ...). Empty without a change cue."""
    if not cues(text) and not life_changes(text):
        return set()
    words: set[str] = set()
    for c in cues(text):   # "drop the header versioning": the memories that say "header", "version"
        if c.kind in LINKED_KINDS and c.old:
            words.update(keywords(c.old))
    for cls, _ in vocab_values(text):
        if cls in EXCLUSIVE:   # a team has one chat tool; it may have several databases
            words.update(keywords(" ".join(VOCAB[cls])))
    for cat, *_ in life_changes(text):
        words.update(keywords(" ".join(LIFE_ANCHORS[cat])))
    return words


def has_signal(text: str) -> bool:
    """Cheap gate before any candidate search: does ``text`` hold a change cue or a slot value at all?"""
    if cues(text) or life_changes(text):
        return True
    # a vocabulary name, a weekday, a time or a life fact alone is no sign of a change (most chat turns
    # have one: "I live in Boston", "on Zoom"); with a change word they are (the cues above)
    return any(sl.key[0] not in _NO_SIGNAL for sl in slots(text))


# ----------------------------------------------------------------------------------------------- decision


@dataclass(frozen=True)
class Verdict:
    status: str | None      # "superseded", "possible", or None (no change)
    confidence: float
    detector: str           # "cue" (a change word tied to the old text) or "slot" (a differing value)
    reason: str
    project: bool = False   # a fact of a project (a tool, a version, a port, a setting), not of a person's life:
                            # a team's members speak for it (another member's change replaces it)


NO_CHANGE = Verdict(None, 0.0, "", "")
#: the slots that hold a project's facts (a person's counts, durations, ordinals and life are their own)
PROJECT_SLOTS = frozenset({"version", "port", "host", "path", "setting", "channel", "owner", "vocab", "tool", "time",
                           "weekday", "size", "price", "cadence"})
#: the slots that change only with a change word in the sentence that states the new value (no ``possible`` without
#: one): what a named thing is and how often something recurs are said of many things in passing
CUE_ONLY = frozenset({"named", "cadence"})
#: slots that are no sign of a change alone (the gate): most chat turns have one ("I live in Boston", "on Zoom")
_NO_SIGNAL = frozenset({"vocab", "weekday", "time", "size", "life", "named", "cadence"})
_SINGULAR = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|mine)\b", re.I)
_CODE_LIKE = re.compile(r"\d|[a-z][A-Z]|\w[._/:-]\w|^[A-Z]{2,}")


def _techish(value: str | None) -> bool:
    """Does a cue's old value name a thing of a project: a tool of the vocabularies, a technical name, a
    version, a path or a setting ("vLLM", "Postgres 14", "/v1", "ingress-nginx"); not "the bank"."""
    v = (value or "").strip()
    return bool(v) and (bool(vocab_values(v)) or any(t in _TECH for t in tokens(v.lower())) or
                        any(_CODE_LIKE.search(w) for w in v.split()))
#: cue kinds that name the old value
LINKED_KINDS = ("replace", "from_to", "instead", "no_longer", "retire", "handover", "reverse", "drop")


#: words that name what kind of thing a value is, not which: "the old Jenkins box", "the Redis instance"
_KIND_WORDS = frozenset("""old legacy former previous current instance instances box server servers host machine
cluster bucket service repo account setup stack one logic approach thing stuff step part code layer feature support
option mode idea plan decision bit piece handling integration config configuration module whole entire workspace
org organisation organization tenant project""".split())


def _head(value: str | None, n: int = 1) -> list[str]:
    """The first ``n`` content words of a cue's value (stems)."""
    return [stem(_UNITS.get(x, x)) for x in tokens(value or "") if x not in STOP_WORDS and x not in _GENERIC
            and x not in _KIND_WORDS][:n]


_VERSION_TOKEN = re.compile(r"\d+(?:\.\d+)+")


def _names_in(value: str | None, old_toks: set[str], n: int = 2, any_of: bool = False,
              old_text: str | None = None) -> bool:
    """The old text has the value's first content words (its first ``n``; all of them, or one with
    ``any_of``): "vLLM" in "we replaced vLLM with SGLang"; not "docs" in "no longer reviewing docs"
    against "we moved the docs", not "GitHub Pages" against "GitHub Discussions"."""
    head = _head(value, n)
    if not head or not (any if any_of else all)(t in old_toks for t in head):
        return False
    versions = _VERSION_TOKEN.findall(value or "")   # "Python 3.11" is not "Python 3.13"
    return not versions or old_text is None or all(re.search(r"(?<![\w.])" + re.escape(v) + r"(?![\w.]*\d)", old_text)
                                                   for v in versions)


def _first_word_in(value: str, text: str) -> bool:
    """The value's first word, as written ("date-fns", "moment.js"), is a word of ``text``: a name joined by
    a hyphen or a dot is one name, not its parts ("date-fns" is not named by "Date handling")."""
    first = next((w.strip(".,;:!?()'\"") for w in value.split() if w.lower() not in STOP_WORDS), "")
    if not re.search(r"\w[.-]\w", first):
        return True
    return re.search(r"(?<![\w.-])" + re.escape(first.lower()) + r"(?![\w-])", text.lower()) is not None


def _same_sentence_subject(old_text: str, new_text: str, o: Slot, n: Slot, values: set[str]) -> bool:
    """The sentence that states the old value and the one that states the new value share a content word
    besides the values (a version of a named thing carries its subject in the slot). In a long answer a
    price, a count or a port of something else is there by chance ("$109,000" for an IRA, "$15" for a set
    of coasters)."""
    if (o.key[0] in ("version", "named") and o.key[1]) or (o.key[0] == "vocab" and o.key[1] in EXCLUSIVE) \
            or (o.key[0] == "life" and o.key[1] in LIFE_EXCLUSIVE):
        return True
    if o.key[0] == "vocab" and any(_MOVE.search(x) for x in sentences(new_text) if n in slots(x)):
        return True   # "the migration to Postgres is done": a database a project has several of, moved off   # the subject is in the slot: a version of a named thing, the team's one chat tool, my home
    olds = [x for x in sentences(old_text) if o in slots(x)] or [old_text]
    news = [x for x in sentences(new_text) if n in slots(x)] or [new_text]
    return any(_shared_beyond(a, b, values) for a in olds for b in news)


def _shared_beyond(old_text: str, new_text: str, values: set[str]) -> bool:
    """The two texts share a content word that is not part of a slot value (the same subject)."""
    skip = {stem(t) for v in values for t in tokens(v)}
    return bool((set(keywords(old_text)) & set(keywords(new_text))) - skip)


#: the words of a move from one thing to another of its kind (a migration, a cut-over, a rewrite, a port)
_MOVE = re.compile(r"\b(?:migrat\w*|cut\s*-?\s*over|cutover|switch(?:ed|ing)?\s+(?:[\w'-]+\s+){0,3}?(?:over\s+)?to|"
                   r"switchover|mov(?:e|ed|ing)\s+(?:[\w'-]+\s+){0,3}?(?:over\s+)?to|the\s+move|port(?:ed|ing)?\s+to|rewr(?:ote|itten)|rewrite|rebuil[dt]|"
                   r"transition(?:ed)?\s+to)\b", re.I)
_PASSING = re.compile(r"\b(?:been|past|last|ago|almost|nearly|already|old|since)\b", re.I)


def _setting_duration(n: Slot, sentence: str) -> bool:
    """A duration that is a setting ("retention is 90 days now", "tokens expire after 8 hours"), not time
    passing ("I've been running for five years now"): hours, days, weeks, not said with "for", "been", "ago"."""
    return n.key[1] in ("second", "minut", "hour", "day", "week", "min", "sec", "hr", "ms") \
        and not _PASSING.search(sentence)


def _slot_change(o: Slot, n: Slot) -> str:
    """A verdict's reason for a differing slot: ``version postgr: 14 -> 16``."""
    return f"{o.key[0]}{' ' + o.key[1] if o.key[1] else ''}: {o.value} -> {n.value}"


_CLAUSE = re.compile(r"[,;:()]|\s(?:and|but|while|whereas|except)\s", re.I)


def _clauses_with(text: str, words: list[str]) -> list[str]:
    """The clauses of ``text`` that say one of ``words`` (stems or values; all of ``text`` if none does)."""
    out = []
    for sent in sentences(text):
        for cl in _CLAUSE.split(sent):
            low = cl.lower()
            if any(w and (w in low or w in content_tokens(cl)) for w in words):
                out.append(cl)
    return out or [text]


def _elsewhere(old_text: str, new_sentence: str, words: list[str]) -> bool:
    """Is the old text's statement of ``words`` about another thing than the new sentence (another
    environment, region, database role, part of the system; a personal machine)? Precision first: the
    JDK of the Android build is not the backend's."""
    return all(other_subject(cl, new_sentence) for cl in _clauses_with(old_text, words))


def _states(sentence: str, n: Slot) -> bool:
    """Does ``sentence`` state the slot value ``n`` (a named thing's value under a shorter or longer name of the
    thing: "the ingress controller" for "our Kubernetes ingress controller")?"""
    got = slots(sentence)
    return n in got or (n.key[0] == "named" and any(x.key[0] == "named" and x.value == n.value for x in got))


def _only_unsaid(old_text: str, o: Slot) -> bool:
    """The old text states the old value only in a question, a hypothetical or plan, a quote or a negated
    change ("We're thinking about Quay instead of Docker Hub", "the old wiki still says ..."): no fact to replace."""
    said = [x for x in sentences(old_text) if o in slots(x)]
    return bool(said) and all(x.rstrip().endswith("?") or _QUOTE.search(x) or _HEDGE.search(x) or
                              _NEGATED_CHANGE.search(x) or _WE_DID_NOT.search(x) or _OTHER.search(x[:max(0, x.lower().find(o.value))])
                              for x in said)   # ... or said of someone else ("A competitor's search runs on Algolia")


def _slot_elsewhere(old_text: str, new_text: str, o: Slot, n: Slot) -> bool:
    news = [x for x in sentences(new_text) if n in slots(x)] or [new_text]
    # the clause that states the new value ("The prod cluster has six nodes, staging is unchanged": prod's)
    news = [next((cl for cl in _CLAUSE.split(x) if n in slots(cl)), x) for x in news]
    return all(_elsewhere(old_text, x, [o.value]) for x in news)


_LIFE_CLAUSE = re.compile(r"[,;:()]|\s(?:and|but|so|because|while|whereas)\s", re.I)


def _life_of(text: str) -> set[tuple[str, str]]:
    """The speaker's own life facts in ``text``, clause by clause: a clause about someone else says nothing
    of the speaker's but who their partner is ("my dad is a butcher"; "my boyfriend Dev")."""
    out = set()
    for sent in sentences(text):
        for cl in _LIFE_CLAUSE.split(sent):
            out.update(cs for cs in life_states(cl) if _own(cl) or cs[0] == "partner")
    return out


def _life_change(old_text: str, new_text: str) -> Verdict | None:
    """A life change told by its own words ("quit my job", "moved out of", "sold my car", "went vegan",
    "broke up", "gave up tennis") against an earlier fact of the same part of the speaker's life: superseded
    when the old value is named, or the part is one a person has one of (a job, a home) and the earlier
    fact names it; possible otherwise."""
    olds = _life_of(old_text)
    if not olds:
        return None
    low = old_text.lower()
    best: Verdict | None = None
    for sent in sentences(new_text):
        if _vetoed(sent, 0) or _ADDITIVE.search(sent):
            continue
        for cat, old_v, new_v, at in life_changes(sent):
            if _OTHER.search(sent[:at]):
                continue   # "my sister quit her job"
            if any(c == cat for c, *_ in life_changes(old_text)):
                continue   # the old text tells the same change ("since I lost my job"): nothing new
            vals = {v for c, v in olds if c == cat}
            if not vals or (new_v and (new_v in vals or new_v in low)):
                continue   # nothing of this part of life before, or the old text already says the new value
            if old_v and (old_v in vals or re.search(r"\b" + re.escape(old_v) + r"\b", low)):
                return Verdict("superseded", 0.85, "life", f"{cat}: '{old_v}' ended")
            if cat in LIFE_EXCLUSIVE and vals - {""}:
                return Verdict("superseded", 0.75, "life", f"{cat}: {sorted(vals - {''})[0]} -> {new_v or '?'}")
            best = best or Verdict("possible", 0.5, "life", f"{cat} changed")
    return best


def decide(old_text: str, new_text: str, *, similarity: float = 0.0, told: bool = True) -> Verdict:
    """Does ``new_text`` (said later, by the same speaker) replace ``old_text``?

    * superseded 0.9 (cue): a change cue names something the old text says ("replaced vLLM ...", "from
      5432 to 6432", "no longer at the bank") and the new value is not already in the old text;
    * superseded 0.8 (slot): the same slot has another value and the new text has a change cue;
    * possible 0.5 (slot): the same slot has another value, no cue (unless an additive word: a second pet);
    * possible 0.4 (cue): "moved X to Y" with X in the old text and Y not;
    * else no change (a change word alone, however similar the texts, ties nothing: on LoCoMo that rule
      marked 2.5 % of all memories, nearly all wrongly). ``similarity`` is kept for the record.

    ``told``: the new text is what a user tells an agent, so its short orders count ("drop the header
    versioning", "no Redis", "Postgres, not SQLite"; cue kind ``drop``); in chat ("No worries, John!") and
    in the assistant's narration ("Let's remove the old venv") they do not."""
    if all(x.rstrip().endswith("?") for x in sentences(old_text)):
        return NO_CHANGE   # a question states no fact to replace
    old_toks = content_tokens(old_text)
    found = cues(new_text)
    for c in found:
        if c.kind == "drop" and not told:
            continue
        if c.kind in LINKED_KINDS and (_names_in(c.old, old_toks, old_text=old_text)
                                       or (not _VERSION_TOKEN.search(c.old or "")   # "W&B" names "Weights & Biases"
                                           and vocab_values(c.old or "") & vocab_values(old_text))):
            if c.new and _names_in(c.new, old_toks, 1) and _first_word_in(c.new, old_text) \
                    and c.kind not in ("no_longer", "from_to") \
                    and not _names_in(c.new, content_tokens(c.old or ""), 1):
                continue   # the old text already names the new value too: a comparison, not this change
            if _elsewhere(old_text, c.sentence, _head(c.old)):
                continue   # the same name, another thing: the EU region's, the Android build's
            said = [x for x in sentences(old_text) if set(_head(c.old)) & content_tokens(x)]
            if said and all(x.rstrip().endswith("?") or _HEDGE.search(x) for x in said):
                continue   # the old text only asked or wondered about it ("What if we replaced Amplitude?")
            return Verdict("superseded", 0.9, "cue", f"{c.kind}: '{c.old}' -> '{c.new or ''}'".strip(),
                           _techish(c.old) or (c.kind == "handover" and not (_SINGULAR.search(old_text)
                                                                              or _SINGULAR.search(c.sentence))))
    sold, snew = slots(old_text), slots(new_text)
    # the values that differ are not the shared subject (a name of a vocabulary is: "Postgres moved to db2")
    values = {s.value for s in sold | snew if s.key[0] not in ("vocab", "life", "weekday", "time", "size", "named")}
    shared = _shared_beyond(old_text, new_text, values)
    pairs = differing_slots(sold, snew)
    # the new value in a sentence's first clause, the old one named again after it ("Trials are 7 days now, the 14
    # day ones converted worse"; "The API is /v2 now; /v1 answers with a deprecation header"): the first clause says it
    lead = frozenset(x for sent in sentences(new_text) for x in slots(_clause_scope(sent, 0)[0]))
    pairs += [(o, n) for o, n in differing_slots(sold, lead) if o.key not in {p[0].key for p in pairs}]
    diffs = [(o, n) for o, n in pairs
             if (shared or o.key[1]) and _same_sentence_subject(old_text, new_text, o, n, values)
             and not _slot_elsewhere(old_text, new_text, o, n) and not _only_unsaid(old_text, o)]
    strong = [c for c in found if c.kind not in ("now", "weak")]
    for o, n in diffs:
        what = _slot_change(o, n)
        tied = [c for c in found if _states(c.sentence, n)
                and (o.key[0] != "duration" or c in strong or _setting_duration(n, c.sentence))
                and (c.kind not in ("now", "weak", "plain") or not _ADDITIVE.search(c.sentence))]
        if tied:   # a duration ("five years" -> "seven years now") changes by itself: only a strong cue ties it
            return Verdict("superseded", 0.8, "slot", what + f" ({tied[0].kind})", o.key[0] in PROJECT_SLOTS or (
                o.key[0] in ("count", "named") and not _SINGULAR.search(old_text) and not _SINGULAR.search(new_text)))
    if (v := _life_change(old_text, new_text)) is not None:
        return v
    for o, n in diffs:
        if o.key[0] == "duration" or o.key[0] in CUE_ONLY:
            continue   # "three months" -> "four months": time passing, not a change, unless a cue says so
        what = _slot_change(o, n)
        if (o.key[0] == "ordinal" or not _ADDITIVE.search(new_text)) and not any(_vetoed(s) for s in sentences(new_text)
                                                      if n.value in s.lower()):
            return Verdict("possible", 0.5, "slot", what, o.key[0] in PROJECT_SLOTS)
    for c in strong:
        if c.kind == "moved_to" and c.obj and _names_in(c.obj, old_toks) and c.new \
                and not _names_in(c.new, old_toks):
            return Verdict("possible", 0.4, "cue", f"moved '{c.obj}' -> '{c.new}'")
    return NO_CHANGE
