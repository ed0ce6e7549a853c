"""Write (or, with --check, compare) the hooks of hela's Claude Code plugin, ``plugins/claude-code/hooks/hooks.json``,
from the events, matchers and time limits ``hela hooks install claude-code`` writes (hela_cli/hooks/agents.py):
the plugin and the settings-file way run the same hooks. tests/test_plugin.py runs --check."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "plugins" / "claude-code" / "hooks" / "hooks.json"
RUN = '"${CLAUDE_PLUGIN_ROOT}/bin/hela-run"'


def plugin_hooks() -> dict:
    from hela_cli.hooks.agents import AGENTS

    ag = AGENTS["claude-code"]
    hooks = {}
    for event in ag.events:
        entry = {"type": "command", "command": f"{RUN} hook {event} --agent claude-code",
                 "timeout": ag.installed_timeout(event)}
        matcher = ag.matchers.get(event)
        hooks[event] = [{"matcher": matcher, "hooks": [entry]} if matcher else {"hooks": [entry]}]
    return {"description": "hela's hooks: the brief at session start, the prompt recall, the recall by file "
                           "before an edit, the capture of each turn (the same as `hela hooks install claude-code`)",
            "hooks": hooks}


def main() -> int:
    text = json.dumps(plugin_hooks(), indent=2) + "\n"
    if "--check" in sys.argv:
        if HOOKS.read_text(encoding="utf-8") != text:
            print(f"{HOOKS} differs from what `hela hooks install claude-code` writes: run python scripts/plugin_files.py")
            return 1
        return 0
    HOOKS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
