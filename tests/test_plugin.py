"""hela's Claude Code plugin and marketplace (issue 56, ``plugins/claude-code``, ``.claude-plugin/``), with the
real Claude Code binary offline: it validates, installs from the repository path through ``claude plugin
marketplace add`` / ``install``, reports its components and token cost, and uninstalls; its hooks are the ones
``hela hooks install claude-code`` writes; with both ways installed the plugin's hook steps aside."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.agents_support import require_agent
from tests.reliability import PY, REPO, hela_env

PLUGIN = REPO / "plugins" / "claude-code"


def _claude(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update({"HOME": str(home), "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    return subprocess.run([str(require_agent("claude")), "plugin", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_the_plugin_runs_the_hooks_hela_installs():
    r = subprocess.run([PY, "scripts/plugin_files.py", "--check"], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    from hela_cli.hooks.agents import AGENTS

    assert set(hooks) == set(AGENTS["claude-code"].events)
    mcp = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["hela"]
    assert mcp["args"] == ["mcp"] and mcp["command"].endswith("/bin/hela-run")
    assert os.access(PLUGIN / "bin" / "hela-run", os.X_OK)


def test_validate_install_details_uninstall(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    for target in (PLUGIN, REPO):   # the plugin, and the repository as a marketplace
        r = _claude(home, "validate", str(target))
        assert r.returncode == 0 and "Validation passed" in r.stdout + r.stderr, r.stdout + r.stderr
    r = _claude(home, "marketplace", "add", str(REPO))
    assert r.returncode == 0, r.stdout + r.stderr
    r = _claude(home, "install", "hela@hela")
    assert r.returncode == 0 and "Successfully installed" in r.stdout + r.stderr, r.stdout + r.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["enabledPlugins"].get("hela@hela") is True
    r = _claude(home, "details", "hela")
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "hela-memory" in out and "Projected token cost" in out, out
    assert "UserPromptSubmit" in out and "SessionStart" in out
    r = _claude(home, "uninstall", "hela@hela")
    assert r.returncode == 0, r.stdout + r.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert not settings.get("enabledPlugins", {}).get("hela@hela")
    assert "hela hook" not in json.dumps(settings.get("hooks", {}))   # no hela hook left behind


def _run_plugin_hook(tmp_path: Path, home: Path, path_dirs: list[Path]) -> tuple[subprocess.CompletedProcess, list]:
    proj = tmp_path / "proj"
    proj.mkdir(exist_ok=True)
    env = hela_env(tmp_path, tmp_path / "hela.db", HOME=str(home))
    env["PATH"] = os.pathsep.join([*map(str, path_dirs), "/usr/bin", "/bin"])
    payload = {"session_id": "s", "cwd": str(proj), "prompt": "why did we pick uv?", "hook_event_name": "UserPromptSubmit"}
    r = subprocess.run([str(PLUGIN / "bin" / "hela-run"), "hook", "UserPromptSubmit", "--agent", "claude-code"],
                       input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=str(proj), timeout=120)
    log = tmp_path / "home" / "hooks.log"
    return r, [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def test_both_ways_installed_run_once(tmp_path):
    """The plugin's hook steps aside when `hela hooks install claude-code` wrote hela's hooks too; without
    them it runs; without hela on PATH it says how to install it, in one line, and exits 0."""
    bindir = Path(PY).parent   # the venv's bin: `hela` is there
    home = tmp_path / "agent-home"
    home.mkdir()
    r, log = _run_plugin_hook(tmp_path, home, [bindir])
    assert r.returncode == 0 and log and log[-1]["result"] != "skipped", log
    from hela_cli.hooks.install import install

    old = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        install("claude-code", "user", prefix=[str(bindir / "hela")])
    finally:
        os.environ["HOME"] = old or ""
    r, log = _run_plugin_hook(tmp_path, home, [bindir])
    assert r.returncode == 0 and r.stdout == "" and log[-1]["result"] == "skipped", log
    r, _ = _run_plugin_hook(tmp_path, home, [])
    assert r.returncode == 0 and r.stdout == "" and r.stderr.strip().splitlines() == [
        "hela plugin: the hela command is not installed: pip install hela (or see docs/agents.md)"]


def test_a_fact_carried_to_the_next_session_through_the_plugin(tmp_path):
    """The plugin installed from the repository path, no settings-file hooks: session 1 states a fact, which
    hela's plugin hooks capture; session 2's request to the model carries it (issue 56's done means)."""
    import sqlite3

    from tests.agents_support import captured, claude_session, hook_log, wait_for_log

    binary = require_agent("claude")
    home, proj = tmp_path / "agent-home", tmp_path / "shop"
    home.mkdir()
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    for args in (("marketplace", "add", str(REPO)), ("install", "hela@hela")):
        r = _claude(home, *args)
        assert r.returncode == 0, r.stdout + r.stderr
    henv = hela_env(tmp_path, tmp_path / "hela.db", HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_CAPTURE_BUDGET_S="120")
    env = {k: v for k, v in henv.items() if k.startswith(("HELA_", "PYTHON"))}
    env["PATH"] = os.pathsep.join([str(Path(PY).parent), os.environ.get("PATH", "/usr/bin:/bin")])   # `hela`
    fact = "Our deploy bucket is called frosty-otter-assets and it lives in eu-west-3."
    question = "What is our deploy bucket called, and where does it live?"
    res, _ = claude_session(binary, home, proj, f"Remember this for later: {fact}", reply="Noted.", env=env)
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    rows = hook_log(tmp_path / "home")
    sid1 = next(r["session"] for r in rows if r.get("event") == "SessionStart")
    rows = wait_for_log(tmp_path / "home", captured(sid1))
    assert not [r for r in rows if r.get("result") in ("error", "skipped")], rows
    con = sqlite3.connect(tmp_path / "hela.db")
    assert con.execute("SELECT count(*) FROM nodes WHERE text LIKE '%frosty-otter-assets%'").fetchone()[0] >= 1
    con.close()
    res, api = claude_session(binary, home, proj, question, reply="It is frosty-otter-assets in eu-west-3.", env=env)
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    asked = [t for t in api.texts() if question in t]
    assert asked and "frosty-otter-assets" in asked[0], api.texts()[:1]   # the fact reached the model
