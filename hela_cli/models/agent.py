"""The coding agent's own CLI as hela's chat model: ``models.chat: agent:claude-code[@MODEL]``,
``agent:codex[@MODEL]``, ``agent:gemini[@MODEL]``.

Every user of hela's hooks runs an agent that can answer headless on the login or key the user already
has: ``claude -p``, ``codex exec``, ``gemini -p``. :class:`AgentChat` is a :class:`~hela_cli.models.ChatModel`
over that CLI, so distillation (prompt A.1), the change judge, session gists and ``hela ask`` use it as
they use any chat model. What each call does:

* **Redacted first.** Every message is passed through :func:`hela_cli.text.redact.redact` (what capture
  does to a stored turn) before it is written to the CLI's stdin.
* **Budget.** ``models.agent_budget`` (``"N calls, T tokens"`` per day and agent; :func:`parse_budget`) is
  checked before the call and the call's tokens are counted after it, from what the CLI reports (Claude
  Code's ``usage``, Codex's ``turn.completed`` usage, Gemini CLI's ``stats``), else estimated (one token per
  3 bytes of prompt and answer) and labelled ``estimated``. At the cap the call is refused with
  :class:`AgentBudgetSpent` (a :class:`~hela_cli.errors.ModelError`: every caller already reads that as "no
  model now"); the first refusal of a day is flagged (``first``) so the hook writes one log line. The
  ledger is ``<hela home>/agent/usage.json`` (:class:`Ledger`, last 14 days, under a lock).
* **One at a time.** At most one call per database runs (a ``flock`` on ``<hela home>/agent/<db>.lock``); a
  second waits up to the call's time limit, then gives up (``ModelError``).
* **Bounded.** The CLI runs in its own process group (its own session) in an empty temporary working
  directory, which is removed afterwards; at its time limit (``models.timeout``) the whole group gets
  ``SIGTERM``, then ``SIGKILL``; after a normal exit what is left of the group is killed too; on Linux the
  CLI also dies with the thread that started it (``PR_SET_PDEATHSIG``), and :func:`stop_all` kills every
  group still running (the hook process calls it before it exits).
* **No recursion, no trace, no tools.** The environment carries :data:`NESTED_ENV` (``HELA_NESTED=1``):
  ``hela hook`` exits at once doing nothing when it sees it, so hela's own hooks never fire inside the
  nested session. Per CLI (the flags of Claude Code 2.1.332, Codex CLI 0.171.0, Gemini CLI 0.61.0):

  - Claude Code: ``--safe-mode`` (no hooks, MCP servers, CLAUDE.md, skills or plugins; OAuth / keychain
    login still used, unlike ``--bare``, which reads only ``ANTHROPIC_API_KEY``), ``--tools ""`` (no tools),
    ``--strict-mcp-config``, ``--no-session-persistence`` (no transcript), ``--system-prompt`` (hela's
    instruction instead of the agent's long default prompt), ``--permission-prompts none``;
  - Codex CLI: ``--ephemeral`` (no session file), ``--sandbox read-only``, ``approval_policy="never"``,
    ``--disable hooks``, ``--skip-git-repo-check``; Codex still offers its shell tool (read-only
    sandbox, nothing approved) and sends its own instructions;
  - Gemini CLI: ``--approval-mode plan`` (read-only), ``--extensions none``, no MCP server allowed,
    ``GEMINI_SYSTEM_MD`` (hela's instruction as the system prompt). Gemini CLI records every session under
    ``~/.gemini/tmp/<project>/`` and has no switch against it: hela deletes what was recorded for its own
    temporary working directory after the call (:func:`_gemini_traces`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from hela_cli.errors import InputError, ModelError
from hela_cli.models.endpoints import estimate_tokens

PREFIX = "agent:"
#: ``models.chat`` agent name -> the CLI's executable
AGENTS = {"claude-code": "claude", "codex": "codex", "gemini": "gemini"}
#: set in the nested session's environment; ``hela hook`` exits at once when it sees it
NESTED_ENV = "HELA_NESTED"
#: the default ``models.agent_budget`` (docs/models.md "The coding agent's model": why this figure)
DEFAULT_BUDGET = "24 calls, 150000 tokens"
#: the model an agent route uses when the ref names none: the agent's small fast model where its CLI has a
#: stable alias (Codex CLI has none: its own configured model)
DEFAULT_MODEL = {"claude-code": "haiku", "codex": None, "gemini": "flash"}
N_CTX = 32_768         # what hela sends at most per call (the agents' models take more; this bounds the cost)
KEEP_DAYS = 14         # days the usage ledger keeps
KILL_GRACE_S = 2.0     # SIGTERM, then this long, then SIGKILL
#: variables of a running agent session that would make the nested CLI think it runs inside one
_AGENT_SESSION_ENV = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "CLAUDE_PROJECT_DIR",
                      "CLAUDE_ENV_FILE", "CODEX_THREAD_ID", "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED",
                      "GEMINI_CLI", "GEMINI_SYSTEM_MD")


def is_agent(ref: str) -> bool:
    return isinstance(ref, str) and ref.startswith(PREFIX)


def parse_ref(ref: str) -> tuple[str, str | None]:
    """``agent:NAME[@MODEL]`` -> ``(NAME, MODEL or None)``; exit 2 for anything else."""
    body = ref[len(PREFIX):] if is_agent(ref) else ref
    name, _, model = body.partition("@")
    if name not in AGENTS or (model is not None and "@" in ref and not model.strip()):
        raise InputError(f"'{ref}': the agent route is agent:NAME[@MODEL] with NAME one of "
                         f"{', '.join(AGENTS)} (e.g. agent:claude-code@haiku)")
    if model and (model.startswith("-") or any(c.isspace() for c in model)):
        raise InputError(f"'{ref}': '{model}' is not a model name")
    return name, (model or None)


# ------------------------------------------------------------------------------------------ the budget
@dataclass(frozen=True)
class Budget:
    calls: int
    tokens: int

    def __str__(self) -> str:
        return f"{self.calls} calls, {self.tokens} tokens"


_AMOUNT = r"(\d[\d_,]*(?:\.\d+)?)\s*([kKmM]?)"


def parse_budget(text: str) -> Budget:
    """``"24 calls, 150000 tokens"`` (also ``150k``, ``1.5M``; either part alone leaves the other at the
    default; ``off`` or ``0``: no call at all) -> :class:`Budget`. Exit 2 for anything else."""
    s = str(text or "").strip().lower()
    if s in ("off", "0", "none", "no"):
        return Budget(0, 0)
    default = _parse(DEFAULT_BUDGET) if text != DEFAULT_BUDGET else None
    got: dict[str, int] = {}
    rest = s
    for m in re.finditer(_AMOUNT + r"\s*(calls?|tokens?)\b", s):
        num = float(m.group(1).replace(",", "").replace("_", ""))
        num *= {"k": 1e3, "m": 1e6}.get(m.group(2).lower(), 1)
        got["calls" if m.group(3).startswith("call") else "tokens"] = int(num)
        rest = rest.replace(m.group(0), "")
    if not got or rest.strip(" ,;/") or any(v < 0 for v in got.values()):
        raise InputError(f"models.agent_budget: '{text}' is not a budget; give calls and tokens per day and "
                         f"agent, e.g. '{DEFAULT_BUDGET}' (or 'off')")
    base = default or Budget(0, 0)
    return Budget(got.get("calls", base.calls), got.get("tokens", base.tokens))


def _parse(text: str) -> Budget:
    m = re.fullmatch(r"(\d+) calls, (\d+) tokens", text)
    assert m is not None
    return Budget(int(m.group(1)), int(m.group(2)))


class AgentBudgetSpent(ModelError):
    """The day's budget of an agent route is spent (``models.agent_budget``); ``first``: the first refusal
    of the day (the hooks write one log line for it)."""

    def __init__(self, message: str, first: bool = False):
        super().__init__(message)
        self.first = first


def _folder() -> Path:
    from hela_cli.paths import data_dir, ensure_private_dir

    return ensure_private_dir(data_dir() / "agent")


def today() -> str:
    """The ledger's day: the local date (a user's "per day")."""
    return time.strftime("%Y-%m-%d", time.localtime())


@contextlib.contextmanager
def _flock(path: Path, wait_s: float | None = None) -> Iterator[bool]:
    """An exclusive ``flock`` on ``path`` (``wait_s`` None: block; else poll up to that long and yield
    False when it never came). Without ``fcntl`` (Windows): no lock, True."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield True
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if wait_s is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            got = True
        else:
            end = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    got = True
                    break
                except OSError:
                    if time.monotonic() >= end:
                        got = False
                        break
                    time.sleep(0.1)
        yield got
    finally:
        os.close(fd)   # closing the descriptor releases the lock


class Ledger:
    """The agents' use per day: ``{day: {agent: {"calls", "tokens", "input_tokens", "output_tokens",
    "estimated_calls", "stopped", "dropped"}}}`` in ``<hela home>/agent/usage.json``, read and written under a
    lock (several capture children may call at once)."""

    FIELDS = ("calls", "tokens", "input_tokens", "output_tokens", "estimated_calls", "stopped", "dropped")

    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder is not None else _folder()
        self.path = self.folder / "usage.json"

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _write(self, data: dict[str, Any]) -> None:
        keep = sorted(data)[-KEEP_DAYS:]
        tmp = self.path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({d: data[d] for d in keep}, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)

    @contextlib.contextmanager
    def _update(self) -> Iterator[dict[str, Any]]:
        with _flock(self.folder / "usage.lock"):
            data = self._read()
            yield data
            self._write(data)

    @staticmethod
    def _row(data: dict[str, Any], day: str, agent: str) -> dict[str, int]:
        row = data.setdefault(day, {}).setdefault(agent, {})
        for k in Ledger.FIELDS:
            row.setdefault(k, 0)
        return row

    def spent(self, agent: str, day: str | None = None) -> dict[str, int]:
        """The agent's row of ``day`` (default today); zeros when none."""
        row = self._read().get(day or today(), {}).get(agent, {})
        return {k: int(row.get(k, 0)) for k in self.FIELDS}

    def days(self) -> dict[str, dict[str, dict[str, int]]]:
        return self._read()

    def reserve(self, agent: str, budget: Budget, prompt_tokens: int) -> None:
        """Refuse (:class:`AgentBudgetSpent`) when the call would pass today's budget: the calls are spent,
        or the tokens spent plus this prompt's estimate would pass the cap; otherwise count the call."""
        with self._update() as data:   # written back as it leaves: the refusal is counted too
            row = self._row(data, today(), agent)
            why = None
            if row["calls"] >= budget.calls:
                why = f"{row['calls']} of {budget.calls} calls"
            elif row["tokens"] + prompt_tokens > budget.tokens:
                why = f"{row['tokens']} of {budget.tokens} tokens, and this call needs about {prompt_tokens}"
            if why is not None:
                row["stopped"] += 1
                first = row["stopped"] == 1
            else:
                row["calls"] += 1
        if why is not None:
            raise AgentBudgetSpent(f"agent:{agent}: today's budget is spent ({why}; models.agent_budget); "
                                   f"no model call until tomorrow", first=first)

    def refuse(self, agent: str, budget: Budget) -> tuple[str, bool] | None:
        """Without calling: None when today's budget has room, else ``(why, first)`` with the refusal counted
        (``first``: the first of the day, for the one log line)."""
        with self._update() as data:
            row = self._row(data, today(), agent)
            if row["calls"] < budget.calls and row["tokens"] < budget.tokens:
                return None
            row["stopped"] += 1
            return (f"agent:{agent}: today's budget is spent ({row['calls']} of {budget.calls} calls, "
                    f"{row['tokens']} of {budget.tokens} tokens; models.agent_budget); no model call until "
                    f"tomorrow", row["stopped"] == 1)

    def record(self, agent: str, input_tokens: int, output_tokens: int, estimated: bool) -> None:
        with self._update() as data:
            row = self._row(data, today(), agent)
            row["input_tokens"] += int(input_tokens)
            row["output_tokens"] += int(output_tokens)
            row["tokens"] += int(input_tokens) + int(output_tokens)
            row["estimated_calls"] += int(bool(estimated))

    def count(self, agent: str, key: str, n: int = 1) -> None:
        """Add ``n`` to a counter of today's row (``dropped``: an answer that did not parse)."""
        with self._update() as data:
            self._row(data, today(), agent)[key] += n


# ------------------------------------------------------------------------------------------ processes
_RUNNING: set[int] = set()   # process groups of the CLIs running in this process
_RUNNING_LOCK = threading.Lock()


def _kill_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _reap_group(pgid: int, wait_s: float = 3.0) -> None:
    """SIGKILL the process group until no member is left (or ``wait_s`` passed)."""
    end = time.monotonic() + wait_s
    while _kill_group(pgid, signal.SIGKILL) and time.monotonic() < end:
        time.sleep(0.05)


def stop_all() -> None:
    """Kill every agent CLI this process started that still runs (the hook process calls it before it
    exits: a capture child stopped at its budget leaves no model process behind)."""
    with _RUNNING_LOCK:
        groups = list(_RUNNING)
        _RUNNING.clear()
    for g in groups:
        _kill_group(g, signal.SIGKILL)


def _die_with_parent() -> None:
    """In the child before exec: die when the thread that started it ends (Linux), so that nothing
    outlives a hook process that exits without :func:`stop_all`."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the process group kill still applies
        pass


@dataclass
class Run:
    """One finished CLI run: its exit status, stdout, stderr (cut), and whether it was killed at its limit."""
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float


def run_cli(cmd: list[str], stdin: str, cwd: Path, env: dict[str, str], timeout: float) -> Run:
    """Run ``cmd`` in its own process group with ``stdin``; at ``timeout`` the group gets SIGTERM, then
    SIGKILL; whatever of the group is left after the CLI exits is killed too."""
    t0 = time.monotonic()
    kwargs: dict[str, Any] = {"start_new_session": True}
    if sys.platform.startswith("linux"):
        kwargs["preexec_fn"] = _die_with_parent
    try:
        proc = subprocess.Popen(cmd, cwd=str(cwd), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, **kwargs)
    except OSError as e:
        raise ModelError(f"{cmd[0]}: cannot start ({e.strerror or e.__class__.__name__})") from None
    with _RUNNING_LOCK:
        _RUNNING.add(proc.pid)
    timed_out = False
    try:
        try:
            out, err = proc.communicate(stdin.encode("utf-8"), timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid, signal.SIGTERM)
            try:
                out, err = proc.communicate(timeout=KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                _kill_group(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
    finally:
        if proc.poll() is None:   # pragma: no cover - an exception while communicating
            proc.kill()
            proc.wait()
        _reap_group(proc.pid)   # what the CLI started and left running
        with _RUNNING_LOCK:
            _RUNNING.discard(proc.pid)
    return Run(proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")[-4000:],
               timed_out, round(time.monotonic() - t0, 3))


# ------------------------------------------------------------------------------------------ the CLIs
def find_binary(agent: str) -> str | None:
    """The agent's executable on ``PATH`` (``claude``, ``codex``, ``gemini``), or None."""
    return shutil.which(AGENTS[agent])


def installed(versions: bool = False, timeout: float = 15.0) -> list[dict[str, Any]]:
    """For ``hela models list``: each agent and its executable on ``PATH`` (None: not installed); with
    ``versions`` also its ``--version`` line (each CLI starts a node process: seconds on a busy machine)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(agent: str) -> dict[str, Any]:
        path = find_binary(agent)
        version = None
        if path and versions:
            try:
                res = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=timeout,
                                     stdin=subprocess.DEVNULL, env={**os.environ, NESTED_ENV: "1"})
                version = (res.stdout.strip().splitlines() or [""])[-1][:80] or None
            except (OSError, subprocess.TimeoutExpired):
                version = None
        return {"agent": agent, "ref": f"{PREFIX}{agent}", "binary": path, "version": version,
                "installed": path is not None}

    with ThreadPoolExecutor(len(AGENTS)) as pool:   # each CLI starts a node process: side by side
        return list(pool.map(one, AGENTS))


def _env(extra: dict[str, str]) -> dict[str, str]:
    """The nested session's environment: the user's (login, keys, proxies), less hela's own settings and the
    variables of a running agent session, plus :data:`NESTED_ENV`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_") and k not in _AGENT_SESSION_ENV}
    env[NESTED_ENV] = "1"
    env.update(extra)
    return env


def _split(messages: list[dict[str, str]]) -> tuple[str, str]:
    """(system text, the rest as one prompt). A single user message is sent as it is; several are labelled."""
    system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
    rest = [m for m in messages if m.get("role") != "system"]
    if len(rest) == 1:
        return system, rest[0]["content"]
    return system, "\n\n".join(f"{m.get('role', 'user').upper()}:\n{m['content']}" for m in rest)


@dataclass
class Reply:
    text: str
    input_tokens: int | None
    output_tokens: int | None


def _fail(agent: str, run: Run, what: str) -> ModelError:
    tail = " ".join((run.stderr or run.stdout).split())[-240:]
    return ModelError(f"agent:{agent}: {what}" + (f" ({tail})" if tail else ""))


def _codex_no_mcp() -> list[str]:
    """``-c mcp_servers.NAME.enabled=false`` for each MCP server of ``$CODEX_HOME/config.toml`` (an empty
    ``mcp_servers`` override is merged, not replaced: the servers would still start)."""
    import tomllib

    path = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml"
    try:
        servers = tomllib.loads(path.read_text(encoding="utf-8")).get("mcp_servers") or {}
    except (OSError, ValueError):
        return []
    out: list[str] = []
    for name in servers if isinstance(servers, dict) else []:
        if re.fullmatch(r"[A-Za-z0-9_-]+", str(name)):
            out += ["-c", f"mcp_servers.{name}.enabled=false"]
    return out


def _claude_reply(run: Run) -> Reply:
    try:
        data = json.loads(run.stdout.strip().splitlines()[-1]) if run.stdout.strip() else None
    except ValueError:
        data = None
    if isinstance(data, list):   # an older --output-format json: the messages, the result last
        data = next((d for d in reversed(data) if isinstance(d, dict) and d.get("type") == "result"), None)
    if not isinstance(data, dict):
        raise _fail("claude-code", run, f"no JSON result on stdout (exit {run.returncode})")
    if data.get("is_error") or data.get("subtype") not in (None, "success"):
        raise ModelError(f"agent:claude-code: {' '.join(str(data.get('result') or data.get('subtype')).split())[:240]}")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    tin = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                   "cache_read_input_tokens"))
    tout = int(usage.get("output_tokens") or 0)
    return Reply(str(data.get("result") or ""), tin if usage else None, tout if usage else None)


def _codex_reply(run: Run) -> Reply:
    text, tin, tout, error = None, None, None, None
    for line in run.stdout.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if not isinstance(ev, dict):
            continue
        kind = ev.get("type")
        item = ev.get("item") if isinstance(ev.get("item"), dict) else {}
        if kind == "item.completed" and item.get("type") in ("agent_message", "assistant_message"):
            text = str(item.get("text") or "")
        elif kind == "turn.completed" and isinstance(ev.get("usage"), dict):
            u = ev["usage"]
            tin = (tin or 0) + int(u.get("input_tokens") or 0)
            tout = (tout or 0) + int(u.get("output_tokens") or 0)
        elif kind in ("turn.failed", "error"):
            err = ev.get("error") if isinstance(ev.get("error"), dict) else ev
            error = str(err.get("message") or kind)
    if text is None:
        raise (ModelError(f"agent:codex: {' '.join(error.split())[:240]}") if error
               else _fail("codex", run, f"no answer in the --json events (exit {run.returncode})"))
    return Reply(text, tin, tout)


def _gemini_reply(run: Run) -> Reply:
    out = run.stdout.strip()
    start = out.find("{")
    try:
        data = json.loads(out[start:]) if start >= 0 else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise _fail("gemini", run, f"no JSON result on stdout (exit {run.returncode})")
    if data.get("error"):
        err = data["error"] if isinstance(data["error"], dict) else {"message": data["error"]}
        raise ModelError(f"agent:gemini: {' '.join(str(err.get('message')).split())[:240]}")
    tin = tout = None
    models = ((data.get("stats") or {}).get("models") or {}) if isinstance(data.get("stats"), dict) else {}
    for m in models.values() if isinstance(models, dict) else []:
        tok = m.get("tokens") if isinstance(m, dict) else None
        if isinstance(tok, dict):
            tin = (tin or 0) + int(tok.get("prompt") or tok.get("input") or 0)
            tout = (tout or 0) + int(tok.get("candidates") or 0) + int(tok.get("thoughts") or 0)
    return Reply(str(data.get("response") or ""), tin, tout)


def _gemini_traces(cwd: Path) -> list[Path]:
    """What Gemini CLI recorded for the working directory ``cwd`` under ``~/.gemini/tmp/`` (the project's
    chats and logs: a folder named by the SHA-256 of the path, or by a short name listed in
    ``~/.gemini/projects.json``)."""
    root = Path.home() / ".gemini"
    found = []
    for c in {str(cwd), str(cwd.resolve())}:
        p = root / "tmp" / hashlib.sha256(c.encode()).hexdigest()
        if p.exists():
            found.append(p)
    try:
        reg = json.loads((root / "projects.json").read_text(encoding="utf-8"))
        projects = reg.get("projects", reg) if isinstance(reg, dict) else {}
        for path, slug in (projects.items() if isinstance(projects, dict) else []):
            if path in (str(cwd), str(cwd.resolve())) and isinstance(slug, str) and slug and "/" not in slug:
                for base in (root / "tmp", root / "history"):
                    if (base / slug).exists():
                        found.append(base / slug)
    except (OSError, ValueError, AttributeError):
        pass
    return found


def _forget_gemini_project(cwd: Path) -> None:
    """Remove the temporary directory's entry from ``~/.gemini/projects.json`` (under Gemini's own file, so
    only our entry goes; a file we cannot parse is left alone)."""
    reg_path = Path.home() / ".gemini" / "projects.json"
    try:
        reg = json.loads(reg_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    projects = reg.get("projects") if isinstance(reg, dict) else None
    if not isinstance(projects, dict):
        return
    gone = [p for p in projects if p in (str(cwd), str(cwd.resolve()))]
    if not gone:
        return
    for p in gone:
        del projects[p]
    tmp = reg_path.with_suffix(f".hela{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(reg, indent=2), encoding="utf-8")
        os.replace(tmp, reg_path)
    except OSError:
        pass


# ------------------------------------------------------------------------------------------ the model
SYSTEM_DEFAULT = "You are a careful assistant. Answer only from the text you are given."


class AgentChat:
    """A :class:`~hela_cli.models.ChatModel` answering through a coding agent's headless CLI (see the module
    docstring). ``lock_key``: the database the calls are for (one call per database at a time)."""

    def __init__(self, ref: str, *, budget: str = DEFAULT_BUDGET, timeout: float = 120.0, lock_key: str = "",
                 n_ctx: int = N_CTX, ledger: Ledger | None = None):
        self.agent, model = parse_ref(ref)
        self.model = model or DEFAULT_MODEL[self.agent]
        self.ref = ref
        self.model_id = f"{PREFIX}{self.agent}" + (f"@{self.model}" if self.model else "")
        self.n_ctx = n_ctx
        self.budget = parse_budget(budget)
        self.timeout = float(timeout)
        self.lock_key = hashlib.sha256((lock_key or "default").encode("utf-8", "surrogatepass")).hexdigest()[:16]
        self._ledger = ledger
        self.last: dict[str, Any] = {}   # the last call: tokens, estimated, seconds

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            self._ledger = Ledger()
        return self._ledger

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def _binary(self) -> str:
        path = find_binary(self.agent)
        if path is None:
            raise ModelError(f"agent:{self.agent}: '{AGENTS[self.agent]}' is not on PATH (install the agent, or set "
                             f"models.chat to another model)")
        return path

    def generate(self, messages: list[dict[str, str]], *, max_tokens: int = 256, temperature: float = 0.0,
                 json_schema: dict[str, Any] | None = None, stop: list[str] | None = None) -> str:
        from hela_cli.text.redact import redact

        binary = self._binary()
        system, prompt = _split([{**m, "content": redact(m.get("content") or "")} for m in messages])
        system = system or SYSTEM_DEFAULT
        if json_schema is not None:
            system += ("\n\nReply with one JSON object and nothing else (no code fence), matching this JSON "
                       "schema:\n" + json.dumps(json_schema, separators=(",", ":")))
        need = estimate_tokens(system) + estimate_tokens(prompt) + max_tokens
        if need > self.n_ctx:
            raise ModelError(f"agent:{self.agent}: the prompt needs about {need} tokens, more than hela sends in "
                             f"one call ({self.n_ctx})")
        with _flock(_folder() / f"{self.lock_key}.lock", wait_s=self.timeout) as got:
            if not got:
                raise ModelError(f"agent:{self.agent}: another model call for this database ran for "
                                 f"{self.timeout:g} s (models.timeout); try again later")
            self.ledger.reserve(self.agent, self.budget, need)
            reply, run = self._call(binary, system, prompt, max_tokens)
        estimated = reply.input_tokens is None or reply.output_tokens is None
        tin = reply.input_tokens if reply.input_tokens is not None else estimate_tokens(system + prompt)
        tout = reply.output_tokens if reply.output_tokens is not None else estimate_tokens(reply.text)
        self.ledger.record(self.agent, tin, tout, estimated)
        self.last = {"input_tokens": tin, "output_tokens": tout, "estimated": estimated, "seconds": run.seconds}
        text = reply.text
        if stop:
            cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
            text = text[:cut] if cut >= 0 else text
        return text.strip()

    def _call(self, binary: str, system: str, prompt: str, max_tokens: int) -> tuple[Reply, Run]:
        with tempfile.TemporaryDirectory(prefix="hela-agent-") as tmp:
            cwd = Path(tmp) / "work"
            cwd.mkdir()
            extra: dict[str, str] = {}
            model = ["--model", self.model] if self.model else []
            if self.agent == "claude-code":
                cmd = [binary, *model, "-p", "--output-format", "json", "--safe-mode", "--tools", "",
                       "--strict-mcp-config", "--no-session-persistence", "--permission-prompts", "none",
                       "--disable-slash-commands", "--system-prompt", system]
                extra = {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(max(max_tokens, 256))}
                stdin = prompt
            elif self.agent == "codex":
                cmd = [binary, "exec", *model, "--json", "--ephemeral", "--sandbox", "read-only", "--skip-git-repo-check",
                       "--disable", "hooks", "-c", 'approval_policy="never"', *_codex_no_mcp(), "--color",
                       "never", "-C", str(cwd),
                       "-"]
                stdin = f"{system}\n\n{prompt}"
            else:
                sysmd = Path(tmp) / "system.md"
                sysmd.write_text(system, encoding="utf-8")
                cmd = [binary, *model, "-p", "Follow the system instructions for the request above.", "--output-format",
                       "json", "--approval-mode", "plan", "--extensions", "none", "--allowed-mcp-server-names",
                       "hela-none"]
                extra = {"GEMINI_SYSTEM_MD": str(sysmd)}
                stdin = prompt
            try:
                run = run_cli(cmd, stdin, cwd, _env(extra), self.timeout)
            finally:
                if self.agent == "gemini":
                    for p in _gemini_traces(cwd):
                        shutil.rmtree(p, ignore_errors=True)
                    _forget_gemini_project(cwd)
            if run.timed_out:
                raise ModelError(f"agent:{self.agent}: no answer within {self.timeout:g} s (models.timeout); "
                                 f"the process group was killed")
            reply = {"claude-code": _claude_reply, "codex": _codex_reply, "gemini": _gemini_reply}[self.agent](run)
            if run.returncode != 0 and not reply.text:
                raise _fail(self.agent, run, f"exit {run.returncode}")
            return reply, run


def agent_chat(models: Any, db: str = "") -> AgentChat:
    """The :class:`AgentChat` of ``models.chat`` (an ``agent:`` ref) with the configured budget and timeout."""
    return AgentChat(models.chat, budget=models.agent_budget, timeout=models.timeout, lock_key=db)


def budget_status(models: Any | None = None) -> list[dict[str, Any]]:
    """Per agent: today's spent calls and tokens against the cap (``hela hooks status``)."""
    budget = parse_budget(getattr(models, "agent_budget", DEFAULT_BUDGET) if models is not None else DEFAULT_BUDGET)
    ledger = Ledger()
    out = []
    for agent in AGENTS:
        row = ledger.spent(agent)
        out.append({"agent": agent, "day": today(), "calls": row["calls"], "tokens": row["tokens"],
                    "cap_calls": budget.calls, "cap_tokens": budget.tokens, "estimated_calls": row["estimated_calls"],
                    "stopped": row["stopped"], "dropped": row["dropped"],
                    "configured": bool(models is not None and getattr(models, "chat", "") .startswith(PREFIX + agent))})
    return out
