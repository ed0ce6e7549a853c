"""hela inside coding agents (Claude Code, Codex CLI, Gemini CLI) through their hooks: ``hela hooks
install | uninstall | status`` (:mod:`.install`) and ``hela hook EVENT``: the process (:mod:`.process`), the
handlers it runs (:mod:`.handlers`), captures under a lock or in detached children (:mod:`.capture_runs`),
and the fast path through a running server (its client :mod:`.client`, its endpoint :mod:`.endpoint`).
Below the CLI: no typer, rich or click here. docs/agents.md is the user's reference."""
