"""``hela hook EVENT``: run one agent hook, the command agents' settings run (:func:`hela_cli.hooks.process.main`).

It is also dispatched before Typer is imported (:func:`hela_cli.cli.main`): its start-up is the latency of
every prompt. Both paths call :func:`hela_cli.hooks.process.process_main`.
"""

from __future__ import annotations

import typer

from hela_cli.cli.helpers import state

app = typer.Typer()


@app.command("hook", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def hook(ctx: typer.Context) -> None:
    """Run one agent hook (what `hela hooks install` puts in an agent's settings): EVENT [--agent
    claude-code|codex|gemini] [--space NAME], the agent's JSON on stdin; prints the agent's additional
    context or nothing, always exits 0 (failures go to the hook log; docs/agents.md)."""
    from hela_cli.hooks.process import process_main

    st = state(ctx)
    extra = [*(["--db", st.db] if st.db and "--db" not in ctx.args else []),
             *(["--config", st.config_path] if st.config_path and "--config" not in ctx.args else [])]
    process_main([*ctx.args, *extra])   # exits 0, as `hela hook` does
