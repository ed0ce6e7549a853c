"""The slot values a statement fills (pure): versions of named things, ports, hosts, paths, prices, settings,
channels, owners, counts and durations, what a named thing of a project is ("the VPN is WireGuard",
"Adyen handles payments"), and the vocabularies', typed and life slots of :mod:`hela_cli.facts.vocab`. Two
statements that fill one slot with different values may say a change (:mod:`hela_cli.facts.rules` decides).
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

from hela_cli.facts.cues import _CAPTION, _own, sentences
from hela_cli.facts.life import life_states
from hela_cli.facts.vocab import typed_values, vocab_values
from hela_cli.text.keywords import STOP_WORDS, stem


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
# the key's parts are atomic (matched once, never given back): "_" is both a separator and a part of a part, and a long snake_case
# word not followed by ":" backtracked exponentially (a BookMinder transcript line hung a capture); the same
# matches, since a key cut shorter is followed by a key character, never by ":"
_KV_COLON = re.compile(r"(?<![\w.])(?P<k>[a-z_][a-z0-9]*(?=(?P<kt>(?:[_.][a-z0-9_]+)+))(?P=kt))\s*:\s*(?P<v>[\w./+-]+)",
                       re.I)   # (?=(X))(?P=kt): X atomic, as a possessive X++ (Python 3.11+ only) would be
_CHANNEL = re.compile(r"(?<![\w&])#(?P<v>[a-z][\w-]+)", re.I)
_OWNER = re.compile(r"\b(?:owner|lead|maintainer|manager|boss|on-?call|point\s+of\s+contact|reviewer|approver)\b"
                    r"(?:\s+[\w'-]+){0,3}?\s+(?:is|:|=|will\s+be)\s+(?:now\s+)?(?P<v>[A-Z][a-z]+)\b|"
                    r"\b(?P<v2>[A-Z][a-z]+)\s+(?:now\s+)?(?:owns|leads|maintains|manages|is\s+on-?call)\b|"
                    r"\b(?:owned|maintained|led|run|managed|handled|reviewed)\s+by\s+(?P<v3>[A-Z][a-z]+)\b")
_USE_FOR = re.compile(r"\b(?:use|uses|using|run|runs|running|with|on|via)\s+(?P<v>[A-Za-z][\w.+-]*)\s+"
                      r"(?:for|as)\s+(?:the\s+|our\s+|my\s+|a\s+|an\s+)?(?P<k>[a-z]+(?:\s+[a-z]+)?)\b")
#: "the VPN is WireGuard", "DNS now lives in Cloudflare", "Celery's broker is RabbitMQ": what a named thing of a project
#: is (the subject's words are the slot's key, the name its value)
_NAME_VALUE = r"(?P<v>(?-i:[A-Z0-9])[\w.+-]*(?:\s+(?-i:[A-Z])[\w.+-]*){0,2}|[a-z][\w+]*[.-][\w.+-]*[a-z0-9])"
_NAMED = re.compile(r"(?:^|\b(?:the|our)\s+)(?:[\w-]+'s\s+)?(?P<k>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)\s+(?:now\s+)?"
                    r"(?:is|are|'s|lives?|runs?|goes?|go|sits?|moved|switched|migrated)(?:\s+(?:now|all|entirely|fully|"
                    r"officially|currently|over))*(?:\s+(?:[a-z]+ed|built|run|done|kept|sent|written|made|held|led|taken|"
                    r"driven|given|chosen|shown|drawn|known))?"
                    r"(?:\s+(?:on|in|at|through|via|with|by|to|into|onto|under|from))?\s+(?:now\s+)?"
                    r"(?:(?:the|our|an?)\s+)?(?:[a-z]+\s+){0,2}?" + _NAME_VALUE, re.I)
#: the name first: "Adyen handles payments", "Outline is our new wiki", "Lena is in charge of planning"
_NAMED_FIRST = re.compile(r"(?:^|[,;:]\s*|\b(?:now|and)\s+)" + _NAME_VALUE + r"\s+(?:now\s+)?(?:(?:handles|powers|runs|hosts|"
                          r"serves|stores|manages|routes|issues|builds|facilitates|chairs|leads|owns|does|takes\s+care\s+of|"
                          r"looks\s+after)\s+|is\s+(?:now\s+)?(?:in\s+charge\s+of\s+|responsible\s+for\s+|(?:our|the)\s+(?:new\s+)?))"
                          r"(?:the\s+|our\s+)?(?P<k>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)(?=\s*(?:[,;.!?]|$)|\s+(?:now|from|since|"
                          r"as|going|starting|effective|for|at|in|on|after|because|too|again|this|today)\b)", re.I)
_NAMED_SKIP = frozenset("""it this that there he she they we i you what which who everything everyone nothing something
one name plan idea answer problem point reason question thing result""".split())
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
                out.add(Slot(("named", purpose), m.group("v").lower()))   # "Redis as the broker": the broker is Redis
    for sent in sentences(text):
        for m in itertools.chain(_NAMED.finditer(sent), _NAMED_FIRST.finditer(sent)):
            words = [w.lower() for w in m.group("k").split()]
            key = " ".join(stem(w) for w in words if w not in STOP_WORDS)
            if key and not set(words) & _NAMED_SKIP and m.group("v").split()[0].lower() not in STOP_WORDS:
                out.add(Slot(("named", key), _norm(m.group("v"))))
    out.update(Slot(("vocab", cls), name) for cls, name in vocab_values(text))   # Slack, Teams: one chat tool
    out.update(Slot((kind, ""), v) for kind, v in typed_values(text))             # weekday, time of day, size
    for sent in sentences(text):   # the speaker's own life, sentence by sentence (not a relative's)
        if _own(sent):
            out.update(Slot(("life", cat), v) for cat, v in life_states(sent) if v)
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
    for key in [k for k in new_by if k[0] == "named" and k not in old_by]:   # "the ingress controller" is "our
        words = key[1].split()                                               # Kubernetes ingress controller"
        same = [k for k in old_by if k[0] == "named" and k[1].split()[-1] == words[-1]
                and min(len(words), len(k[1].split())) >= 2   # "limit" alone may be any limit
                and (set(words) <= set(k[1].split()) or set(k[1].split()) <= set(words))]
        if len(same) == 1:
            new_by.setdefault(same[0], set()).update(new_by[key])
    out = []
    for key, nvals in new_by.items():
        ovals = old_by.get(key)
        if not ovals or ovals & nvals:
            continue
        if key[0] == "host" and {v.split(".")[0] for v in ovals} & {v.split(".")[0] for v in nvals}:
            continue   # "db1" and "db1.internal": one host
        if len(nvals) > 1 and key[0] in ("count", "port", "host", "vocab", "weekday", "time", "size", "life", "cadence",
                                         "named"):
            continue   # several values at once: a list, not a replacement
        out.append((Slot(key, sorted(ovals)[0]), Slot(key, sorted(nvals)[0])))
    return out

