"""The coding agents hela hooks into: where each keeps its hook settings, its event names, and what each
event means to hela (one of four roles).

* ``start``: a session begins; hela prints a brief of the project as additional context.
* ``prompt``: the user submitted a prompt; hela prints the memories relevant to it (or nothing).
* ``capture``: a turn or the session ended; hela stores the turns of the transcript not yet stored.
* ``path``: the agent is about to edit or write a file (Claude Code and Codex ``PreToolUse``), or has just
  read or changed one (Gemini CLI ``AfterTool``: its ``BeforeTool`` cannot add context); hela prints what it
  knows about that file (decisions, failures, commits, changes of earlier sessions), or nothing.

All three agents read the same stdout shape for context, ``{"hookSpecificOutput": {"hookEventName": EVENT,
"additionalContext": TEXT}}`` (Claude Code refuses a mismatched ``hookEventName``), and the same settings
shape: ``{"hooks": {EVENT: [{"matcher"?: ..., "hooks": [{"type": "command", "command": ..., "timeout": ...}]}]}}``.
They differ in file names, event names and the timeout's unit (Gemini CLI: milliseconds).

Time limits. Each agent kills a hook that runs past the ``timeout`` of its settings entry (hela installs
:data:`TIMEOUT` per role), and some cut an event shorter whatever the entry says (:attr:`Agent.cuts`):

* Codex CLI clamps a ``SessionEnd`` hook to 3 s (``SESSION_END_MAX_TIMEOUT_SEC``, since 0.145; it warns
  "clamping SessionEnd hook timeout to 3s" at every start when an entry asks for more);
* Claude Code gives all ``SessionEnd`` hooks together one exit budget: the largest ``timeout`` of their
  entries, at least 1.5 s and at most 60 s (or ``CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS``; read in the
  binary of the version the tests run); hela counts on the 1.5 s floor;
* Gemini CLI does not wait for a ``SessionEnd`` hook at all ("best effort"): hela gives it the same 1.5 s.

:meth:`Agent.limit` is the time the agent allows an event: the hook stops itself (and logs why) before it.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

ROLES = ("start", "prompt", "capture", "path")
#: the ``timeout`` hela installs per role, seconds (a backstop: hela stops itself after hooks.budget_s)
TIMEOUT = {"start": 10, "prompt": 10, "capture": 60, "path": 10}


@dataclass(frozen=True)
class Agent:
    name: str                       # as the CLI names it: claude-code, codex, gemini
    title: str                      # for people
    folder: str                     # the agent's folder in a home or a project (.claude, .codex, .gemini)
    settings: str                   # the settings file inside it
    events: dict[str, str] = field(default_factory=dict)   # agent event -> role
    timeout_unit: float = 1.0       # the settings' timeout in seconds times this (Gemini CLI: ms)
    home_env: str = ""              # an environment variable that moves the user folder (CODEX_HOME)
    cuts: dict[str, float] = field(default_factory=dict)    # event -> seconds the agent allows it at most
    matchers: dict[str, str] = field(default_factory=dict)  # event -> the tool-name regex its hook runs for

    def role(self, event: str) -> str | None:
        return self.events.get(event)

    def limit(self, event: str) -> float:
        """Seconds this agent lets a hook of ``event`` run (as hela installs it) before killing it."""
        installed = TIMEOUT.get(self.events.get(event) or "capture", TIMEOUT["prompt"])   # a new role: as a prompt
        return min(float(installed), self.cuts.get(event, float("inf")))

    def installed_timeout(self, event: str) -> int:
        """The settings entry's ``timeout``, in the agent's unit: never more than the agent allows (Codex
        warns at every start about an entry it clamps)."""
        return int(math.ceil(self.limit(event)) * self.timeout_unit)

    def user_dir(self) -> Path:
        if self.home_env and os.environ.get(self.home_env):
            return Path(os.environ[self.home_env]).expanduser()
        return Path.home() / self.folder

    def settings_path(self, scope: str, project: Path | None = None) -> Path:
        """The settings file of ``scope`` (``user``: the agent's folder in the home; ``project``: in
        ``project``, the git top-level directory or the current directory)."""
        if scope == "user":
            return self.user_dir() / self.settings
        return (project or Path.cwd()) / self.folder / self.settings


AGENTS: dict[str, Agent] = {
    "claude-code": Agent(
        "claude-code", "Claude Code", ".claude", "settings.json",
        {"SessionStart": "start", "UserPromptSubmit": "prompt", "Stop": "capture", "PreCompact": "capture",
         "SessionEnd": "capture", "PreToolUse": "path"}, cuts={"SessionEnd": 1.5},
        matchers={"PreToolUse": "Edit|Write|MultiEdit|NotebookEdit"}),
    "codex": Agent(
        "codex", "Codex CLI", ".codex", "hooks.json",
        {"SessionStart": "start", "UserPromptSubmit": "prompt", "Stop": "capture", "SessionEnd": "capture",
         "PreToolUse": "path"},
        home_env="CODEX_HOME", cuts={"SessionEnd": 3.0}, matchers={"PreToolUse": "apply_patch|Edit|Write"}),
    "gemini": Agent(
        "gemini", "Gemini CLI", ".gemini", "settings.json",
        {"SessionStart": "start", "BeforeAgent": "prompt", "AfterAgent": "capture", "SessionEnd": "capture",
         "PreCompress": "capture", "AfterTool": "path"}, timeout_unit=1000.0, cuts={"SessionEnd": 1.5},
        matchers={"AfterTool": "read_file|replace|write_file"}),
}

SCOPES = ("user", "project")


def agent(name: str) -> Agent:
    from hela_cli.errors import InputError

    try:
        return AGENTS[name]
    except KeyError:
        raise InputError(f"unknown agent '{name}' (known: {', '.join(AGENTS)})") from None
