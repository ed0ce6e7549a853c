"""``hela hooks install`` never writes a password into an agent's settings file and ``hela hooks status`` never
prints one (issue 40); installing keeps the file's mode, a new file is written 0600."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.hooks.install import db_without_password, install, scrub_command, status, uninstall

runner = CliRunner()
PW, PW2 = "S3cretPw-9x", "Qz7otherPw"
URL = f"postgresql://app:{PW}@db.example.com:5432/hela?sslmode=require&password={PW2}"
CLEAN = "postgresql://app@db.example.com:5432/hela?sslmode=require"


@pytest.fixture()
def homes(tmp_path, monkeypatch):
    from hela_cli.cli.render import console
    monkeypatch.setattr(console, "width", 250)
    home = tmp_path / "home"
    home.mkdir()
    for k, v in {"HOME": home, "CODEX_HOME": home / ".codex", "HELA_HOME": tmp_path / "hela"}.items():
        monkeypatch.setenv(k, str(v))
    for k in ("HELA_DB", "PGPASSWORD", "PGPASSFILE"):
        monkeypatch.delenv(k, raising=False)
    proj = tmp_path / "work" / "api"
    proj.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    monkeypatch.chdir(proj)
    return home


def _no_password(*texts: str) -> None:
    for t in texts:
        assert PW not in t and PW2 not in t, t


def test_db_without_password() -> None:
    assert db_without_password(URL) == (CLEAN, True)
    assert db_without_password("postgres://:pw1234@h/db") == ("postgres://@h/db", True)
    assert db_without_password("postgresql://u:p@ss:w@h/db?sslpassword=k3y&sslmode=verify-full") == \
        ("postgresql://u@h/db?sslmode=verify-full", True)
    assert db_without_password("postgresql://app@h/db") == ("postgresql://app@h/db", False)
    assert db_without_password("/home/me/hela.db") == ("/home/me/hela.db", False)
    assert db_without_password(None) == (None, False)
    assert scrub_command(f"/usr/bin/hela hook Stop --agent claude-code --db {URL}") == \
        f"/usr/bin/hela hook Stop --agent claude-code --db '{CLEAN}'"
    assert PW not in scrub_command(f"hela hook Stop --db={URL}")


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_install_writes_no_password_and_status_prints_none(homes, agent) -> None:
    rep = install(agent, "user", db=URL, prefix=["/usr/bin/hela"])
    raw = Path(rep["path"]).read_text(encoding="utf-8")
    _no_password(raw, json.dumps(rep))
    assert CLEAN in raw
    assert "~/.pgpass or PGPASSWORD" in rep["note"] and "no " in rep["note"]   # no ~/.pgpass here yet
    _no_password(json.dumps(status()))
    res = runner.invoke(app, ["hooks", "status"], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "db.example.com" in res.output
    _no_password(res.output)


def test_cli_install_from_hela_db_env(homes) -> None:
    (homes / ".pgpass").write_text(f"db.example.com:5432:hela:app:{PW}\n")
    res = runner.invoke(app, ["hooks", "install", "claude-code"], env={"HELA_DB": URL, "COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    _no_password(res.output, (homes / ".claude" / "settings.json").read_text())
    assert "was not written into the settings file" in res.output and ".pgpass exists" in res.output
    res = runner.invoke(app, ["hooks", "install", "claude-code", "--json"], env={"HELA_DB": URL})
    _no_password(res.output)


def test_a_password_an_older_install_wrote_is_shown_nowhere_and_leaves(homes) -> None:
    """A settings file whose hela command carries a password (an older hela, or written by hand): status
    shows it without, and an install replaces it; the backup of the previous file holds no password either."""
    path = homes / ".claude" / "settings.json"
    path.parent.mkdir()
    old = {"model": "opus", "hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": f"/usr/bin/hela hook Stop --agent claude-code --db '{URL}'"}]}]}}
    path.write_text(json.dumps(old, indent=2) + "\n")
    _no_password(json.dumps(status()), runner.invoke(app, ["hooks", "status"], env={"COLUMNS": "250"}).output)
    rep = install("claude-code", "user", db=URL, prefix=["/usr/bin/hela"])
    assert rep["changed"]
    _no_password(path.read_text(), Path(rep["backup"]).read_text())
    assert json.loads(Path(rep["backup"]).read_text())["model"] == "opus"


def test_file_mode_kept_and_new_file_0600(homes) -> None:
    old = os.umask(0o022)
    try:
        rep = install("claude-code", "user", prefix=["/usr/bin/hela"])
        path = Path(rep["path"])
        assert stat.S_IMODE(path.stat().st_mode) == 0o600          # a new file
        for mode in (0o664, 0o640, 0o600):                         # 0664: wider than the umask lets through
            path.chmod(mode)
            uninstall("claude-code", "user")
            assert stat.S_IMODE(path.stat().st_mode) == mode
            rep = install("claude-code", "user", space=f"s{mode}", prefix=["/usr/bin/hela"])
            assert rep["changed"] and stat.S_IMODE(path.stat().st_mode) == mode
            assert stat.S_IMODE(Path(rep["backup"]).stat().st_mode) == mode
    finally:
        os.umask(old)
