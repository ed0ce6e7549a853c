"""Facts that change (issue 38): supersession marks in the store (both engines), recall with successors,
``current_only`` / ``as_of``, Eq.4 and Eq.1 rules, deletion, copy / export / import."""

from __future__ import annotations

import pytest

from hela_cli.config import Config
from hela_cli.errors import InputError
from hela_cli.memory import Memory
from hela_cli.store import Store
from hela_cli.testing import HashEmbedder

DAY = 86_400.0
T0 = 1_700_000_000.0


def _memory(db: str) -> Memory:
    cfg = Config()
    cfg.db = db
    cfg.supersession.detect = False   # explicit marks only here (automatic ones: test_supersession_detect.py)
    return Memory(cfg, store=Store(db), embedder=HashEmbedder())


def _facts(mem: Memory) -> dict[str, int]:
    """An old fact, unrelated turns, the new fact (later), in space 'p'."""
    ids = mem.add_many("p", [
        {"text": "Our model server is vLLM 0.6 behind nginx on the GPU box orca.", "speaker": "user", "time": T0},
        {"text": "The CI runs on GitHub Actions with a self-hosted runner.", "speaker": "user", "time": T0 + DAY},
        {"text": "Lunch was pasta with tomato sauce today.", "speaker": "user", "time": T0 + 2 * DAY},
        {"text": "Update: we replaced vLLM with SGLang for the model server last week.", "speaker": "user",
         "time": T0 + 10 * DAY},
    ])
    return {"old": ids[0], "ci": ids[1], "lunch": ids[2], "new": ids[3]}


@pytest.fixture()
def mem(backend_db):
    m = _memory(backend_db)
    yield m
    m.close()


def test_mark_read_unmark_both_engines(mem):
    f = _facts(mem)
    sp = mem.space("p")
    assert mem.store.supersessions_for([f["old"], f["new"]]) == {}
    rep = mem.supersede(f["old"], f["new"])
    assert rep["space"] == "p" and rep["mark"]["status"] == "superseded" and rep["mark"]["detector"] == "explicit"
    assert rep["mark"]["invalid_at"] == T0 + 10 * DAY   # the successor's time
    rows = mem.store.supersessions_for([f["old"]])
    assert [(r["old_id"], r["new_id"]) for r in rows[f["old"]]] == [(f["old"], f["new"])]
    both = mem.store.supersessions_for([f["new"], f["ci"]])
    assert list(both) == [f["new"]]   # found from the successor's side too
    # an automatic detector never overrides an explicit mark; an explicit one overrides an automatic one
    mem.store.mark_superseded(sp.id, f["old"], f["new"], detector="cue", confidence=0.5, status="possible")
    assert mem.store.supersessions_for([f["old"]])[f["old"]][0]["detector"] == "explicit"
    mem.store.mark_superseded(sp.id, f["ci"], f["new"], detector="cue", confidence=0.5, status="possible")
    mem.store.mark_superseded(sp.id, f["ci"], f["new"], detector="explicit")
    assert mem.store.supersessions_for([f["ci"]])[f["ci"]][0]["status"] == "superseded"
    assert mem.store.unmark_superseded(sp.id, f["ci"]) == 1
    assert mem.supersede(f["old"], f["new"], undo=True)["undone"] == 1
    assert mem.store.supersessions_for([f["old"]]) == {}
    assert mem.store.integrity_problems() == []


def test_bad_marks_write_nothing(mem):
    f = _facts(mem)
    mem.add("other", "Something in another space.", time=T0 + 20 * DAY)
    other = mem.store.list_nodes(mem.space("other").id)[0]["id"]
    sp = mem.space("p")
    cases = [
        (lambda: mem.supersede(f["new"], f["old"]), "not earlier than"),
        (lambda: mem.supersede(f["old"], f["old"]), "cannot supersede itself"),
        (lambda: mem.supersede(f["old"], 99_999), "no memory 99999"),
        (lambda: mem.supersede(f["old"], other), "different spaces"),
        (lambda: mem.supersede(f["old"], other, space="p"), f"no memory {other} in space 'p'"),
        (lambda: mem.supersede(f["old"], f["new"], undo=True), "is not marked"),
        (lambda: mem.store.mark_superseded(sp.id, f["old"], f["new"], status="maybe"), "status must be"),
        (lambda: mem.add("p", "newer", supersedes=[99_999]), "no memory 99999"),
    ]
    count = mem.store.count_nodes(sp.id)
    for call, words in cases:
        with pytest.raises(InputError, match=words):
            call()
    assert mem.store.count_supersessions(sp.id) == 0 and mem.store.count_nodes(sp.id) == count


def test_add_supersedes_is_one_write(mem):
    f = _facts(mem)
    nid = mem.add("p", "We moved the model server from SGLang to TensorRT-LLM.", supersedes=f["new"],
                  time=T0 + 30 * DAY)
    row = mem.store.supersessions_for([nid])[nid][0]
    assert (row["old_id"], row["new_id"], row["detector"]) == (f["new"], nid, "explicit")
    # an id out of order rolls the new memory back too
    n = mem.store.count_nodes(mem.space("p").id)
    with pytest.raises(InputError, match="not earlier"):
        mem.add("p", "an old note", supersedes=[nid], time=T0 - DAY)
    assert mem.store.count_nodes(mem.space("p").id) == n


def test_recall_brings_the_successor_above_with_marks(mem):
    f = _facts(mem)
    q = "Our model server is vLLM 0.6 behind nginx on the GPU box orca."
    before = mem.retrieve(q, "p", learn=False)
    assert before.memories[0]["id"] == f["old"] and before.memories[0]["superseded_by"] is None
    mem.supersede(f["old"], f["new"])
    res = mem.retrieve(q, "p", learn=False)
    ids = [m["id"] for m in res.memories]
    assert ids.index(f["new"]) < ids.index(f["old"])
    old = next(m for m in res.memories if m["id"] == f["old"])
    new = next(m for m in res.memories if m["id"] == f["new"])
    assert (old["superseded_by"], old["supersession_status"], old["invalid_at"]) == \
        (f["new"], "superseded", T0 + 10 * DAY)
    assert new["supersedes"] == [f["old"]] and new["superseded_by"] is None
    assert new["score"] >= old["score"]
    # current only: the old fact is gone, the new one stays
    cur = mem.retrieve(q, "p", learn=False, current_only=True)
    assert f["old"] not in [m["id"] for m in cur.memories] and f["new"] in [m["id"] for m in cur.memories]
    # as of a time before the change: the old fact holds, the new one did not exist
    past = mem.retrieve(q, "p", learn=False, as_of=T0 + 5 * DAY, current_only=True)
    got = {m["id"]: m for m in past.memories}
    assert f["new"] not in got and got[f["old"]]["superseded_by"] is None


def test_possible_marks_hide_nothing(mem):
    f = _facts(mem)
    mem.store.mark_superseded(mem.space("p").id, f["old"], f["new"], detector="cue", confidence=0.6,
                              status="possible")
    q = "Our model server is vLLM 0.6 behind nginx on the GPU box orca."
    res = mem.retrieve(q, "p", learn=False, current_only=True)
    got = {m["id"]: m for m in res.memories}
    assert got[f["old"]]["supersession_status"] == "possible" and f["new"] in got
    ids = [m["id"] for m in res.memories]
    assert ids.index(f["new"]) < ids.index(f["old"])


def test_no_marks_no_change(tmp_path):
    """With no supersession in the space, recall is what it was: same ids, order and scores (the marks'
    keys are present and empty)."""
    a, b = _memory(str(tmp_path / "a.db")), _memory(str(tmp_path / "b.db"))
    with a, b:
        fa, fb = _facts(a), _facts(b)
        b.supersede(fb["ci"], fb["lunch"])   # a mark elsewhere in the space
        b.supersede(fb["ci"], fb["lunch"], undo=True)
        for q in ("vLLM model server", "what did we eat", "CI runner"):
            ra, rb = a.retrieve(q, "p", learn=False), b.retrieve(q, "p", learn=False)
            assert [(m["id"], m["score"]) for m in ra.memories] == [(m["id"], m["score"]) for m in rb.memories]
            assert all(m["superseded_by"] is None and m["supersedes"] == [] for m in ra.memories)


def test_spreading_does_not_revive_and_eq1_does_not_strengthen(tmp_path):
    mem = _memory(str(tmp_path / "h.db"))
    with mem:
        f = _facts(mem)
        sp = mem.space("p")
        # a strong learned edge from the CI memory to the old fact: spreading would bring the old fact in
        with mem.store.transaction(space=sp.id):
            fresh = mem.store.advance_step(sp.id, mem.config.hebbian.decay)
            mem.store.set_edges(fresh, {(min(f["ci"], f["old"]), max(f["ci"], f["old"])): 1.0},
                                mem.config.hebbian.decay)
        mem.supersede(f["old"], f["new"])
        q = "The CI runs on GitHub Actions with a self-hosted runner."
        res = mem.retrieve(q, "p", learn=False)
        old = [m for m in res.memories if m["id"] == f["old"]]
        assert not old or old[0]["spread_bonus"] == 0.0
        # Eq.1: a recall holding the old fact and its successor reinforces no pair with the old fact
        res = mem.retrieve("vLLM model server orca SGLang", "p", learn=True)
        ids = [m["id"] for m in res.memories]
        assert f["old"] in ids and f["new"] in ids
        s = mem.store.refresh_space(sp)
        w = mem.store.edges_among(s, ids)
        pair_new = (min(f["new"], f["lunch"]), max(f["new"], f["lunch"]))
        pair_old = (min(f["old"], f["lunch"]), max(f["old"], f["lunch"]))
        assert w.get(pair_new, 0.0) > 0 and w.get(pair_old, 0.0) == 0.0


def test_delete_removes_marks_and_copy_export_import_carry_them(backend_db, tmp_path):
    from hela_cli.maintenance.exporting import export_json

    mem = _memory(backend_db)
    with mem:
        f = _facts(mem)
        mem.supersede(f["old"], f["new"])
        mem.store.mark_superseded(mem.space("p").id, f["ci"], f["new"], detector="judge", confidence=0.7,
                                  status="possible")
        exp = export_json(mem.store, mem.space("p"), mem.config, vectors=True)
        assert [(r["old_id"], r["new_id"], r["status"]) for r in exp["supersessions"]] == \
            [(f["old"], f["new"], "superseded"), (f["ci"], f["new"], "possible")]
        dump = mem.store.space_dump("p")
        other = _memory(str(tmp_path / "copy.db"))
        with other:
            other.store.space_load(dump)
            assert other.store.count_supersessions(other.space("p").id) == 2
        import json
        path = tmp_path / "p.json"
        path.write_text(json.dumps(exp))
        rep = mem.import_export(path, space="restored")
        assert rep["supersessions"] == 2
        rows = mem.store.space_supersessions(mem.space("restored").id)
        ids = rep["ids"]
        assert {(r["old_id"], r["new_id"], r["detector"]) for r in rows} == \
            {(ids[str(f["old"])], ids[str(f["new"])], "explicit"), (ids[str(f["ci"])], ids[str(f["new"])], "judge")}
        mem.delete("p", [f["new"]])
        assert mem.store.count_supersessions(mem.space("p").id) == 0
        assert mem.store.integrity_problems() == []


def test_backup_carries_the_marks(backup_db_pair):
    src, dest = backup_db_pair
    mem = _memory(src)
    with mem:
        f = _facts(mem)
        mem.supersede(f["old"], f["new"])
        mem.backup(dest)
    with Store(dest) as copy:
        rows = copy.space_supersessions(copy.require_space("p").id)
        assert [(r["old_id"], r["new_id"], r["status"]) for r in rows] == [(f["old"], f["new"], "superseded")]


@pytest.fixture()
def backup_db_pair(backend_db, tmp_path):
    """A database of either engine and the SQLite file its backup goes to."""
    return backend_db, str(tmp_path / "backup.db")


def test_history_and_inspect_show_the_chain(tmp_path):
    from hela_cli.maintenance.inspection import node

    mem = _memory(str(tmp_path / "c.db"))
    with mem:
        f = _facts(mem)
        third = mem.add("p", "We moved the model server again, to TensorRT-LLM.", time=T0 + 20 * DAY,
                        supersedes=f["new"])
        mem.supersede(f["old"], f["new"])
        chain = mem.history("p", f["old"])["changes"]
        assert [(c["old"], c["new"]) for c in chain] == [(f["old"], f["new"]), (f["new"], third)]
        assert chain[0]["invalid_at"].startswith("2023-11-24") and chain[0]["detector"] == "explicit"
        assert node(mem.store, third, mem.config)["changes"] == chain
        # recall of the oldest brings the whole chain, newest first
        res = mem.retrieve("Our model server is vLLM 0.6 behind nginx on the GPU box orca.", "p", learn=False)
        ids = [m["id"] for m in res.memories]
        assert ids.index(third) < ids.index(f["new"]) < ids.index(f["old"])


def test_stale_semantic_records(tmp_path):
    """A semantic record resting on a superseded memory is marked stale; current_only leaves it out."""
    mem = _memory(str(tmp_path / "s.db"))
    mem.config.retrieval.semantic_k = 5
    with mem:
        f = _facts(mem)
        sp = mem.space("p")
        text = "The model server is vLLM 0.6 on orca."
        with mem.store.transaction(space=sp.id):
            rid = mem.store.restore_semantic(sp.id, {"kind": "fact", "text": text, "created_at": T0,
                                                     "updated_at": T0}, [f["old"]], mem.embedder.embed([text])[0])
        q = "model server vLLM orca"
        assert [r["stale"] for r in mem.retrieve(q, "p", learn=False).semantic if r["id"] == rid] == [False]
        mem.supersede(f["old"], f["new"])
        rec = next(r for r in mem.retrieve(q, "p", learn=False).semantic if r["id"] == rid)
        assert rec["stale"] and rec["stale_evidence"] == [f["old"]]
        assert rid not in [r["id"] for r in mem.retrieve(q, "p", learn=False, current_only=True).semantic]
        assert not next(r for r in mem.retrieve(q, "p", learn=False, as_of=T0 + 5 * DAY).semantic
                        if r["id"] == rid)["stale"]   # before the change the record held


def test_ui_shows_the_chain_and_the_mark(tmp_path):
    from starlette.testclient import TestClient

    from hela_cli.ui.app import create_app

    mem = _memory(str(tmp_path / "u.db"))
    with mem:
        f = _facts(mem)
        mem.supersede(f["old"], f["new"])
        client = TestClient(create_app(mem, "tok-for-tests", cookie="hela-ui-sup"))
        assert client.get("/?token=tok-for-tests").status_code == 200
        page = client.get(f"/memory/{f['old']}").text
        assert "Facts that changed" in page and f'href="/memory/{f["new"]}">#{f["new"]}</a> from 2023-11-24' in page
        recall = client.get("/recall", params={"space": "p", "q": "vLLM 0.6 behind nginx on orca"}).text
        assert f'superseded by <a href="/memory/{f["new"]}">#{f["new"]}</a>' in recall


def test_lines_carry_the_mark(tmp_path):
    """Prompt A.2 (hela ask, with and without --no-llm), the hooks' memory line and the session brief show a
    superseded memory with its mark; lines of memories outside any change are unchanged."""
    from hela_cli.answering.prompts import answer_messages, render_memory
    from hela_cli.hooks.context import memory_line

    mem = _memory(str(tmp_path / "l.db"))
    with mem:
        f = _facts(mem)
        q = "Our model server is vLLM 0.6 behind nginx on the GPU box orca."
        plain = {m["id"]: render_memory(m) for m in mem.retrieve(q, "p", learn=False).memories}
        mem.supersede(f["old"], f["new"])
        res = mem.retrieve(q, "p", learn=False)
        got = {m["id"]: m for m in res.memories}
        mark = f"(superseded by #{f['new']}, 2023-11-24)"
        assert render_memory(got[f["old"]]).endswith(mark) and f"#{f['old']} user:" in render_memory(got[f["old"]])
        assert f"#{f['new']} user:" in render_memory(got[f["new"]]) and "superseded" not in render_memory(got[f["new"]])
        assert render_memory(got[f["ci"]]) == plain[f["ci"]]
        context = answer_messages(q, res.memories, res.semantic)[-1]["content"]
        assert mark in context
        assert memory_line(got[f["old"]], 200).endswith(mark) and "superseded" not in memory_line(got[f["new"]], 200)
        assert mem.ask(q, "p", llm=False, learn=False)["context"].count(mark) == 1


def test_feedback_does_not_strengthen_a_superseded_memory(tmp_path):
    mem = _memory(str(tmp_path / "f.db"))
    with mem:
        f = _facts(mem)
        mem.supersede(f["old"], f["new"])
        res = mem.retrieve("vLLM model server orca SGLang", "p", learn=True)
        ids = [m["id"] for m in res.memories]
        assert f["old"] in ids and f["new"] in ids
        rep = mem.reinforce("p", [f["old"], f["new"], f["ci"]], recall_id=res.recall_id)
        assert rep["strengthened"] > 0
        w = mem.store.edges_among(mem.store.refresh_space(mem.space("p")), ids)
        assert all(w.get(p, 0.0) == 0.0 for p in w if f["old"] in p) and w[tuple(sorted((f["new"], f["ci"])))] > 0


def test_a_filtered_recall_still_brings_the_successor(tmp_path):
    """Recall filters choose the candidates; the successor of a recalled superseded memory joins anyway (an
    --until before the change included), except after --as-of."""
    mem = _memory(str(tmp_path / "w.db"))
    with mem:
        f = _facts(mem)
        mem.supersede(f["old"], f["new"])
        q = "Our model server is vLLM 0.6 behind nginx on the GPU box orca."
        ids = [m["id"] for m in mem.retrieve(q, "p", learn=False, until=T0 + 5 * DAY).memories]
        assert ids.index(f["new"]) < ids.index(f["old"])
        ids = [m["id"] for m in mem.retrieve(q, "p", learn=False, as_of=T0 + 5 * DAY).memories]
        assert f["new"] not in ids and f["old"] in ids


def test_forgetting_keeps_a_successor(tmp_path):
    """An isolated, idle, never-used successor meets the paper's three criteria; forgetting it would serve the
    old fact as current again, so it is kept (the old one may go)."""
    mem = _memory(str(tmp_path / "g.db"))
    with mem:
        f = _facts(mem)
        mem.add("p", "A much later note about something else.", time=T0 + 400 * DAY)   # the space's now moves on
        before = {c["id"] for c in mem.forget("p")["candidates"]}
        assert {f["old"], f["new"]} <= before
        mem.supersede(f["old"], f["new"])
        rep = mem.forget("p", apply=True)
        assert f["new"] not in {c["id"] for c in rep["candidates"]}
        assert mem.store.get_node(f["new"]) is not None and mem.store.get_node(f["old"]) is None


def test_memories_listing_carries_the_mark(tmp_path):
    mem = _memory(str(tmp_path / "m.db"))
    with mem:
        f = _facts(mem)
        assert "superseded_by" not in mem.memories("p")[0]   # no mark in the space: rows as before
        mem.supersede(f["old"], f["new"])
        rows = {r["id"]: r for r in mem.memories("p")}
        assert rows[f["old"]]["superseded_by"] == f["new"] and rows[f["new"]]["supersedes"] == [f["old"]]
