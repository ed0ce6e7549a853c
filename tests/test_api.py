"""The public Python API: lazy re-exports from ``hela_cli`` and a core that imports without the CLI stack."""

from __future__ import annotations

import json
import subprocess

from tests.reliability import PY, REPO

#: every module of the package but the command line, found by walking it (hela_cli.cli is not imported:
#: pkgutil.walk_packages would import it to look inside)
WALK = """
import importlib, pkgutil, hela_cli
def walk(path, prefix):
    for m in pkgutil.iter_modules(path, prefix):
        if m.name in ("hela_cli.cli", "hela_cli.__main__"):
            continue
        yield m.name
        if m.ispkg:
            yield from walk(importlib.import_module(m.name).__path__, m.name + ".")
LIBRARY = ["hela_cli", *walk(hela_cli.__path__, "hela_cli.")]
"""


def _python(code: str) -> dict:
    res = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_library_modules_import_without_typer_rich_click():
    code = (WALK + "import json, sys\n"
            "for m in LIBRARY: importlib.import_module(m)\n"
            "print(json.dumps([sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click')), "
            "'hela_cli.formats.whatsapp' in LIBRARY and 'hela_cli.store.sqlite.search' in LIBRARY, "
            "any(m.startswith('hela_cli.cli') for m in LIBRARY)]))")
    assert _python(code) == [[], True, False]


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
            "print(json.dumps(sorted(m for m in ('hela_cli.memory', 'hela_cli.mcp_server.tools', 'mcp', 'llama_cpp') "
            "if m in sys.modules)))")
    assert _python(code) == []
