"""hooks.server auto (the default): the managed local server (hela_cli/hooks/managed.py, fast.py, server.py),
with real ``hela hook`` processes and the real server they start.

What a user must be able to count on: the first hook answers in-process and starts one server, the next hooks
get the same answer from it; a killed server is never asked (its lock is free) and is replaced; the server
goes when its database goes, when idle, on ``hela hooks stop``; nothing of it is started when the config says
off; its file is trusted only when user-only; no server is left behind by a test."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from hela_cli.hooks import fast
from tests.hooks_support import PROMPT, base, context_of, hook, project  # noqa: F401 - fixture
from tests.reliability import PY


def _env(project, **extra):
    return {**project["env"], "HELA_HOOKS_SERVER": "auto", **extra}


def _run_dir(project) -> Path:
    return project["home"] / "run"


def _info(project) -> dict | None:
    files = list(_run_dir(project).glob("hooks-*.info"))
    if not files:
        return None
    return fast.read_info(str(files[0]))


def _wait_live(project, timeout: float = 120, not_pid: int | None = None) -> dict:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for f in _run_dir(project).glob("hooks-*.info") if _run_dir(project).exists() else []:
            k = f.name[len("hooks-"):-len(".info")]
            if fast.held(str(_run_dir(project) / f"hooks-{k}.lock")):
                info = fast.read_info(str(f))
                if info and info["pid"] != not_pid:
                    return {**info, "key": k}
        time.sleep(0.1)
    err = "".join(p.read_text() for p in _run_dir(project).glob("*.err")) if _run_dir(project).exists() else ""
    raise AssertionError(f"no managed server came up: {err[-2000:]}")


def _gone(pid: int, timeout: float = 30) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:   # a zombie of ours would never go; the server is not our child (its own session)
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


@pytest.fixture()
def managed(project):
    """The project with hooks.server auto; every server its hooks started is stopped afterwards (and the test
    fails if one outlived ``hela hooks stop``)."""
    env = _env(project)
    yield {**project, "env": env}
    res = subprocess.run([PY, "-m", "hela_cli", "hooks", "stop", "--json"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    for row in json.loads(res.stdout)["stopped"]:
        assert _gone(row["pid"]), f"server {row['pid']} still runs after hela hooks stop"


def _prompt(project, session: str, prompt: str = PROMPT):
    return hook(project, "UserPromptSubmit", base(project, "UserPromptSubmit", session_id=session, prompt=prompt))


def test_first_hook_starts_the_server_and_the_next_hooks_get_the_same_answer_from_it(managed):
    res, lines = _prompt(managed, "sess-a")
    in_process = context_of(res, "UserPromptSubmit")
    assert "6543" in in_process
    assert lines[-1]["server"] == "started" and lines[-1]["timings_ms"].get("embedder_load", 0) > 0
    info = _wait_live(managed)
    assert (_run_dir(managed).stat().st_mode & 0o777) == 0o700
    assert (Path(_run_dir(managed) / f"hooks-{info['key']}.info").stat().st_mode & 0o777) == 0o600
    res, lines = _prompt(managed, "sess-b")
    assert context_of(res, "UserPromptSubmit") == in_process   # the same memories, the same words
    assert lines[-1]["server"] == "managed" and lines[-1]["result"] == "ok" and lines[-1]["session"] == "sess-b"
    assert lines[-1]["memories"] and "ms" in lines[-1]
    # the session's own dedupe holds across the two ways: shown once, not again
    res, lines = _prompt(managed, "sess-b")
    assert res.stdout == b"" and lines[-1]["server"] == "managed" and lines[-1]["result"] == "empty"
    # one server for the configuration, whatever the number of hooks
    for s in ("sess-c", "sess-d"):
        _prompt(managed, s)
    assert len([p for p in _run_dir(managed).glob("hooks-*.info")]) == 1
    st = subprocess.run([PY, "-m", "hela_cli", "hooks", "status", "--json"], env=managed["env"],
                        capture_output=True, text=True, timeout=60, cwd=str(managed["dir"]))
    servers = json.loads(st.stdout)["servers"]
    assert [s["pid"] for s in servers] == [info["pid"]] and servers[0]["requests"] >= 4
    assert servers[0]["rss_mib"] > 0 and servers[0]["db"] == str(managed["db"])
    assert info["token"] not in st.stdout   # the server's token is shown nowhere


def test_a_killed_server_is_never_asked_and_the_next_hook_replaces_it(managed):
    _prompt(managed, "sess-a")
    info = _wait_live(managed)
    os.kill(info["pid"], signal.SIGKILL)
    assert _gone(info["pid"])
    # its port, now someone else's: a listener there must receive nothing (the lock is free, so the file is stale)
    squatter = socket.socket()
    try:
        squatter.bind(("127.0.0.1", info["port"]))
        squatter.listen(8)
        squatter.settimeout(0.5)
    except OSError:
        squatter.close()
        squatter = None
    res, lines = _prompt(managed, "sess-b")
    assert "6543" in context_of(res, "UserPromptSubmit")
    assert lines[-1]["server"] == "started"   # answered in-process, a new server started at once (no back-off)
    if squatter is not None:
        with pytest.raises(socket.timeout):
            squatter.accept()
        squatter.close()
    new = _wait_live(managed, not_pid=info["pid"])
    assert new["pid"] != info["pid"] and new["token"] != info["token"]
    res, lines = _prompt(managed, "sess-c")
    assert lines[-1]["server"] == "managed" and "6543" in context_of(res, "UserPromptSubmit")


def test_the_server_exits_when_its_database_is_deleted(managed):
    _prompt(managed, "sess-a")
    info = _wait_live(managed)
    for suffix in ("", "-wal", "-shm"):
        Path(str(managed["db"]) + suffix).unlink(missing_ok=True)
    assert _gone(info["pid"])
    assert not (_run_dir(managed) / f"hooks-{info['key']}.info").exists()
    err = (_run_dir(managed) / f"hooks-{info['key']}.err").read_text()
    assert "database file was deleted or replaced" in err


def test_the_server_exits_when_idle(managed):
    env = _env(managed, HELA_HOOKS_SERVER_IDLE="0.03")   # minutes: 1.8 s
    res, _ = hook({**managed, "env": env}, "UserPromptSubmit", base(managed, "UserPromptSubmit", prompt=PROMPT))
    info = _wait_live(managed)
    assert _gone(info["pid"], timeout=60)
    assert "idle for 0.03 min" in (_run_dir(managed) / f"hooks-{info['key']}.err").read_text()


def test_hooks_stop_ends_it_and_off_starts_none(managed):
    _prompt(managed, "sess-a")
    info = _wait_live(managed)
    res = subprocess.run([PY, "-m", "hela_cli", "hooks", "stop"], env=managed["env"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0 and f"stopped the hook server {info['pid']}" in res.stdout
    assert _gone(info["pid"])
    off = {**managed, "env": {**managed["env"], "HELA_HOOKS_SERVER": "off"}}
    for s in ("sess-b", "sess-c"):
        res, lines = _prompt(off, s)
        assert "6543" in context_of(res, "UserPromptSubmit") and "server" not in lines[-1]
    assert not list(_run_dir(managed).glob("hooks-*.info"))
    # a config file that says off: no server either (the environment says nothing)
    cfg = managed["dir"].parent / "off.yaml"
    cfg.write_text("hooks:\n  server: off\n")
    cfg_env = {**managed, "env": {**managed["env"], "HELA_CONFIG": str(cfg)}}
    cfg_env["env"].pop("HELA_HOOKS_SERVER")
    res, lines = _prompt(cfg_env, "sess-d")
    assert "6543" in context_of(res, "UserPromptSubmit") and "server" not in lines[-1]
    time.sleep(1.0)
    assert not list(_run_dir(managed).glob("hooks-*.info"))


def test_a_server_file_others_can_read_is_not_trusted(managed):
    _prompt(managed, "sess-a")
    info = _wait_live(managed)
    path = _run_dir(managed) / f"hooks-{info['key']}.info"
    path.chmod(0o644)
    assert fast.read_info(str(path)) is None
    res, lines = _prompt(managed, "sess-b")
    assert "6543" in context_of(res, "UserPromptSubmit") and lines[-1]["server"] == "starting"   # held, not trusted: left alone
    path.chmod(0o600)


def test_a_capture_uses_the_server_and_stores_each_turn_once(managed, embedder):
    _prompt(managed, "sess-a")
    _wait_live(managed)
    transcript = managed["dir"] / "t.jsonl"
    rows = [{"type": "user", "sessionId": "cap-1", "uuid": "u1", "timestamp": "2026-12-01T10:00:00Z",
             "message": {"role": "user", "content": "The release train leaves every second Thursday at noon."}},
            {"type": "assistant", "sessionId": "cap-1", "uuid": "a1", "timestamp": "2026-12-01T10:00:05Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted: releases on "
                                                                                    "alternate Thursdays."}]}}]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows))
    payload = base(managed, "Stop", session_id="cap-1", transcript_path=str(transcript))
    for _ in range(2):
        res, lines = hook(managed, "Stop", payload)
        assert res.returncode == 0
    assert lines[-1]["server"] == "managed", lines
    from hela_cli.config import Config
    from hela_cli.memory import Memory

    with Memory(Config(db=str(managed["db"])), embedder=embedder) as mem:
        texts = [m["text"] for m in mem.memories(managed["space"])]
    assert sum("second Thursday" in t for t in texts) == 1


def test_fast_paths_agree_with_hela_paths(monkeypatch, tmp_path):
    from hela_cli.paths import data_dir

    for env in ({"HELA_HOME": str(tmp_path / "h")}, {"XDG_DATA_HOME": str(tmp_path / "x")}, {}):
        monkeypatch.delenv("HELA_HOME", raising=False)
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert fast.data_dir() == str(data_dir())


def test_the_key_follows_what_decides_the_configuration(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HELA_DB", str(tmp_path / "a.db"))
    a = fast.key()
    assert fast.key() == a
    monkeypatch.setenv("HELA_VIA_PLUGIN", "1")   # how the hook was started is not its configuration
    assert fast.key() == a
    monkeypatch.setenv("HELA_DB", str(tmp_path / "b.db"))
    assert fast.key() != a
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    monkeypatch.chdir(tmp_path / "d1")
    k1 = fast.key(db="rel.db")
    monkeypatch.chdir(tmp_path / "d2")
    assert fast.key(db="rel.db") != k1
    cfg = tmp_path / "c.yaml"
    cfg.write_text("hooks:\n  prompt_k: 4\n")
    k2 = fast.key(config=str(cfg))
    time.sleep(0.01)
    cfg.write_text("hooks:\n  prompt_k: 5\n")
    assert fast.key(config=str(cfg)) != k2   # an edited config file is another server


def test_the_docs_commands_run_as_written(managed):
    """docs/agents.md, "hela's own hook server": its commands, as written, on a running server."""
    import re
    import shlex

    from tests.reliability import REPO

    doc = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
    section = doc.split("## hela's own hook server", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands = [shlex.split(line.split("#", 1)[0]) for line in block.splitlines() if line.split("#", 1)[0].strip()]
    assert [c[:3] for c in commands] == [["hela", "hooks", "status"], ["hela", "hooks", "stop"]]
    _prompt(managed, "sess-a")
    info = _wait_live(managed)
    outs = []
    for words in commands:
        res = subprocess.run([PY, "-m", "hela_cli", *words[1:]], env=managed["env"], capture_output=True,
                             text=True, timeout=60, cwd=str(managed["dir"]))
        assert res.returncode == 0, res.stderr
        outs.append(res.stdout)
    assert str(info["pid"]) in outs[0] and "hook servers" in outs[0]
    assert f"stopped the hook server {info['pid']}" in outs[1] and _gone(info["pid"])
