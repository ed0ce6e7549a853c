"""Does a new statement replace an earlier one? Pure, model-free decision helpers for supersession
(:mod:`hela_cli.mechanics.supersession` finds the candidates and writes the marks).

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

from hela_cli.text.keywords import STOP_WORDS, stem, tokens

# ----------------------------------------------------------------------------------------------- cues

_VAL = r"[\w@.+:/#-]+(?:\s+[\w@.+:/#-]+){0,3}?"   # a value: up to four word-ish tokens, lazily
_END = r"(?=\s*(?:[,;:!?)]|\.(?:\s|$)|\s(?:because|since|after|last|this|yesterday|today|and|but|so|as|which|"\
       r"now|instead|anymore|any\s+more)\b|$))"

#: explicit changes that name the old value (group ``old``) and often the new one (``new``)
_LINKED = [
    ("replace", re.compile(r"\b(?:replac(?:ed|ing)|swap(?:ped|ping)(?:\s+out)?|ditch(?:ed|ing)|dropp(?:ed|ing)|"
                           r"trad(?:ed|ing)(?:\s+in)?)\s+(?:our\s+|the\s+|my\s+)?(?P<old>" + _VAL + r")\s+"
                           r"(?:with|for|by)\s+(?P<new>" + _VAL + r")" + _END, re.I)),
    ("from_to", re.compile(r"\b(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:ed|ing)|chang(?:ed|ing)|upgrad(?:ed|ing)|"
                           r"downgrad(?:ed|ing)|went|go(?:ne)?|transition(?:ed|ing)|port(?:ed|ing)|bump(?:ed|ing)|"
                           r"relocat(?:ed|ing)|renam(?:ed|ing)|convert(?:ed|ing)|rewr(?:ote|itten)|shift(?:ed|ing)|"
                           r"transferr(?:ed|ing))\b(?:\s+[\w'-]+){0,4}?\s+from\s+(?P<old>" + _VAL + r")\s+"
                           r"(?:to|over\s+to|into)\s+(?P<new>" + _VAL + r")" + _END, re.I)),
    ("instead", re.compile(r"(?P<new>" + _VAL + r")\s+instead\s+of\s+(?P<old>" + _VAL + r")" + _END, re.I)),
    ("instead", re.compile(r"\binstead\s+of\s+(?P<old>" + _VAL + r")\s*,\s*(?:we|i)\b", re.I)),
    ("no_longer", re.compile(r"\b(?:no\s+longer|not\s+(?:anymore|any\s+more))\s+(?P<old>" + _VAL + r")" + _END, re.I)),
    ("no_longer", re.compile(r"\b(?:don't|do\s+not|doesn't|does\s+not|aren't|isn't|am\s+not|'m\s+not|are\s+not|"
                             r"is\s+not|stopped|quit)\s+(?P<old>" + _VAL + r")\s+(?:anymore|any\s+more)\b", re.I)),
    ("retire", re.compile(r"\b(?:retired|decommissioned|deprecated|sunset|removed|killed|dropped|shut\s+down|"
                          r"got\s+rid\s+of|left|quit|sold|reverted|rolled\s+back|backed\s+out)\s+(?:of\s+)?"
                          r"(?:our\s+|the\s+|my\s+)?(?P<old>" + _VAL + r")" + _END, re.I)),
    ("moved_to", re.compile(r"\b(?:switch(?:ed)?|mov(?:ed)|migrat(?:ed)|chang(?:ed)|upgrad(?:ed)|downgrad(?:ed)|"
                            r"bump(?:ed)|pinn(?:ed)|renam(?:ed)|relocat(?:ed)|point(?:ed)|repoint(?:ed)|"
                            r"transferr(?:ed)|handed|reassign(?:ed)|updat(?:ed)|set)\s+(?P<obj>(?:[\w'.-]+\s+){0,4}?)"
                            r"(?:over\s+)?to\s+(?P<new>" + _VAL + r")" + _END, re.I)),
]

#: change words without a named old value (weaker: a slot or the similarity must tie them to the old text)
_PLAIN = re.compile(
    r"\b(?:no\s+longer|anymore|any\s+more|these\s+days|nowadays|from\s+now\s+on|as\s+of\s+(?:today|now|this)|"
    r"switched|replaced|migrated|upgraded|downgraded|moved|relocated|renamed|reassigned|took\s+over|"
    r"instead\s+of|(?:got|started|accepted|landed|took)\s+(?:a\s+|my\s+)?new\s+(?:job|role|position)|"
    r"new\s+(?:job|role|position|address|apartment|house|home|place|team|owner|lead|host|port|version|"
    r"name|url|endpoint|domain|manager|boss|default)|"
    r"promoted\s+to|changed|updated\s+to|bumped\s+to|pinned\s+to|reverted|rolled\s+back|"
    r"scratch\s+that|correction|update:|actually,|after\s+all|turns\s+out|used\s+to)\b", re.I)

#: "now" as a state change: "now uses", "is now", "we're now on"; not "right now", "now that", "just now"
_NOW = re.compile(r"(?<!right\s)(?<!just\s)(?<!for\s)(?<!by\s)(?<!until\s)(?<!till\s)\bnow\b(?!\s+that\b)"
                  r"(?!\s+and\s+then\b)(?!\s+and\s+again\b)(?!,?\s+(?:i\s+)?(?:want|wanna|need|let|let's|what|"
                  r"where|how|why|who|come|look|listen|tell|go|get)\b)", re.I)
_NOW_STATE = re.compile(r"\b(?:is|are|am|'s|'re|'m|was|were|runs?|lives?|uses?|using|works?|working|sits?|"
                        r"points?|listens?|hosts?|hosted|owned|handled|maintained|served|called|named|on|at|in|"
                        r"have|has|having|got|set|pinned|requires?|needs?|defaults?|living|running|located)\b",
                        re.I)

# ----------------------------------------------------------------------------------------------- vetoes

_HEDGE = re.compile(
    r"\b(?:if|whether|would|could|might|may|maybe|perhaps|should|shall|consider(?:ing|ed)?|thinking\s+(?:about|of)|"
    r"think\s+about|plan(?:ning)?\s+to|going\s+to|gonna|want\s+to|wanna|wish|hope|what\s+if|in\s+case|"
    r"suppose|imagine|unless|someday|some\s+day|eventually|propos(?:e|ed|al)|suggest(?:ed|ion)?|idea|"
    r"evaluat(?:e|ing)|experiment(?:ing)?|trying\s+out|try\s+out|tempted|debating|will\s+we|let's\s+not|"
    r"proof\s+of\s+concept|poc|prototype|branch|spike|next\s+(?:week|month|year|quarter|sprint))\b", re.I)
_QUOTE = re.compile(
    r"(?:^\s*>|\b(?:you\s+said|i\s+said|he\s+said|she\s+said|they\s+said|wrote|quote|quoting|remember\s+when|"
    r"back\s+when|back\s+then|at\s+the\s+time|old\s+message|earlier\s+you|as\s+of\s+last\s+year|"
    r"in\s+the\s+old\s+docs|the\s+old\s+(?:readme|wiki|docs?)|history|changelog|years?\s+ago)\b|\"[^\"]{0,200}\")",
    re.I)
_OTHER = re.compile(
    r"\b(?:he|she|his|her|him|my\s+(?:friend|sister|brother|mom|mum|dad|mother|father|colleague|coworker|"
    r"co-worker|boss|buddy|cousin|partner|wife|husband|son|daughter|kid|kids|neighbou?r|aunt|uncle|"
    r"grandma|grandpa|roommate|teammate|friend's)|a\s+(?:friend|buddy|colleague|coworker)|"
    r"(?:another|other|their|a\s+different|the\s+other)\s+(?:team|company|project|customer|client|repo)|"
    r"upstream|some\s+people|everyone|somebody|someone)\b", re.I)
_ADDITIVE = re.compile(r"\b(?:another|second|also|too|as\s+well|in\s+addition|one\s+more|additional|extra|"
                       r"both|alongside|besides|added|adding|next\s+to)\b", re.I)
_NEGATED_CHANGE = re.compile(r"\b(?:didn't|did\s+not|haven't|have\s+not|never|not|won't|isn't|no)\s+"
                             r"(?:\w+\s+){0,2}?(?:switch|move|migrate|change|replace|upgrade|moving|switching|"
                             r"changing|replacing|upgrading|changed|moved|switched|replaced|upgraded)\b", re.I)

_SENT = re.compile(r"(?<=[.!?;])\s+|\n+")


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (and lines)."""
    return [s for s in _SENT.split(text) if s.strip()]


# ----------------------------------------------------------------------------------------------- slots

_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                      "ninety": 90, "hundred": 100, "a dozen": 12, "dozen": 12})
_DURATION = {"second", "minut", "hour", "day", "week", "month", "year", "decad", "min", "sec", "hr", "yr",
             "am", "pm", "percent", "%", "ms", "kb", "mb", "gb", "tb", "x", "th", "st", "nd", "rd", "k", "m"}
_TECH = frozenset("""python node nodejs postgres postgresql pg mysql mariadb redis memcached kafka rabbitmq elasticsearch
opensearch kubernetes k8s terraform ansible docker java jdk go golang ruby rails php laravel react vue angular svelte
next nextjs nuxt django flask fastapi spring dotnet net ubuntu debian centos alpine fedora rhel macos ios android
windows gcc clang llvm cuda torch pytorch tensorflow jax numpy pandas scipy sklearn vllm sglang nginx traefik envoy
haproxy webpack vite rollup esbuild babel typescript ts eslint prettier jest vitest pytest mocha cypress playwright
sqlite duckdb mongo mongodb cassandra clickhouse snowflake airflow dagster prefect celery sidekiq grpc protobuf
openssl tls http kotlin swift scala rust cargo npm pnpm yarn pip poetry uv conda helm istio grafana prometheus
loki jaeger sentry datadog jenkins gitlab circleci buildkite bazel gradle maven cmake make llama mistral gpt claude
gemini qwen phi bert minilm e5 lambda ec2 rds s3 gke eks aks""".split())

_VERSION = re.compile(r"\b(?P<name>[A-Za-z][\w.+-]*?)(?:\s+version|\s+v|\s|@|-|==|>=|~=|\^)\s*"
                      r"(?P<ver>v?\d+(?:\.\d+){1,3}(?:[-+.]?[a-z]+\d*)?|v\d+)\b")
_BARE_VERSION = re.compile(r"\b(?P<name>[A-Za-z][\w+-]*)\s+(?P<ver>\d{1,3})\b(?![.\d])(?!\s*(?:%|[a-zA-Z]))")
_PORT = re.compile(r"\bport\s*(?:number\s*)?(?:is\s+|=\s*|:\s*|to\s+|of\s+)?(?P<v>\d{2,5})\b|"
                   r"(?:localhost|\b[\w-]+\.[\w.-]+|\b\d{1,3}(?:\.\d{1,3}){3}|\b[a-z][\w-]*):(?P<v2>\d{2,5})\b", re.I)
_HOST = re.compile(r"\b(?P<v>(?:[a-z0-9-]+\.)+(?:internal|local|lan|corp|com|net|org|io|dev|cloud|app|sh|co|"
                   r"ai|prod|staging)|\d{1,3}(?:\.\d{1,3}){3})\b|\b(?:box|server|host|machine|node|vm|instance)"
                   r"\s+(?:is\s+)?(?:called|named)\s+(?P<v2>[\w-]+)|\b(?:hosted|runs|running|lives|deployed)\s+on\s+"
                   r"(?:a\s+box\s+called\s+)?(?P<v3>[a-z][\w-]*\d[\w-]*)\b", re.I)
_KV = re.compile(r"(?<![\w.])(?P<k>[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)\s*(?:=|:)\s*(?P<v>[\w./-]+)", re.I)
_OWNER = re.compile(r"\b(?:owner|lead|maintainer|manager|boss|on-?call|point\s+of\s+contact|reviewer|approver)\b"
                    r"(?:\s+[\w'-]+){0,3}?\s+(?:is|:|=|will\s+be)\s+(?:now\s+)?(?P<v>[A-Z][a-z]+)\b|"
                    r"\b(?P<v2>[A-Z][a-z]+)\s+(?:now\s+)?(?:owns|leads|maintains|manages|is\s+on-?call)\b|"
                    r"\b(?:owned|maintained|led|run|managed|handled|reviewed)\s+by\s+(?P<v3>[A-Z][a-z]+)\b")
_USE_FOR = re.compile(r"\b(?:use|uses|using|run|runs|running|with|on|via)\s+(?P<v>[A-Za-z][\w.+-]*)\s+"
                      r"(?:for|as)\s+(?:the\s+|our\s+|my\s+|a\s+|an\s+)?(?P<k>[a-z]+(?:\s+[a-z]+)?)\b")
_COUNT = re.compile(r"\b(?P<n>\d+|" + "|".join(sorted((w for w in _NUMBER_WORDS if w != "zero"), key=len, reverse=True))
                    + r")\s+(?:[a-z][\w-]*\s+){0,2}?(?P<noun>[a-z]{3,}s|times|people|children|kids|feet)\b", re.I)
_KV_SKIP = {"http", "https", "note", "update", "correction", "todo", "re", "fyi", "edit", "ps", "question",
            "answer", "step", "example", "error", "warning", "info", "debug", "tip", "summary", "q", "a"}


@dataclass(frozen=True)
class Slot:
    key: tuple[str, str]   # (kind, what): ("version", "postgr"), ("port", ""), ("count", "stori")
    value: str


def _norm(v: str) -> str:
    return v.strip().strip(".,;:'\"()").lower().removeprefix("v") if re.fullmatch(r"v\d.*", v.strip(), re.I) \
        else v.strip().strip(".,;:'\"()").lower()


def slots(text: str) -> set[Slot]:
    """The slot values ``text`` states: versions of named things, ports, hosts, ``key=value`` settings,
    owners, "X for PURPOSE" tools and counts of things (not durations)."""
    out: set[Slot] = set()
    for m in _VERSION.finditer(text):
        name = m.group("name").lower().rstrip(".-")
        if name in STOP_WORDS or len(name) < 2 or name.isdigit():
            continue
        out.add(Slot(("version", stem(name)), _norm(m.group("ver"))))
    for m in _BARE_VERSION.finditer(text):
        name = m.group("name").lower()
        if name in _TECH:
            out.add(Slot(("version", stem(name)), m.group("ver")))
    for m in _PORT.finditer(text):
        out.add(Slot(("port", ""), m.group("v") or m.group("v2")))
    for m in _HOST.finditer(text):
        v = m.group("v") or m.group("v2") or m.group("v3")
        if v and not re.fullmatch(r"\d+(?:\.\d+){1,2}", v):   # a version is not a host
            out.add(Slot(("host", ""), v.lower()))
    for m in _KV.finditer(text):
        k = m.group("k").lower()
        if k in _KV_SKIP or k in STOP_WORDS or len(k) < 3 or m.group("v").lower() in ("//",):
            continue
        if "_" in k or "." in k or m.group(0).count("=") == 1:   # settings look like settings
            out.add(Slot(("setting", k), m.group("v").lower().rstrip(".")))
    for m in _OWNER.finditer(text):
        out.add(Slot(("owner", ""), (m.group("v") or m.group("v2") or m.group("v3")).lower()))
    for m in _USE_FOR.finditer(text):
        purpose = " ".join(stem(w) for w in m.group("k").split() if w not in STOP_WORDS)
        if purpose and m.group("v").lower() not in STOP_WORDS:
            out.add(Slot(("tool", purpose), m.group("v").lower()))
    for m in _COUNT.finditer(text):
        noun = stem(m.group("noun").lower())
        if noun in _DURATION:
            continue
        n = m.group("n").lower()
        out.add(Slot(("count", noun), str(_NUMBER_WORDS.get(n, n))))
    return out


def differing_slots(old: set[Slot], new: set[Slot]) -> list[tuple[Slot, Slot]]:
    """Pairs (old, new) of the same slot key with different values, where the new text does not also
    state the old value for that key (a list of versions is not a change)."""
    old_by: dict[tuple[str, str], set[str]] = {}
    for s in old:
        old_by.setdefault(s.key, set()).add(s.value)
    new_by: dict[tuple[str, str], set[str]] = {}
    for s in new:
        new_by.setdefault(s.key, set()).add(s.value)
    out = []
    for key, nvals in new_by.items():
        ovals = old_by.get(key)
        if not ovals or ovals & nvals:
            continue
        if len(nvals) > 1 and key[0] in ("count", "port", "host"):
            continue   # several values at once: a list, not a replacement
        out.append((Slot(key, sorted(ovals)[0]), Slot(key, sorted(nvals)[0])))
    return out


# ----------------------------------------------------------------------------------------------- cues


@dataclass(frozen=True)
class Cue:
    kind: str              # replace, from_to, instead, no_longer, retire, moved_to, plain, now
    old: str | None        # the old value the cue names ("vLLM"), if any
    new: str | None        # the new value, if any
    obj: str | None        # what moved ("the CI" in "moved the CI to Buildkite"), if any
    sentence: str


_GENERIC = frozenset("""use uses using used work works working worked live lives living lived run runs running ran
have has having go went gone be been being get got keep kept stay stayed play plays playing playing need needs
the our my a an their its it this that them there here over off back out up down""".split())


def content_tokens(text: str) -> set[str]:
    """Stems of the content words of ``text`` (no stop words, no generic verbs)."""
    return {stem(t) for t in tokens(text) if t not in STOP_WORDS and t not in _GENERIC and (len(t) >= 2)}


def _vetoed(sentence: str) -> str | None:
    if _QUOTE.search(sentence):
        return "quoted"
    if _HEDGE.search(sentence) or sentence.rstrip().endswith("?"):
        return "hedged"
    if _NEGATED_CHANGE.search(sentence):
        return "negated"
    if _OTHER.search(sentence):
        return "someone else"
    return None


def cues(text: str) -> list[Cue]:
    """The change cues of ``text`` that survive the vetoes (a hypothetical, a question, a quoted or
    reported message, a negated change, someone else's life), sentence by sentence."""
    out: list[Cue] = []
    for sent in sentences(text):
        if _vetoed(sent):
            continue
        linked = False
        for kind, rx in _LINKED:
            for m in rx.finditer(sent):
                g = m.groupdict()
                if kind == "moved_to" and not (g.get("obj") or "").strip():
                    # "moved to Denver": no object; a plain cue with a new value
                    out.append(Cue("moved_to", None, g.get("new"), None, sent))
                else:
                    out.append(Cue(kind, g.get("old"), g.get("new"), (g.get("obj") or "").strip() or None, sent))
                linked = True
        if not linked:
            if _PLAIN.search(sent):
                out.append(Cue("plain", None, None, None, sent))
            elif (m := _NOW.search(sent)) and _NOW_STATE.search(sent[max(0, m.start() - 25):m.end() + 25]):
                out.append(Cue("now", None, None, None, sent))
    return out


def has_signal(text: str) -> bool:
    """Cheap gate before any candidate search: does ``text`` hold a change cue or a slot value at all?"""
    return bool(cues(text)) or bool(slots(text))


# ----------------------------------------------------------------------------------------------- decision


@dataclass(frozen=True)
class Verdict:
    status: str | None      # "superseded", "possible", or None (no change)
    confidence: float
    detector: str           # "cue" (a change word tied to the old text) or "slot" (a differing value)
    reason: str


NO_CHANGE = Verdict(None, 0.0, "", "")


def _names_in(value: str | None, old_toks: set[str]) -> bool:
    """The value's first content words (up to three) include one the old text has."""
    if not value:
        return False
    toks = [t for t in (stem(x) for x in tokens(value) if x not in STOP_WORDS and x not in _GENERIC)][:3]
    return any(t in old_toks for t in toks)


def decide(old_text: str, new_text: str, *, similarity: float = 0.0) -> Verdict:
    """Does ``new_text`` (said later, by the same speaker) replace ``old_text``?

    * superseded 0.9 (cue): a change cue names something the old text says ("replaced vLLM ...", "from
      5432 to 6432", "no longer at the bank") and the new value is not already in the old text;
    * superseded 0.8 (slot): the same slot has another value and the new text has a change cue;
    * possible 0.5 (slot): the same slot has another value, no cue (unless an additive word: a second pet);
    * possible 0.4 (cue): a change cue with its object in the old text, or a strong cue at
      ``similarity`` >= 0.6;
    * else no change."""
    old_toks = content_tokens(old_text)
    found = cues(new_text)
    for c in found:
        if c.kind in ("replace", "from_to", "instead", "no_longer", "retire") and _names_in(c.old, old_toks):
            if c.new and _names_in(c.new, old_toks) and c.kind != "no_longer" \
                    and not _names_in(c.new, content_tokens(c.old or "")):
                continue   # the old text already names the new value too: a comparison, not this change
            return Verdict("superseded", 0.9, "cue", f"{c.kind}: '{c.old}' -> '{c.new or ''}'".strip())
    diffs = [(o, n) for o, n in differing_slots(slots(old_text), slots(new_text))
             if o.key[0] != "count" or o.key[1] in old_toks]
    strong = [c for c in found if c.kind != "now"]
    if diffs:
        o, n = diffs[0]
        what = f"{o.key[0]}{' ' + o.key[1] if o.key[1] else ''}: {o.value} -> {n.value}"
        tied = [c for c in found if n.value in c.sentence.lower()]
        if tied:
            return Verdict("superseded", 0.8, "slot", what + f" ({tied[0].kind})")
        if not _ADDITIVE.search(new_text) and not any(_vetoed(s) for s in sentences(new_text)
                                                      if n.value in s.lower()):
            return Verdict("possible", 0.5, "slot", what)
    for c in strong:
        if c.kind == "moved_to" and c.obj and _names_in(c.obj, old_toks) and c.new \
                and not _names_in(c.new, old_toks):
            return Verdict("possible", 0.4, "cue", f"moved '{c.obj}' -> '{c.new}'")
    if similarity >= 0.6 and any(c.kind in ("plain", "moved_to", "no_longer", "replace", "from_to", "instead",
                                            "retire") for c in strong):
        return Verdict("possible", 0.4, "cue", f"{strong[0].kind} at similarity {similarity:.2f}")
    return NO_CHANGE
