"""The coding agent's own CLI as hela's chat model (issue 46), with the real Claude Code, Codex CLI and Gemini
CLI binaries offline against the fake model APIs (tests/agents_support.py).

A Claude Code transcript is captured by ``hela hook Stop`` (as the agent would run it) with
``models.chat: agent:NAME``: the capture stores the turns inline, finds a hub that passed Eq.2 and a change
candidate the rules left ``possible``, and hands the model work to a detached child, which makes ONE batched
call through the agent's CLI. The records and the verdict it returns are stored with their evidence (the
verdict as detector ``judge`` with its reason); the nested session fires none of hela's hooks (installed in
that agent's user settings: the hook log holds only the capture's rows) and adds nothing to the database; no
process of the nested session is left. A malformed answer stores nothing (and is counted); the budget stops
the next call with one log line; a CLI past its time limit is killed with its whole process group.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.agents_support import (AGENTS_DIR, claude_env, codex_env, fake_gemini_api, fake_messages_api,
                                  fake_responses_api, gemini_env, hook_log, require_agent)
from tests.reliability import PY, hela_env

BINARY = {"claude-code": "claude", "codex": "codex", "gemini": "gemini"}
SID = "5d1e0c4a-7b7e-4a53-9a51-0d6f2f6d9a01"
SID2 = "8c0f3b2e-1d4a-4f6e-b2a7-3e9d5c1f0a02"
T0 = "2026-11-30T09:00:00.000Z"
TURNS = [
    ("user", "The API rate limit is 100 requests per minute for the public endpoints."),
    ("assistant", "Noted: the public endpoints allow 100 requests per minute, set in gateway/limits.py."),
    ("user", "The staging deploy target is the server kestrel, deployed with make deploy-staging."),
    ("assistant", "Understood: staging deploys go to kestrel through make deploy-staging."),
    ("user", "The API rate limit is 500 requests per minute for the public endpoints."),
    ("assistant", "Updated gateway/limits.py: the public endpoints now allow 500 requests per minute."),
]


def transcript(path: Path, turns: list[tuple[str, str]], start: int = 0, sid: str = SID) -> Path:
    """A Claude Code session transcript (JSONL) of ``turns``, one minute apart (appended to ``path``)."""
    lines = []
    for i, (role, text) in enumerate(turns, start):
        stamp = f"2026-11-30T09:{i:02d}:00.000Z"
        lines.append(json.dumps({"type": role, "uuid": f"u-{i:04d}", "parentUuid": f"u-{i - 1:04d}" if i else None,
                                 "sessionId": sid, "timestamp": stamp, "cwd": str(path.parent),
                                 "message": {"role": role, "content": text if role == "user" else
                                             [{"type": "text", "text": text}]}}))
    with path.open("a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return []


def batch_answer(body: dict[str, Any]) -> str:
    """The scripted model's batch answer (a simulation of a model, not one): for each cluster a fact taken
    from its hub's own line, for each pair a reasoned verdict (``replaces`` for the rate limit)."""
    text = "\n".join(_strings(body))
    clusters = []
    for hub in dict.fromkeys(int(h) for h in re.findall(r"Cluster hub=(\d+):", text)):
        line = re.search(rf"^\[{hub}\] \([^)]*\) \w+: (.+)$", text, re.M)
        words = (line.group(1) if line else "").split()[:10]
        clusters.append({"hub": hub, "reasoning": "The hub's memory states a project setting.",
                         "facts": [{"subject": "project", "text": " ".join(words), "date": "", "evidence": [hub]}],
                         "traits": [], "knowledge": []})
    changes = []
    for old, new in dict.fromkeys(re.findall(r"Pair (\d+)>(\d+):", text)):
        earlier = re.search(rf"EARLIER \[{old}\][^\n]*", text)
        rate = earlier is not None and "100 requests" in earlier.group(0)
        changes.append({"pair": f"{old}>{new}",
                        "reasoning": "The later memory gives a new value for the same rate limit." if rate else
                        "The later memory is about something else.",
                        "verdict": "replaces" if rate else "no", "evidence": [int(old), int(new)]})
    return json.dumps({"clusters": clusters, "changes": changes})


FAKES = {"claude-code": (fake_messages_api, lambda home, api: claude_env(home, api)),
         "codex": (fake_responses_api, lambda home, api: codex_env(home, api)),
         "gemini": (fake_gemini_api, lambda home, api: gemini_env(home, api))}


class World:
    """A project, hela's environment and one agent's (HOME with its settings and hela's hooks installed
    at user scope, the fake API it talks to)."""

    def __init__(self, tmp: Path, agent: str, api: Any, **hela_vars: str):
        self.tmp, self.agent, self.api = tmp, agent, api
        self.proj = tmp / "shop"
        self.proj.mkdir()
        subprocess.run(["git", "init", "-q", str(self.proj)], check=True)
        self.db = tmp / "hela.db"
        self.home = tmp / "agent-home"
        env = FAKES[agent][1](self.home, api)
        hela = hela_env(tmp, self.db, HELA_MODELS_CHAT=f"agent:{agent}", HELA_CONSOLIDATION_DELTA_HUB="0.01",
                        HELA_SUPERSESSION_MIN_SIMILARITY="-1", HELA_HOOKS_CAPTURE_BUDGET_S="120",
                        HELA_HOOKS_PROMPT_MIN_SCORE="0", HELA_HOOKS_BUDGET_S="60",
                        # the recall of the next session learns at the prompt (Eq.1 over what it injected) so
                        # that a hub forms: the default learns only from a reply's echo (issue 52)
                        **{"HELA_MODELS_TIMEOUT": "120", "HELA_HOOKS_LEARN_INJECTED": "true", **hela_vars})
        env.update({k: v for k, v in hela.items() if k.startswith(("HELA_", "PYTHON"))})
        env["PATH"] = f"{AGENTS_DIR / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}"
        self.env = env
        # hela's hooks in the agent's own user settings: a nested session that fired them would log rows
        res = subprocess.run([PY, "-m", "hela_cli", "hooks", "install", agent, "--scope", "user", "--json"],
                             cwd=str(self.proj), env=env, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        self.transcript = self.proj / "session.jsonl"

    @property
    def log(self) -> list[dict[str, Any]]:
        return hook_log(self.tmp / "home")

    def hook(self, event: str, sid: str = SID, **payload: str) -> subprocess.CompletedProcess:
        """``hela hook EVENT`` of a Claude Code session, as the agent runs it."""
        path = self.transcript if sid == SID else self.transcript.with_name(f"{sid}.jsonl")
        payload = {"session_id": sid, "transcript_path": str(path), "cwd": str(self.proj),
                   "hook_event_name": event, **payload}
        return subprocess.run([PY, "-m", "hela_cli", "hook", event, "--agent", "claude-code"],
                              input=json.dumps(payload), env=self.env, cwd=str(self.proj), capture_output=True,
                              text=True, timeout=180)

    def stop(self, sid: str = SID) -> subprocess.CompletedProcess:
        return self.hook("Stop", sid)

    def wait_child(self, n: int = 1, timeout: float = 240) -> list[dict[str, Any]]:
        """The rows of the first ``n`` detached children that did model work (or stopped)."""
        end = time.time() + timeout
        while True:
            rows = [r for r in self.log if r.get("detached") and r.get("role") == "capture"]
            if len(rows) >= n or time.time() > end:
                return rows
            time.sleep(0.5)

    def rows(self, sql: str, *args: Any) -> list[tuple]:
        with sqlite3.connect(self.db) as con:
            return con.execute(sql, args).fetchall()


def nested_processes() -> list[int]:
    """Processes whose environment carries ``HELA_NESTED=1`` (a nested agent session and its children)."""
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if b"HELA_NESTED=1" in (p / "environ").read_bytes().split(b"\0"):
                out.append(int(p.name))
        except OSError:
            continue
    return out


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return "?"


def _run(tmp_path: Path, agent: str, reply: str | Callable[[dict[str, Any]], str], **hela_vars: str) -> World:
    require_agent(BINARY[agent])
    with FAKES[agent][0](reply) as api:
        w = World(tmp_path, agent, api, **hela_vars)
        before = nested_processes()
        # a session states the rate limit and the deploy target; a prompt of the next session recalls them and
        # learns (Eq.1: a hub forms); that session changes the rate limit: its capture has a hub and a change
        transcript(w.transcript, TURNS[:4])
        assert w.stop().returncode == 0
        res = w.hook("UserPromptSubmit", SID2, prompt="What is the API rate limit of the public endpoints?")
        assert res.returncode == 0 and "100 requests" in res.stdout, res.stdout
        assert not [r for r in w.log if r.get("model_child")]   # nothing earned a call yet
        transcript(w.transcript.with_name(f"{SID2}.jsonl"), TURNS[4:], start=4, sid=SID2)
        res = w.stop(SID2)   # a hub and one pair: less than a full batch in the middle of a session, no call yet
        assert res.returncode == 0 and res.stdout == "", res.stderr
        assert not [r for r in w.log if r.get("model_child") or r.get("detached")], w.log
        res = w.hook("SessionEnd", SID2)   # the session's end: what is pending earns the call
        assert res.returncode == 0 and res.stdout == "", res.stderr
        w.children = w.wait_child()
        end = time.time() + 5   # a process killed as the child exited may still be tearing down
        while [p for p in nested_processes() if p not in before] and time.time() < end:
            time.sleep(0.2)
        w.leftover = [(p, _cmdline(p)) for p in nested_processes() if p not in before]
        w.requests = api.messages()
    return w


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_a_capture_makes_one_batched_call_and_stores_what_it_returns(tmp_path, agent):
    w = _run(tmp_path, agent, batch_answer)
    inline = [r for r in w.log if r.get("role") == "capture" and not r.get("detached")]
    # SessionEnd: Claude Code allows it 1.5 s, so a child captures ("timeout" + child on a busy machine)
    assert [r["result"] for r in inline][:2] == ["ok", "ok"] and inline[1]["added"] == 2
    assert inline[2]["result"] in ("detached", "timeout") and inline[2]["child"], inline
    assert len(w.children) == 1 and w.children[0]["event"] == "SessionEnd", w.log
    child = w.children[0]["model"]
    # ONE call for all the work: the hubs and the undecided change together
    assert child["calls"] == 1 and child["hubs"] >= 1 and child["changes"] >= 1 and not child["dropped"], child
    batch = [b for b in w.requests if "Cluster hub=" in "\n".join(_strings(b))]
    assert len(batch) == 1 and "Pair " in "\n".join(_strings(batch[0]))
    if agent == "claude-code":   # no tools at all, hela's system prompt instead of the agent's
        assert not batch[0].get("tools") and "long-term memory" in json.dumps(batch[0]["system"])
    # the records, each with its evidence (the hub's own memory)
    recs = w.rows("SELECT s.id, s.text, group_concat(e.node_id) FROM semantic s JOIN semantic_evidence e "
                  "ON e.semantic_id = s.id GROUP BY s.id")
    assert len(recs) == child["records"] >= 1
    texts = dict(w.rows("SELECT id, text FROM nodes"))
    for _, text, ev in recs:
        assert all(int(e) in texts for e in ev.split(",")) and text.split()[0] in " ".join(texts.values())
    # the verdict: detector judge, with its reason; the rules' "possible" mark is decided
    marks = w.rows("SELECT old_id, new_id, status, detector, reason FROM supersessions")
    judged = [m for m in marks if m[3] == "judge"]
    assert judged and all(m[2] == "superseded" and "rate limit" in m[4] for m in judged), marks
    assert "100 requests" in texts[judged[0][0]] and "500 requests" in texts[judged[0][1]]
    assert not [m for m in marks if m[2] == "possible" and m[3] != "judge"]
    # the nested session: no hook of hela's fired in it, nothing of it stored, no process of it left
    assert {(r.get("agent"), r.get("event")) for r in w.log} <= {
        ("claude-code", "Stop"), ("claude-code", "UserPromptSubmit"), ("claude-code", "SessionEnd")}, w.log
    assert len(texts) == len(TURNS) and not [t for t in texts.values() if "CLUSTERS" in t or "Pair " in t]
    assert w.leftover == []
    # hela hooks status shows spent / cap
    st = subprocess.run([PY, "-m", "hela_cli", "hooks", "status", "--json"], env=w.env, capture_output=True,
                        text=True, timeout=120)
    row = next(b for b in json.loads(st.stdout)["agent_budget"] if b["agent"] == agent)
    assert row["calls"] == 1 and row["tokens"] > 0 and row["cap_calls"] == 24 and row["configured"]


def test_hela_judge_runs_the_batch_now_through_the_agent(tmp_path):
    """``hela judge``: the same batch, now, from the command line (the hooks' model work off): ONE call
    through the real CLI, each verdict printed with its reason, the tokens and today's budget; with the
    budget spent, one line and exit 3, no call."""
    require_agent("claude")
    with fake_messages_api(batch_answer) as api:
        w = World(tmp_path, "claude-code", api, HELA_HOOKS_MODEL_WORK="off")
        transcript(w.transcript, TURNS[:4])
        assert w.stop().returncode == 0
        assert w.hook("UserPromptSubmit", SID2, prompt="What is the API rate limit of the public endpoints?"
                      ).returncode == 0
        transcript(w.transcript.with_name(f"{SID2}.jsonl"), TURNS[4:], start=4, sid=SID2)
        assert w.stop(SID2).returncode == 0   # captured inline (Stop's budget): the marks are written
        assert [r.get("added") for r in w.log if r.get("role") == "capture"] == [4, 2], w.log
        assert not [r for r in w.log if r.get("model_child")] and api.messages() == []
        res = subprocess.run([PY, "-m", "hela_cli", "judge"], env=w.env, cwd=str(w.proj), capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        out = " ".join(res.stdout.split())
        assert len(api.messages()) == 1 and re.search(r"#\d+ > #\d+: replaces -> superseded", out), out
        assert "The later memory gives a new value for the same rate limit." in out
        assert "1 call to agent:claude-code" in out and "today 1 of 24 calls" in out
        assert re.search(r"\d+ input \+ \d+ output tokens", out)
        marks = w.rows("SELECT status, detector FROM supersessions WHERE detector = 'judge'")
        assert marks and all(m[0] == "superseded" for m in marks)
        spent = {**w.env, "HELA_MODELS_AGENT_BUDGET": "1 calls, 100000 tokens"}
        res = subprocess.run([PY, "-m", "hela_cli", "judge"], env=spent, cwd=str(w.proj), capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 3 and "today's budget is spent (1 of 1 calls" in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and len(api.messages()) == 1


def test_a_malformed_answer_stores_nothing(tmp_path):
    w = _run(tmp_path, "claude-code", "Sure! Here is what I think: the rate limit changed.")
    child = w.children[0]["model"]
    assert child["calls"] == 1 and child["dropped"] is True
    assert w.rows("SELECT count(*) FROM semantic") == [(0,)]
    assert not w.rows("SELECT * FROM supersessions WHERE detector = 'judge'")
    assert w.rows("SELECT count(*) FROM supersessions WHERE status = 'possible'")[0][0] >= 1   # still undecided
    ledger = json.loads((tmp_path / "home" / "agent" / "usage.json").read_text())
    assert next(iter(ledger.values()))["claude-code"]["dropped"] == 1


def test_the_budget_stops_the_next_call(tmp_path):
    # every answer dropped: the work stays pending, so each later capture would call again
    w = _run(tmp_path, "claude-code", "not json", HELA_MODELS_AGENT_BUDGET="1 calls, 100000 tokens")
    assert w.children[0]["model"]["calls"] == 1 and len(w.requests) == 1
    with fake_messages_api("not json") as api:
        w.env["ANTHROPIC_BASE_URL"] = api.url
        for i, turn in enumerate([("user", "The API rate limit is 800 requests per minute for the public endpoints."),
                                  ("user", "The staging deploy target is the server osprey now.")]):
            transcript(w.transcript.with_name(f"{SID2}.jsonl"), [turn], start=6 + i, sid=SID2)
            assert w.hook("SessionEnd", SID2).returncode == 0
            assert len(w.wait_child(2 + i)) == 2 + i
        assert api.messages() == []   # the budget stopped the next calls
    later = w.wait_child(3)[1:]
    assert [r["added"] for r in later] == [1, 1] and all("budget is spent" in r["model"]["error"] for r in later)
    capped = [r for r in w.log if r.get("event") == "agent-budget"]
    assert len(capped) == 1 and capped[0]["result"] == "capped" and "1 of 1 calls" in capped[0]["detail"]
    st = subprocess.run([PY, "-m", "hela_cli", "hooks", "status"], env=w.env, capture_output=True, text=True,
                        timeout=120)
    assert "1 / 1" in st.stdout, st.stdout


def test_a_call_past_its_time_limit_is_killed_with_its_process_group(tmp_path):
    def slow(body: dict[str, Any]) -> str:
        time.sleep(40)
        return "{}"

    w = _run(tmp_path, "claude-code", slow, HELA_MODELS_TIMEOUT="4")
    child = w.children[0]["model"]
    assert "no answer within 4 s" in child["error"], child
    assert w.leftover == []
    assert not w.rows("SELECT * FROM supersessions WHERE detector = 'judge'")


def test_a_nested_session_runs_no_hook(tmp_path):
    """``HELA_NESTED=1`` (set in every session hela starts for a model call): ``hela hook`` exits at once,
    prints nothing, logs nothing, opens no database."""
    path = transcript(tmp_path / "s.jsonl", TURNS)
    env = hela_env(tmp_path, tmp_path / "hela.db", HELA_NESTED="1")
    for event, extra in (("SessionStart", {}), ("UserPromptSubmit", {"prompt": "What is the API rate limit?"}),
                         ("Stop", {}), ("SessionEnd", {})):
        res = subprocess.run([PY, "-m", "hela_cli", "hook", event, "--agent", "claude-code"], env=env,
                             input=json.dumps({"session_id": SID, "transcript_path": str(path), "cwd": str(tmp_path),
                                               **extra}), capture_output=True, text=True, timeout=60)
        assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert not (tmp_path / "hela.db").exists() and hook_log(tmp_path / "home") == []
