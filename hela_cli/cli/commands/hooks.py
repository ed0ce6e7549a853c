"""``hela hooks install | uninstall | status``: hela's hooks in a coding agent's settings (:mod:`hela_cli.hooks`).
The hook itself is ``hela hook EVENT`` (:mod:`hela_cli.cli.commands.hook`)."""

from __future__ import annotations

import time
from typing import Optional

import typer

from hela_cli.cli.helpers import state
from hela_cli.cli.render import console, print_json, table, text

app = typer.Typer(name="hooks", no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]},
                  help="Automatic memory inside coding agents: install, remove, check hela's hooks.")

_AGENT_HELP = "claude-code, codex or gemini."
_SCOPE_HELP = "user (the agent's settings in your home) or project (in the git top-level directory)."


@app.command("install")
def hooks_install(
    ctx: typer.Context,
    agent: str = typer.Argument(..., help=_AGENT_HELP),
    scope: str = typer.Option("user", "--scope", help=_SCOPE_HELP),
    space: Optional[str] = typer.Option(None, "--space", "-s", help="Pin one space (default: one per project, "
                                        "from the git top-level directory)."),
    server: Optional[str] = typer.Option(None, "--server", help="A running `hela mcp --http` on the same "
                                         "database (e.g. http://127.0.0.1:8765): the hooks ask it first (its "
                                         "token is read from where the server keeps it, never written here)."),
    chat: Optional[str] = typer.Option(None, "--chat", help="The agent's own model as hela's chat model for "
                                       "these hooks: agent:claude-code|codex|gemini[@MODEL]. Capture children "
                                       "then distil hubs and judge undecided changes in one batched call, "
                                       "within models.agent_budget a day (docs/models.md)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Merge hela's hooks into the agent's settings file (idempotent; the previous file is backed up)."""
    from hela_cli.hooks.install import install

    st = state(ctx)
    rep = install(agent, scope, space=space, db=st.db, config=st.config_path, server=server, chat=chat)
    if json_out:
        print_json(rep)
        return
    what = "installed" if rep["changed"] else "already installed, nothing changed"
    console.print(text(f"{rep['agent']} ({rep['scope']}): {what}: {rep['path']}"), soft_wrap=True)
    for event, command in rep["events"].items():
        console.print(text(f"  {event}: {command}"), soft_wrap=True)
    if rep["backup"]:
        console.print(text(f"previous file: {rep['backup']}"), soft_wrap=True)
    if rep["note"]:
        console.print(text(f"note: {rep['note']}"), soft_wrap=True)
    model = rep.get("model") or {}
    if model.get("set"):
        console.print(text(f"model: {model['route']} (capture children only, at most models.agent_budget a day; "
                           f"`hela hooks status` shows what was spent)"), soft_wrap=True)
    elif model.get("offer"):
        console.print(text(f"offer: {model['offer']}"), soft_wrap=True)


@app.command("uninstall")
def hooks_uninstall(
    agent: str = typer.Argument(..., help=_AGENT_HELP),
    scope: str = typer.Option("user", "--scope", help=_SCOPE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Remove exactly hela's entries from the agent's settings file."""
    from hela_cli.hooks.install import uninstall

    rep = uninstall(agent, scope)
    if json_out:
        print_json(rep)
        return
    what = f"removed {rep['removed']} hela hook(s)" if rep["changed"] else "no hela hooks found, nothing changed"
    console.print(text(f"{rep['agent']} ({rep['scope']}): {what}: {rep['path']}"), soft_wrap=True)


@app.command("status")
def hooks_status(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Per agent and scope: what is installed, the command it runs, the last run and last failure of each
    event (from the hook log); per agent the tokens the hooks injected, per session and per prompt; the
    newest sessions with the share of prompts that got nothing and how many injected memories a reply used; the
    agent models' calls and tokens spent today against models.agent_budget."""
    from hela_cli.hooks.install import status

    from hela_cli.errors import HelaError

    try:
        models = state(ctx).config().models
    except HelaError:   # a config that does not load: the hooks' state is still shown (the budget's default cap)
        models = None
    rep = status(models=models)
    if json_out:
        print_json(rep)
        return
    t = table(f"hela hooks (log: {rep['log']})", [("agent", "key"), ("scope", "key"), ("event", "key"),
                                                  ("last run", "text"), ("last failure", "text")])
    any_row = False
    for inst in rep["installs"]:
        if inst["problem"]:
            t.add_row(inst["agent"], inst["scope"], "-", text(inst["problem"]), "")
            any_row = True
        for ev in inst["events"]:
            last = _run(ev["last"])
            if ev.get("codex_trusted") is False:
                last += " (not trusted in Codex yet: run codex, /hooks)"
            t.add_row(inst["agent"], inst["scope"], ev["event"], text(last), text(_run(ev["last_failure"])))
            any_row = True
    if any_row:
        console.print(t)
        for inst in rep["installs"]:
            if inst["installed"]:
                console.print(text(f"{inst['agent']} ({inst['scope']}): {inst['path']}\n  runs: "
                                   f"{inst['events'][0]['command']}"), soft_wrap=True)
    else:
        console.print("no hela hooks installed (hela hooks install claude-code | codex | gemini)")
    if rep.get("tokens"):
        tt = table("tokens injected (estimated: characters / 4)",
                   [("agent", "key"), ("sessions", "num"), ("session p50/p95", "num"), ("prompts", "num"),
                    ("prompt p50/p95", "num"), ("total", "num")])
        for agent, st in rep["tokens"].items():
            tt.add_row(agent, str(st["sessions"]), f"{st['per_session']['p50']:g}/{st['per_session']['p95']:g}",
                       str(st["prompts"]), f"{st['per_prompt']['p50']:g}/{st['per_prompt']['p95']:g}",
                       str(st["total"]))
        console.print(tt)
    if rep.get("sessions"):
        st = table("recent sessions: prompts that got nothing, what was injected, what the reply used",
                   [("agent", "key"), ("session", "key"), ("prompts", "num"), ("silent", "num"), ("tokens", "num"),
                    ("injected", "num"), ("used", "num")])
        for s in rep["sessions"]:
            silent = f"{100 * s['silent']:.0f} %" if s["silent"] is not None else "-"
            st.add_row(s["agent"], text(s["session"][:12]), str(s["prompts"]), silent, str(s["tokens"]),
                       str(s["injected"]), "-" if s["used"] is None else str(s["used"]))
        console.print(st)
    if rep.get("servers"):
        sv = table("hook servers (hooks.server auto; hela hooks stop)",
                   [("pid", "num"), ("up", "num"), ("requests", "num"), ("idle", "num"), ("memory", "num"),
                    ("database", "text")])
        for s in rep["servers"]:
            if not s.get("answering"):
                sv.add_row(str(s["pid"]), "-", "-", "-", "-", text("not answering"))
                continue
            rss = f"{s['rss_mib']:g} MiB" if s.get("rss_mib") is not None else "-"
            sv.add_row(str(s["pid"]), _ago(s["uptime_s"]), str(s["requests"]), _ago(s["idle_s"]), rss,
                       text(str(s.get("db") or "")))
        console.print(sv)
    else:
        console.print("no hook server running (the next hook starts one: hooks.server auto)")
    rows = [b for b in rep.get("agent_budget") or [] if b["configured"] or b["calls"] or b["stopped"]]
    if rows:
        bt = table(f"agent model calls today ({rows[0]['day']}), spent / cap (models.agent_budget)",
                   [("agent", "key"), ("calls", "num"), ("tokens", "num"), ("stopped at cap", "num"),
                    ("answers dropped", "num")])
        for b in rows:
            est = f" ({b['estimated_calls']} estimated)" if b["estimated_calls"] else ""
            bt.add_row(b["agent"], f"{b['calls']} / {b['cap_calls']}", f"{b['tokens']} / {b['cap_tokens']}{est}",
                       str(b["stopped"]), str(b["dropped"]))
        console.print(bt)


@app.command("stop")
def hooks_stop(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Stop hela's hook servers (hooks.server auto) of this user: each finishes the hook it runs and exits;
    the next hook starts a new one."""
    from hela_cli.hooks.managed import stop_all

    done = stop_all()
    if json_out:
        print_json({"stopped": done})
        return
    if not done:
        console.print("no hook server running")
    for row in done:
        console.print(f"stopped the hook server {row['pid']}" + (" (it did not answer: signalled)"
                                                                  if row["how"] != "asked" else ""))


def _ago(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def _run(row: Optional[dict]) -> str:
    if not row:
        return "never"
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.get("time", 0)))
    detail = f": {row['detail']}" if row.get("detail") else ""
    return f"{when} {row.get('result')} ({row.get('ms', '?')} ms){detail}"
