"""hela inspect / export: plain-data views on a tiny constructed graph (no model needed), the heatmap text
snapshot, valid GraphML / JSON / SVG, and the CLI (--json, errors, safe rendering of user text)."""

import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from typer.testing import CliRunner

from hela_cli.maintenance import exporting, inspection
from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.errors import StoreError
from hela_cli.store import Store

runner = CliRunner()
G = "{http://graphml.graphdrawing.org/xmlns}"
NASTY = "[bold red]not markup[/bold red] \x1b[31mred\x1b[0m <b>&amp;</b>"


def tiny_store(path=":memory:"):
    """Five nodes: 1-2 (0.6), 1-3 (0.3), 2-3 (0.05), 3-4 (0.1); node 5 isolated. Hubs (D > 0.5): 1 and 2."""
    s = Store(path)
    s.bind_embedder("fake", 4)
    sp = s.ensure_space("tiny")
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(5, 4)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = [dict(text=f"turn {i} about topic{i}", speaker="Ann" if i % 2 else "Bob", ts=1_700_000_000 + i * 86400,
                 keywords=[f"topic{i}"], ord=i, hash=f"h{i}", source_id=f"D1:{i}") for i in range(1, 6)]
    rows[4]["text"] = NASTY
    with s.transaction():
        ids = s.insert_nodes(sp.id, rows, vecs)
        s.set_edges(sp, {(ids[0], ids[1]): 0.6, (ids[0], ids[2]): 0.3, (ids[1], ids[2]): 0.05,
                         (ids[2], ids[3]): 0.1}, 0.995)
        s.insert_semantic(sp.id, "fact", "Ann", "Ann talks about topic1 and topic2.", None, "15 November 2023",
                          ids[0], [ids[0], ids[1]], vecs[0])
        s.set_hub_state(sp.id, ids[0], [ids[0], ids[1], ids[2]], 0, "ok")
    assert ids == [1, 2, 3, 4, 5]
    return s


@pytest.fixture()
def tiny():
    s = tiny_store()
    yield s, s.require_space("tiny"), Config().replace(**{"consolidation.delta_hub": 0.5})
    s.close()


def test_heatmap_text_snapshot(tiny):
    s, sp, cfg = tiny
    hm = inspection.heatmap_of(s, sp, cfg, [1, 2, 3, 4, 5])
    assert hm["matrix"][0][1] == hm["matrix"][1][0] == 0.6 and hm["matrix"][4] == [0.0] * 5
    assert inspection.heatmap_text(hm) == (
        "     0 1 2 3 4\n"
        "1 H ··**--\n"
        "2 H **··..\n"
        "3   --..··::\n"
        "4       ::··\n"
        "5 o         ··\n"
        "scale: ' .:-=+*#%@' = 0 .. 1; H hub, o isolated; columns in row order\n")
    top = inspection.heatmap(s, sp, cfg, nodes=2)
    assert [n["id"] for n in top["nodes"]] == [1, 2]  # strongest by D(v), chronological
    hubs = inspection.heatmap(s, sp, cfg, hubs_only=True)
    assert [n["id"] for n in hubs["nodes"]] == [1, 2, 3]  # hub 1 + its cluster, then hub 2 + its (same)
    assert inspection.heatmap_text(inspection.heatmap_of(s, sp, cfg, [])) == "(no nodes with edges)\n"


def test_heatmap_svg_is_valid_xml(tiny):
    s, sp, cfg = tiny
    svg = inspection.heatmap_svg(inspection.heatmap_of(s, sp, cfg, [1, 2, 3, 4, 5]))
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    rects = root.findall("{http://www.w3.org/2000/svg}rect")
    assert len(rects) == 1 + 25 + 10  # background, cells, legend
    assert any(r.get("fill") == inspection.heat_colour(0.6, 1.0) for r in rects)


def test_overview_hubs_prune_node(tiny):
    s, sp, cfg = tiny
    ov = inspection.overview(s, sp, cfg)
    assert (ov["nodes"], ov["edges"], ov["isolated_nodes"]) == (5, 4, 1)
    assert ov["hubs"]["count"] == 2 and ov["hubs"]["consolidated"] == 1
    assert [h["id"] for h in ov["hubs"]["top"]] == [1, 2]
    assert sum(ov["weight_distribution"]["counts"]) == 4 and ov["weight_distribution"]["max"] == 0.6
    assert ov["semantic"] == {"count": 1, "by_kind": {"fact": 1}}
    json.dumps(ov)

    hubs = inspection.hubs(s, sp, cfg)
    assert [(h["id"], h["strength"], h["degree"], h["consolidated"]) for h in hubs] == [(1, 0.9, 2, True),
                                                                                        (2, 0.65, 2, False)]
    assert [c["id"] for c in hubs[0]["cluster"]] == [1, 2, 3] and hubs[0]["cluster"][1]["weight"] == 0.6
    assert hubs[1]["next_action"] == "covered"  # its cluster was distilled with hub 1

    # one day between memories; "now" is node 5 (the newest): node 4 is 1 day idle, weak (0.1) and unused
    cfg.forgetting.delta_age_days = 0.5
    cfg.forgetting.delta_prune = 0.2
    pr = inspection.prune(s, sp, cfg)
    assert [c["id"] for c in pr["candidates"]] == [4]  # 5 is isolated but only 0 days idle; 3 is not weak
    assert pr["candidates"][0]["reasons"]["weak"]["reason"] == "total edge weight 0.1000 < 0.2"

    n = inspection.node(s, 1, cfg)
    assert n["hub"] and n["strength"] == 0.9 and [x["id"] for x in n["neighbours"]] == [2, 3]
    assert n["semantic"][0]["evidence"] == [1, 2] and n["hub_state"]["status"] == "ok"
    assert inspection.node(s, 5, cfg)["isolated"]
    with pytest.raises(StoreError, match="unknown node id 99"):
        inspection.node(s, 99, cfg)
    s.ensure_space("other")
    with pytest.raises(StoreError, match="node 1 is in space 'tiny', not 'other'"):
        inspection.node(s, 1, cfg, space="other")
    with pytest.raises(StoreError, match="unknown space 'nope'"):
        inspection.node(s, 1, cfg, space="nope")
    sem = inspection.semantic(s, sp)
    assert sem[0]["evidence_turns"][0]["source_id"] == "D1:1"


def test_export_json_round_trip_content(tiny):
    s, sp, cfg = tiny
    data = json.loads(json.dumps(exporting.export_json(s, sp, cfg)))
    assert data["format"] == "hela-export" and data["version"] == 1 and data["space"]["name"] == "tiny"
    assert data["embedder"] == {"model": "fake", "dim": 4} and data["vectors"] is False
    assert len(data["nodes"]) == 5 and "vector" not in data["nodes"][0]
    assert {k for k in data["nodes"][0]} >= {"id", "text", "speaker", "ts", "time_str", "keywords", "source_id",
                                             "session", "ord", "hash", "access_count", "last_access", "strength"}
    assert sorted((e["source"], e["target"], e["weight"]) for e in data["edges"]) == [
        (1, 2, 0.6), (1, 3, 0.3), (2, 3, 0.05), (3, 4, 0.1)]
    assert data["semantic"][0]["evidence"] == [1, 2] and data["hubs"][0]["node_id"] == 1
    with_vec = exporting.export_json(s, sp, cfg, vectors=True)
    assert len(with_vec["nodes"][0]["vector"]) == 4 and len(with_vec["semantic"][0]["vector"]) == 4
    assert np.allclose(with_vec["nodes"][0]["vector"], s.node_vectors([1])[1])


def test_export_graphml_is_valid(tiny, tmp_path):
    s, sp, cfg = tiny
    xml = exporting.export_graphml(s, sp, cfg)
    root = ET.fromstring(xml.encode("utf-8"))
    assert root.tag == f"{G}graphml"
    graph = root.find(f"{G}graph")
    assert graph.get("edgedefault") == "undirected"
    keys = {k.get("id"): (k.get("for"), k.get("attr.type")) for k in root.findall(f"{G}key")}
    nodes = graph.findall(f"{G}node")
    edges = graph.findall(f"{G}edge")
    assert len(nodes) == 5 + 1 and len(edges) == 4 + 2  # turns + semantic record; hebbian + evidence edges
    for el in nodes + edges:
        for d in el.findall(f"{G}data"):
            assert d.get("key") in keys
    weights = {(e.get("source"), e.get("target")): float(e.find(f"{G}data[@key='e_weight']").text) for e in edges}
    assert weights[("n1", "n2")] == 0.6 and weights[("s1", "n1")] == 0.0
    n5 = next(n for n in nodes if n.get("id") == "n5")
    text_el = n5.find(f"{G}data[@key='n_text']").text
    assert "\x1b" not in text_el and "<b>&amp;</b>" in text_el  # control chars replaced, markup kept as text


def test_export_graphml_reads_in_networkx(tiny, tmp_path):
    nx = pytest.importorskip("networkx")  # not a dependency: checked where it is installed
    s, sp, cfg = tiny
    path = tmp_path / "g.graphml"
    path.write_text(exporting.export_graphml(s, sp, cfg), encoding="utf-8")
    g = nx.read_graphml(path)
    assert g.number_of_nodes() == 6 and g["n1"]["n2"]["weight"] == 0.6 and g.nodes["n1"]["hub"] is True


# ----------------------------------------------------------------------------------- CLI
def run(*args, code=0):
    res = runner.invoke(app, list(args))
    assert res.exit_code == code, res.output
    return res


def test_cli_inspect_export_json(cli_env, tmp_path, monkeypatch):
    monkeypatch.setenv("HELA_CONSOLIDATION_DELTA_HUB", "0.5")
    tiny_store(os.environ["HELA_DB"]).close()
    ov = json.loads(run("inspect", "--space", "tiny", "--json").stdout)
    assert ov["nodes"] == 5 and ov["hubs"]["count"] == 2
    hubs = json.loads(run("inspect", "hubs", "--space", "tiny", "--top", "1", "--json").stdout)
    assert [h["id"] for h in hubs] == [1]
    assert json.loads(run("inspect", "--space", "tiny", "--json", "hubs").stdout)[0]["id"] == 1  # group options
    assert "candidates" in json.loads(run("inspect", "prune", "-s", "tiny", "--json").stdout)
    node = json.loads(run("inspect", "node", "1", "--json").stdout)
    assert node["space"] == "tiny" and node["neighbours"][0] == {"id": 2, "weight": 0.6, "speaker": "Bob",
                                                                  "text": "turn 2 about topic2"}
    hm = json.loads(run("inspect", "heatmap", "-s", "tiny", "--hubs", "--json").stdout)
    assert [n["id"] for n in hm["nodes"]] == [1, 2, 3]
    sem = json.loads(run("inspect", "semantic", "-s", "tiny", "--json").stdout)
    assert sem[0]["text"] == "Ann talks about topic1 and topic2." and sem[0]["evidence"] == [1, 2]
    dry = json.loads(run("consolidate", "--space", "tiny", "--dry-run", "--json").stdout)
    assert dry["dry_run"] and [h["action"] for h in dry["hubs"]] == ["unchanged", "covered"]

    exported = json.loads(run("export", "--space", "tiny", "--format", "json").stdout)
    assert len(exported["nodes"]) == 5 and len(exported["edges"]) == 4
    out = tmp_path / "tiny.graphml"
    run("export", "--space", "tiny", "--format", "graphml", "-o", str(out))
    assert ET.parse(out).getroot().tag == f"{G}graphml" and (out.stat().st_mode & 0o077) == 0
    vec = json.loads(run("export", "-s", "tiny", "-f", "json", "--vectors").stdout)
    assert len(vec["nodes"][0]["vector"]) == 4


def test_cli_human_output_and_errors(cli_env, tmp_path):
    tiny_store(os.environ["HELA_DB"]).close()
    for args in (("inspect", "-s", "tiny"), ("inspect", "hubs", "-s", "tiny"), ("inspect", "prune", "-s", "tiny"),
                 ("inspect", "semantic", "-s", "tiny"), ("consolidate", "-s", "tiny", "--dry-run"),
                 ("forget", "-s", "tiny")):
        assert run(*args).stdout.strip()
    node = run("inspect", "node", "5").stdout
    assert "[bold red]not markup[/bold red]" in node and "\x1b" not in node  # user text is never markup
    svg = tmp_path / "h.svg"
    grid = run("inspect", "heatmap", "-s", "tiny", "--nodes", "5", "--svg", str(svg)).stdout
    assert "**" in grid and "H" in grid
    assert ET.parse(svg).getroot().tag.endswith("svg")
    for args, code, needle in [
        (("inspect", "node", "999"), 4, "unknown node id 999"),
        (("inspect", "-s", "nope"), 4, "unknown space 'nope'"),
        (("inspect", "hubs", "-s", "nope"), 4, "unknown space 'nope'"),
        (("export", "-s", "tiny", "--format", "xml"), 2, "unknown export format 'xml'"),
        (("inspect", "heatmap", "-s", "tiny", "--nodes", "3", "--hubs"), 2, "exclude each other"),
    ]:
        res = run(*args, code=code)
        assert needle in res.output and "Traceback" not in res.output


def test_cli_no_database(cli_env):
    res = run("inspect", "--json", code=4)
    assert "database yet" in res.output   # SQLite: "no database yet"; Postgres: "no hela database yet"
    assert not (cli_env / "hela.db").exists()


def test_cli_consolidate_with_real_models(cli_env, monkeypatch, tmp_path):
    from tests.cases import write_conversation

    monkeypatch.setenv("HELA_CONSOLIDATION_MAX_TOKENS", "200")
    monkeypatch.setenv("HELA_CONSOLIDATION_MAX_NEIGHBOURS", "2")
    monkeypatch.setenv("HELA_INGEST_INITIAL_WEIGHT", "0.1")  # ingest links alone make no hub
    monkeypatch.setenv("HELA_CONSOLIDATION_DELTA_HUB", "0.5")
    run("ingest", str(write_conversation(tmp_path / "c.jsonl")), "--space", "t")
    with Store(os.environ["HELA_DB"]) as s:  # a hub: node 1 strongly associated with 5 and 7 (the Tofu turns)
        sp = s.require_space("t")
        with s.transaction():
            s.set_edges(sp, {(1, 5): 0.4, (1, 7): 0.3, (5, 7): 0.2}, 0.995)
    rep = json.loads(run("consolidate", "--space", "t", "--json").stdout)
    assert rep["distilled"] == 1 and rep["failed"] == 0 and rep["hubs"][0]["cluster"] == [1, 5, 7]
    sem = json.loads(run("inspect", "semantic", "-s", "t", "--json").stdout)
    assert sem and all(set(r["evidence"]) <= {1, 5, 7} and r["evidence_turns"] for r in sem)
    hubs = json.loads(run("inspect", "hubs", "-s", "t", "--json").stdout)
    assert all(h["consolidated"] for h in hubs)
    again = run("consolidate", "--space", "t").stdout
    assert "0 distilled" in again and "0 model call(s)" in again
