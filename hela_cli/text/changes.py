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

import functools
import re
from dataclasses import dataclass

from hela_cli.text.keywords import STOP_WORDS, keywords, stem, tokens

# ----------------------------------------------------------------------------------------------- cues

_VAL = r"[\w@.+:/#-]+(?:,?\s+[\w@.+:/#-]+){0,3}?"   # a value: up to four word-ish tokens, lazily
_NEW = r"(?P<new>[\w@.+:/#$€£~-]+(?:\s+[\w@.+:/#$€£~-]+){0,2})"   # the new value: its first words
_END = r"(?=\s*(?:[,;:!?)]|\.(?:\s|$)|\s(?:because|since|after|last|this|yesterday|today|and|but|so|as|which|"\
       r"now|instead|anymore|any\s+more)\b|$))"
_END_OBJ = r"(?=\s*(?:[,;:!?)]|\.(?:\s|$)|$)|\s(?:because|since|after|last|this|yesterday|today|and|but|so|as|" \
           r"which|now|instead|anymore|for|with|to|from|at|in|on|by)\b)"   # an object ends at a preposition too

#: explicit changes that name the old value (group ``old``) and often the new one (``new``)
_LINKED = [
    ("replace", re.compile(r"\b(?:replac(?:ed|ing)|swap(?:ped|ping)(?:\s+out)?|ditch(?:ed|ing)|dropp(?:ed|ing)|"
                           r"trad(?:ed|ing)(?:\s+in)?)\s+(?:our\s+|the\s+|my\s+)?(?P<old>" + _VAL + r")\s+"
                           r"(?:with|for|by)\s+" + _NEW, re.I)),
    ("from_to", re.compile(r"\b(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:ed|ing)|chang(?:ed|ing)|upgrad(?:ed|ing)|"
                           r"downgrad(?:ed|ing)|went|go(?:ne)?|transition(?:ed|ing)|port(?:ed|ing)|bump(?:ed|ing)|"
                           r"relocat(?:ed|ing)|renam(?:ed|ing)|convert(?:ed|ing)|rewr(?:ote|itten)|shift(?:ed|ing)|"
                           r"transferr(?:ed|ing))\b(?:\s+[\w'-]+){0,4}?\s+from\s+(?P<old>" + _VAL + r")\s+"
                           r"(?:to|over\s+to|into)\s+" + _NEW, re.I)),
    ("instead", re.compile(r"(?P<new>[\w@.+:/#-]+)(?:\s+now)?\s+instead\s+of\s+(?P<old>" + _VAL + r")" + _END_OBJ,
                           re.I)),
    ("instead", re.compile(r"\binstead\s+of\s+(?P<old>" + _VAL + r")\s*,\s*(?:we|i)\b", re.I)),
    ("no_longer", re.compile(r"\b(?:no\s+longer|not\s+(?:anymore|any\s+more))\s+(?P<old>" + _VAL + r")" + _END, re.I)),
    ("no_longer", re.compile(r"\b(?:don't|do\s+not|doesn't|does\s+not|aren't|isn't|am\s+not|'m\s+not|are\s+not|"
                             r"is\s+not|stopped|quit)\s+(?P<old>" + _VAL + r")\s+(?:anymore|any\s+more)\b", re.I)),
    ("retire", re.compile(r"\b(?:retired|decommissioned|deprecated|removed|killed|dropped|shut\s+down|"
                          r"got\s+rid\s+of|left|quit|sold|reverted|rolled\s+back|backed\s+out)\s+(?:of\s+)?"
                          r"(?:our\s+|the\s+|my\s+)?(?P<old>" + _VAL + r")" + _END_OBJ, re.I)),
    ("retire", re.compile(r"(?P<old>\b[\w@.+-]+(?:\s+[\w@.+-]+)?)\s+(?:is|was|has\s+been|got|gets|are|were)\s+"
                          r"(?:now\s+)?(?:gone|retired|cancell?ed|deprecated|removed|shut\s+down|decommissioned|"
                          r"dropped)\b", re.I)),
    ("handover", re.compile(r"\b(?P<old>[A-Z][a-z]+)\s+(?:stepped\s+down|left|moved\s+on|is\s+on\s+leave|had\s+to\s+leave|"
                            r"retired|quit|handed|passed|died|moved\s+to\s+(?:the\s+)?\w+\s+team)\b")),
    ("no_longer", re.compile(r"\bno\s+more\s+(?P<old>" + _VAL + r")" + _END, re.I)),
    ("moved_to", re.compile(r"\b(?:switch(?:ed)?|mov(?:ed)|migrat(?:ed)|chang(?:ed)|upgrad(?:ed)|downgrad(?:ed)|"
                            r"bump(?:ed)|pinn(?:ed)|renam(?:ed)|relocat(?:ed)|point(?:ed)|repoint(?:ed)|raised|lowered|increased|"
                            r"transferr(?:ed)|handed|reassign(?:ed))\s+(?P<obj>(?:[\w'.-]+\s+){0,4}?)"
                            r"(?:over\s+)?to\s+" + _NEW, re.I)),
]

#: change words without a named old value (weaker: a slot or the similarity must tie them to the old text)
_PLAIN = re.compile(   # strong: a change said outright
    r"\b(?:no\s+longer|from\s+now\s+on|as\s+of\s+(?:today|now|this\s+\w+)|"
    r"switched|replaced|migrated|upgraded|downgraded|relocated|renamed|reassigned|took\s+over|"
    r"(?:got|started|accepted|landed|took)\s+(?:a\s+|my\s+)?new\s+(?:job|role|position)|"
    r"promoted\s+to|updated\s+to|bumped\s+to|pinned\s+to|reverted|rolled\s+back|"
    r"(?:is|are|was)\s+gone|retired|stepped\s+down|handed\s+over|took\s+it\s+over|reversal|"
    r"scratch\s+that|update:)\b", re.I)
_WEAK = re.compile(   # weak: change words that chat uses for much else; they only tie a differing slot value
    r"\b(?:anymore|any\s+more|these\s+days|nowadays|moved|changed|raised|lowered|no\s+more|instead\s+of|"
    r"new\s+(?:job|role|position|address|apartment|house|home|place|team|owner|lead|host|port|version|"
    r"name|url|endpoint|domain|manager|boss|default)|correction|actually,|after\s+all|used\s+to)\b", re.I)

#: "now" as a state change: "now uses", "is now", "we're now on"; not "right now", "now that", "just now"
_NOW = re.compile(r"(?<!right\s)(?<!just\s)(?<!for\s)(?<!by\s)(?<!until\s)(?<!till\s)\bnow\b(?!\s+that\b)"
                  r"(?!\s+and\s+then\b)(?!\s+and\s+again\b)(?!\s+on\b)(?!,?\s+(?:i\s+)?(?:want|wanna|need|let|let's|"
                  r"what|where|how|why|who|come|look|listen|tell|go|get|about|if|then|so|ok|okay|i\s+know|"
                  r"i\s+see|i'm\s+(?:gonna|going))\b)", re.I)
_NOW_OPENER = re.compile(r"^\W*now\b\s*,", re.I)   # "Now, about the onboarding screens": a discourse marker
_NOW_STATE = re.compile(r"\b(?:is|are|am|'s|'re|'m|was|were|runs?|lives?|uses?|using|works?|working|sits?|"
                        r"points?|listens?|hosts?|hosted|owned|handled|maintained|served|called|named|on|at|in|"
                        r"have|has|having|got|set|pinned|requires?|needs?|defaults?|living|running|located)\b",
                        re.I)

# ----------------------------------------------------------------------------------------------- vetoes

_HEDGE = re.compile(
    r"\b(?:if|whether|would|could|might|may|maybe|perhaps|should|shall|consider(?:ing|ed)?|thinking\s+(?:about|of)|"
    r"think\s+about|(?:we|i|they)(?:'re|\s+are|\s+am|'m)?\s+plan(?:ning)?\s+to|going\s+to|gonna|want\s+to|wanna|wish|hope|what\s+if|in\s+case|"
    r"suppose|imagine|unless|you\s+can|you\s+could|try\s+(?:to|using)|let\s+me\s+know|"
    r"someday|some\s+day|eventually|propos(?:e|ed|al)|suggest(?:ed|ion)?|idea|"
    r"evaluat(?:e|ing)|experiment(?:ing)?|trying\s+out|try\s+out|tempted|debating|will\s+we|let's\s+not|"
    r"proof\s+of\s+concept|poc|prototype|spike|next\s+(?:week|month|year|quarter|sprint))\b", re.I)
_QUOTE = re.compile(
    r"(?:^\s*>|\b(?:you\s+said|i\s+said|he\s+said|she\s+said|they\s+said|wrote|quote|quoting|remember\s+when|"
    r"back\s+when|back\s+then|at\s+the\s+time|old\s+message|earlier\s+you|as\s+of\s+last\s+year|"
    r"in\s+the\s+old\s+docs|the\s+old\s+(?:readme|wiki|docs?|runbook)|changelog|change\s+log|years?\s+ago)\b|\"[^\"]{0,200}\")",
    re.I)
_OTHER = re.compile(
    r"\b(?:he|she|his|her|him|my\s+(?:friend|sister|brother|mom|mum|dad|mother|father|colleague|coworker|"
    r"co-worker|boss|buddy|cousin|partner|wife|husband|son|daughter|kid|kids|neighbou?r|aunt|uncle|"
    r"grandma|grandpa|roommate|teammate|friend's)|a\s+(?:friend|buddy|colleague|coworker)|"
    r"(?:another|other|their|a\s+different|the\s+other)\s+(?:team|company|project|customer|client|repo)|"
    r"upstream|some\s+people|everyone|somebody|someone|contributor(?:'s)?|fork|competitor(?:'s)?|partner(?:'s)?|"
    r"a\s+paper|other\s+(?:studios|teams|companies|people)|vendor(?:'s)?)\b", re.I)
_ADDITIVE = re.compile(r"\b(?:another|second|also|too|as\s+well|in\s+addition|one\s+more|additional|extra|"
                       r"both|alongside|besides|added|adding|next\s+to)\b", re.I)
_CONTINUITY = re.compile(r"\b(?:still|nothing\s+(?:has\s+)?changed|unchanged|same\s+as\s+before|as\s+before|"
                         r"stays?|remains?)\b", re.I)
_WE_DID_NOT = re.compile(r"\b(?:we|i)\s+(?:did\s+not|didn't|have\s+not|haven't|won't|will\s+not)\s*[.!]?\s*$", re.I)
_NEGATED_CHANGE = re.compile(r"\b(?:didn't|did\s+not|haven't|have\s+not|never|not|won't|isn't|no|nothing)\s+"
                             r"(?:\w+\s+){0,2}?(?:switch|move|migrate|change|replace|upgrade|moving|switching|"
                             r"changing|replacing|upgrading|changed|moved|switched|replaced|upgraded|quit|quitting|"
                             r"leave|leaving|drop|give\s+up|giving\s+up|stop|stopping)\b|"
                             r"\b(?:don't|do\s+not|never|won't)\s+(?:\w+\s+){0,2}?quit\b", re.I)

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

_VERSION = re.compile(r"\b(?P<name>[A-Za-z][\w.+-]*?)(?:\s+(?:is|was|are|now|to|from|on|at|version|v|upgraded|bumped|updated|moved|pinned|downgraded|"
                      r"went|goes|runs|uses|requires)){0,3}?"
                      r"(?:\s+version|\s+v|\s|@|-|==|>=|~=|\^)\s*"
                      r"(?P<ver>v?\d+(?:\.\d+){1,3}(?:[-+.]?[a-z]+\d*)?|v\d+)\b")
_BARE_VERSION = re.compile(r"\b(?P<name>[A-Za-z][\w+-]*)\s+(?:(?:is|was|are|now|to|from|on|at)\s+){0,2}"
                           r"(?P<ver>\d{1,3})\b(?!\.\d|\d)(?!\s*%)")
_PATH = re.compile(r"(?P<v>\b[a-z][a-z0-9+]*://[\w.-]+(?:/[\w.-]*)*|(?<![\w/])~?/[\w.-]+(?:/[\w.-]+)+)", re.I)
_API_VERSION = re.compile(r"(?<![\w/])/v(?P<ver>\d+)\b")
_MONEY = re.compile(r"(?P<v>[$€£]\s?\d[\d,]*(?:\.\d+)?k?|\d[\d,]*(?:\.\d+)?\s?(?:dollars|euros|usd|eur))", re.I)
_PORT = re.compile(r"\bport\s*(?:number\s*)?(?:is\s+|=\s*|:\s*|to\s+|of\s+)?(?P<v>\d{2,5})\b|"
                   r"(?:localhost|\b[\w-]+\.[\w.-]+|\b\d{1,3}(?:\.\d{1,3}){3}|\b[a-z][\w-]*):(?P<v2>\d{2,5})\b", re.I)
_HOST = re.compile(r"\b(?P<v>(?:[a-z0-9-]+\.)+(?:internal|local|lan|corp|com|net|org|io|dev|cloud|app|sh|co|"
                   r"ai|prod|staging)|\d{1,3}(?:\.\d{1,3}){3})\b|\b(?:box|server|host|machine|node|vm|instance)"
                   r"\s+(?:is\s+)?(?:called|named)\s+(?P<v2>[\w-]+)|\b(?:mini|computer|laptop|cluster)\s+(?:called|named)\s+(?P<v4>[\w-]+)|\b(?:hosted|runs|running|lives|deployed)\s+on\s+"
                   r"(?:a\s+box\s+called\s+)?(?P<v3>[a-z][\w-]*\d[\w-]*)\b", re.I)
_KV_EQ = re.compile(r"(?<![\w.])(?P<k>[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)\s*=\s*(?P<v>[\w./+-]+)", re.I)
# the key's parts are possessive (``++``): "_" is both a separator and a part of a part, and a long snake_case
# word not followed by ":" backtracked exponentially (a BookMinder transcript line hung a capture); the same
# matches, since a key cut shorter is followed by a key character, never by ":"
_KV_COLON = re.compile(r"(?<![\w.])(?P<k>[a-z_][a-z0-9]*(?:[_.][a-z0-9_]+)++)\s*:\s*(?P<v>[\w./+-]+)", re.I)
_CHANNEL = re.compile(r"(?<![\w&])#(?P<v>[a-z][\w-]+)", re.I)
_OWNER = re.compile(r"\b(?:owner|lead|maintainer|manager|boss|on-?call|point\s+of\s+contact|reviewer|approver)\b"
                    r"(?:\s+[\w'-]+){0,3}?\s+(?:is|:|=|will\s+be)\s+(?:now\s+)?(?P<v>[A-Z][a-z]+)\b|"
                    r"\b(?P<v2>[A-Z][a-z]+)\s+(?:now\s+)?(?:owns|leads|maintains|manages|is\s+on-?call)\b|"
                    r"\b(?:owned|maintained|led|run|managed|handled|reviewed)\s+by\s+(?P<v3>[A-Z][a-z]+)\b")
_USE_FOR = re.compile(r"\b(?:use|uses|using|run|runs|running|with|on|via)\s+(?P<v>[A-Za-z][\w.+-]*)\s+"
                      r"(?:for|as)\s+(?:the\s+|our\s+|my\s+|a\s+|an\s+)?(?P<k>[a-z]+(?:\s+[a-z]+)?)\b")
_COUNT = re.compile(r"(?<![\d.$€£])\b(?P<n>\d+|" + "|".join(sorted((w for w in _NUMBER_WORDS if w != "zero"), key=len, reverse=True))
                    + r")\s+(?:[a-z][\w-]*\s+){0,2}?(?P<noun>[a-z]{3,}s|times|people|children|kids|feet|"
                    r"approvals?|day|week|month|year|hour|minute|second)\b", re.I)
_ORDINAL = re.compile(r"\b(?P<n>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))\s+"
                      r"(?:[a-z][\w-]*\s+){0,2}(?P<noun>[a-z]{3,})\b", re.I)
_ORDINAL_SKIP = {"time", "place", "day", "week", "month", "year", "thing", "step", "date", "impress", "sight", "half",
                 "round", "floor", "grade", "person", "hand", "chanc", "look", "try", "attempt", "choic", "one"}
_KV_SKIP = {"http", "https", "note", "update", "correction", "todo", "re", "fyi", "edit", "ps", "question",
            "answer", "step", "example", "error", "warning", "info", "debug", "tip", "summary", "q", "a"}


@dataclass(frozen=True)
class Slot:
    key: tuple[str, str]   # (kind, what): ("version", "postgr"), ("port", ""), ("count", "stori")
    value: str


def _norm(v: str) -> str:
    """A version as compared: trimmed, lower-cased, a leading ``v`` dropped (``v2.1`` -> ``2.1``)."""
    v = v.strip()
    out = v.strip(".,;:'\"()").lower()
    return out.removeprefix("v") if re.fullmatch(r"v\d.*", v, re.I) else out


_HAS_NUMBER = re.compile(r"\d|\b(?:" + "|".join(w for w in _NUMBER_WORDS if " " not in w) + r")\b", re.I)
_HAS_OWNER = re.compile(r"\b(?:owner|lead|maintainer|manager|boss|on-?call|contact|reviewer|approver|owns|leads|"
                        r"maintains|manages|by)\b", re.I)


@functools.lru_cache(maxsize=4096)
def slots(text: str) -> frozenset[Slot]:
    """The slot values ``text`` states: versions of named things, ports, hosts, paths, prices, ``key=value``
    settings, channels, owners, "X for PURPOSE" tools, counts and durations. Cheap guards first: most
    turns have no digit, no ``=`` and no owner word, and skip most of the expressions."""
    out: set[Slot] = set()
    text = _CAPTION.sub(" ", text)
    digits = bool(_HAS_NUMBER.search(text))
    if digits:
        _numbered_slots(text, out)
    for m in _ORDINAL.finditer(text):   # "my second tournament" -> "my fourth tournament"
        noun = stem(m.group("noun").lower())
        if noun not in _ORDINAL_SKIP and noun not in STOP_WORDS:
            out.add(Slot(("ordinal", noun), m.group("n").lower()))
    if "/" in text:
        for m in _PATH.finditer(text):
            if not m.group("v").lower().startswith(("http://", "https://")):
                out.add(Slot(("path", ""), m.group("v").lower().rstrip("./")))
    if "." in text or "called" in text or "named" in text or " on " in text:
        for m in _HOST.finditer(text):
            v = m.group("v") or m.group("v2") or m.group("v3") or m.group("v4")
            if v and not re.fullmatch(r"\d+(?:\.\d+){1,2}", v):   # a version is not a host
                out.add(Slot(("host", ""), v.lower()))
    if "=" in text or ":" in text:
        for rx in (_KV_EQ, _KV_COLON):   # settings look like settings: k=v, or snake_case / dotted k: v
            for m in rx.finditer(text):
                k = m.group("k").lower()
                if k not in _KV_SKIP and k not in STOP_WORDS and len(k) >= 2:
                    out.add(Slot(("setting", k), m.group("v").lower().rstrip(".")))
    if "#" in text:
        for m in _CHANNEL.finditer(text):
            out.add(Slot(("channel", ""), m.group("v").lower()))
    if _HAS_OWNER.search(text):
        for m in _OWNER.finditer(text):
            out.add(Slot(("owner", ""), (m.group("v") or m.group("v2") or m.group("v3")).lower()))
    if " for " in text or " as " in text:
        for m in _USE_FOR.finditer(text):
            purpose = " ".join(stem(w) for w in m.group("k").split() if w not in STOP_WORDS)
            if purpose and m.group("v").lower() not in STOP_WORDS:
                out.add(Slot(("tool", purpose), m.group("v").lower()))
    return frozenset(out)


def _numbered_slots(text: str, out: set[Slot]) -> None:
    """The slots whose value is a number: versions, API path versions, prices, ports, counts, durations."""
    for m in _VERSION.finditer(text):
        name = m.group("name").lower().rstrip(".-")
        if name in STOP_WORDS or len(name) < 2 or name.isdigit():
            continue
        out.add(Slot(("version", stem(name)), _norm(m.group("ver"))))
    for m in _BARE_VERSION.finditer(text):
        name = m.group("name").lower()
        if name in _TECH:
            out.add(Slot(("version", stem(name)), m.group("ver")))
    for m in _API_VERSION.finditer(text):
        out.add(Slot(("version", "api path"), m.group("ver")))
    for m in _MONEY.finditer(text):
        out.add(Slot(("price", ""), re.sub(r"[\s,]", "", m.group("v").lower())))
    for m in _PORT.finditer(text):
        out.add(Slot(("port", ""), m.group("v") or m.group("v2")))
    for m in _COUNT.finditer(text):
        noun = stem(m.group("noun").lower())
        n = m.group("n").lower()
        out.add(Slot(("duration" if noun in _DURATION else "count", noun), str(_NUMBER_WORDS.get(n, n))))


def _by_key(slots_: frozenset[Slot]) -> dict[tuple[str, str], set[str]]:
    """The values of ``slots_`` grouped by slot key."""
    by: dict[tuple[str, str], set[str]] = {}
    for s in slots_:
        by.setdefault(s.key, set()).add(s.value)
    return by


def differing_slots(old: frozenset[Slot], new: frozenset[Slot]) -> list[tuple[Slot, Slot]]:
    """Pairs (old, new) of the same slot key with different values, where the new text does not also
    state the old value for that key (a list of versions is not a change)."""
    old_by, new_by = _by_key(old), _by_key(new)
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
    kind: str              # replace, from_to, instead, no_longer, retire, handover, moved_to, plain, weak, now
    old: str | None        # the old value the cue names ("vLLM"), if any
    new: str | None        # the new value, if any
    obj: str | None        # what moved ("the CI" in "moved the CI to Buildkite"), if any
    sentence: str


_GENERIC = frozenset("""use uses using used work works working worked live lives living lived run runs running ran
have has having go went gone be been being get got keep kept stay stayed play plays playing playing need needs
the our my a an their its it this that them there here over off back out up down""".split())


def content_tokens(text: str) -> set[str]:
    """Stems of the content words of ``text`` (no stop words, no generic verbs)."""
    return {stem(t) for t in tokens(text) if t not in STOP_WORDS and t not in _GENERIC and (len(t) >= 2 or t.isdigit())}


def _vetoed(sentence: str, at: int | None = None) -> str | None:
    """Why a cue in ``sentence`` does not count (None: it does). Someone else's life is looked for before
    the cue (``at``: its position; the subject): "my friend moved ..." vetoes, "Oskar handed ranking over
    to Yara, he is on the ads team" does not."""
    if _QUOTE.search(sentence):
        return "quoted"
    if _HEDGE.search(sentence) or sentence.rstrip().endswith("?"):
        return "hedged"
    if _NEGATED_CHANGE.search(sentence) or _WE_DID_NOT.search(sentence):
        return "negated"
    if _CONTINUITY.search(sentence) and not any(rx.search(sentence) for _, rx in _LINKED[:3]):
        return "unchanged"
    if _OTHER.search(sentence if at is None else sentence[:at]):
        return "someone else"
    return None


_CAPTION = re.compile(r"\[shares an image:[^\]]*\]")   # what the LoCoMo parser appends: not the speaker's words


@functools.lru_cache(maxsize=4096)
def cues(text: str) -> tuple[Cue, ...]:
    """The change cues of ``text`` that survive the vetoes (a hypothetical, a question, a quoted or
    reported message, a negated change, someone else's life), sentence by sentence."""
    out: list[Cue] = []
    for sent in sentences(_CAPTION.sub(" ", text)):
        if _vetoed(sent, 0) or (_OTHER.search(sent) and not any(rx.search(sent) for _, rx in _LINKED)
                                and not _PLAIN.search(sent) and not _NOW.search(sent)):
            continue
        linked = False
        for kind, rx in _LINKED:
            for m in rx.finditer(sent):
                g = m.groupdict()
                if _vetoed(sent, m.start()):
                    continue
                if (g.get("old") or "").split(" ")[0].lower().endswith("ing"):
                    continue   # "instead of giving up", "quit smoking": an activity, not a value
                if kind == "moved_to" and " from " in f" {g.get('obj') or ''} ":
                    continue   # "moved the docs from X to Y": the from_to cue
                if kind == "moved_to" and not (g.get("obj") or "").strip():
                    # "the dataset moved to /mnt/data/v2": the object is the subject before the verb
                    subj = " ".join(sent[:m.start()].split()[-3:]) or None
                    out.append(Cue("moved_to", None, g.get("new"), subj, sent))
                else:
                    out.append(Cue(kind, g.get("old"), g.get("new"), (g.get("obj") or "").strip() or None, sent))
                linked = True
        if not linked:
            if (m := _PLAIN.search(sent)) and not _vetoed(sent, m.start()):
                out.append(Cue("plain", None, None, None, sent))
            elif (m := _WEAK.search(sent)) and not _vetoed(sent, m.start()):
                out.append(Cue("weak", None, None, None, sent))
            elif (m := _NOW.search(sent)) and not _NOW_OPENER.search(sent) and not _vetoed(sent, m.start()):
                out.append(Cue("now", None, None, None, sent))
    return tuple(out)


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
#: cue kinds that name the old value
LINKED_KINDS = ("replace", "from_to", "instead", "no_longer", "retire", "handover")


def _head(value: str | None, n: int = 1) -> list[str]:
    """The first ``n`` content words of a cue's value (stems)."""
    return [stem(x) for x in tokens(value or "") if x not in STOP_WORDS and x not in _GENERIC][:n]


def _names_in(value: str | None, old_toks: set[str], n: int = 2, any_of: bool = False) -> bool:
    """The old text has the value's first content words (its first ``n``; all of them, or one with
    ``any_of``): "vLLM" in "we replaced vLLM with SGLang"; not "docs" in "no longer reviewing docs"
    against "we moved the docs", not "GitHub Pages" against "GitHub Discussions"."""
    head = _head(value, n)
    return bool(head) and (any if any_of else all)(t in old_toks for t in head)


def _same_sentence_subject(old_text: str, new_text: str, o: Slot, n: Slot, values: set[str]) -> bool:
    """The sentence that states the old value and the one that states the new value share a content word
    besides the values (a version of a named thing carries its subject in the slot). In a long answer a
    price, a count or a port of something else is there by chance ("$109,000" for an IRA, "$15" for a set
    of coasters)."""
    if o.key[0] == "version" and o.key[1]:
        return True
    olds = [x for x in sentences(old_text) if o in slots(x)] or [old_text]
    news = [x for x in sentences(new_text) if n in slots(x)] or [new_text]
    return any(_shared_beyond(a, b, values) for a in olds for b in news)


def _shared_beyond(old_text: str, new_text: str, values: set[str]) -> bool:
    """The two texts share a content word that is not part of a slot value (the same subject)."""
    skip = {stem(t) for v in values for t in tokens(v)}
    return bool((set(keywords(old_text)) & set(keywords(new_text))) - skip)


def _slot_change(o: Slot, n: Slot) -> str:
    """A verdict's reason for a differing slot: ``version postgr: 14 -> 16``."""
    return f"{o.key[0]}{' ' + o.key[1] if o.key[1] else ''}: {o.value} -> {n.value}"


def decide(old_text: str, new_text: str, *, similarity: float = 0.0) -> Verdict:
    """Does ``new_text`` (said later, by the same speaker) replace ``old_text``?

    * superseded 0.9 (cue): a change cue names something the old text says ("replaced vLLM ...", "from
      5432 to 6432", "no longer at the bank") and the new value is not already in the old text;
    * superseded 0.8 (slot): the same slot has another value and the new text has a change cue;
    * possible 0.5 (slot): the same slot has another value, no cue (unless an additive word: a second pet);
    * possible 0.4 (cue): "moved X to Y" with X in the old text and Y not;
    * else no change (a change word alone, however similar the texts, ties nothing: on LoCoMo that rule
      marked 2.5 % of all memories, nearly all wrongly). ``similarity`` is kept for the record."""
    if all(x.rstrip().endswith("?") for x in sentences(old_text)):
        return NO_CHANGE   # a question states no fact to replace
    old_toks = content_tokens(old_text)
    found = cues(new_text)
    for c in found:
        if c.kind in LINKED_KINDS and _names_in(c.old, old_toks):
            if c.new and _names_in(c.new, old_toks, 1) and c.kind not in ("no_longer", "from_to") \
                    and not _names_in(c.new, content_tokens(c.old or ""), 1):
                continue   # the old text already names the new value too: a comparison, not this change
            return Verdict("superseded", 0.9, "cue", f"{c.kind}: '{c.old}' -> '{c.new or ''}'".strip())
    sold, snew = slots(old_text), slots(new_text)
    values = {s.value for s in sold | snew}
    shared = _shared_beyond(old_text, new_text, values)
    diffs = [(o, n) for o, n in differing_slots(sold, snew)
             if (shared or o.key[1]) and _same_sentence_subject(old_text, new_text, o, n, values)]
    strong = [c for c in found if c.kind not in ("now", "weak")]
    for o, n in diffs:
        what = _slot_change(o, n)
        tied = [c for c in (strong if o.key[0] == "duration" else found) if n in slots(c.sentence)]
        if tied:   # a duration ("five years" -> "seven years now") changes by itself: only a strong cue ties it
            return Verdict("superseded", 0.8, "slot", what + f" ({tied[0].kind})")
    for o, n in diffs:
        if o.key[0] == "duration":
            continue   # "three months" -> "four months": time passing, not a change, unless a cue says so
        what = _slot_change(o, n)
        if (o.key[0] == "ordinal" or not _ADDITIVE.search(new_text)) and not any(_vetoed(s) for s in sentences(new_text)
                                                      if n.value in s.lower()):
            return Verdict("possible", 0.5, "slot", what)
    for c in strong:
        if c.kind == "moved_to" and c.obj and _names_in(c.obj, old_toks) and c.new \
                and not _names_in(c.new, old_toks):
            return Verdict("possible", 0.4, "cue", f"moved '{c.obj}' -> '{c.new}'")
    return NO_CHANGE
