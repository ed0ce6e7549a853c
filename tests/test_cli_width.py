"""`hela ask` with its sources, and output legible at 80 columns (CliRunner; the console width is the one a
pipe or an 80-column terminal gives)."""

import json
import re

import pytest
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.cli import render
from tests.conftest import SAMPLE

runner = CliRunner()


def run(*args):
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res


@pytest.fixture()
def width(monkeypatch, request):
    monkeypatch.setattr(render.console, "width", request.param)
    monkeypatch.setattr(render.err_console, "width", request.param)
    return request.param


@pytest.fixture()
def demo(cli_env):
    run("ingest", str(SAMPLE / "conversation.json"))
    return cli_env


def test_ask_prints_answer_then_sources(demo):
    plain = run("ask", "What is the name of Jonas's dog?", "--space", "demo", "--no-learn").stdout.splitlines()
    assert "tofu" in plain[0].lower()
    assert plain[1] == "sources:"
    sources = plain[2:]
    assert len(sources) >= 3
    assert all(re.match(r"^  D\d+:\d+ · \d{1,2} \w+ \d{4} · \w+: ", s) for s in sources), sources
    assert any("Tofu" in s for s in sources)
    quiet = run("ask", "What is the name of Jonas's dog?", "--space", "demo", "--no-learn", "--quiet").stdout
    assert quiet.strip() == plain[0].strip() and len(quiet.splitlines()) == 1
    js = json.loads(run("ask", "What is the name of Jonas's dog?", "--space", "demo", "--no-learn",
                        "--json").stdout)
    assert len(js["citations"]) >= 3
    assert set(js["citations"][0]) >= {"id", "source_id", "time_str", "speaker", "text"}
    ids = [m["id"] for m in js["memories"]]
    assert all(c["id"] in ids for c in js["citations"])  # citations are retrieved memories
    assert js["citations"][0]["overlap"] >= 1 and "tofu" in js["citations"][0]["text"].lower()


def test_no_llm_has_no_citations(demo):
    js = json.loads(run("ask", "Who is Tofu?", "--space", "demo", "--no-llm", "--json").stdout)
    assert js["citations"] == []


@pytest.mark.parametrize("width", [80, 120], indirect=True)
def test_explain_is_legible(demo, width):
    out = run("ask", "Who looked after Tofu while Jonas was away?", "--space", "demo", "--no-llm",
              "--no-learn", "--explain").stdout
    lines = out.splitlines()
    trace = lines[: lines.index(next(x for x in lines if x.startswith("query keywords")))]
    assert all(len(x) <= width for x in trace)
    head = next(x for x in trace if "S_base" in x)
    assert head.split() == ["#", "path", "id", "source", "S", "S_base", "cos", "kw", "time", "spread"]
    # every memory: a score row, then its text on one line (no 4-character column)
    rows = [i for i, x in enumerate(trace) if re.match(r"^\s+\d+ (base|hebbian|reply|successor)\s", x)]
    assert len(rows) == 13
    for i in rows:
        assert len(trace[i].split()) == 10
        text_line = trace[i + 1]
        assert re.match(r"^    \[\d{4}-\d\d-\d\d \d\d:\d\d\] \w+: ", text_line)
        assert len(text_line) >= min(width, 60) or not text_line.endswith("…")


@pytest.mark.parametrize("width", [80], indirect=True)
def test_tables_at_80_columns_break_no_token(demo, width):
    out = run("spaces").stdout
    assert all(len(x) <= 80 for x in out.splitlines())
    assert re.search(r"demo\s.*\s83\s", out)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", out)  # dates whole


@pytest.mark.parametrize("width", [80], indirect=True)
def test_spaces_keeps_a_hooks_space_whole_at_80_columns(cli_env, width):
    """A hooks space's name (`<project>-<6 hex>`) and every column header whole at 80 columns (issue 48)."""
    run("add", "we pay with stripe", "--space", "shop-api-payments-7d6a3b")
    out = run("spaces").stdout
    lines = out.splitlines()
    assert all(len(x) <= 80 for x in lines) and "…" not in out, out
    assert next(x for x in lines if x.startswith("space")).split() == ["space", "nodes", "edges", "semantic",
                                                                         "recalls", "last"]
    assert re.search(r"^shop-api-payments-7d6a3b\s+1\s+0\s+0\s+0\s+\d{4}-\d\d-\d\d$", out, re.M), out
    long = "a-very-long-project-directory-name-for-the-service-that-pays-7d6a3b"
    run("add", "x", "--space", long)
    out = run("spaces").stdout
    assert all(len(x) <= 80 for x in out.splitlines()) and "…" not in out, out
    lines = out.splitlines()
    head = next(x for x in lines if x.startswith("space"))
    names = "".join(x[:head.index("nodes")].strip() for x in lines[lines.index(head) + 2:])
    assert names == long + "shop-api-payments-7d6a3b"   # a name wider than its room continues on the next line
