"""The benchmark pages and folders a newcomer reads: BENCHMARKS.md is a short current-state page whose every
figure names its command and the history section behind it; the history pages and the scripts' folders
exist as they are named; every script sits in a group folder and is listed in that folder's README; no
benchmark imports from ``tests/``; and nothing links to a file that is not there."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks"
HISTORY = REPO / "docs" / "benchmarks"
GROUPS = ("quality", "speed", "agents", "ablations")
CURRENT = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")


def _pages() -> list[Path]:
    return [REPO / "BENCHMARKS.md", *sorted(HISTORY.glob("*.md")), *sorted(BENCH.rglob("README.md"))]


def test_benchmarks_md_is_a_short_current_state_page():
    assert len(CURRENT.splitlines()) < 400
    heads = re.findall(r"^## (.+)$", CURRENT, re.M)
    assert heads[:4] == ["How good", "How fast", "Inside coding agents", "Incoming"], heads
    # every figure row names its command (a code span) and the history section it comes from
    for table in re.findall(r"\| [^\n]*\| command \|[^\n]*\n\|[- |]+\n((?:\|[^\n]*\n)+)", CURRENT):
        for row in table.splitlines():
            cells = [c.strip() for c in row.strip("|").split(" | ")]
            assert len(cells) == 5 and "`" in cells[2], row
            assert re.search(r"\d{4}-\d\d-\d\d", cells[3]), f"no date: {row}"
            assert re.match(r"(quality|speed|agents|ablations|engineering)\.md, \"", cells[4]), row


def test_each_history_section_named_exists():
    named = re.findall(r"(quality|speed|agents|ablations|engineering)\.md, ((?:\"[^\"]+\"(?:,? ?(?:\([^)]*\))?,? ?)?)+)",
                       CURRENT)
    assert len(named) >= 20
    for page, titles in named:
        heads = [h.strip() for h in re.findall(r"^#{2,3} (.+)$", (HISTORY / f"{page}.md").read_text(), re.M)]
        for title in (" ".join(t.split()) for t in re.findall(r"\"([^\"]+)\"", titles)):
            assert any(h.startswith(title) for h in heads), f"{page}.md has no section {title!r}"


def test_links_resolve():
    bad = []
    for page in _pages():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", target) and not (page.parent / target).exists():
                bad.append(f"{page.relative_to(REPO)} -> {target}")
    assert not bad, bad


def test_scripts_sit_in_their_group_and_are_listed():
    assert sorted(p.name for p in BENCH.iterdir()) == sorted(["README.md", *GROUPS])
    for group in GROUPS:
        readme = (BENCH / group / "README.md").read_text(encoding="utf-8")
        scripts = sorted(p.name for p in (BENCH / group).glob("*.py"))
        assert scripts and not [s for s in scripts if f"| `{s}` |" not in readme], group
    top = (BENCH / "README.md").read_text(encoding="utf-8")
    assert all(f"[{g}/]({g}/README.md)" in top for g in GROUPS)


def test_every_script_named_exists():
    """A command names a script where it is (the history pages keep the paths of their day, and the
    benchmarks README names the scripts that left the tree with the commit that still has them)."""
    texts = {p: p.read_text(encoding="utf-8") for p in
             [REPO / "BENCHMARKS.md", REPO / "Makefile", REPO / "README.md", REPO / "ARCHITECTURE.md",
              *sorted((REPO / "docs").glob("*.md")), *sorted(BENCH.rglob("*.py")), *sorted(BENCH.rglob("README.md")),
              *sorted((REPO / "hela_cli").rglob("*.py")), *sorted((REPO / "tests").glob("*.py"))]}
    missing = []
    for path, text in texts.items():
        for name in re.findall(r"benchmarks/((?:\w+/)*\w+\.py)", text):
            if not (BENCH / name).exists() and f"git show 5cf8630:benchmarks/{name}" not in text:
                if path.name == "README.md" and path.parent == BENCH:
                    continue   # the list of scripts that left the tree
                missing.append(f"{path.relative_to(REPO)}: benchmarks/{name}")
    assert not missing, missing


def test_benchmarks_import_nothing_from_tests():
    found = [p.relative_to(REPO).as_posix() for p in BENCH.rglob("*.py")
             if re.search(r"^\s*(from|import) tests\b", p.read_text(encoding="utf-8"), re.M)]
    assert not found, found
