"""``hela ui``'s access token on the terminal: printed with its address under ``--no-browser`` (the person
opens it, as with Jupyter), kept off the terminal when a browser is opened; the URL file holds it either way.
Real ``hela ui`` processes on a database written with the hash embedder (no model is loaded to serve)."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.store import Store
from hela_cli.testing import HashEmbedder
from tests.reliability import PY, REPO, hela_env


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ui-token") / "hela.db"
    with Memory(Config(), store=Store(str(path)), embedder=HashEmbedder()) as mem:
        mem.add("demo", "Jonas's dog is called Tofu", speaker="Maya")
    return path


def run_ui(tmp: Path, db: Path, *args: str, sigint: str = "default", delay: float = 0.0,
           **env: str) -> tuple[str, dict, int]:
    """Start ``hela ui --port 0 ARGS``, wait for the last line of its banner, Ctrl-C it; (its stderr and
    stdout, the URL file's JSON, the exit code). ``sigint``: the disposition the process inherits ("ignored"
    is what a background job of a script gets)."""
    disposition = signal.SIG_IGN if sigint == "ignored" else signal.SIG_DFL
    proc = subprocess.Popen([PY, "-m", "hela_cli", "ui", "--port", "0", *args], env=hela_env(tmp, db, **env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, disposition))
    lines: list[str] = []
    banner_done = threading.Event()

    def read() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            lines.append(line)
            if "the address with its access token is also in" in line:
                banner_done.set()
        banner_done.set()          # the process ended

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    banner_done.wait(300)          # a hang guard for a busy machine, not a timing assert
    files = list((tmp / "home" / "ui").glob("ui-*.json"))
    info = json.loads(files[0].read_text()) if files else {}
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    try:   # stderr is the reader's alone (communicate would read it too: lines lost between the two)
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    out = proc.stdout.read()  # type: ignore[union-attr]
    reader.join(30)
    err = "".join(lines)
    assert files, f"hela ui did not start: {err}"
    return err + out, info, proc.returncode


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_no_browser_prints_the_address_with_its_token(tmp_path, db, sigint):
    # Ctrl-C right after the banner, before uvicorn runs: stopped (exit 0) whatever SIGINT disposition came
    out, info, code = run_ui(tmp_path, db, "--no-browser", sigint=sigint)
    assert code == 0, out
    token = info["url"].split("token=")[1]
    assert out.count(token) == 1
    lines = out.splitlines()
    assert lines[lines.index("hela ui: open this address (it holds the access token):") + 1].strip() == info["url"]


def test_with_a_browser_the_token_stays_off_the_terminal(tmp_path, db):
    # BROWSER: Python's webbrowser runs this command with the page to open (here `true`: nothing opens)
    out, info, code = run_ui(tmp_path, db, BROWSER="true")
    assert code == 0, out
    assert info["url"].split("token=")[1] not in out
    assert "the address with its access token is also in" in out and "serving" in out


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.06, 0.12, 0.25])
def test_ctrl_c_at_any_moment_of_the_start_is_a_clean_stop(tmp_path, db, delay):
    """issue 53: a Ctrl-C during uvicorn's start printed a CancelledError traceback and exited 1 (once, under
    load). At each of these moments after the banner (uvicorn starting, then serving): exit 0, no traceback."""
    err, _, code = run_ui(tmp_path, db, "--no-browser", delay=delay)
    assert code == 0 and "Traceback" not in err and "CancelledError" not in err, (code, err)
    assert "hela ui: stopped" in err
