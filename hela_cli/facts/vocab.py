"""The vocabularies a change is read with (pure): what a fact is about and which values take one place.

* **Subjects** (:func:`qualifiers`): the words that say which thing a statement is about when a project or a
  life has several of them: an environment (staging, prod), a region (EU, ``us-east-1``), a database role
  (primary, read replica), a part of the system (the Android build, the backend, "the billing service") or a
  personal machine ("my laptop"). Two statements whose qualifiers of one kind differ, and neither names the
  other's, are about two things: a change of one replaces nothing of the other.
* **Things that take one place** (:func:`vocab_slots`): small vocabularies of interchangeable products
  (chat tools, CI systems, databases, clouds, languages, frameworks, package managers, model providers,
  trackers, meeting tools, code hosts, merge strategies, mail services). A project that says "everyone is on
  Teams now" replaces the chat tool it named before, without naming it. ``EXCLUSIVE`` classes hold one value
  at a time; the others (a project runs several databases) need the same subject named besides.
* **Typed slots** (:func:`typed_values`): weekday, time of day, cadence ("daily", "every 6 hours"), size.
* **Life slots**: in :mod:`hela_cli.facts.life`.

Written from general knowledge and the dev half of the changed-facts suite only (benchmarks/quality/changed_facts/).
"""

from __future__ import annotations

import functools
import re

# ----------------------------------------------------------------------------------------------- subjects

_ENV = {"prod": "prod", "production": "prod", "staging": "staging", "stage": "staging", "preprod": "preprod",
        "pre-prod": "preprod", "uat": "uat", "qa": "qa", "sandbox": "sandbox", "dev": "dev", "development": "dev"}
_ROLE = {"primary": "primary", "replica": "replica", "replicas": "replica", "standby": "standby",
         "secondary": "secondary", "follower": "replica", "leader": "primary", "writer": "primary",
         "reader": "replica"}
_PART = {w: w for w in """android ios web backend frontend desktop mobile worker workers scheduler gateway cli sdk
dashboard admin website firmware laptop laptops""".split()}
_PART["workers"] = "worker"
_PART["laptops"] = "laptop"
#: who a thing is for: "the public API", "the internal docs"
_AUDIENCE = re.compile(r"\b(?P<a>public|internal|private|external|partner)(?:'s)?\s+(?:[\w-]+\s+)?(?:api|apis|endpoints?|site|"
                       r"docs|dashboard|services?|tools|registry|repos?|packages?|network|app)\b|\b(?:api|site|docs|app)\s+is\s+"
                       r"(?P<a2>public|internal|private)\b", re.I)
#: parts named by two words: the machines that build (not the ones that serve)
_PART_PHRASE = re.compile(r"\b(?:build|ci)\s+(?:servers?|machines?|agents?|boxe?s?|runners?|hosts?|nodes?)\b", re.I)
_MACHINE = re.compile(r"\b(?:my|our\s+own|his|her)\s+(?:own\s+)?(?:laptop|machine|mac|macbook|pc|desktop|computer|"
                      r"workstation|dev\s+box|home\s+server|side\s+project|pet\s+project|hobby\s+project|"
                      r"personal\s+project|homelab)\b|\bpersonal\s+(?:laptop|machine|computer|setup)\b|"
                      r"\bat\s+home\b|\blocally\b", re.I)
_REGION = re.compile(r"\b(?P<r>EU|US|UK|APAC|EMEA|LATAM|Europe|Asia|[a-z]{2}-(?:east|west|north|south|central|"
                     r"northeast|southeast|northwest|southwest)-\d)\b|\b(?P<r2>eu|us|uk|asia)[-\s](?:region|cluster|"
                     r"datacenter|data\s+center|dc|zone)\b")
_NAMED_PART = re.compile(r"\b(?P<n>[A-Za-z][\w-]*)[\s-](?:service|svc|microservice|server|cluster|bucket|queue|"
                         r"instance|pipeline|app|bot|site|build)\b", re.I)
_NOT_A_NAME = frozenset("""the a an our my your their its this that these those old new main same other another second
first third one two own whole entire each every any some all which what model build api app web main default
shared single separate current previous former legacy existing internal external public private local remote
big small test""".split())
_WORD = re.compile(r"[a-z][a-z0-9-]*", re.I)


@functools.lru_cache(maxsize=8192)
def qualifiers(text: str) -> dict[str, frozenset[str]]:
    """What ``text`` says its subject is, by kind: ``{"env": {"staging"}, "part": {"android"}, ...}``."""
    out: dict[str, set[str]] = {}
    words = [w.lower() for w in _WORD.findall(text)]
    for i, w in enumerate(words):
        if w in _ENV and not (w == "dev" and i + 1 < len(words) and words[i + 1] in ("server", "dependencies",
                                                                                     "dependency", "mode")):
            out.setdefault("env", set()).add(_ENV[w])
        if w in _ROLE:
            out.setdefault("role", set()).add(_ROLE[w])
        if w in _PART:
            out.setdefault("part", set()).add(_PART[w])
    for m in _AUDIENCE.finditer(text):   # the public API is not the internal one
        out.setdefault("audience", set()).add((m.group("a") or m.group("a2")).lower())
    if _PART_PHRASE.search(text):
        out.setdefault("part", set()).add("build-host")
    for m in _REGION.finditer(text):
        out.setdefault("region", set()).add((m.group("r") or m.group("r2")).lower())
    for m in _NAMED_PART.finditer(text):
        n = m.group("n").lower()
        if n not in _NOT_A_NAME and not n.isdigit() and n not in _ENV:
            out.setdefault("part", set()).add(n)
    if _MACHINE.search(text):
        out["machine"] = {"personal"}
    return {k: frozenset(v) for k, v in out.items()}


def other_subject(old: str, new: str) -> bool:
    """Are ``old`` and ``new`` (a sentence or a clause each) about different things? Yes when a kind of
    qualifier is named on both sides with different values and neither side names the other's (the EU region
    against the US one; the Android build against the backend); or when one of them is about a personal
    machine and the other is not (a laptop's Node is not the project's)."""
    qo, qn = qualifiers(old), qualifiers(new)
    if ("machine" in qo) != ("machine" in qn):
        return True
    lo, ln = old.lower(), new.lower()
    for kind in ("env", "region", "role", "part", "audience"):
        a, b = qo.get(kind), qn.get(kind)
        if a and b and not (a & b) and not any(_mentions(ln, x) for x in a) and not any(_mentions(lo, x) for x in b):
            return True
    return False


def _mentions(text: str, word: str) -> bool:
    return re.search(r"\b" + re.escape(word) + r"(?:s|es)?\b", text) is not None


# ----------------------------------------------------------------------------------------------- vocabularies

#: class -> canonical name -> the ways it is written (regex alternatives, matched case-insensitively unless
#: the class lists it in _CASED)
VOCAB: dict[str, dict[str, str]] = {
    "chat tool": {"slack": r"slack", "teams": r"(?:microsoft\s+|ms\s+)?Teams", "discord": r"discord",
                  "mattermost": r"mattermost", "zulip": r"zulip", "rocket.chat": r"rocket\.?chat",
                  "google chat": r"google\s+chat", "element": r"element(?:\s+chat)?|matrix"},
    "ci": {"jenkins": r"jenkins", "travis": r"travis(?:\s+ci)?", "circleci": r"circle\s?ci",
           "github actions": r"github\s+actions|gh\s+actions", "gitlab ci": r"gitlab\s+ci(?:/cd)?",
           "buildkite": r"buildkite", "drone": r"drone(?:\s+ci)?", "teamcity": r"teamcity",
           "azure pipelines": r"azure\s+(?:pipelines|devops)", "bitbucket pipelines": r"bitbucket\s+pipelines",
           "woodpecker": r"woodpecker"},
    "database": {"postgres": r"postgres(?:ql)?", "mysql": r"mysql", "mariadb": r"mariadb", "sqlite": r"sqlite",
                 "mongodb": r"mongo(?:db)?", "cockroachdb": r"cockroach(?:db)?", "dynamodb": r"dynamo(?:db)?",
                 "cassandra": r"cassandra", "sql server": r"sql\s+server|mssql", "oracle": r"oracle\s+db",
                 "planetscale": r"planetscale", "firestore": r"firestore", "couchdb": r"couchdb",
                 "supabase": r"supabase", "neon": r"neon\s+(?:postgres|db)"},
    "cloud": {"aws": r"aws|amazon\s+web\s+services", "gcp": r"gcp|google\s+cloud", "azure": r"azure",
              "digitalocean": r"digital\s?ocean", "hetzner": r"hetzner", "linode": r"linode|akamai\s+cloud",
              "ovh": r"ovh(?:cloud)?", "fly.io": r"fly\.io", "heroku": r"heroku", "render": r"render\.com",
              "vercel": r"vercel", "netlify": r"netlify"},
    "language": {"python": r"python", "go": r"golang|Go", "rust": r"rust", "java": r"java", "kotlin": r"kotlin",
                 "typescript": r"typescript", "javascript": r"javascript", "ruby": r"ruby", "php": r"php",
                 "c#": r"c#", "elixir": r"elixir", "scala": r"scala", "swift": r"swift", "c++": r"c\+\+"},
    "framework": {"django": r"django", "flask": r"flask", "fastapi": r"fastapi", "rails": r"rails",
                  "express": r"express(?:\.js)?", "nestjs": r"nest(?:\.?js)", "spring": r"spring(?:\s+boot)?",
                  "laravel": r"laravel", "react": r"react(?!\s+native)", "react native": r"react\s+native",
                  "vue": r"vue(?:\.js)?", "angular": r"angular", "svelte": r"svelte(?:kit)?",
                  "next.js": r"next\.?js", "nuxt": r"nuxt", "remix": r"remix", "gin": r"gin", "phoenix": r"phoenix",
                  "flutter": r"flutter", "htmx": r"htmx"},
    "package manager": {"npm": r"npm", "yarn": r"yarn", "pnpm": r"pnpm", "bun": r"bun", "pip": r"pip",
                        "poetry": r"poetry", "uv": r"uv", "conda": r"conda", "pipenv": r"pipenv", "pdm": r"pdm"},
    "provider": {"openai": r"openai|gpt-?[345][\w.-]*", "anthropic": r"anthropic|claude(?:\s+[\d.]+)?",
                 "gemini": r"gemini", "mistral": r"mistral", "cohere": r"cohere", "groq": r"groq",
                 "bedrock": r"bedrock", "together": r"together\s+ai", "ollama": r"ollama",
                 "openrouter": r"openrouter"},
    "tracker": {"jira": r"jira", "linear": r"Linear", "asana": r"asana", "trello": r"trello",
                "github issues": r"github\s+issues", "clickup": r"clickup", "shortcut": r"Shortcut",
                "youtrack": r"youtrack"},
    "meeting tool": {"zoom": r"zoom", "google meet": r"google\s+meet|g\s?meet", "webex": r"webex",
                     "jitsi": r"jitsi", "whereby": r"whereby"},
    "code host": {"github": r"github(?!\s+(?:actions|issues|pages|discussions))", "gitlab": r"gitlab(?!\s+ci)",
                  "bitbucket": r"bitbucket(?!\s+pipelines)", "gitea": r"gitea|forgejo", "codeberg": r"codeberg"},
    "merge strategy": {"squash": r"squash(?:[\s-]+(?:and\s+)?merg\w*|ing)|squash", "rebase": r"rebase[\s-]+(?:and\s+)?merg\w*",
                       "merge commit": r"merge\s+commits?", "fast-forward": r"fast[\s-]forward(?:\s+only)?"},
    "mail service": {"mailchimp": r"mailchimp", "sendgrid": r"sendgrid", "postmark": r"postmark",
                     "mailgun": r"mailgun", "ses": r"amazon\s+ses|aws\s+ses", "buttondown": r"buttondown",
                     "resend": r"Resend"},
    "container registry": {"docker hub": r"docker\s?hub", "ghcr": r"ghcr(?:\.io)?|github\s+container\s+registry",
                           "quay": r"quay(?:\.io)?", "ecr": r"ecr|elastic\s+container\s+registry", "gcr": r"gcr|artifact\s+registry",
                           "acr": r"acr|azure\s+container\s+registry", "harbor": r"harbor", "artifactory": r"artifactory"},
    "design tool": {"figma": r"figma", "sketch": r"Sketch", "adobe xd": r"adobe\s+xd", "invision": r"invision",
                    "penpot": r"penpot", "framer": r"framer"},
    "password manager": {"lastpass": r"lastpass", "1password": r"1password", "bitwarden": r"bitwarden",
                         "dashlane": r"dashlane", "keeper": r"keeper\s+security", "keepass": r"keepass(?:xc)?"},
    "vpn": {"openvpn": r"openvpn", "wireguard": r"wireguard", "tailscale": r"tailscale", "zerotier": r"zerotier",
            "cisco anyconnect": r"(?:cisco\s+)?anyconnect", "globalprotect": r"globalprotect", "pritunl": r"pritunl"},
    "paging": {"pagerduty": r"pagerduty", "opsgenie": r"opsgenie", "victorops": r"victorops|splunk\s+on-?call",
               "incident.io": r"incident\.io", "grafana oncall": r"grafana\s+on-?call", "rootly": r"rootly"},
    "error tracker": {"sentry": r"sentry", "rollbar": r"rollbar", "bugsnag": r"bugsnag", "glitchtip": r"glitchtip",
                      "honeybadger": r"honeybadger", "airbrake": r"airbrake", "raygun": r"raygun"},
    "feature flags": {"launchdarkly": r"launchdarkly", "unleash": r"unleash", "flagsmith": r"flagsmith",
                      "growthbook": r"growthbook", "configcat": r"configcat", "split": r"split\.io"},
    "status page": {"statuspage": r"statuspage(?:\.io)?", "instatus": r"instatus", "better stack": r"better\s?(?:stack|uptime)",
                    "cachet": r"cachet", "upptime": r"upptime"},
    "support desk": {"zendesk": r"zendesk", "help scout": r"help\s?scout", "freshdesk": r"freshdesk",
                     "intercom": r"intercom", "front": r"frontapp", "groove": r"groovehq", "zammad": r"zammad"},
    "product analytics": {"mixpanel": r"mixpanel", "amplitude": r"amplitude", "posthog": r"posthog", "heap": r"heap\s+analytics",
                          "plausible": r"plausible", "google analytics": r"google\s+analytics|\bGA4\b", "matomo": r"matomo",
                          "fathom": r"fathom"},
    "payments": {"stripe": r"stripe", "braintree": r"braintree", "adyen": r"adyen", "paypal": r"paypal",
                 "mollie": r"mollie", "square": r"Square", "paddle": r"Paddle", "checkout.com": r"checkout\.com"},
    "dns": {"cloudflare": r"cloudflare", "route 53": r"route\s?53", "godaddy": r"godaddy", "namecheap": r"namecheap",
            "gandi": r"gandi", "dnsimple": r"dnsimple", "ns1": r"ns1"},
    "log service": {"papertrail": r"papertrail", "loggly": r"loggly", "loki": r"(?:grafana\s+)?loki", "splunk": r"splunk",
                    "logtail": r"logtail", "elk": r"elk(?:\s+stack)?", "graylog": r"graylog", "sumo logic": r"sumo\s?logic"},
    "app server": {"gunicorn": r"gunicorn", "uvicorn": r"uvicorn", "hypercorn": r"hypercorn", "uwsgi": r"uwsgi",
                   "waitress": r"waitress", "puma": r"puma", "unicorn": r"Unicorn", "passenger": r"phusion\s+passenger",
                   "granian": r"granian"},
    "site generator": {"gatsby": r"gatsby", "astro": r"astro", "hugo": r"hugo", "jekyll": r"jekyll", "eleventy": r"eleventy|11ty",
                       "docusaurus": r"docusaurus", "mkdocs": r"mkdocs(?:\s+material)?", "sphinx": r"sphinx",
                       "vitepress": r"vitepress", "zola": r"zola"},
    "test runner": {"pytest": r"pytest", "unittest": r"unittest", "jest": r"jest", "mocha": r"mocha",
                    "vitest": r"vitest", "jasmine": r"jasmine", "rspec": r"rspec", "minitest": r"minitest"},
    "linter": {"flake8": r"flake8", "ruff": r"ruff", "pylint": r"pylint", "isort": r"isort", "eslint": r"eslint",
               "tslint": r"tslint", "prettier": r"prettier", "biome": r"biome", "rubocop": r"rubocop", "standard": r"standardjs"},
    "date library": {"moment": r"moment\.?js", "date-fns": r"date-fns", "dayjs": r"day\.?js",
                     "luxon": r"luxon"},
    "cli library": {"argparse": r"argparse", "click": r"Click", "typer": r"typer", "cobra": r"cobra", "clap": r"clap",
                    "docopt": r"docopt", "commander": r"commander(?:\.js)?", "yargs": r"yargs"},
    "wiki": {"confluence": r"confluence", "notion": r"Notion", "outline": r"Outline", "bookstack": r"bookstack",
             "wiki.js": r"wiki\.js", "coda": r"Coda", "mediawiki": r"mediawiki", "dokuwiki": r"dokuwiki"},
    "auth provider": {"auth0": r"auth0", "okta": r"okta", "cognito": r"cognito", "keycloak": r"keycloak",
                      "clerk": r"Clerk", "firebase auth": r"firebase\s+auth(?:entication)?", "supertokens": r"supertokens",
                      "authentik": r"authentik", "zitadel": r"zitadel"},
    "orm": {"sqlalchemy": r"sqlalchemy", "prisma": r"prisma", "typeorm": r"typeorm", "sequelize": r"sequelize",
            "drizzle": r"Drizzle", "hibernate": r"hibernate", "gorm": r"gorm", "diesel": r"Diesel", "peewee": r"peewee",
            "sqlmodel": r"sqlmodel", "tortoise": r"tortoise\s+orm", "ent": r"ent\s+orm"},
    "state management": {"redux": r"redux(?:\s+toolkit)?", "zustand": r"zustand", "mobx": r"mobx", "recoil": r"Recoil",
                         "jotai": r"jotai", "pinia": r"pinia", "vuex": r"vuex", "xstate": r"xstate"},
    "bundler": {"webpack": r"webpack", "vite": r"vite", "rollup": r"Rollup", "esbuild": r"esbuild", "turbopack": r"turbopack",
                "rspack": r"rspack", "browserify": r"browserify"},
    "orchestrator": {"airflow": r"airflow", "dagster": r"dagster", "prefect": r"prefect", "temporal": r"Temporal",
                     "argo workflows": r"argo(?:\s+workflows)?", "step functions": r"step\s+functions"},
    "search engine": {"elasticsearch": r"elastic\s?search", "opensearch": r"opensearch", "algolia": r"algolia",
                      "meilisearch": r"meilisearch", "typesense": r"typesense", "solr": r"solr", "pagefind": r"pagefind",
                      "vespa": r"vespa\.ai"},
    "infrastructure as code": {"terraform": r"terraform", "opentofu": r"opentofu", "pulumi": r"pulumi",
                               "cloudformation": r"cloudformation", "cdk": r"aws\s+cdk|cdk", "crossplane": r"crossplane"},
    "experiment tracking": {"wandb": r"wandb|weights\s*(?:&|and)\s*biases|w&b", "mlflow": r"mlflow", "neptune": r"Neptune",
                            "comet": r"comet\.ml|comet\s+ml", "clearml": r"clearml", "tensorboard": r"tensorboard"},
    "web proxy": {"nginx": r"nginx", "traefik": r"traefik", "caddy": r"caddy", "envoy": r"envoy", "haproxy": r"haproxy",
                  "apache": r"apache(?:\s+httpd)?(?!\s+(?:kafka|spark|airflow|flink|beam|arrow|superset|cassandra))"},
    "cdn": {"cloudfront": r"cloudfront", "fastly": r"fastly", "bunny cdn": r"bunny\s*cdn|bunny\.net", "akamai": r"akamai\s+cdn",
            "cloudflare cdn": r"cloudflare\s+cdn"},
    "monitoring": {"datadog": r"datadog", "new relic": r"new\s?relic", "honeycomb": r"Honeycomb", "prometheus": r"prometheus",
                   "dynatrace": r"dynatrace", "grafana cloud": r"grafana\s+cloud", "signoz": r"signoz", "appsignal": r"appsignal"},
    "object storage": {"s3": r"s3", "gcs": r"gcs|google\s+cloud\s+storage", "r2": r"r2", "minio": r"minio",
                       "azure blob": r"azure\s+blob(?:\s+storage)?", "backblaze": r"backblaze(?:\s+b2)?", "wasabi": r"Wasabi"},
    "editor": {"vs code": r"vs\s?code|visual\s+studio\s+code", "vim": r"vim", "neovim": r"neovim|nvim", "emacs": r"emacs",
               "intellij": r"intellij(?:\s+idea)?", "pycharm": r"pycharm", "sublime text": r"sublime\s+text",
               "cursor": r"Cursor", "zed": r"Zed", "webstorm": r"webstorm", "helix": r"Helix"},
    "css framework": {"tailwind": r"tailwind(?:\s?css)?", "bootstrap": r"Bootstrap", "sass": r"sass|scss",
                      "styled-components": r"styled-components", "css modules": r"css\s+modules", "bulma": r"bulma",
                      "emotion": r"Emotion", "vanilla-extract": r"vanilla-extract"},
    "message broker": {"rabbitmq": r"rabbitmq", "kafka": r"kafka", "sqs": r"sqs", "nats": r"nats", "activemq": r"activemq",
                       "pulsar": r"pulsar", "redis": r"redis(?=\s+(?:as\s+(?:the\s+)?)?broker)"},
}
#: the classes a project (or a team) has one of at a time
EXCLUSIVE = frozenset({"chat tool", "ci", "package manager", "tracker", "meeting tool", "code host", "merge strategy",
                       "mail service", "container registry", "design tool", "password manager", "vpn", "paging",
                       "error tracker", "feature flags", "status page", "support desk", "wiki", "auth provider",
                       "state management", "experiment tracking"})
#: the classes whose names are also common words: matched only as written (capitalized)
_CASED = {("language", "go"), ("tracker", "linear"), ("tracker", "shortcut"), ("chat tool", "teams"),
          ("mail service", "resend"), ("design tool", "sketch"), ("payments", "square"), ("payments", "paddle"),
          ("app server", "unicorn"), ("cli library", "click"), ("wiki", "notion"), ("wiki", "outline"), ("wiki", "coda"),
          ("auth provider", "clerk"), ("orm", "drizzle"), ("orm", "diesel"), ("state management", "recoil"),
          ("bundler", "rollup"), ("orchestrator", "temporal"), ("experiment tracking", "neptune"),
          ("monitoring", "honeycomb"), ("object storage", "wasabi"), ("editor", "cursor"), ("editor", "zed"),
          ("editor", "helix"), ("css framework", "bootstrap"), ("css framework", "emotion")}


def _vocab_regex() -> re.Pattern[str]:
    alts = []
    for cls, names in VOCAB.items():
        for name, rx in names.items():
            g = f"v{len(alts)}"
            body = f"(?-i:{rx})" if (cls, name) in _CASED else rx
            alts.append((g, cls, name, rf"(?P<{g}>{body})(?![\w-])"))
    _VOCAB_NAMES.update({g: (cls, name) for g, cls, name, _ in alts})
    # one look-behind for all the names: at a position inside a word every name fails at once
    return re.compile(r"(?<![\w.-])(?=[\w@#])(?:" + "|".join(a[3] for a in alts) + ")", re.I)


_VOCAB_NAMES: dict[str, tuple[str, str]] = {}
_VOCAB_RX = _vocab_regex()
#: the words the names are spelled with: a text with none of them names nothing (most chat turns; a cheap
#: set intersection before the long expression)
_VOCAB_WORDS = frozenset(w for names in VOCAB.values() for rx in names.values()
                         for w in re.findall(r"[a-z][a-z0-9]+", re.sub(r"\\[a-z]", " ", rx.lower()))) - frozenset(
    "and chat cloud com db ai cd ci commits boot io js ql services ms actions issues pipelines pages discussions "
    "ing only forward fast native web digital devops as the on day date call better stack analytics container registry "
    "elastic artifact logic hub security checkout incident split material kit merg server broker password fns ty xc "
    "xd arrow beam flink spark httpd new text code step idea net functions visual studio storage weights biases wiki auth "
    "blob css orm cdn relic firebase authentication tortoise ml cloudflare bunny".split())   # words of a name that are no name alone (common words: a turn with only them names nothing)


@functools.lru_cache(maxsize=8192)
def vocab_values(text: str) -> frozenset[tuple[str, str]]:
    """(class, canonical name) of every vocabulary name ``text`` says."""
    if not _VOCAB_WORDS.intersection(re.findall(r"[a-z][a-z0-9]+", text.lower())) and "#" not in text \
            and "+" not in text and "&" not in text:
        return frozenset()
    out = set()
    for m in _VOCAB_RX.finditer(text):
        if m.lastgroup:
            out.add(_VOCAB_NAMES[m.lastgroup])
    return frozenset(out)


# ----------------------------------------------------------------------------------------------- typed slots

_WEEKDAY = re.compile(r"\b(?P<d>mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?\b", re.I)
_WEEKDAY_FULL = re.compile(r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b", re.I)
_TIME = re.compile(r"\b(?P<h>[01]?\d|2[0-3])(?::(?P<m>[0-5]\d))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)(?!\w)|"
                   r"\b(?P<h2>[01]?\d|2[0-3]):(?P<m2>[0-5]\d)\b(?!:)|\b(?P<noon>noon|midnight)\b", re.I)
#: a weekday said as a schedule: "on Mondays", "every Tuesday", "moved to Thursday"
_RECURRING = re.compile(r"\b(?:every|each|to|until|till|from)\s+$", re.I)
_EVENT = re.compile(r"\b(?:last|yesterday|ago|tonight|tomorrow|this\s+past|next)\b", re.I)
#: how often something recurs: "daily", "every 6 hours", "twice a week" (a schedule's cadence)
_CADENCE = re.compile(r"\b(?P<w>hourly|daily|nightly|weekly|fortnightly|bi-?weekly|monthly|quarterly|yearly|annually)\b|"
                      r"\bevery\s+(?:(?P<n>\d+|other|two|three|four|five|six|eight|ten|twelve|fifteen|thirty)\s+)?"
                      r"(?P<u>hour|day|night|morning|evening|week|month|quarter|year|sprint|minute)s?\b|"
                      r"\b(?P<k>once|twice|three\s+times|four\s+times|\d+\s+times)\s+(?:a|per|every)\s+"
                      r"(?P<u2>hour|day|week|month|quarter|year|sprint)\b", re.I)
_CADENCE_WORD = {"nightly": "daily", "fortnightly": "biweekly", "bi-weekly": "biweekly", "annually": "yearly"}
_CADENCE_ONE = {"hour": "hourly", "day": "daily", "night": "daily", "morning": "daily", "evening": "daily",
                "week": "weekly", "month": "monthly", "quarter": "quarterly", "year": "yearly"}
_COUNT_WORD = {"other": "2", "two": "2", "twice": "2", "three": "3", "four": "4", "five": "5", "six": "6", "eight": "8",
               "ten": "10", "twelve": "12", "fifteen": "15", "thirty": "30", "once": "1"}


def _cadence(m: re.Match[str]) -> str:
    if m.group("w"):
        w = m.group("w").lower()
        return _CADENCE_WORD.get(w, w)
    if m.group("u"):
        n, u = _COUNT_WORD.get((m.group("n") or "1").lower(), m.group("n") or "1"), m.group("u").lower()
        if n == "1":
            return _CADENCE_ONE.get(u, f"every {u}")
        return "biweekly" if (n, u) == ("2", "week") else f"every {n} {u}s"
    k = m.group("k").lower().split()[0]
    n, u = _COUNT_WORD.get(k, k), m.group("u2").lower()
    return _CADENCE_ONE.get(u, f"every {u}") if n == "1" else f"{n}/{u}"


_SIZE = re.compile(r"\b(?P<n>\d+(?:\.\d+)?)\s?(?P<u>[kmgt]i?b|gigs?|megs?|terabytes?|gigabytes?|megabytes?)\b", re.I)


def _time_value(m: re.Match[str]) -> str:
    if m.group("noon"):
        return "12:00" if m.group("noon").lower() == "noon" else "00:00"
    if m.group("h2") is not None:
        return f"{int(m.group('h2')):02d}:{m.group('m2')}"
    h = int(m.group("h")) % 12 + (12 if m.group("ap").lower().startswith("p") else 0)
    return f"{h:02d}:{m.group('m') or '00'}"


@functools.lru_cache(maxsize=8192)
def typed_values(text: str) -> frozenset[tuple[str, str]]:
    """(kind, value) of the weekdays, times of day, cadences and sizes ``text`` says: ``("weekday", "mon")``,
    ``("time", "09:30")``, ``("cadence", "daily")``, ``("size", "16gb")``."""
    out: set[tuple[str, str]] = set()
    event = bool(_EVENT.search(text))   # "last Friday at 7pm": when something happened, not a schedule
    if _WEEKDAY_FULL.search(text) and not event:
        days = set()
        for m in _WEEKDAY_FULL.finditer(text):
            if m.group(0).lower().endswith("s") or _RECURRING.search(text[max(0, m.start() - 12):m.start()]):
                days.add(m.group(0).lower()[:3])
        out.update(("weekday", d) for d in days)
        if days:   # on Mondays: weekly; on Tuesdays and Thursdays: twice a week
            out.add(("cadence", "weekly" if len(days) == 1 else f"{len(days)}/week"))
    if _CADENCE.search(text):
        out.update(("cadence", _cadence(m)) for m in _CADENCE.finditer(text))
    if (any(c.isdigit() for c in text) or "noon" in text or "midnight" in text) and not event:
        for m in _TIME.finditer(text):
            out.add(("time", _time_value(m)))
        for m in _SIZE.finditer(text):
            u = m.group("u").lower()
            unit = {"gig": "gb", "meg": "mb", "tera": "tb", "giga": "gb", "mega": "mb"}.get(u[:4].rstrip("absy"), u)
            unit = unit[0] + "b" if unit[0] in "kmgt" else unit
            out.add(("size", f"{m.group('n')}{unit}"))
    return frozenset(out)
