"""hela inside coding agents (Claude Code, Codex CLI, Gemini CLI) through their hooks: ``hela hooks
install | uninstall | status`` (:mod:`.install`) and ``hela hook EVENT`` (:mod:`.run`). Below the CLI: no
typer, rich or click here. docs/agents.md is the user's reference."""
