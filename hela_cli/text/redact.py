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
* credentials in URLs of every driver (``scheme://user:PASSWORD@host``, ``redis://:PASSWORD@``,
  ``mongodb+srv://``, ``postgresql+psycopg2://``, ``jdbc:mysql://``, git's ``https://user:TOKEN@``);
* command lines: ``--password PW`` / ``--password=PW`` and every ``--...-token`` / ``--...-secret`` /
  ``--api-key`` flag; per command, ``mysql -pPW``, ``docker login -p PW``, ``sshpass -p``, ``mongosh -p``,
  ``redis-cli -a PW``, ``curl -u user:PW``, ``aws configure set aws_secret_access_key PW``, ``openssl -pass
  pass:PW`` (``-p`` is a port for psql, redis-cli and ssh, and psql's ``--password`` is a switch: left alone);
* assignments whose name says key, token, secret, password, pwd, auth, also run together in one all-caps word
  (``PGPASSWORD``, ``AUTHTOKEN``, ``DBPASS``): ``.env`` and shell lines (there an unquoted value runs to the
  next whitespace: ``DB_PASSWORD=ab,cd;ef&gh``), libpq / JDBC / ODBC keyword strings
  (``"host=db password=PW"``, ``;password=PW;``, ``Pwd=PW;``), JSON, YAML, INI and code (a quoted value, or
  an unquoted literal mixing letters and digits: ``api_key = s3cretvalue123``, not ``api_key = args.key``).
  The name stays, the value goes (``PGPASSWORD=[REDACTED:password]``).

A reference instead of a value (``$PGPASSWORD``, ``${DB_PASS}``, ``<your key>``, ``YOUR-TOKEN``), a number
alone and prose are left alone. Redaction is idempotent (``redact(redact(t)) == redact(t)``) and leaves text
without secrets byte-identical. The shapes: ``tests/test_redact_corpus.py``; false positives:
``benchmarks/quality/redact_false_positives.py`` (BENCHMARKS.md).
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
    ("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}"),
    ("google-oauth-token", r"ya29\.[A-Za-z0-9_-]{20,}"),
    # detect-secrets' JWT pattern stops before the signature
    ("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
)
_PREFIX_RX = re.compile("|".join(f"(?P<k{i}>{p})" for i, (_, p) in enumerate(_PREFIXED)))
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_-]")

_AUTH_HEADER = re.compile(r"(?i)\b(authorization\s*[:=]\s*[\"']?\s*)(bearer|basic|token)\s+([A-Za-z0-9._~+/=-]{8,})")
_BEARER = re.compile(r"\b([Bb]earer\s+)([A-Za-z0-9._~+/-]{20,}=*)")
# scheme://user:PASSWORD@host (user may be empty: redis://:pw@host); a password holding '@' runs to the last
# '@' before a host without one
_URL_PASSWORD = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]*:)([^\s/'\"]{3,})(@[^\s/'\"@:]+)")

# NAME=value, NAME: value, "name": "value" (.env, shell, YAML, JSON, libpq / JDBC / ODBC keyword strings, a
# pasted config line); the name is checked by _secret_name, the value by _secret_value
_ASSIGN = re.compile(
    r"(?<![A-Za-z0-9_])(?P<pre>(?:export[ \t]+)?(?P<q>[\"']?)(?P<name>[A-Za-z_][A-Za-z0-9_.-]{1,60})(?P=q)"
    r"(?P<sp1>[ \t]*)(?P<op>=|:)(?P<sp2>[ \t]*))"
    r"(?P<value>\"(?:[^\"\\\n]|\\.){4,4000}\"|'(?:[^'\\\n]|\\.){4,4000}'|[^\s\"'`&;,()<>{}\[\]]{4,})"
    r"(?=$|[\s,;})\]&\"'`])", re.M)
_SECRET_PARTS = {"key", "apikey", "token", "secret", "password", "passwd", "pass", "pwd", "passphrase",
                 "credential", "credentials", "auth", "pat", "accesskey", "secretkey", "privatekey"}
_PASSWORD_PARTS = {"password", "passwd", "pass", "pwd", "passphrase"}
_NOT_SECRET_PARTS = {"public", "sort", "primary", "foreign", "partition", "cache", "lookup", "max", "min", "num",
                     "count", "type", "name", "file", "path", "url", "id", "length", "len", "limit", "size"}
# one word ending in a secret word: PGPASSWORD, AUTHTOKEN, DBPASS, MYSQLPWD ("pass" only in an all-caps name:
# bypass, compass, firstpass are words)
_SECRET_SUFFIXES = ("password", "passwd", "pwd", "token", "secret", "apikey", "secretkey", "accesskey",
                    "privatekey", "authkey", "passphrase", "credentials")
# words that end in a secret word and name none: the shell's previous directory, askpass programs, words
_NOT_SECRET_WORDS = {"oldpwd", "askpass", "bypass", "compass", "surpass", "overpass", "underpass", "trespass",
                     "encompass"}
# a secret word that qualifies another when it comes first: AUTH_BACKEND, PASS_MAX_DAYS, PAT_PREFIX
_QUALIFIERS = {"auth", "pass", "pat"}
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")
# a YAML line "password: VALUE" (a lowercase key alone at the start of a line, the value the rest of it);
# "key:" is left out: YAML uses it for cache keys, selectors and config-map keys
_YAML_NAMES = {"password", "passwd", "pass", "pwd", "passphrase", "secret", "token", "apikey", "credentials"}
_INDENT = re.compile(r"[ \t]*(?:- )?")


def _parts(name: str) -> list[str]:
    parts = [p.lower() for p in _NAME_PARTS.findall(name)]
    upper = name.upper() == name
    out = []
    for p in parts:
        if p not in _SECRET_PARTS:
            suffix = next((s for s in _SECRET_SUFFIXES if p.endswith(s) and len(p) > len(s)), None)
            if suffix is None and upper and p.endswith("pass") and len(p) > 4:
                suffix = "pass"
            if suffix is not None and p not in _NOT_SECRET_WORDS:
                out += [p[:-len(suffix)], suffix]
                continue
        out.append(p)
    return out


def _secret_name(name: str) -> tuple[bool, bool]:
    """(names a secret, is compound): ``DB_PASSWORD`` / ``PGPASSWORD`` (True, True), ``password`` (True,
    False), ``max_tokens`` / ``author`` / ``sort_key`` (False, ...)."""
    parts = _parts(name)
    if not parts or not _SECRET_PARTS & set(parts) or _NOT_SECRET_PARTS & set(parts[-1:]):
        return False, len(parts) > 1
    if not (_SECRET_PARTS - _QUALIFIERS) & set(parts) and parts[-1] not in _QUALIFIERS:
        return False, True   # AUTH_BACKEND=ldap (but BASIC_AUTH=..., GH_PAT=..., DB_PASS=...)
    if _NOT_SECRET_PARTS & set(parts) and "key" in parts and not {"api", "secret", "access", "private"} & set(parts):
        return False, True   # sort_key, primary_key, cache_key
    return True, len(parts) > 1


def _kind(name: str) -> str:
    return "password" if _PASSWORD_PARTS & set(_parts(name)) else "secret"


def _literal(v: str) -> bool:
    """An unquoted word in code that reads as a credential, not a variable: letters and digits mixed
    (``s3cretvalue123``), no ``_`` or ``.`` (``s3_key``, ``args.api_key``)."""
    return (len(v) >= 8 and "_" not in v and "." not in v and sum(c.isdigit() for c in v) >= 2
            and sum(c.isalpha() for c in v) >= 3)


def _working_dir(name: str, value: str) -> bool:
    """``PWD=/path``: the shell's working directory (ODBC's ``PWD=...`` is a password)."""
    return name == "PWD" and value[:1] in ("/", "~")


def _secret_value(m: re.Match[str]) -> bool:
    text = m.string
    name = m.group("name")
    name_ok, compound = _secret_name(name)
    value = m.group("value")
    if not name_ok or not _value_ok(value) or _MARKED.search(value):
        return False
    quoted = value[0] in "\"'"
    v = value.strip("\"'")
    if _working_dir(name, v):
        return False
    if m.group("op") == "=":
        before = text[:m.start()].rstrip()[-1:]
        if m.group("sp1") or m.group("sp2") or before in ("(", ","):   # code (token = token, f(key=s3_key)):
            return quoted or not _IDENTIFIER.match(v) or _literal(v)   # not a variable name
        return True                            # .env / shell: DB_PASSWORD=postgres
    line_start = text.rfind("\n", 0, m.start()) + 1
    yaml_line = (_INDENT.fullmatch(text, line_start, m.start()) is not None
                 and text[m.end():m.end() + 1] in ("", "\n", "\r"))
    if m.group("q") or compound:               # "name": "value" (JSON), api_key: ..., DB_PASSWORD: ...
        return (quoted or not _IDENTIFIER.match(v) or bool(re.search(r"\d", v))
                or (yaml_line and name.isupper()))    # docker compose: POSTGRES_PASSWORD: postgres
    if name in _YAML_NAMES and yaml_line and len(v) >= 6:
        return True                            # YAML: password: correcthorsebattery
    # Password: hunter2 (a single word before ':'): only a value that looks like a credential, so that
    # prose ("Secret: chocolate", "Key: the door") stays
    return not quoted and bool(re.search(r"[0-9!@#$%^&*+/=_-]", v)) and len(v) >= 6


_PLACEHOLDER = re.compile(
    r"(?i)^[\"']?(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*|%[A-Za-z_][A-Za-z0-9_]*%|<[^>]*>|\{\{.*\}\}|x{3,}|"
    r"\*{3,}|.*\.{3}|.*…|changeme|your[_-].*|value|secret|password|passwd|pass|pwd|none|null|true|false|"
    r"undefined|example|placeholder|redacted|lambda|\[REDACTED.*|os\.environ.*|process\.env.*|getenv.*|env\(.*|"
    r"(?-i:[A-Z][A-Z_-]*(?:TOKEN|PASSWORD|PASSWD|PASS|PW|SECRET|KEY)))[\"']?$")


_NUMBER = re.compile(r"^[$€£¥]?[0-9][0-9.,]*[%kKmM]?$")


def _value_ok(value: str) -> bool:
    """A value worth redacting: not a placeholder, a reference to a variable, or a number or price alone
    (``Chicago CityPASS: $109``)."""
    v = value.strip("\"'")
    return not (_PLACEHOLDER.match(value) or _NUMBER.match(v) or len(v) < 4)


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


# a .env / shell line: an all-caps NAME=value at the start of a line (a YAML list item: docker compose's
# environment) or any name after `export` (after a shell separator), the value unquoted and running to the next
# whitespace: `,` `;` `&` `(` `{` are part of a .env value (DB_PASSWORD=ab,cd;ef&gh), where _ASSIGN, which reads
# code and keyword strings too, would stop at the first of them
_ENV_LINE = re.compile(
    r"(?P<pre>(?:^[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?|(?<![^\s;&|(])export[ \t]+)"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]{1,60})=)(?P<value>[^\s\"'`$(\[{<][^\s]*)", re.M)
# a value that is code, not a literal: a call (password=getpass.getpass()), a subscript (key=keys[0])
_ENV_CODE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*(?:\(.*\)|\[.*\])$")
_ENV_STOPS = re.compile(r"[&;,()<>{}\[\]`]")


def _sub_env_lines(text: str) -> str:
    """.env / shell assignments whose unquoted value holds a character :data:`_ASSIGN` stops at: the value
    replaced to the next whitespace (only those: the rest is :func:`_sub_assignments`' to decide)."""
    if "=" not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        name, value = m.group("name"), m.group("value")
        if not (name.isupper() or "export" in m.group("pre")):
            return m.group(0)   # .env names are all caps; a lowercase one is code (auth=AuthSettings(a=1, b=2))
        if (not _ENV_STOPS.search(value) or not _secret_name(name)[0] or _MARKED.search(value)
                or _ENV_CODE.match(value) or not _value_ok(value) or _working_dir(name, value)):
            return m.group(0)
        return f"{m.group('pre')}{_mark(_kind(name))}"

    return _ENV_LINE.sub(repl, text)


def _sub_assignments(text: str) -> str:
    """Each NAME=value whose value is a secret: the value replaced. A match that is not one is searched again
    from its value (``$env:DB_PASSWORD = ...``, ``--from-literal=password=...``: the name is inside it)."""
    out, pos, done = [], 0, 0
    while (m := _ASSIGN.search(text, pos)) is not None:
        if not _secret_value(m):
            pos = m.start("value")
            continue
        value = m.group("value")
        q = value[0] if value[0] in "\"'" else ""
        out += [text[done:m.start()], f"{m.group('pre')}{q}{_mark(_kind(m.group('name')))}{q}"]
        pos = done = m.end()
    return "".join(out) + text[done:]


# ------------------------------------------------------------------------------------ command lines
# a flag's value: a quoted string or one shell word
_WORD = r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`;|&<>()]+)"
# --password S3cret, --password=S3cret, --db-password, --token, --auth-token, --api-key, --client-secret,
# --secret-key, --aws-secret-access-key (any tool: wget, docker login, kubectl, gcloud, mysql, ...), and Go
# tools' -password / -token=; the flag name ends there (--password-file, --password-stdin, --token-file are
# not values)
_FLAG = re.compile(
    r"(?<![\w-])(?P<flag>--?(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret|api-?key|secret-key|access-key|"
    r"passphrase|credentials?))(?P<sep>=|[ \t]+)(?P<value>" + _WORD + r")")
# a command word (at the start of a command), then the rest (lines continued with a backslash included) of its command (to a pipe, ';', '&' or the end of the line)
_SEGMENT = r"(?<![^\s|;&(`'\"])(?P<cmd>{cmd})(?=[ \t])(?P<rest>(?:[^\n|;&\\]|\\\n|\\(?!\n))*)"
_PSQL = re.compile(r"\b(?:psql|pg_dump|pg_dumpall|pg_restore|pg_basebackup|createdb|dropdb|createuser|dropuser|"
                   r"vacuumdb|reindexdb|clusterdb|pgbench)\b")
#: (words one of which a text must hold to be looked at, command words, flag pattern within its command line;
#: group "value" is the secret)
_COMMAND_FLAGS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    # mysql -uroot -pS3cret (attached only: `-p` alone prompts, `-p dbname` names a database)
    (("mysql", "mariadb"), r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlsh|mysqlbinlog|"
     r"mariadb|mariadb-dump|mariadb-admin)\b", r"(?<=\s)-p(?P<value>" + _WORD + r")"),
    # docker login -p S3cret, sshpass -p S3cret, mongosh -p S3cret: there -p is the password
    (("login", "sshpass", "mongo"),
     r"\b(?:(?:docker|podman|buildah|skopeo|helm registry|oras|nerdctl)\s+login|sshpass|mongo|mongosh|"
     r"mongodump|mongorestore|mongoimport|mongoexport|mongostat|mongotop)\b",
     r"(?<=\s)-p(?:[ \t]+|(?=[^\s-]))(?P<value>" + _WORD + r")"),
    # redis-cli -a S3cret (its -p is the port)
    (("redis-cli",), r"\bredis-cli\b", r"(?<=\s)-a[ \t]+(?P<value>" + _WORD + r")"),
    # curl -u admin:S3cret, --user, --proxy-user; httpie -a / --auth user:pw: the user stays
    (("curl", "http ", "https ", "xh "), r"\b(?:curl|http|https|xh)\b",
     r"(?<=\s)(?:-u|--user|--proxy-user|-U|-a|--auth)(?:[ \t]+|=)?[\"']?[^\s:\"']+:(?P<value>[^\s\"'`]+)"),
    # aws configure set aws_secret_access_key VALUE (also profile.NAME.aws_secret_access_key)
    (("aws",), r"\baws\s+configure\s+set\b", r"\s(?:[\w.-]*\.)?(?:aws_secret_access_key|aws_session_token)"
                                               r"[ \t]+(?P<value>" + _WORD + r")"),
    # openssl ... -pass pass:S3cret, -passin / -passout
    (("openssl",), r"\bopenssl\b", r"(?<=\s)-pass(?:in|out)?[ \t]+pass:(?P<value>" + _WORD + r")"),
    # az login -u me -p S3cret (Azure CLI: -p is the password)
    (("az ",), r"\baz\s+login\b", r"(?<=\s)-p[ \t]+(?P<value>" + _WORD + r")"),
    # gh secret set NAME --body S3cret / -b S3cret
    (("gh ",), r"\bgh\s+secret\s+set\b", r"(?<=\s)(?:-b|--body)(?:[ \t]+|=)(?P<value>" + _WORD + r")"),
    # kubectl create secret generic x --from-literal=NAME=S3cret (any NAME: the command says it is a secret)
    (("secret",), r"\b(?:kubectl|oc)\s+create\s+secret\b",
     r"--from-literal[ =][\"']?[\w.-]+=(?P<value>[^\s\"']+)"),
    # vault login S3cretToken (a token as the argument; `vault login -method=...` names it otherwise)
    (("vault",), r"\bvault\s+login\b", r"^[ \t]+(?P<value>[^\s=-][^\s=]*)(?=\s|$)"),
    # sqlplus scott/tiger@orcl, expdp, impdp, sqlldr (Oracle's user/password)
    (("sqlplus", "sqlldr", "expdp", "impdp"), r"\b(?:sqlplus|sqlldr|expdp|impdp)\b",
     r"(?<=\s)[\w$#.-]+/(?P<value>[^\s@/\"']+)(?=@|\s|$)"),
    # smbclient //host/share -U user%S3cret (also rpcclient, smbmap)
    (("-U",), r"\b(?:smbclient|rpcclient|smbmap|smbget)\b", r"(?<=\s)-U[ \t]*[\"']?[^\s%\"']+%(?P<value>[^\s\"']+)"),
)
# a substring test first: each command's regex costs ~20 us on a long turn, the test well under 1
_COMMAND_RX = tuple((words, re.compile(_SEGMENT.format(cmd=c)), re.compile(f)) for words, c, f in _COMMAND_FLAGS)

# echo S3cret | docker login --password-stdin (also | sudo -S, | passwd --stdin, | chpasswd): the pipe says it
_ECHO_STDIN = re.compile(
    r"(?<![^\s|;&(`'\"])(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?(?P<value>" + _WORD + r")"
    r"(?=[ \t]*\|[^\n|;&]*?(?:--password-stdin|\bsudo\s+-S\b|\bpasswd\b|\bchpasswd\b))")


def _flag_value_ok(value: str) -> bool:
    v = value.strip("\"'")
    return not v.startswith(("-", "$", "@", "[REDACTED")) and _value_ok(value) and not _MARKED.search(value)


def _flag_mark(value: str, kind: str) -> str:
    """The mark that replaces a flag's value, inside the value's quotes if it had them."""
    q = value[0] if value[0] in "\"'" and len(value) > 1 else ""
    return f"{q}{_mark(kind)}{q}"


def _sub_flags(text: str) -> str:
    def flag(m: re.Match[str]) -> str:
        value = m.group("value")
        if not _flag_value_ok(value):
            return m.group(0)
        if m.group("flag") == "--password" and m.group("sep") != "=":
            # psql's --password is a switch (prompt for one): the word after it is not a password
            line_start = text.rfind("\n", 0, m.start()) + 1
            if _PSQL.search(text, line_start, m.start()):
                return m.group(0)
        kind = "password" if "pass" in m.group("flag") else "secret"
        return f"{m.group('flag')}{m.group('sep')}{_flag_mark(value, kind)}"

    out = _FLAG.sub(flag, text) if "-" in text else text
    for words, cmd_rx, flag_rx in _COMMAND_RX:
        if not any(w in out for w in words) or not cmd_rx.search(out):
            continue

        def in_command(c: re.Match[str], flag_rx: re.Pattern[str] = flag_rx) -> str:
            rest = c.group("rest")

            def one(m: re.Match[str]) -> str:
                value = m.group("value")
                if not _flag_value_ok(value):
                    return m.group(0)
                s, e = m.span("value")
                return m.group(0)[:s - m.start()] + _flag_mark(value, "password") + m.group(0)[e - m.start():]

            return c.group("cmd") + flag_rx.sub(one, rest)

        out = cmd_rx.sub(in_command, out)
    if "|" in out and ("echo" in out or "printf" in out):
        out = _ECHO_STDIN.sub(lambda m: m.group(0)[:m.start("value") - m.start()] + _mark("password")
                              if _flag_value_ok(m.group("value")) else m.group(0), out)
    return out


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
# third of a prompt hook's start-up: docs/benchmarks/agents.md "Hooks") with it
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
    out = _sub_flags(out)
    out = _sub_env_lines(out)
    out = _sub_assignments(out)
    return _sub_plugins(out)
