"""Adaptive forgetting: the criteria as pure functions, dry run vs apply (no orphan vectors, FTS rows or
edges; semantic evidence handled explicitly), and the CLI."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.config import Config
from hela_cli.mechanics.dynamics import DAY
from hela_cli.mechanics.forget import explain_reasons
from hela_cli.store import Store
from tests.cases import TURNS, write_conversation

runner = CliRunner()


def test_criteria_pure():
    r = explain_reasons(0.01, 40 * DAY, 0, delta_prune=0.05, delta_age_days=30)
    assert all(c["holds"] for c in r.values())
    assert r["weak"]["reason"] == "total edge weight 0.0100 < 0.05"
    assert r["old"]["reason"] == "idle 40.0 days > 30" and r["unused"]["reason"] == "never accessed"
    r = explain_reasons(0.05, 30 * DAY, 2, delta_prune=0.05, delta_age_days=30)
    assert not any(c["holds"] for c in r.values())  # boundaries: not below, not longer, accessed
    assert r["unused"]["reason"] == "accessed 2 time(s)"


def forget_config():
    # initial links of 0.02 are "weak" (< 0.05); the May turns are 43 days older than the newest (20 June)
    return Config().replace(**{"ingest.initial_weight": 0.02, "consolidation.auto": False,
                               "retrieval.k": 1, "retrieval.m": 0})


def test_dry_run_then_apply_leaves_no_orphans(make_memory, embedder, tmp_path):
    with make_memory(forget_config()) as mem:
        mem.ingest([write_conversation(tmp_path / "c.jsonl")], space="t")
        sp = mem.store.require_space("t")
        ids = [n["id"] for n in mem.store.iter_nodes(sp.id)]
        may = ids[:4]  # 8 May 2023; the rest is June
        # one May turn gets used (accessed, strengthened): it must survive
        used = mem.retrieve("kitchen repainted pale green", "t").memories[0]["id"]
        assert used == ids[2]
        # a semantic record citing a May turn that will be forgotten and a June turn that stays
        with mem.store.transaction():
            sid = mem.store.insert_semantic(sp.id, "fact", "Caroline", "Caroline adopted Tofu.", None,
                                            "7 May 2023", ids[0], [ids[0], ids[4]],
                                            np.ones(embedder.dim, dtype=np.float32) / np.sqrt(embedder.dim))
        before = mem.store.spaces()
        dry = mem.forget("t")
        expected = {ids[0], ids[1], ids[3]}
        assert {c["id"] for c in dry["candidates"]} == expected and not dry["applied"] and dry["removed"] == 0
        c0 = next(c for c in dry["candidates"] if c["id"] == ids[0])
        assert c0["idle_days"] == pytest.approx(43, abs=0.1) and c0["access_count"] == 0
        assert all(c["reasons"][k]["holds"] for c in dry["candidates"] for k in ("weak", "old", "unused"))
        assert mem.store.spaces() == before  # a dry run writes nothing

        done = mem.forget("t", apply=True)
        assert done["applied"] and done["removed"] == 3 and done["nodes"] == len(ids) - 3
        assert done["semantic_affected"] == [sid]
        assert mem.store.integrity_problems() == []
        left = {n["id"] for n in mem.store.iter_nodes(sp.id)}
        assert left == set(ids) - expected and used in left and set(may) - expected <= left
        assert not set(mem.store.node_vectors(list(expected)))
        assert not any(a in expected or b in expected for a, b, _ in mem.store.all_edges(sp))
        assert not expected & {n for n, _ in mem.store.knn(sp.id, mem.embedder.embed(["Tofu greyhound"])[0], 10)}
        assert not expected & {n for n, _ in mem.store.keyword_search(sp.id, ["greyhound", "book", "club"], 10)}
        rec = mem.store.get_semantic([sid])[0]  # kept, evidence to the forgotten turn removed and counted
        assert rec["evidence"] == [ids[4]] and rec["forgotten_evidence"] == 1
        assert mem.forget("t")["candidates"] == []  # idempotent
        mem.retrieve("Tofu walks", "t")  # retrieval still works afterwards


def test_now_is_the_space_not_the_wall_clock(make_memory, tmp_path):
    with make_memory(forget_config()) as mem:
        mem.ingest([write_conversation(tmp_path / "c.jsonl")], space="t")
        # measured against 20 June 2023 (newest memory): only the May turns are old, however late it is now
        assert len(mem.forget("t")["candidates"]) == 4
        far = mem.store.space_now(mem.store.require_space("t").id) + 365 * DAY
        assert len(mem.forget("t", now=far)["candidates"]) == len(TURNS)


def test_cli_forget_json(cli_env, monkeypatch, tmp_path):
    monkeypatch.setenv("HELA_INGEST_INITIAL_WEIGHT", "0.02")
    path = write_conversation(tmp_path / "c.jsonl")
    assert runner.invoke(app, ["ingest", str(path), "--space", "t"]).exit_code == 0
    dry = runner.invoke(app, ["forget", "--space", "t", "--json"])
    assert dry.exit_code == 0, dry.output
    out = json.loads(dry.stdout)
    assert len(out["candidates"]) == 4 and out["removed"] == 0
    human = runner.invoke(app, ["forget", "--space", "t"])
    assert "would be forgotten" in human.stdout and "--apply" in human.stdout
    done = json.loads(runner.invoke(app, ["forget", "--space", "t", "--apply", "--json"]).stdout)
    assert done["removed"] == 4 and done["nodes"] == len(TURNS) - 4
    with Store(cli_env / "hela.db") as s:
        assert s.integrity_problems() == []
    res = runner.invoke(app, ["forget", "--space", "nope"])
    assert res.exit_code == 4 and "unknown space 'nope'" in res.output
