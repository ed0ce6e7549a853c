"""Once per session, atomically (issue 44 item 4): hooks of one agent session that run at once never inject
the same memory, and the record of what a session was shown is one database's and one space's (real
``hela hook`` processes on a real database)."""

from __future__ import annotations

import json
import shutil
import subprocess

from hela_cli.config import Config
from hela_cli.memory import Memory
from tests.hooks_support import base, context_of, hook, project  # noqa: F401 - the fixture
from tests.reliability import PY

SAID = ["We keep the staging port in deploy/ports.yaml because the ingress reads it from there.",
        "We decided deploy/ports.yaml lists every port, so the firewall rules are generated from it.",
        "Never hand-edit deploy/ports.yaml on the box: the release job overwrites it.",
        "We chose to keep the metrics port out of deploy/ports.yaml because it is internal only."]


def _with_decisions(project, embedder, db=None) -> None:
    with Memory(Config(db=str(db or project["db"])), embedder=embedder) as mem:
        mem.add_many(project["space"], [{"speaker": "user", "text": t, "session": "earlier-session",
                                         "id": f"p{i}", "time": f"2026-11-05 1{i}:00"} for i, t in enumerate(SAID)])


def _edit(project, session: str) -> dict:
    return base(project, "PreToolUse", session_id=session, tool_name="Edit",
                tool_input={"file_path": str(project["dir"] / "deploy" / "ports.yaml")})


def _ids(text: str) -> list[int]:
    return [int(w.split("]")[0].split()[0]) for w in text.split("[#")[1:]]


def test_parallel_hooks_of_one_session_never_inject_a_memory_twice(project, embedder):
    """Four ``PreToolUse`` hooks of one session, started together and given their payload at the same
    moment (an agent running tools in parallel): no memory is shown twice, and when all four finish, what
    one hook alone shows is shown once in all. (On a machine so loaded that a hook reaches the agent's limit,
    that hook prints nothing: it still may not show a memory another one showed.)"""
    _with_decisions(project, embedder)
    res, _ = hook(project, "PreToolUse", _edit(project, "sess-alone"))
    alone = _ids(context_of(res, "PreToolUse"))
    assert len(alone) >= 2
    finished = []
    for round_ in range(3):   # each round a new session: three chances for the hooks to overlap
        session = f"sess-parallel-{round_}"
        data = json.dumps(_edit(project, session)).encode()
        procs = [subprocess.Popen([PY, "-m", "hela_cli", "hook", "PreToolUse", "--agent", "claude-code"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=project["env"], cwd=str(project["dir"])) for _ in range(4)]
        for p in procs:   # all started (each blocks on its stdin), then all given the payload at once
            p.stdin.write(data)
        for p in procs:
            p.stdin.close()
        shown: list[int] = []
        for p in procs:
            out, err = p.stdout.read(), p.stderr.read()   # a few bytes each: no pipe fills
            assert p.wait(timeout=120) == 0 and b"Traceback" not in err, err
            if out.strip():
                shown += _ids(json.loads(out)["hookSpecificOutput"]["additionalContext"])
        rows = [json.loads(line) for line in (project["home"] / "hooks.log").read_text().splitlines()]
        results = [r["result"] for r in rows if r.get("session") == session]
        assert len(results) == 4 and set(results) <= {"ok", "empty", "timeout"}, results
        assert len(shown) == len(set(shown)) and set(shown) <= set(alone), (round_, shown, alone)
        if "timeout" not in results:
            assert sorted(shown) == sorted(alone), (round_, shown, alone)
        finished.append(4 - results.count("timeout"))
    assert max(finished) >= 2, f"hooks finished per round: {finished} (the machine is too loaded to overlap them)"


def test_the_record_is_one_databases_and_one_spaces(project, embedder, tmp_path, monkeypatch):
    """The same session id on a second database whose memories have the same ids (a copy): its memories
    are shown there too. Before, the record was keyed by the session id alone and hid them."""
    _with_decisions(project, embedder)
    twin = tmp_path / "twin.db"
    shutil.copy(project["db"], twin)
    payload = _edit(project, "sess-same-id")
    res, lines = hook(project, "PreToolUse", payload)
    first = context_of(res, "PreToolUse")
    assert "deploy/ports.yaml" in first and lines[-1]["memories"], lines
    res, lines = hook(project, "PreToolUse", payload)   # the same session and database: shown already
    assert res.stdout.strip() == b"" and lines[-1]["result"] == "empty", lines
    res, lines = hook(project, "PreToolUse", payload, env={**project["env"], "HELA_DB": str(twin)})
    assert context_of(res, "PreToolUse") == first, lines
    # and one space's record is not another's (in-process: the same ids in two spaces, two databases)
    from hela_cli.hooks import injected

    monkeypatch.setenv("HELA_HOME", project["env"]["HELA_HOME"])
    injected.remember(str(project["db"]), "space-a", "sess-x", [1, 2])
    assert injected.already(str(project["db"]), "space-a", "sess-x") == {1, 2}
    assert injected.already(str(project["db"]), "space-b", "sess-x") == set()
    assert injected.already(str(twin), "space-a", "sess-x") == set()
    injected.forget(str(project["db"]), "space-a", "sess-x")
    assert injected.already(str(project["db"]), "space-a", "sess-x") == set()
