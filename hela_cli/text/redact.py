"""Secret redaction before a turn is stored: :func:`redact` replaces each secret with ``[REDACTED:kind]``.

Two layers, hela's own high-confidence patterns first, then the regex plugins of ``detect-secrets`` (a
maintained detector; its entropy and keyword plugins are left out: they flag commit hashes, UUIDs and
quoted words, which coding transcripts are full of):

* private-key blocks (``-----BEGIN ... PRIVATE KEY-----`` to its ``END`` line, or to the end of the text
  when the block was cut off);
* provider key prefixes: ``sk-ant-`` (Anthropic), ``sk-`` / ``sk-proj-`` (OpenAI), ``ghp_`` ``gho_`` ``ghu_``
  ``ghs_`` ``ghr_`` ``github_pat_`` (GitHub), ``glpat-`` (GitLab), ``xox?-`` (Slack), ``AKIA`` / ``ASIA``
  (AWS), ``AIza`` (Google), ``hf_`` (Hugging Face), ``sk_live_`` / ``rk_live_`` (Stripe), ``npm_``,
  ``pypi-``, ``gsk_`` (Groq), ``xai-``; JSON web tokens (``eyJ...``);
* ``Authorization: Bearer TOKEN`` / ``Basic`` and any ``Bearer <long token>``;
* credentials in URLs (``scheme://user:PASSWORD@host``);
* ``.env`` / YAML / JSON style assignments whose name says key, token, secret, password (``API_KEY=...``,
  ``"client_secret": "..."``, ``password: hunter2!``): the name stays, the value goes.

Redaction is idempotent (``redact(redact(t)) == redact(t)``) and leaves text without secrets byte-identical.
"""

from __future__ import annotations

import re
from functools import lru_cache

MARK = "[REDACTED:{}]"
_MARKED = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

_PRIVATE_KEY = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)", re.S)
_PUTTY_KEY = re.compile(r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)", re.S)

#: (kind, pattern): the whole match is the secret. Bounded by non-token characters on both sides.
_PREFIXED: tuple[tuple[str, str], ...] = (
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai-key", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}"),
    ("github-token", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"),
    ("github-token", r"github_pat_[A-Za-z0-9_]{22,}"),
    ("gitlab-token", r"glpat-[A-Za-z0-9_-]{20,}"),
    ("slack-token", r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("aws-access-key", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}"),
    ("google-api-key", r"AIza[0-9A-Za-z_-]{35}"),
    ("huggingface-token", r"hf_[A-Za-z0-9]{30,}"),
    ("stripe-key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}"),
    ("npm-token", r"npm_[A-Za-z0-9]{36}"),
    ("pypi-token", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    ("groq-key", r"gsk_[A-Za-z0-9]{40,}"),
    ("xai-key", r"xai-[A-Za-z0-9]{40,}"),
    # detect-secrets' JWT pattern stops before the signature
    ("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
)
_PREFIX_RX = re.compile("|".join(f"(?P<k{i}>{p})" for i, (_, p) in enumerate(_PREFIXED)))
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_-]")

_AUTH_HEADER = re.compile(r"(?i)\b(authorization\s*[:=]\s*[\"']?\s*)(bearer|basic|token)\s+([A-Za-z0-9._~+/=-]{8,})")
_BEARER = re.compile(r"\b([Bb]earer\s+)([A-Za-z0-9._~+/-]{20,}=*)")
_URL_PASSWORD = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]+:)([^\s@/'\"]{3,})(@[^\s/'\"]+)")

# NAME=value, NAME: value, "name": "value" (.env, shell, YAML, JSON, a pasted config line); the name is
# checked by _secret_name, the value by _secret_value
_ASSIGN = re.compile(
    r"(?<![A-Za-z0-9_])(?P<pre>(?:export[ \t]+)?(?P<q>[\"']?)(?P<name>[A-Za-z_][A-Za-z0-9_.-]{1,60})(?P=q)"
    r"(?P<sp1>[ \t]*)(?P<op>=|:)(?P<sp2>[ \t]*))"
    r"(?P<value>\"[^\"\n]{4,200}\"|'[^'\n]{4,200}'|[^\s\"'&;,()<>{}\[\]]{4,})(?=$|[\s,;})\]&])", re.M)
_SECRET_PARTS = {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "passphrase", "credential",
                 "credentials", "auth", "pat", "accesskey", "secretkey", "privatekey"}
_NOT_SECRET_PARTS = {"public", "sort", "primary", "foreign", "partition", "cache", "lookup", "max", "min", "num",
                     "count", "type", "name", "file", "path", "url", "id", "length", "len", "limit", "size"}
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _secret_name(name: str) -> tuple[bool, bool]:
    """(names a secret, is compound): ``DB_PASSWORD`` (True, True), ``password`` (True, False),
    ``max_tokens`` / ``author`` / ``sort_key`` (False, ...)."""
    parts = [p.lower() for p in _NAME_PARTS.findall(name)]
    if not parts or not _SECRET_PARTS & set(parts) or _NOT_SECRET_PARTS & set(parts[-1:]):
        return False, len(parts) > 1
    if _NOT_SECRET_PARTS & set(parts) and "key" in parts and not {"api", "secret", "access", "private"} & set(parts):
        return False, True   # sort_key, primary_key, cache_key
    return True, len(parts) > 1


def _secret_value(m: re.Match[str]) -> bool:
    text = m.string
    name_ok, compound = _secret_name(m.group("name"))
    value = m.group("value")
    if not name_ok or not _value_ok(value) or _MARKED.search(value):
        return False
    quoted = value[0] in "\"'"
    v = value.strip("\"'")
    if m.group("op") == "=":
        before = text[:m.start()].rstrip()[-1:]
        if m.group("sp1") or m.group("sp2") or before in ("(", ","):   # code (token = token, f(key=s3_key)):
            return quoted or not _IDENTIFIER.match(v)                   # not a variable name
        return True                            # .env / shell: DB_PASSWORD=postgres
    if m.group("q") or compound:               # "name": "value" (JSON), api_key: ..., DB_PASSWORD: ...
        return quoted or not _IDENTIFIER.match(v) or bool(re.search(r"\d", v))
    # Password: hunter2 (a single word before ':'): only a value that looks like a credential, so that
    # prose ("Secret: chocolate", "Key: the door") stays
    return not quoted and bool(re.search(r"[0-9!@#$%^&*+/=_-]", v)) and len(v) >= 6


_PLACEHOLDER = re.compile(
    r"(?i)^[\"']?(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^>]*>|\{\{.*\}\}|x{3,}|\*{3,}|.*\.{3}|.*…|changeme|"
    r"your[_-].*|value|secret|password|passwd|pass|pwd|none|null|true|false|undefined|example|placeholder|"
    r"redacted|\[REDACTED.*|os\.environ.*|"
    r"process\.env.*|getenv.*|env\(.*)[\"']?$")


def _value_ok(value: str) -> bool:
    """A value worth redacting: not a placeholder, a reference to a variable, or a number alone."""
    v = value.strip("\"'")
    return not (_PLACEHOLDER.match(value) or v.isdigit() or len(v) < 4)


def _mark(kind: str) -> str:
    return MARK.format(kind)


def _sub_prefixed(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        s, e = m.span()
        if (s > 0 and _TOKEN_CHAR.match(text[s - 1])) or (e < len(text) and _TOKEN_CHAR.match(text[e])):
            return m.group(0)   # part of a longer identifier
        kind = _PREFIXED[int(m.lastgroup[1:])][0]  # type: ignore[index]
        return _mark(kind)

    return _PREFIX_RX.sub(repl, text)


def _sub_assignments(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        if not _secret_value(m):
            return m.group(0)
        value = m.group("value")
        q = value[0] if value[0] in "\"'" else ""
        return f"{m.group('pre')}{q}{_mark('secret')}{q}"

    return _ASSIGN.sub(repl, text)


@lru_cache(maxsize=1)
def _plugins() -> tuple:
    """detect-secrets' regex plugins (none when the package is missing: hela's own patterns still run)."""
    try:
        from detect_secrets.plugins.artifactory import ArtifactoryDetector
        from detect_secrets.plugins.aws import AWSKeyDetector
        from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
        from detect_secrets.plugins.basic_auth import BasicAuthDetector
        from detect_secrets.plugins.discord import DiscordBotTokenDetector
        from detect_secrets.plugins.github_token import GitHubTokenDetector
        from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
        from detect_secrets.plugins.jwt import JwtTokenDetector
        from detect_secrets.plugins.mailchimp import MailchimpDetector
        from detect_secrets.plugins.npm import NpmDetector
        from detect_secrets.plugins.openai import OpenAIDetector
        from detect_secrets.plugins.pypi_token import PypiTokenDetector
        from detect_secrets.plugins.sendgrid import SendGridDetector
        from detect_secrets.plugins.slack import SlackDetector
        from detect_secrets.plugins.square_oauth import SquareOAuthDetector
        from detect_secrets.plugins.stripe import StripeDetector
        from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
        from detect_secrets.plugins.twilio import TwilioKeyDetector
    except ImportError:  # pragma: no cover - a dependency; kept usable without it
        return ()
    classes = (ArtifactoryDetector, AWSKeyDetector, AzureStorageKeyDetector, BasicAuthDetector,
               DiscordBotTokenDetector, GitHubTokenDetector, GitLabTokenDetector, JwtTokenDetector,
               MailchimpDetector, NpmDetector, OpenAIDetector, PypiTokenDetector, SendGridDetector, SlackDetector,
               SquareOAuthDetector, StripeDetector, TelegramBotTokenDetector, TwilioKeyDetector)
    return tuple((_kind_of(c.secret_type), c()) for c in classes)


def _kind_of(secret_type: str) -> str:
    """detect-secrets' type name as a kind: 'AWS Access Key' -> 'aws-access-key'."""
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


# every detect-secrets regex plugin above needs a run of 16+ token characters (keys, tokens, JWT parts, base64)
# or a URL with a user (basic auth); text without either skips them, and their import (~0.2 s of CPU, a
# third of a prompt hook's start-up: BENCHMARKS.md "Hooks") with it
_PLUGIN_CANDIDATE = re.compile(r"[A-Za-z0-9_-]{16,}|://[^\s/@]+@")


def _sub_plugins(text: str) -> str:
    if not _PLUGIN_CANDIDATE.search(text):
        return text
    found: list[tuple[str, str]] = []
    for kind, plugin in _plugins():
        for secret in plugin.analyze_string(text):
            if isinstance(secret, str) and len(secret) >= 8 and _value_ok(secret) and not _MARKED.search(secret):
                found.append((secret, kind))
    for secret, kind in sorted(found, key=lambda f: -len(f[0])):  # longest first: no piece of a longer one left
        text = text.replace(secret, _mark(kind))
    return text


def redact(text: str) -> str:
    """``text`` with every secret found replaced by ``[REDACTED:kind]`` (see the module doc); text without
    secrets comes back unchanged."""
    if not text:
        return text
    out = _PRIVATE_KEY.sub(lambda m: _mark("private-key"), text)
    out = _PUTTY_KEY.sub(lambda m: _mark("private-key"), out)
    out = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{_mark('url-password')}{m.group(3)}"
                            if _value_ok(m.group(2)) else m.group(0), out)
    out = _sub_prefixed(out)
    out = _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)} {_mark('auth-header')}"
                           if not _MARKED.match(m.group(3)) else m.group(0), out)
    out = _BEARER.sub(lambda m: f"{m.group(1)}{_mark('bearer-token')}", out)
    out = _sub_assignments(out)
    return _sub_plugins(out)
