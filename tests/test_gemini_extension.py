"""hela's Gemini CLI extension (issue 56, ``plugins/gemini``), with the real Gemini CLI binary offline: it
validates, installs from the repository path through ``gemini extensions install`` (its MCP server, context
file and skill listed), carries a fact from one session to the next through its hooks alone, steps aside
when ``hela hooks install gemini`` wrote hela's hooks too (one way runs), and uninstalls leaving no hela hook."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from tests.agents_support import captured, gemini_session, hook_log, install_hooks, require_agent, wait_for_log
from tests.reliability import PY, REPO, hela_env

EXT = REPO / "plugins" / "gemini"
FACT = "Our deploy bucket is called frosty-otter-assets and it lives in eu-west-3."
QUESTION = "What is our deploy bucket called, and where does it live?"


def _gemini(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_"))}
    env.update({"HOME": str(home), "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    return subprocess.run([str(require_agent("gemini")), "extensions", *args], capture_output=True, text=True,
                          env=env, timeout=180, input=stdin, cwd=str(home))


def _install(home: Path) -> None:
    r = _gemini(home, "install", str(EXT), "--consent", stdin="y\n")   # "y": trust the extension's folder
    assert r.returncode == 0 and "installed successfully" in r.stdout + r.stderr, r.stdout + r.stderr


def test_the_extension_runs_the_hooks_hela_installs():
    r = subprocess.run([PY, "scripts/plugin_files.py", "--check"], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    from hela_cli.hooks.agents import AGENTS

    hooks = json.loads((EXT / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(AGENTS["gemini"].events)
    for event, groups in hooks.items():
        [entry] = groups[0]["hooks"]
        assert entry["command"] == f'"${{extensionPath}}/bin/hela-run" hook {event} --agent gemini'
        assert entry["timeout"] == AGENTS["gemini"].installed_timeout(event)   # milliseconds, as Gemini reads them
    manifest = json.loads((EXT / "gemini-extension.json").read_text())
    assert manifest["mcpServers"]["hela"] == {"command": "${extensionPath}/bin/hela-run", "args": ["mcp"]}
    assert (EXT / manifest["contextFileName"]).is_file() and os.access(EXT / "bin" / "hela-run", os.X_OK)


def test_validate_install_list_uninstall(tmp_path):
    home = tmp_path / "agent-home"
    home.mkdir()
    r = _gemini(home, "validate", str(EXT))
    assert r.returncode == 0 and "successfully validated" in r.stdout + r.stderr, r.stdout + r.stderr
    _install(home)
    r = _gemini(home, "list")
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "hela (0.1.0)" in out and "hela-memory" in out and "GEMINI.md" in out, out
    assert (home / ".gemini" / "extensions" / "hela" / "hooks" / "hooks.json").is_file()
    r = _gemini(home, "uninstall", "hela")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (home / ".gemini" / "extensions" / "hela").exists()
    settings = home / ".gemini" / "settings.json"
    assert "hela hook" not in (settings.read_text() if settings.exists() else "")   # no hela hook left behind


def _session_env(tmp_path: Path) -> dict[str, str]:
    henv = hela_env(tmp_path, tmp_path / "hela.db", HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_CAPTURE_BUDGET_S="120")
    env = {k: v for k, v in henv.items() if k.startswith(("HELA_", "PYTHON"))}
    env["PATH"] = os.pathsep.join([str(Path(PY).parent), os.environ.get("PATH", "/usr/bin:/bin")])   # `hela`
    return env


def test_a_fact_carried_to_the_next_session_through_the_extension(tmp_path):
    binary = require_agent("gemini")
    home, proj = tmp_path / "agent-home", tmp_path / "shop"
    home.mkdir()
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    _install(home)
    env = _session_env(tmp_path)
    res, _ = gemini_session(binary, home, proj, f"Remember this for later: {FACT}", reply="Noted.", env=env)
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    rows = hook_log(tmp_path / "home")
    sid1 = next(r["session"] for r in rows if r.get("agent") == "gemini" and r.get("event") == "SessionStart")
    rows = wait_for_log(tmp_path / "home", captured(sid1))
    assert not [r for r in rows if r.get("result") in ("error", "skipped")], rows
    con = sqlite3.connect(tmp_path / "hela.db")
    texts = [t for (t,) in con.execute("SELECT text FROM nodes")]
    con.close()
    assert any("frosty-otter-assets" in t for t in texts), texts
    res, api = gemini_session(binary, home, proj, QUESTION, reply="It is frosty-otter-assets in eu-west-3.", env=env)
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    asked = [t for t in api.texts() if QUESTION in t]
    assert asked and "frosty-otter-assets" in asked[0], api.texts()[:1]   # the fact reached the model

    # hela's hooks in the project's settings as well: the extension's hooks step aside, one capture per turn
    install_hooks("gemini", proj, {**hela_env(tmp_path, tmp_path / "hela.db"), **env})
    before = len(hook_log(tmp_path / "home"))
    res, _ = gemini_session(binary, home, proj, "One more thing: staging runs on port 6543.", reply="Noted.", env=env)
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    new = hook_log(tmp_path / "home")[before:]
    sid3 = next(r["session"] for r in new if r.get("event") == "SessionStart" and r.get("result") != "skipped")
    rows = wait_for_log(tmp_path / "home", captured(sid3))[before:]
    mine = [r for r in rows if r.get("session") == sid3]
    starts = [r for r in mine if r["event"] == "SessionStart"]
    assert sorted(r["result"] == "skipped" for r in starts) == [False, True], starts   # one ran, one stepped aside
    con = sqlite3.connect(tmp_path / "hela.db")
    n = con.execute("SELECT count(*) FROM nodes WHERE text LIKE '%staging runs on port 6543%'").fetchone()[0]
    con.close()
    assert n == 1
