"""``hela hooks install | uninstall | status``: hela's entries in an agent's own settings file.

* Every other key, hook and setting of the file is kept, in its order and the file's indentation.
* Idempotent: an install that finds hela's entries as they would be written changes nothing (the file is
  not even rewritten); one that finds an older command updates it in place.
* Written atomically (a temporary file in the same folder, fsync, rename), the previous file kept as
  ``<name>.hela-backup``; never a 0-byte or half-written file.
* ``uninstall`` removes exactly hela's entries, and the groups, events and the ``hooks`` object that only
  they filled: install then uninstall leaves a file in the agent's usual 2-space style byte-identical.
* A file that is not valid JSON, or whose ``hooks`` is not an object of lists, is refused with one line naming
  the file and place, and nothing is written.
* No password is ever written into the file or printed: a ``--db`` / ``HELA_DB`` Postgres URL is written
  without its password (the hooks take it from ``~/.pgpass`` or ``PGPASSWORD``, as libpq does), and ``status``
  shows the commands it finds with any password removed. The file keeps its mode; a new one is written 0600
  (these files also hold the agent's ``env`` and API keys).

A hook entry is hela's when its command runs ``hela hook EVENT`` (a ``hela`` executable, or ``python -m
hela_cli``): see :func:`is_hela_command`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hela_cli.errors import InputError
from hela_cli.hooks.agents import AGENTS, SCOPES, Agent, agent as get_agent
from hela_cli.hooks.space import project_root
from hela_cli.store.target import describe, url_scheme
from hela_cli.text.redact import redact

NEW_FILE_MODE = 0o600
BACKUP_SUFFIX = ".hela-backup"


def hela_command(extra: list[str] | None = None) -> list[str]:
    """The argv prefix that runs this hela wherever the agent runs it: the absolute path of the ``hela``
    executable being run (no PATH lookup at hook time), else this Python with ``-m hela_cli``."""
    exe = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if exe is not None and exe.name == "hela" and exe.exists():
        return [str(exe.absolute()), *(extra or [])]
    return [sys.executable, "-m", "hela_cli", *(extra or [])]


def db_without_password(db: str | None) -> tuple[str | None, bool]:
    """``db`` as the hook command may carry it: a Postgres URL without its password (``user:pw@`` and the
    ``password=`` / ``sslpassword=`` query parameters removed), and whether one was removed. A path comes back
    as it is."""
    if not db or url_scheme(db) is None:
        return db, False
    try:
        parts = urlsplit(db)
        netloc, query = parts.netloc, parts.query
    except ValueError:
        return redact(db), redact(db) != db
    removed = False
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            netloc, removed = f"{userinfo.split(':', 1)[0]}@{host}", True
    params = [p for p in query.split("&") if p] if query else []
    kept = [p for p in params if p.split("=", 1)[0].lower() not in ("password", "sslpassword")]
    if len(kept) != len(params):
        query, removed = "&".join(kept), True
    return (urlunsplit(parts._replace(netloc=netloc, query=query)) if removed else db), removed


def scrub_command(command: Any) -> Any:
    """A hook command as it may be shown: the password of its ``--db`` URL removed, any other secret
    redacted (:func:`hela_cli.text.redact.redact`)."""
    if not isinstance(command, str):
        return command
    try:
        words = shlex.split(command)
    except ValueError:
        return redact(command)
    out, changed = [], False
    for i, w in enumerate(words):
        if i and words[i - 1] == "--db" or w.startswith("--db="):
            flag, value = ("--db=", w[5:]) if w.startswith("--db=") else ("", w)
            value, removed = db_without_password(value)
            changed |= removed
            w = flag + (value or "")
        out.append(w)
    return redact(shlex.join(out) if changed else command)


def _pgpass_note(db: str) -> str:
    """Where the hooks will find the password that was left out of ``db``, or what to do."""
    if os.environ.get("PGPASSWORD"):
        where = "PGPASSWORD is set here; the agent must run with it in its environment too"
    else:
        pgpass = Path(os.environ.get("PGPASSFILE") or Path.home() / ".pgpass")
        where = (f"{pgpass} exists" if pgpass.exists() else
                 f"no {pgpass} yet: add a line host:port:dbname:user:password to it (mode 0600)")
    return (f"the password in --db / HELA_DB was not written into the settings file: the hooks connect to "
            f"{describe(db)} and take the password from ~/.pgpass or PGPASSWORD, as libpq does ({where}). "
            f"docs/agents.md")


def hook_command(prefix: list[str], agent: Agent, event: str, *, space: str | None, db: str | None,
                 config: str | None, server: str | None = None, chat: str | None = None) -> str:
    """The hook's command line (``db`` is written without a password: :func:`db_without_password`; ``chat``:
    ``models.chat`` for these hooks, an ``agent:`` route)."""
    db = db_without_password(db)[0]
    args = [*prefix, "hook", event, "--agent", agent.name]
    for flag, value in (("--space", space), ("--db", db), ("--config", config), ("--server", server),
                        ("--chat", chat)):
        if value:
            args += [flag, value]
    return shlex.join(args)


def is_hela_command(command: Any) -> bool:
    """``... hela hook EVENT ...`` or ``... python -m hela_cli hook EVENT ...``."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for i, w in enumerate(words[:-1]):
        if words[i + 1] != "hook":
            continue
        if Path(w).name == "hela" or w == "hela_cli":
            return True
    return False


# ------------------------------------------------------------------------------------ reading / writing
def _load(path: Path) -> tuple[dict[str, Any], str | None]:
    """The file's JSON object and its text (None when the file does not exist). An empty file is ``{}``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a settings file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e.__class__.__name__})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: byte {e.start}: not UTF-8 text") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: line {e.lineno}, column {e.colno}: {e.msg} (not valid JSON; nothing "
                         f"was changed)") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: the top level is {type(data).__name__}, not a JSON object (nothing was changed)")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InputError(f"{path}: 'hooks' is {type(hooks).__name__}, not an object (nothing was changed)")
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list):
            raise InputError(f"{path}: hooks.{event} is {type(groups).__name__}, not a list (nothing was changed)")
    return data, text


def _dumps(data: dict[str, Any], original: str | None) -> str:
    """JSON in the original file's style: its indentation (2 spaces for a new file) and final newline."""
    indent: int | str | None = 2
    newline = True
    if original is not None and original.strip():
        m = re.match(r"\s*\{[ \t]*\r?\n([ \t]+)\S", original)
        if m:
            ws = m.group(1)
            indent = ws if "\t" in ws else len(ws)
        elif "\n" not in original.strip():
            indent = None
        newline = original.endswith("\n")
    out = json.dumps(data, indent=indent, ensure_ascii=False)
    return out + "\n" if newline else out


def _write(path: Path, text: str, original: str | None) -> None:
    """Atomic replace with a backup of the previous file (hela's own commands in it without a password); the
    file's mode is kept (``NEW_FILE_MODE`` for a new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = NEW_FILE_MODE
    if original is not None:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            pass
        backup = path.with_name(path.name + BACKUP_SUFFIX)
        _atomic(backup, _without_passwords(original).encode("utf-8"), mode)
    _atomic(path, text.encode("utf-8"), mode)


def _without_passwords(original: str) -> str:
    """The settings file's text with the password of every hela command's ``--db`` removed (an install by an
    older hela wrote it there); byte-identical when there is none."""
    try:
        data = json.loads(original) if original.strip() else None
    except json.JSONDecodeError:
        return original
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return original
    changed = False
    for event in hooks:
        for h in _hela_entries(hooks, event):
            clean = scrub_command(h.get("command"))
            if clean != h.get("command"):
                h["command"], changed = clean, True
    return _dumps(data, original) if changed else original


def _atomic(path: Path, data: bytes, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode)   # the mode itself, whatever the umask
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise InputError(f"{path}: cannot write ({e.strerror or e.__class__.__name__}; nothing was changed)") from None


# ------------------------------------------------------------------------------------ merging
def _entry(agent: Agent, event: str, command: str) -> dict[str, Any]:
    role = agent.role(event) or "capture"
    entry: dict[str, Any] = {"type": "command", "command": command}
    if agent.name == "gemini":
        entry = {"name": f"hela-{role}", **entry}
    entry["timeout"] = agent.installed_timeout(event)
    return entry


def _remove_hela(hooks: dict[str, Any], event: str) -> int:
    """Remove hela's entries of ``event``; containers they alone filled go too. Returns how many."""
    groups = hooks.get(event)
    if not isinstance(groups, list):
        return 0
    removed = 0
    kept_groups = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            kept_groups.append(group)
            continue
        kept = [h for h in inner if not (isinstance(h, dict) and is_hela_command(h.get("command")))]
        removed += len(inner) - len(kept)
        if kept or not inner:
            if len(kept) != len(inner):
                group["hooks"] = kept
            kept_groups.append(group)
    if removed:
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    return removed


def _hela_positions(hooks: dict[str, Any], event: str) -> list[tuple[int, int]]:
    """(group index, handler index) of hela's entries of ``event``."""
    return [(g, h) for g, group in enumerate(hooks.get(event) or [])
            for h, entry in enumerate((group.get("hooks") if isinstance(group, dict) else None) or [])
            if isinstance(entry, dict) and is_hela_command(entry.get("command"))]


def _codex_trusted(settings: Path) -> set[str] | None:
    """The hook keys Codex holds a trust hash for (``[hooks.state."<file>:<event>:<group>:<handler>"]`` in
    ``$CODEX_HOME/config.toml``; none without that file); None when it cannot be read (Python 3.10: no tomllib)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return None
    try:
        data = tomllib.loads((AGENTS["codex"].user_dir() / "config.toml").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set()   # no Codex config: nothing trusted yet
    except (OSError, ValueError):
        return None
    state = (data.get("hooks") or {}).get("state") or {}
    return {k for k, v in state.items() if isinstance(v, dict) and v.get("trusted_hash")}


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _matcher_of(hooks: dict[str, Any], event: str) -> str | None:
    """The matcher of the group holding hela's entry of ``event`` (None: no matcher, or not hela's alone)."""
    for g, _ in _hela_positions(hooks, event)[:1]:
        group = hooks[event][g]
        if all(is_hela_command(h.get("command")) for h in group.get("hooks") or [] if isinstance(h, dict)):
            m = group.get("matcher")
            return m if isinstance(m, str) and m else None
    return None


def _hela_entries(hooks: dict[str, Any], event: str) -> list[dict[str, Any]]:
    out = []
    for group in hooks.get(event) or []:
        for h in (group.get("hooks") if isinstance(group, dict) else None) or []:
            if isinstance(h, dict) and is_hela_command(h.get("command")):
                out.append(h)
    return out


def install(agent_name: str, scope: str = "user", *, space: str | None = None, db: str | None = None,
            config: str | None = None, cwd: Path | None = None, prefix: list[str] | None = None,
            server: str | None = None, chat: str | None = None) -> dict[str, Any]:
    """Merge hela's hook entries into the agent's settings file of ``scope``. Returns ``{"agent", "scope",
    "path", "changed", "events": {event: command}, "backup", "note", "model"}``. ``server``: the fast path's URL
    (``hela hook --server``; never a token). ``chat``: the hooks' ``models.chat`` (``agent:NAME[@MODEL]``: the
    agent's own model for the capture children's batched work, on ``models.agent_budget``); ``model``: what
    the install offers or set (:func:`_model_offer`)."""
    ag = get_agent(agent_name)
    _check_scope(scope)
    if server is not None:
        _check_server(server)
    if chat is not None:
        from hela_cli.models.agent import parse_ref
        from hela_cli.models.routes import route

        if route(chat).kind != "agent":
            raise InputError(f"--chat {chat!r}: the hooks' own chat model is an agent route, agent:NAME[@MODEL] "
                             f"(other models: models.chat in the config)")
        parse_ref(chat)
    path = ag.settings_path(scope, project_root(cwd or Path.cwd()))
    data, original = _load(path)
    hooks = data["hooks"] if isinstance(data.get("hooks"), dict) else {}
    prefix = prefix or hela_command()
    events = {}
    for event in ag.events:
        command = hook_command(prefix, ag, event, space=space, db=db, config=config, server=server, chat=chat)
        events[event] = command
        want = _entry(ag, event, command)
        matcher = ag.matchers.get(event)
        found = _hela_entries(hooks, event)
        if len(found) == 1 and _matcher_of(hooks, event) == matcher:
            if found[0] != want:
                found[0].clear()
                found[0].update(want)
            continue
        if found:
            _remove_hela(hooks, event)
        hooks.setdefault(event, []).append({"matcher": matcher, "hooks": [want]} if matcher else {"hooks": [want]})
    if not isinstance(data.get("hooks"), dict):
        data["hooks"] = hooks
    text = _dumps(data, original)
    changed = text != original
    if changed:
        _write(path, text, original)
    notes = [n for n in (_pgpass_note(db) if db and db_without_password(db)[1] else None, _note(ag),
                         _plugin_note(ag)) if n]
    return {"agent": ag.name, "scope": scope, "path": str(path), "changed": changed, "events": events,
            "backup": str(path.with_name(path.name + BACKUP_SUFFIX)) if changed and original is not None else None,
            "note": " ".join(notes) or None, "model": _model_offer(ag.name, chat)}


def _model_offer(agent: str, chat: str | None) -> dict[str, Any]:
    """The agent's own model as hela's chat model: set (``chat``), or offered when the agent's CLI is on
    ``PATH`` (``{"route", "installed", "set", "budget", "offer"}``)."""
    from hela_cli.models.agent import DEFAULT_BUDGET, find_binary

    route = chat or f"agent:{agent}"
    installed = find_binary(agent) is not None
    offer = None
    if chat is None and installed:
        offer = (f"hela can distil hubs and judge changed facts with {agent}'s own model, in one batched call "
                 f"from a detached capture child, never while you wait, at most {DEFAULT_BUDGET} a day "
                 f"(models.agent_budget): run this install again with --chat {route} (docs/models.md)")
    return {"route": route, "installed": installed, "set": chat is not None, "budget": DEFAULT_BUDGET,
            "offer": offer}


def uninstall(agent_name: str, scope: str = "user", *, cwd: Path | None = None) -> dict[str, Any]:
    """Remove hela's entries (only those) from the agent's settings file of ``scope``."""
    ag = get_agent(agent_name)
    _check_scope(scope)
    path = ag.settings_path(scope, project_root(cwd or Path.cwd()))
    data, original = _load(path)
    removed = 0
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            removed += _remove_hela(hooks, event)
        if removed and not hooks:
            del data["hooks"]
    if removed:
        _write(path, _dumps(data, original), original)
    return {"agent": ag.name, "scope": scope, "path": str(path), "changed": bool(removed), "removed": removed}


def status(cwd: Path | None = None, models: Any = None) -> dict[str, Any]:
    """Per agent and scope: the settings file, hela's installed events and commands; per event the last
    run, the last failure and the number of runs from the hook log; per agent the tokens its hooks injected
    (``tokens``: per session and per prompt, p50 / p95: :func:`hela_cli.hooks.log.token_stats`); the newest
    sessions (``sessions``: the share of prompts that got nothing, the tokens injected, the memories injected
    and how many the reply used: :func:`hela_cli.hooks.log.session_stats`); per agent
    route the calls and tokens spent today against ``models.agent_budget`` (``agent_budget``:
    :func:`hela_cli.models.agent.budget_status`); the managed servers running (``servers``: pid, uptime,
    requests, memory: :func:`hela_cli.hooks.managed.server_status`)."""
    from hela_cli.models.agent import budget_status

    from hela_cli.hooks import log

    runs = log.last_runs()
    root = project_root(cwd or Path.cwd())
    out = []
    for ag in AGENTS.values():
        for scope in SCOPES:
            path = ag.settings_path(scope, root)
            try:
                data, original = _load(path)
                problem = None
            except InputError as e:
                data, original, problem = {}, None, e.message
            hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
            trusted = _codex_trusted(path) if ag.name == "codex" and original is not None else None
            events = []
            for event in ag.events:
                found = _hela_entries(hooks, event)
                if not found:
                    continue
                r = runs.get((ag.name, event), {})
                row = {"event": event, "role": ag.role(event), "command": scrub_command(found[0].get("command")),
                       "last": r.get("last"), "last_failure": r.get("last_failure"), "runs": r.get("runs", 0)}
                if ag.name == "codex":   # True: Codex holds a trust hash for it (stale if the command changed since)
                    g, h = _hela_positions(hooks, event)[0]
                    row["codex_trusted"] = None if trusted is None else f"{path}:{_snake(event)}:{g}:{h}" in trusted
                events.append(row)
            out.append({"agent": ag.name, "scope": scope, "path": str(path), "exists": original is not None,
                        "installed": bool(events), "events": events, "problem": problem})
    routes = {m.group(1) for inst in out for ev in inst["events"] if isinstance(ev["command"], str)
              for m in [re.search(r"--chat[= ]agent:([\w-]+)", ev["command"])] if m}
    budget = budget_status(models)
    for row in budget:   # a route set by the hooks' command lines (install --chat) counts as configured
        row["configured"] = row["configured"] or row["agent"] in routes
    from hela_cli.hooks.managed import server_status

    return {"log": str(log.log_path()), "installs": out, "tokens": log.token_stats(),
            "sessions": log.session_stats(), "servers": server_status(),
            "agent_budget": budget,
            "unlisted_runs": [{"agent": a, "event": e, **v} for (a, e), v in sorted(runs.items())
                              if a not in AGENTS]}


def _check_server(url: str) -> None:
    try:
        u = urlsplit(url)
        port = u.port
    except ValueError:
        u, port = None, None
    if u is None or u.scheme not in ("http", "https") or not u.hostname or port is None:
        raise InputError(f"--server {url!r}: give the URL of a running `hela mcp --http`, e.g. http://127.0.0.1:8765")
    if u.username or u.password or u.query:
        raise InputError("--server: no credentials in the URL (the hooks read the server's token from where the "
                         "server keeps it)")


def _check_scope(scope: str) -> None:
    if scope not in SCOPES:
        raise InputError(f"unknown scope '{scope}' (user or project)")


def plugin_enabled(agent_name: str) -> bool:
    """Is hela's Claude Code plugin enabled in the user's Claude Code settings (``enabledPlugins``)?"""
    if agent_name != "claude-code":
        return False
    try:
        data, _ = _load(AGENTS["claude-code"].settings_path("user", Path.cwd()))
    except InputError:
        return False
    plugins = data.get("enabledPlugins")
    return isinstance(plugins, dict) and any(str(k).split("@", 1)[0] == "hela" and v for k, v in plugins.items())


def settings_hooks_installed(agent_name: str, cwd: Path) -> bool:
    """Are hela's hooks written into a settings file of the agent (either scope), as `hela hooks install`
    writes them? The plugin's own hook (``bin/hela-run``) is not one."""
    ag = AGENTS.get(agent_name)
    if ag is None:
        return False
    for scope in SCOPES:
        try:
            data, _ = _load(ag.settings_path(scope, project_root(cwd)))
        except InputError:
            continue
        hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
        if any(_hela_entries(hooks, event) for event in ag.events):
            return True
    return False


def _plugin_note(ag: Agent) -> str | None:
    if plugin_enabled(ag.name):
        return ("hela's Claude Code plugin is enabled too: its hooks step aside while these are installed, so "
                "one way runs (`claude plugin uninstall hela` keeps only these, `hela hooks uninstall "
                "claude-code` only the plugin).")
    return None


def _note(ag: Agent) -> str | None:
    if ag.name == "codex":
        return ("Codex runs a hook that is not managed only once you trust it: run `codex` in a terminal, type "
                "/hooks and choose to trust hela's hooks (again after each install that changed them); a "
                "project's .codex/ is read only in a trusted project. docs/agents.md")
    return None
