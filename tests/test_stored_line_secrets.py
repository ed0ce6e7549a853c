"""No piece of a secret survives a cut (issue 44): every kind of stored line of an agent session is built from
inputs holding each secret shape of the redaction corpus (``CORPUS``, tests/cases.py) at several offsets
around each line's cut limit, through the real paths (``hela ingest`` of a Claude Code session, a ``hela
hook Stop`` capture, the session gists and a ``hela hook SessionStart`` brief), and the stored bytes (the
database files, the hook log, the brief) are scanned for any 8-character run of each secret.

The lines and their cuts (hela_cli/text/session_lines.py): a tool call's line at 160 characters, a command in
its result line at 100, the first error line at 160, a commit's subject at 120, the user's answer at 400, a
kept tool output at ``tool_output_chars``, a gist's pieces at half the line width. The offsets, for each
limit: the secret at the start, ending just before the cut, 8 of its characters before the cut, its middle
on the cut, and at the end of a long input (cut away)."""

from __future__ import annotations

import functools
import json
import subprocess
import time
from pathlib import Path
from typing import Any, Iterable

import pytest

from hela_cli.formats import parse_file
from hela_cli.hooks.gist import gist_lines, session_gist
from hela_cli.text.redact import redact
from tests.reliability import PY, hela, hela_env
from tests.cases import CORPUS

TOOL_LINE, COMMAND, ERROR, SUBJECT, ANSWER, GIST = 160, 100, 160, 120, 400, 200
OUTPUT_HEAD = "Exit code 1\n"
ERROR_HEAD = "ERROR "
ANSWER_HEAD = 'User has answered your questions: "Which key?"="'
DECIDED = "We decided: "
SUBJECT_HEAD = "[main 1a2b000] "
KEEP_OUTPUT = len(OUTPUT_HEAD) + ERROR   # a kept tool output cut where the error line is cut
WHERE = ("start", "before", "straddle8", "straddle", "end")
MIN_FRAGMENT = 8

#: the corpus rows with a secret long enough to scan for (a 3-character password is not findable in bytes)
ROWS = [(text, tuple(s for s in secrets if len(s) >= MIN_FRAGMENT)) for text, secrets, _ in CORPUS
        if any(len(s) >= MIN_FRAGMENT for s in secrets)]
#: what the stored lines legitimately hold: each row redacted, after each head a line puts before it
_HEADS = ("", "[tool] Bash: ", "[result] `", "exit 1: ", "ERROR ", "[main 1a2b000] ", '"', "We decided: ",
          'User has answered your questions: "Which key?"="')
_CLEAN = "\n".join(head + redact(t) for text, _, _ in CORPUS for t in (text, " ".join(text.split()))
                   for head in _HEADS).lower()


def _filler(n: int, sep: str) -> str:
    """``n`` characters of harmless words ending in ``sep`` (a new line: the row starts a line, as in the
    corpus; a space where the line is one line)."""
    if n <= len(sep):
        return ""
    return ("step " * (n // 5 + 2))[:n - len(sep)].rstrip().ljust(n - len(sep), "p") + sep


def fragments(secrets: Iterable[str], clean: str) -> set[str]:
    """Every 8-character run of each secret, less those the redacted row itself keeps (its context) and
    those any redacted row keeps (``: postgr`` of one row's secret is ``image: postgres`` in another's)."""
    return {f for s in secrets for i in range(len(s) - MIN_FRAGMENT + 1)
            if (f := s[i:i + MIN_FRAGMENT]).lower() not in clean.lower() and f.lower() not in _CLEAN}


#: kind -> (the cut limit, the characters of the cut text before the input, the filler's separator)
KINDS = {"command": (COMMAND, 0, "\n"), "tool": (TOOL_LINE, len("[tool] Bash: "), "\n"),
         "error": (ERROR, len(ERROR_HEAD), " "), "subject": (SUBJECT, 0, " "),
         "answer": (ANSWER, len(ANSWER_HEAD), "\n"), "asked": (GIST, 0, "\n"),
         "decided": (GIST, len(DECIDED), " ")}


@functools.lru_cache(maxsize=None)
def placed(row: str, secrets: tuple[str, ...], kind: str, where: str) -> str | None:
    """``row`` inside filler so that its first secret lies ``where`` relative to the cut of ``kind``; None
    when it cannot lie there, or when the redaction of the whole input leaves a piece of a secret (a gap of
    the patterns in that context, not of a cut: the corpus tests hold the patterns)."""
    limit, lead, sep = KINDS[kind]
    frags = {row: fragments(secrets, redact(row))}
    if sep == " ":
        row = row.replace("\n", " ")
        secrets = tuple(s.replace("\n", " ") for s in secrets)
    k = row.find(secrets[0])
    last = limit - 1 - lead   # the characters a one-line cut keeps ("…" is the limit's last one)
    pos = {"start": 0, "before": last - (k + len(secrets[0])), "straddle8": last - MIN_FRAGMENT - k,
           "straddle": last - k - len(secrets[0]) // 2, "end": limit + 40}[where]
    if k < 0 or pos < 0 or 0 < pos <= len(sep):
        return None
    text = _filler(pos, sep) + row
    text += sep + _filler(max(limit + 60 - len(text), 12), sep).rstrip()
    head = {"error": ERROR_HEAD, "answer": ANSWER_HEAD, "decided": DECIDED, "subject": SUBJECT_HEAD}.get(kind, "")
    return None if leaks(redact(head + text), frags) else text


def leaks(blob: str | bytes, frags: dict[str, set[str]]) -> list[tuple[str, str]]:
    """``(row, fragment)`` for each fragment found in ``blob`` (case-insensitive: the keyword postings hold
    lowercased words). Every 8-byte window of a database of megabytes against thousands of fragments: as
    integers, looked up in the sorted fragments (numpy)."""
    import numpy as np

    data = (blob.encode("utf-8", "replace") if isinstance(blob, str) else blob).lower()
    by_code: dict[int, list[tuple[str, str]]] = {}
    rest = []
    for row, fs in frags.items():
        for f in fs:
            raw = f.lower().encode("utf-8")
            if len(raw) == MIN_FRAGMENT:
                by_code.setdefault(int.from_bytes(raw, "little"), []).append((row[:60], f))
            else:   # a fragment with a character beyond ASCII
                rest += [(row[:60], f)] if raw in data else []
    if len(data) < MIN_FRAGMENT or not by_code:
        return rest
    windows = np.ndarray((len(data) - MIN_FRAGMENT + 1,), dtype="<u8", buffer=data, strides=(1,))
    codes = np.array(sorted(by_code), dtype="<u8")
    at = np.minimum(np.searchsorted(codes, windows), len(codes) - 1)
    hits = np.unique(windows[codes[at] == windows])
    return rest + [x for c in hits.tolist() for x in by_code[int(c)]]


# ------------------------------------------------------------------------------------------ the session
def _records(session: str, root: str, rows: list[tuple[str, tuple[str, ...]]] = ROWS, every: bool = True
             ) -> tuple[list[dict[str, Any]], dict[str, set[str]]]:
    """A Claude Code session whose tool calls, results, commits and answers carry every row at every offset
    (``every``; else each row at one offset per kind, the offset turning with the row, the command's two
    limits taking turns: a seventh of the turns, for the paths that embed with the real model); also the
    fragments to look for, by row."""
    n = iter(range(1_000_000))

    def rec(kind: str, content: Any) -> dict[str, Any]:
        i = next(n)
        return {"type": kind, "sessionId": session, "uuid": f"{session}-u{i}", "cwd": root,
                "timestamp": f"2026-12-01T{10 + i // 3600 % 10:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z",
                "message": {"role": kind, "content": content}}

    def call(tid: str, name: str, inp: dict[str, Any], out: str, err: bool) -> list[dict[str, Any]]:
        return [rec("assistant", [{"type": "tool_use", "id": tid, "name": name, "input": inp}]),
                rec("user", [{"type": "tool_result", "tool_use_id": tid, "content": out, "is_error": err}])]

    records = [rec("user", "Release the api: run the release script and commit.")]
    frags: dict[str, set[str]] = {}
    for r, (row, secrets) in enumerate(rows):
        frags[row] = fragments(secrets, redact(row))

        def texts(kind: str, turn: int = 0) -> list[str]:
            every_offset = [t for w in WHERE if (t := placed(row, secrets, kind, w))]
            if every or not every_offset:
                return every_offset
            return [every_offset[(r + turn) % len(every_offset)]]

        commands = texts("command") + texts("tool", 1) if every else texts("command" if r % 2 else "tool", r // 2)
        outputs = texts("error", 2) or ["step failed"]
        for j, cmd in enumerate(commands):
            err = outputs[j % len(outputs)]
            records += call(f"b{r}-{j}", "Bash", {"command": cmd}, OUTPUT_HEAD + ERROR_HEAD + err, True)
        for j, subject in enumerate(texts("subject", 3)):
            records += call(f"c{r}-{j}", "Bash", {"command": f'git commit -am "release {r}-{j}"'},
                            f"{SUBJECT_HEAD}{subject}\n 1 file changed", False)
        for j, answer in enumerate(texts("answer", 4)):
            records += call(f"q{r}-{j}", "AskUserQuestion", {"questions": [{"question": "Which key?"}]},
                            f'{ANSWER_HEAD}{answer}".', False)
    return records, frags


def write_session(path: Path, session: str = "sess-secrets", root: str = "/srv/app", every: bool = True
                  ) -> dict[str, set[str]]:
    records, frags = _records(session, root, every=every)
    path.write_text("".join(json.dumps(x) + "\n" for x in records), encoding="utf-8")
    return frags


def as_codex(records: list[dict[str, Any]], root: str) -> list[dict[str, Any]]:
    """The same session as a Codex CLI rollout: ``exec_command`` calls whose output states the exit status
    (``Process exited with code N``), ``request_user_input`` for the question."""
    out: list[dict[str, Any]] = [{"timestamp": "2026-12-01T09:59:59Z", "type": "session_meta",
                                  "payload": {"id": "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000", "cwd": root}}]
    names: dict[str, str] = {}
    for x in records:
        content, when = x["message"]["content"], x["timestamp"]
        if isinstance(content, str):
            payload = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": content}]}
        elif content[0]["type"] == "tool_use":
            b = content[0]
            name = names[b["id"]] = "exec_command" if b["name"] == "Bash" else "request_user_input"
            args = {"cmd": b["input"]["command"]} if name == "exec_command" else b["input"]
            payload = {"type": "function_call", "name": name, "arguments": json.dumps(args), "call_id": b["id"]}
        else:
            b = content[0]
            text = b["content"]
            if names[b["tool_use_id"]] == "exec_command":
                text = (f"Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code {int(b['is_error'])}\n"
                        f"Original token count: 9\nOutput:\n{text}")
            payload = {"type": "function_call_output", "call_id": b["tool_use_id"], "output": text}
        out.append({"timestamp": when, "type": "response_item", "payload": payload})
    return out


def stored_bytes(folder: Path) -> bytes:
    """The bytes of every file under ``folder`` (the database, its WAL, the hook log)."""
    return b"\n".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


# ------------------------------------------------------------------------------------------ the tests
def test_the_inputs_cover_every_shape_and_offset():
    """Every corpus row with a findable secret is placed at every offset of every kind of line where it fits;
    a row the whole-text redaction misses in a kind's context (.env lines whose value holds ``;&(`` and a
    YAML block, once run into a line after other words) is left out of that kind only."""
    assert len(ROWS) >= 90
    for kind, (limit, lead, _) in KINDS.items():
        for where in WHERE:
            n = sum(placed(row, secrets, kind, where) is not None for row, secrets in ROWS)
            fits = sum(where != "before" or len(row) < limit - lead - 1 for row, _ in ROWS)
            assert n >= fits - 4, (kind, where, n, fits)
    records, frags = _records("s", "/srv/app")
    calls = sum(1 for x in records if isinstance(x["message"]["content"], list)
                and x["message"]["content"][0]["type"] == "tool_use")
    assert calls >= len(ROWS) * 15 and sum(bool(f) for f in frags.values()) >= len(ROWS) - 2


def test_every_line_as_ingest_and_a_capture_store_it(tmp_path):
    """Every row at every offset of every kind, in a Claude Code session and the same as a Codex rollout: the
    turns ``hela ingest`` stores (the parser, then the redaction of AI-assistant formats,
    ``ingest.tool_output_chars`` on) and those a hook's capture stores (``hooks.tool_outputs`` on)."""
    from hela_cli.config import Config
    from hela_cli.hooks.capture import transcript_turns
    from hela_cli.ingest.batch import redacted

    path = tmp_path / "session.jsonl"
    frags = write_session(path)
    rollout = tmp_path / "rollout-2026-12-01T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl"
    records, _ = _records("sess-secrets", "/srv/app")
    rollout.write_text("".join(json.dumps(x) + "\n" for x in as_codex(records, "/srv/app")), encoding="utf-8")
    cfg = Config()
    cfg.hooks.tool_outputs, cfg.hooks.line_chars = True, KEEP_OUTPUT
    for agent, fmt, f in (("claude-code", "claude_code", path), ("codex", "codex", rollout)):
        ingested = [t.text for c in redacted(parse_file(f, fmt, tool_output_chars=KEEP_OUTPUT), cfg)
                    for t in c.turns]
        captured = [t.text for t in transcript_turns(agent, f, "s", cfg)]
        assert len(ingested) > len(ROWS) * 35 and sum("\n[tool output] " in t for t in captured) > len(ROWS) * 10
        assert sum("exit 1: ERROR" in t for t in ingested) > len(ROWS) * 5, agent
        found = leaks("\n".join(ingested), frags) + leaks("\n".join(captured), frags)
        assert not found, f"{agent}: {len(found)} fragments stored, e.g. {found[:5]}"


def test_hela_ingest_of_a_claude_code_session_stores_no_piece_of_a_secret(tmp_path, model_dir_path):
    """``hela ingest`` (a real process, the default models): the database's bytes."""
    session = tmp_path / "in" / "session.jsonl"
    session.parent.mkdir()
    frags = write_session(session, every=False)
    data = tmp_path / "data"
    data.mkdir()
    env = hela_env(tmp_path, data / "hela.db", HELA_INGEST_TOOL_OUTPUT_CHARS=str(KEEP_OUTPUT))
    res = hela(["ingest", str(session), "--space", "code", "--json"], env, timeout=900)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["nodes_added"] > len(ROWS) * 5
    found = leaks(stored_bytes(data) + (res.stdout + res.stderr).encode(), frags)
    assert not found, f"{len(found)} fragments stored, e.g. {found[:5]}"


def _child_row(log: Path, pid: int, timeout: float = 900) -> dict[str, Any]:
    end = time.time() + timeout
    while time.time() < end:
        found = [r for line in log.read_text().splitlines() if (r := json.loads(line)).get("detached")
                 and r.get("pid") == pid]
        if found:
            return found[0]
        time.sleep(0.5)
    raise AssertionError(f"no log line of the detached child {pid}")


def test_hook_capture_and_session_start_brief_hold_no_piece_of_a_secret(tmp_path, model_dir_path):
    """``hela hook Stop`` captures the session (a real process), ``hela hook SessionStart`` briefs the next
    one from it (the gist, the memories relevant to the repository): the database's bytes, the hook log and
    the brief."""
    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    transcript = tmp_path / "t" / "session.jsonl"
    transcript.parent.mkdir()
    frags = write_session(transcript, root=str(proj), every=False)
    data = tmp_path / "data"
    data.mkdir()
    env = hela_env(tmp_path, data / "hela.db", HELA_HOOKS_BUDGET_S="600", HELA_HOOKS_CAPTURE_BUDGET_S="900",
                   HELA_HOOKS_CAPTURE_INLINE="1000000", HELA_HOOKS_TOOL_OUTPUTS="true",
                   HELA_HOOKS_LINE_CHARS=str(KEEP_OUTPUT))
    payload = {"session_id": "sess-secrets", "transcript_path": str(transcript), "cwd": str(proj),
               "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "done"}
    res = subprocess.run([PY, "-m", "hela_cli", "hook", "Stop", "--agent", "claude-code"],
                         input=json.dumps(payload).encode(), capture_output=True, env=env, cwd=str(proj), timeout=900)
    log = tmp_path / "home" / "hooks.log"
    row = json.loads(log.read_text().splitlines()[-1])
    if row.get("child"):   # past the agent's limit for Stop (a busy machine): a detached child captures
        row = _child_row(log, row["child"])
    assert res.returncode == 0 and row["result"] == "ok" and row["added"] > len(ROWS) * 5, (row, res.stderr)
    start = {**payload, "session_id": "sess-next", "hook_event_name": "SessionStart", "source": "startup"}
    brief = subprocess.run([PY, "-m", "hela_cli", "hook", "SessionStart", "--agent", "claude-code"],
                           input=json.dumps(start).encode(), capture_output=True, env=env, cwd=str(proj), timeout=600)
    assert brief.returncode == 0 and "Recent sessions:" in brief.stdout.decode(), brief.stderr
    found = leaks(stored_bytes(data) + log.read_bytes() + brief.stdout + brief.stderr, frags)
    assert not found, f"{len(found)} fragments stored, e.g. {found[:5]}"


def test_gists_cut_no_secret_in_two(tmp_path):
    """A session's gist (hooks/gist.py) cuts what it shows at half the line width: each piece (the task asked,
    a decision, a failing command with its error, a commit) is redacted whole before it is cut, also when the
    memories were stored without redaction (``--no-redact``)."""
    found: list[tuple[str, str]] = []
    shown_rows = 0
    for r, (row, secrets) in enumerate(ROWS):
        frags = {row: fragments(secrets, redact(row))}
        path = tmp_path / f"g{r}.jsonl"
        records, _ = _records(f"g{r}", "/srv/app", [(row, secrets)])
        path.write_text("".join(json.dumps(x) + "\n" for x in records), encoding="utf-8")
        [conv] = parse_file(path, "claude_code")   # the session's lines as parsed, not redacted
        lines = [{"id": 10 + i, "role": t.role, "speaker": t.speaker, "text": t.text, "date": "2026-12-01"}
                 for i, t in enumerate(conv.turns)]
        for w in WHERE:
            asked, said = placed(row, secrets, "asked", w), placed(row, secrets, "decided", w)
            rows = [{"id": 1, "role": "user", "speaker": "user", "text": asked, "date": "2026-12-01"}] if asked else []
            if said:
                rows.append({"id": 2, "role": "assistant", "speaker": "assistant", "text": DECIDED + said,
                             "date": "2026-12-01"})
            shown = "\n".join(gist_lines(session_gist(rows + lines, f"g{r}"), limit=2 * GIST))
            shown_rows += bool(rows)
            found += leaks(shown, frags)
    assert shown_rows >= len(ROWS) * 3
    assert not found, f"{len(found)} fragments shown, e.g. {found[:5]}"
