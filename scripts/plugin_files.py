"""Write (or, with --check, compare) the files of hela's agent packages that follow from hela itself:

* ``plugins/claude-code/hooks/hooks.json`` (the Claude Code plugin) and ``plugins/gemini/hooks/hooks.json`` (the
  Gemini CLI extension): the events, matchers and time limits ``hela hooks install claude-code | gemini`` writes
  (hela_cli/hooks/agents.py), so a package and the settings-file way run the same hooks;
* the Gemini extension's ``bin/hela-run`` and ``skills/hela-memory/SKILL.md``: copies of the Claude Code
  plugin's (one text for both agents) with the agent's name where it differs.

tests/test_plugin.py and tests/test_gemini_extension.py run --check."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLAUDE = ROOT / "plugins" / "claude-code"
GEMINI = ROOT / "plugins" / "gemini"
RUNNER = {"claude-code": '"${CLAUDE_PLUGIN_ROOT}/bin/hela-run"', "gemini": '"${extensionPath}/bin/hela-run"',
          "codex": '"${CLAUDE_PLUGIN_ROOT}/bin/hela-run"'}   # Codex sets CLAUDE_PLUGIN_ROOT for a plugin's hooks too


def plugin_hooks(agent: str = "claude-code") -> dict:
    from hela_cli.hooks.agents import AGENTS

    ag = AGENTS[agent]
    hooks = {}
    for event in ag.events:
        entry = {"type": "command", "command": f"{RUNNER[agent]} hook {event} --agent {agent}",
                 "timeout": ag.installed_timeout(event)}
        matcher = ag.matchers.get(event)
        hooks[event] = [{"matcher": matcher, "hooks": [entry]} if matcher else {"hooks": [entry]}]
    return {"description": "hela's hooks: the brief at session start, the prompt recall, the recall by file "
                           f"{'after a read or an edit' if agent == 'gemini' else 'before an edit'}, the "
                           f"capture of each turn (the same as `hela hooks install {agent}`)",
            "hooks": hooks}


def files() -> dict[Path, str]:
    run = (CLAUDE / "bin" / "hela-run").read_text(encoding="utf-8").replace("Claude Code plugin", "Gemini CLI extension") \
        .replace("hela hooks install claude-code", "hela hooks install gemini").replace("hela plugin:", "hela extension:")
    skill = (CLAUDE / "skills" / "hela-memory" / "SKILL.md").read_text(encoding="utf-8")
    return {CLAUDE / "hooks" / "hooks.json": json.dumps(plugin_hooks("claude-code"), indent=2) + "\n",
            CLAUDE / "hooks" / "codex.json": json.dumps(plugin_hooks("codex"), indent=2) + "\n",   # .codex-plugin/
            GEMINI / "hooks" / "hooks.json": json.dumps(plugin_hooks("gemini"), indent=2) + "\n",
            GEMINI / "bin" / "hela-run": run,
            GEMINI / "skills" / "hela-memory" / "SKILL.md": skill}


def main() -> int:
    wanted = files()
    if "--check" in sys.argv:
        stale = [p for p, text in wanted.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
        for p in stale:
            print(f"{p.relative_to(ROOT)} differs from what hela writes: run python scripts/plugin_files.py")
        return 1 if stale else 0
    for p, text in wanted.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        if p.name == "hela-run":
            p.chmod(0o755)
    return 0


if __name__ == "__main__":
    sys.exit(main())
