"""The public Python API: lazy re-exports from ``hela_cli`` and a core that imports without the CLI stack."""

from __future__ import annotations

import json
import subprocess

from tests.reliability import PY, REPO

LIBRARY = ["hela_cli", "hela_cli.memory", "hela_cli.ingest", "hela_cli.retrieval", "hela_cli.consolidate",
           "hela_cli.forget", "hela_cli.inspection", "hela_cli.bench", "hela_cli.formats", "hela_cli.store",
           "hela_cli.models", "hela_cli.config", "hela_cli.mcp_server"]


def _python(code: str) -> dict:
    res = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_library_modules_import_without_typer_rich_click():
    code = ("import importlib, json, sys\n"
            f"for m in {LIBRARY!r}: importlib.import_module(m)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click'))))")
    assert _python(code) == []


def test_public_names_are_lazy_reexports():
    code = ("import json, sys\n"
            "import hela_cli\n"
            "before = 'hela_cli.memory' in sys.modules\n"
            "from hela_cli import Memory, load_config, HelaError, Config, InputError\n"
            "import hela_cli.memory, hela_cli.config, hela_cli.errors\n"
            "ok = (Memory is hela_cli.memory.Memory and load_config is hela_cli.config.load_config and "
            "Config is hela_cli.config.Config and HelaError is hela_cli.errors.HelaError and "
            "issubclass(InputError, HelaError))\n"
            "cfg = load_config(overrides={'db': 'x.db'})\n"
            "try:\n"
            "    hela_cli.Nope\n"
            "    missing = False\n"
            "except AttributeError:\n"
            "    missing = True\n"
            "print(json.dumps([before, ok, cfg.db, missing, 'Memory' in dir(hela_cli), bool(Memory.add.__doc__)]))")
    assert _python(code) == [False, True, "x.db", True, True, True]


def test_cli_help_does_not_load_the_core():
    code = ("import json, sys\n"
            "from hela_cli.cli import app\n"
            "print(json.dumps(sorted(m for m in ('hela_cli.memory', 'hela_cli.mcp_server', 'mcp', 'llama_cpp') "
            "if m in sys.modules)))")
    assert _python(code) == []
