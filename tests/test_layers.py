"""The import layers of ``hela_cli``, defined here and only here (ARCHITECTURE.md points to this list).

A module may import modules of its own layer or of a lower one, never of a higher one, and there is no
import cycle between the modules of ``hela_cli``. Every import counts, the ones inside functions too (a
lazy import still makes the lower layer depend on the higher one). The check reads the source (``ast``);
nothing is imported.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "hela_cli"

#: lowest first; a name is a module or package of hela_cli, relative to it (a package covers its modules,
#: a dotted name such as ``mechanics.dynamics`` one module of a package whose modules sit in several layers)
LAYERS: list[tuple[str, set[str]]] = [
    ("leaves", {"__init__", "errors", "paths", "text", "mechanics.dynamics", "mechanics"}),
    ("config, store", {"config", "store"}),
    ("formats, models, answering", {"formats", "models", "answering"}),
    ("the paper's operations, facts, ingest, maintenance", {"mechanics.retrieval", "mechanics.consolidate",
                                                      "mechanics.forget", "mechanics.feedback", "mechanics.judge", "mechanics.relevance", "facts", "ingest",
                                                      "maintenance"}),
    ("memory", {"memory"}),
    ("mcp_server, bench, ui, hooks, testing", {"mcp_server", "bench", "ui", "hooks", "testing"}),
    ("cli", {"cli", "__main__"}),
]


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["hela_cli", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the hela_cli modules it imports (``from pkg import name`` is the module ``pkg.name`` when
    that is a module, else ``pkg``)."""

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for mod, path in modules.items():
        found: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {resolve(a.name) for a in node.names if a.name.split(".")[0] == "hela_cli"}
            elif isinstance(node, ast.ImportFrom) and node.module:
                base = node.module
                if node.level:  # relative: from the module's package
                    pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        pkg = pkg.rpartition(".")[0]
                    base = f"{pkg}.{base}"
                if base.split(".")[0] == "hela_cli":
                    found |= {resolve(f"{base}.{a.name}") for a in node.names}
        graph[mod] = {m for m in found if m is not None and m != mod}
    return graph


def _top(mod: str) -> str:
    """The name ``mod`` has in LAYERS: the longest listed prefix of its path below hela_cli."""
    parts = mod.split(".")[1:] or ["__init__"]
    listed = {name for _, names in LAYERS for name in names}
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in listed:
            return ".".join(parts[:n])
    return parts[0]


def _layer_of() -> dict[str, int]:
    out: dict[str, int] = {}
    for i, (_, names) in enumerate(LAYERS):
        for name in names:
            assert name not in out, f"{name} is in two layers"
            out[name] = i
    return out


def test_every_module_has_a_layer():
    layer = _layer_of()
    missing = sorted({_top(m) for m in _modules()} - set(layer))
    assert not missing, f"give these modules a layer in tests/test_layers.py LAYERS: {missing}"


def test_no_import_runs_up_the_layers():
    layer = _layer_of()
    graph = _imports(_modules())
    upward = sorted(f"{m} ({LAYERS[layer[_top(m)]][0]}) imports {o} ({LAYERS[layer[_top(o)]][0]})"
                    for m, outs in graph.items() for o in outs
                    if _top(m) in layer and _top(o) in layer and layer[_top(o)] > layer[_top(m)])
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    graph = _imports(_modules())
    cycles: list[list[str]] = []
    state: dict[str, int] = {}   # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for o in sorted(graph.get(m, ())):
            if state.get(o) == 1:
                cycles.append([*path[path.index(o):], o])
            elif o not in state:
                visit(o)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_checker_sees_an_upward_import_and_a_cycle(tmp_path, monkeypatch):
    """The check can fail: a leaf importing the memory layer, and two modules importing each other."""
    pkg = tmp_path / "hela_cli"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("def f():\n    from hela_cli.memory import Memory\n")
    (pkg / "memory.py").write_text("from hela_cli import errors\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    graph = _imports(_modules())
    assert graph["hela_cli.errors"] == {"hela_cli.memory"} and graph["hela_cli.memory"] == {"hela_cli.errors"}
    for check in (test_no_import_runs_up_the_layers, test_no_import_cycle):
        try:
            check()
        except AssertionError:
            continue
        raise AssertionError(f"{check.__name__} missed it")


def _test_module_imports(tests_dir: Path) -> list[str]:
    """``file: module`` for each import of a ``tests.test_*`` module from a file under ``tests_dir``."""
    found = []
    for path in sorted(tests_dir.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}: {n}" for n in names
                      if n.startswith("tests.test_") or (n.startswith("test_") and "." not in n)]
    return found


def test_test_modules_do_not_import_each_other():
    """Shared test helpers live in tests/support.py, tests/cases.py or conftest.py: importing a test module
    from another one runs (and couples) both."""
    bad = _test_module_imports(Path(__file__).resolve().parent)
    assert not bad, "move what these use to tests/support.py: " + ", ".join(bad)


def test_the_test_import_check_can_fail(tmp_path):
    (tmp_path / "test_a.py").write_text("def f():\n    from tests.test_b import helper\n")
    (tmp_path / "test_c.py").write_text("import tests.support\nfrom tests.cases import write\n")
    assert _test_module_imports(tmp_path) == ["test_a.py: tests.test_b"]


ENGINES = ("hela_cli.store.sqlite", "hela_cli.store.postgres")


def _engine_importers(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Modules outside ``store/`` that import an engine's own modules (``store/sqlite/``, ``store/postgres/``),
    the test doubles of ``testing/`` aside (a private Postgres for the tests)."""
    out = {}
    for mod, deps in graph.items():
        if mod.startswith(("hela_cli.store", "hela_cli.testing")):
            continue
        hit = {d for d in deps if d.startswith(ENGINES)}
        if hit:
            out[mod] = hit
    return out


def test_only_the_store_knows_its_engines():
    """ARCHITECTURE.md: engine differences live in store/sqlite/ and store/postgres/; callers use store/'s
    own names (``database_kind``, ``Store``). hela ui imported store.postgres.browse itself."""
    assert _engine_importers(_imports(_modules())) == {}


def test_the_engine_rule_can_fail():
    graph = {"hela_cli.ui.server": {"hela_cli.store.postgres.browse", "hela_cli.config"},
             "hela_cli.store.core": {"hela_cli.store.sqlite.read"}}
    assert _engine_importers(graph) == {"hela_cli.ui.server": {"hela_cli.store.postgres.browse"}}
