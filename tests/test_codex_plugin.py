"""hela's Codex CLI plugin (issue 56): the repository's marketplace (``.claude-plugin/marketplace.json``, which
Codex reads too) and the plugin directory's ``.codex-plugin/plugin.json`` (Codex's own manifest: hela's hooks for
Codex, its MCP server, the skill), with the real Codex binary offline: ``codex plugin marketplace add`` and
``codex plugin add`` install it from the repository path, a fact said in one session reaches the model in the
next through the plugin's hooks alone, and ``codex plugin remove`` leaves no hela hook."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from tests.agents_support import captured, codex_session, hook_log, require_agent, wait_for_log
from tests.reliability import PY, REPO, hela_env

PLUGIN = REPO / "plugins" / "claude-code"
FACT = "Our deploy bucket is called frosty-otter-assets and it lives in eu-west-3."
QUESTION = "What is our deploy bucket called, and where does it live?"


def _codex(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    env.update({"HOME": str(home), "CODEX_HOME": str(home / ".codex")})
    return subprocess.run([str(require_agent("codex")), "plugin", *args], capture_output=True, text=True, env=env,
                          timeout=180, cwd=str(home))


def test_the_codex_manifest_runs_the_hooks_hela_installs():
    r = subprocess.run([PY, "scripts/plugin_files.py", "--check"], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    from hela_cli.hooks.agents import AGENTS

    manifest = json.loads((PLUGIN / ".codex-plugin" / "plugin.json").read_text())
    hooks = json.loads((PLUGIN / manifest["hooks"]).read_text())["hooks"]
    assert set(hooks) == set(AGENTS["codex"].events)
    assert all(g["hooks"][0]["command"].endswith(f"hook {e} --agent codex") for e, [g] in hooks.items())
    assert json.loads((PLUGIN / manifest["mcpServers"]).read_text())["mcpServers"]["hela"]["args"] == ["mcp"]


def test_install_from_the_repository_carry_a_fact_remove(tmp_path):
    binary = require_agent("codex")
    home, proj = tmp_path / "agent-home", tmp_path / "shop"
    home.mkdir()
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    r = _codex(home, "marketplace", "add", str(REPO))
    assert r.returncode == 0 and "Added marketplace `hela`" in r.stdout + r.stderr, r.stdout + r.stderr
    r = _codex(home, "add", "hela@hela")
    assert r.returncode == 0 and "Added plugin `hela`" in r.stdout + r.stderr, r.stdout + r.stderr
    r = _codex(home, "list")
    assert "hela@hela" in r.stdout and "installed, enabled" in r.stdout, r.stdout + r.stderr

    henv = hela_env(tmp_path, tmp_path / "hela.db", HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_CAPTURE_BUDGET_S="120")
    env = {k: v for k, v in henv.items() if k.startswith(("HELA_", "PYTHON"))}
    env["PATH"] = os.pathsep.join([str(Path(PY).parent), os.environ.get("PATH", "/usr/bin:/bin")])   # `hela`
    res, _ = codex_session(binary, home, proj, f"Remember this for later: {FACT}", reply="Noted.", env=env)
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    rows = hook_log(tmp_path / "home")
    assert rows and all(r.get("agent") == "codex" for r in rows), rows
    sid1 = next(r["session"] for r in rows if r.get("event") == "SessionStart")
    rows = wait_for_log(tmp_path / "home", captured(sid1))
    assert not [r for r in rows if r.get("result") in ("error", "skipped")], rows
    res, api = codex_session(binary, home, proj, QUESTION, reply="It is frosty-otter-assets in eu-west-3.", env=env)
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    asked = [t for t in api.texts() if QUESTION in t]
    assert asked and "frosty-otter-assets" in asked[0], api.texts()[:1]   # the fact reached the model
    con = sqlite3.connect(tmp_path / "hela.db")
    assert con.execute("SELECT count(*) FROM nodes WHERE text LIKE '%frosty-otter-assets%'").fetchone()[0] >= 1
    con.close()

    r = _codex(home, "remove", "hela@hela")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "hela hook" not in json.dumps([p.read_text() for p in (home / ".codex").rglob("*.json")
                                          if "plugins/cache" not in str(p)])
    assert not (home / ".codex" / "plugins" / "cache" / "hela").exists() or \
        not any((home / ".codex" / "plugins" / "cache" / "hela").rglob("codex.json"))
    assert "[plugins.\"hela@hela\"]" not in (home / ".codex" / "config.toml").read_text()
