"""``hela hooks install | uninstall | status``: merging hela's entries into the agents' own settings files."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.hooks import log
from hela_cli.hooks.agents import AGENTS
from hela_cli.hooks.install import install, is_hela_command, status, uninstall
from hela_cli.hooks.space import project_root, project_space

runner = CliRunner()

#: a user's settings with hooks of their own, in each agent's shape (2-space JSON, as the agents write it)
OTHER_HOOKS = {
    "claude-code": {"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}},
    "codex": {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "python3 scan.py"}]}]}},
    "gemini": {"security": {"auth": {"selectedType": "gemini-api-key"}}, "hooks": {
        "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./audit.sh",
                                                                    "timeout": 3000}]}]}},
}


@pytest.fixture()
def homes(tmp_path, monkeypatch):
    """HOME, CODEX_HOME and hela's home in tmp, and a git project to run in."""
    # the CLI's console is made once per process and keeps the width it was made with (an earlier test's):
    # a wide one here, so that status rows are not wrapped whatever ran before
    from hela_cli.cli.render import console
    monkeypatch.setattr(console, "width", 250)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "hela"))
    monkeypatch.delenv("HELA_DB", raising=False)
    proj = tmp_path / "work" / "api"
    (proj / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    monkeypatch.chdir(proj / "src")
    return tmp_path


def _write(path: Path, data: object) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = (json.dumps(data, indent=2) + "\n").encode()
    path.write_bytes(raw)
    return raw


@pytest.mark.parametrize("agent", list(AGENTS))
@pytest.mark.parametrize("scope", ["user", "project"])
def test_round_trip_keeps_other_hooks_byte_identical(homes, agent, scope):
    path = AGENTS[agent].settings_path(scope, project_root(Path.cwd()))
    before = _write(path, OTHER_HOOKS[agent])
    rep = install(agent, scope, prefix=["/opt/hela/bin/hela"])
    assert rep["changed"] and Path(rep["path"]) == path
    data = json.loads(path.read_text())
    for key, value in OTHER_HOOKS[agent].items():   # every other setting kept
        if key != "hooks":
            assert data[key] == value
    for event, groups in OTHER_HOOKS[agent]["hooks"].items():   # every other hook kept, first
        assert data["hooks"][event][:len(groups)] == groups
    for event in AGENTS[agent].events:   # hela's entry for each event, running `hela hook EVENT`
        entries = [h for g in data["hooks"][event] for h in g["hooks"] if is_hela_command(h["command"])]
        assert len(entries) == 1 and f"hook {event} --agent {agent}" in entries[0]["command"]
    assert Path(rep["backup"]).read_bytes() == before
    after_first = path.read_bytes()
    again = install(agent, scope, prefix=["/opt/hela/bin/hela"])   # idempotent: nothing changes
    assert not again["changed"] and path.read_bytes() == after_first
    out = uninstall(agent, scope)
    assert out["removed"] == len(AGENTS[agent].events)
    assert path.read_bytes() == before
    assert not uninstall(agent, scope)["changed"]


def test_fresh_and_empty_files(homes):
    path = AGENTS["claude-code"].settings_path("user")
    rep = install("claude-code", "user", prefix=["hela"])
    assert rep["changed"] and rep["backup"] is None and json.loads(path.read_text())["hooks"]
    uninstall("claude-code", "user")
    assert json.loads(path.read_text()) == {}
    path.write_bytes(b"")   # the 0-byte file another installer left: read as {}
    install("claude-code", "user", prefix=["hela"])
    assert "SessionStart" in json.loads(path.read_text())["hooks"]


def test_changed_command_is_updated_in_place(homes):
    path = AGENTS["gemini"].settings_path("project", project_root(Path.cwd()))
    install("gemini", "project", prefix=["/old/hela"])
    rep = install("gemini", "project", prefix=["/new/hela"], space="pinned")
    assert rep["changed"]
    text = path.read_text()
    assert "/old/hela" not in text and text.count("/new/hela") == len(AGENTS["gemini"].events)
    assert "--space pinned" in text
    assert json.loads(text)["hooks"]["BeforeAgent"][0]["hooks"][0]["timeout"] == 10000   # Gemini: ms


def test_style_of_the_file_is_kept(homes):
    path = AGENTS["claude-code"].settings_path("user")
    path.parent.mkdir(parents=True)
    original = b'{\n    "theme": "dark",\n    "env": {"A": "1"}\n}'   # 4 spaces, no final newline
    path.write_bytes(original)
    install("claude-code", "user", prefix=["hela"])
    assert path.read_text().startswith('{\n    "theme": "dark"') and not path.read_text().endswith("\n")
    uninstall("claude-code", "user")
    assert json.loads(path.read_bytes()) == json.loads(original)


@pytest.mark.parametrize("content, needle", [
    (b'{"hooks": {"Stop": [}', "line 1, column 21"),
    (b'["not", "an", "object"]', "not a JSON object"),
    (b'{"hooks": []}', "'hooks' is list"),
    (b'{"hooks": {"Stop": {"hooks": []}}}', "hooks.Stop is dict"),
    (b'\xff\xfe{}', "not UTF-8"),
])
def test_bad_settings_file_refused_nothing_written(homes, content, needle):
    path = AGENTS["claude-code"].settings_path("user")
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    res = runner.invoke(app, ["hooks", "install", "claude-code"])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and needle in lines[0], res.stderr
    assert path.read_bytes() == content
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]   # no backup, no temp file


def test_unknown_agent_and_scope(homes):
    res = runner.invoke(app, ["hooks", "install", "cursor"])
    assert res.exit_code == 2 and "unknown agent 'cursor'" in res.stderr
    res = runner.invoke(app, ["hooks", "install", "codex", "--scope", "global"])
    assert res.exit_code == 2 and "unknown scope 'global'" in res.stderr


def test_cli_install_status_uninstall(homes):
    res = runner.invoke(app, ["hooks", "install", "claude-code", "--scope", "project", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["path"] == str(homes / "work" / "api" / ".claude" / "settings.json")   # the git top level
    log.append({"agent": "claude-code", "event": "UserPromptSubmit", "role": "prompt", "result": "ok", "ms": 12})
    log.append({"agent": "claude-code", "event": "Stop", "role": "capture", "result": "error", "ms": 40,
                "detail": "database is locked"})
    log.append({"agent": "claude-code", "event": "Stop", "role": "capture", "result": "ok", "ms": 30})
    st = status()
    proj = next(i for i in st["installs"] if i["agent"] == "claude-code" and i["scope"] == "project")
    assert proj["installed"] and not next(i for i in st["installs"] if i["agent"] == "codex")["installed"]
    stop = next(e for e in proj["events"] if e["event"] == "Stop")
    assert stop["last"]["result"] == "ok" and stop["last_failure"]["detail"] == "database is locked"
    assert stop["runs"] == 2
    assert next(e for e in proj["events"] if e["event"] == "SessionStart")["last"] is None
    res = runner.invoke(app, ["hooks", "status"], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "database is locked" in res.stdout and "never" in res.stdout
    res = runner.invoke(app, ["hooks", "uninstall", "claude-code", "--scope", "project"])
    assert res.exit_code == 0 and "removed 6" in res.stdout


def test_project_space_per_repository(tmp_path):
    a, b = tmp_path / "one" / "api", tmp_path / "two" / "api"
    for d in (a / "pkg", b):
        d.mkdir(parents=True)
    (a / ".git").mkdir()
    (b / ".git").write_text("gitdir: /elsewhere\n")   # a worktree's .git file counts too
    assert project_root(a / "pkg") == a.resolve()
    assert project_space(a / "pkg") == project_space(a) != project_space(b)
    assert project_space(a).startswith("api-") and project_space(b).startswith("api-")
    assert project_space(tmp_path / "one") == f"one-{project_space(tmp_path / 'one').rsplit('-', 1)[1]}"


def test_is_hela_command():
    assert is_hela_command("/home/me/.venv/bin/hela hook Stop --agent claude-code")
    assert is_hela_command("'/usr/bin/python3' -m hela_cli hook BeforeAgent --agent gemini")
    assert not is_hela_command("hela ask 'hook Stop'")
    assert not is_hela_command("./my-hook hook Stop")
    assert not is_hela_command("echo 'unbalanced")
    assert not is_hela_command(None)


def test_status_says_whether_codex_trusts_the_hooks(homes):
    pytest.importorskip("tomllib")   # Python 3.11+: on 3.10 the trust state is not read (None)
    install("codex", "user", prefix=["/opt/hela/bin/hela"])
    path = AGENTS["codex"].settings_path("user")

    def trust() -> dict[str, object]:
        inst = next(i for i in status()["installs"] if i["agent"] == "codex" and i["scope"] == "user")
        return {e["event"]: e["codex_trusted"] for e in inst["events"]}

    assert set(trust().values()) == {False}   # no Codex config yet: nothing trusted
    (path.parent / "config.toml").write_text(
        '[features]\nhooks = true\n\n'
        f'[hooks.state."{path}:session_start:0:0"]\ntrusted_hash = "sha256:0123"\n')
    assert trust() == {"SessionStart": True, "UserPromptSubmit": False, "Stop": False, "SessionEnd": False,
                       "PreToolUse": False}
    res = runner.invoke(app, ["hooks", "status"], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "not trusted in Codex yet" in res.stdout


def test_status_fits_80_columns(homes, monkeypatch):
    """At 80 columns every header and every time of `hela hooks status` is whole (issue 48)."""
    from hela_cli.cli.render import console

    install("claude-code", "user", prefix=["/opt/hela/bin/hela"])
    for i in range(3):
        log.append({"agent": "claude-code", "event": "UserPromptSubmit", "role": "prompt", "result": "ok",
                    "ms": 12, "session": "s1", "tokens": 120 * i})
    log.append({"agent": "claude-code", "event": "SessionStart", "role": "start", "result": "ok", "ms": 80,
                "session": "s1", "tokens": 900})
    log.append({"agent": "claude-code", "event": "Stop", "role": "capture", "result": "error", "ms": 40,
                "detail": "database is locked"})
    monkeypatch.setattr(console, "width", 80)
    res = runner.invoke(app, ["hooks", "status"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    paths = [i for i, x in enumerate(lines) if x.startswith("claude-code (user): ")]   # a path is printed whole
    tables = [x for i, x in enumerate(lines) if not any(i in (p, p + 1) for p in paths)]
    assert all(len(x) <= 80 for x in tables), res.stdout
    assert "…" not in res.stdout, res.stdout
    for head in (["agent", "scope", "event", "last run", "last failure"], ["agent", "sessions", "prompts"]):
        assert any(all(h in x for h in head) for x in lines), (head, res.stdout)
    assert "database is locked" in res.stdout
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", res.stdout)   # times whole


def test_install_offers_and_sets_the_agents_own_model(homes, monkeypatch):
    """``--chat agent:NAME`` goes into every hook command (the hook reads it as models.chat); without it the
    install offers the route when the agent's CLI is on PATH; ``status`` shows the route's spent / cap."""
    bin_dir = homes / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text("#!/bin/sh\necho 2.1.332\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    rep = install("claude-code", "project")
    assert rep["model"]["installed"] and "--chat agent:claude-code" in rep["model"]["offer"]
    assert all("--chat" not in c for c in rep["events"].values())
    rep = install("claude-code", "project", chat="agent:claude-code@haiku")
    assert rep["model"]["set"] and all(c.endswith("--chat agent:claude-code@haiku") for c in rep["events"].values())
    row = next(b for b in status()["agent_budget"] if b["agent"] == "claude-code")
    assert row["configured"] and (row["calls"], row["cap_calls"]) == (0, 24)
    res = runner.invoke(app, ["hooks", "install", "claude-code", "--scope", "project", "--chat", "openai:m@http://x/v1"])
    assert res.exit_code == 2 and "agent:NAME" in res.output
    res = runner.invoke(app, ["hooks", "status"])
    assert res.exit_code == 0 and "0 / 24" in res.output


def test_the_hook_reads_its_chat_model_from_the_command_line():
    from hela_cli.hooks.process import _config, _parse

    args, rest = _parse(["Stop", "--agent", "claude-code", "--chat", "agent:gemini@flash"])
    assert not rest and _config(args).models.chat == "agent:gemini@flash"
