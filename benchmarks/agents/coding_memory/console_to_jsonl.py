"""Rebuild the benchmark's transcripts from their public source: Claude Code console logs -> Claude Code JSONL.

    python benchmarks/agents/coding_memory/console_to_jsonl.py DAY-FILES... --out benchmarks/agents/coding_memory/data/bookminder

The BookMinder sessions (README.md names the repository, commit and licence) were published as the Claude
Code console's text (``day-NNN.md``: ``> `` a prompt, ``⏺`` an answer or a tool call, ``⎿`` a tool's output),
not as the JSONL Claude Code keeps. This script writes each console session as the JSONL records Claude Code
would have written, so that hela's own capture (``hela hook SessionEnd`` -> the ``claude_code`` parser) reads
them as it reads a live session:

* a prompt -> a ``user`` record with the text; an answer -> an ``assistant`` record with a ``text`` block;
* a tool call -> an ``assistant`` record with a ``tool_use`` block (``Bash`` -> ``command``, ``Update`` ->
  ``Edit`` with ``file_path`` and the diff the console showed as ``new_string``, ``Read`` / ``Write`` ->
  ``file_path``, ``Search`` -> ``Grep``, ``List`` -> ``LS``, ``Fetch`` -> ``WebFetch``, ``Task`` / ``Call``
  -> ``Task``), its output -> a ``user`` record with a ``tool_result`` block (``is_error`` when the console
  showed ``Error``), cut to ``--output-chars``;
* the record's ``uuid`` is ``<session>-L<line>``: the line of the console file where the block starts, so a
  question's gold evidence names lines a reader can open in the source;
* ``thinking`` blocks (``✻ Thinking…``) are left out (hela does not store them); a line ``claude`` (a new
  ``claude`` process in the same log) starts a new session;
* timestamps are synthetic: the session's date (``--dates``: the day file's commit date in the source
  repository) plus 20 seconds per record. Only their order matters to the benchmark;
* anything that looks like a secret is redacted with hela's own redaction (none was found in these logs).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

_TOOLS = {"Bash": ("Bash", "command"), "Update": ("Edit", "file_path"), "Edit": ("Edit", "file_path"),
          "Read": ("Read", "file_path"), "Write": ("Write", "file_path"), "Create": ("Write", "file_path"),
          "Search": ("Grep", "pattern"), "List": ("LS", "path"), "Fetch": ("WebFetch", "url"),
          "Task": ("Task", "description"), "Call": ("Task", "description")}
_TOOL_HEAD = re.compile(r"^⏺ (" + "|".join(_TOOLS) + r")\((.*)$")
_COST = re.compile(r"\s{2,}Cost: \$[\d.]+ \([\d.]+s\)\s*$")   # a later console's suffix on each answer line
CWD = "/Users/palimondo/Developer/BookMinder"   # the project folder the sessions ran in (their own paths)


def blocks(lines: list[str]) -> list[tuple[int, str, list[str]]]:
    """(first line number, kind, lines) for each block: ``user``, ``answer``, ``thinking``, ``start``."""
    out: list[tuple[int, str, list[str]]] = []
    for i, line in enumerate(lines, 1):
        line = _COST.sub("", line)
        if line.rstrip() == "claude":
            out.append((i, "start", []))
        elif line.startswith("> "):
            out.append((i, "user", [line[2:]]))
        elif line.startswith("⏺"):
            out.append((i, "answer", [line]))
        elif line.startswith("✻"):
            out.append((i, "thinking", [line]))
        elif line.startswith(("╭", "│", "╰", " ✔", " ※")):
            out.append((i, "chrome", []))
        elif out:
            out[-1][2].append(line)
    return out


def _dedent(lines: list[str]) -> str:
    return "\n".join(ln[2:] if ln.startswith("  ") else ln for ln in lines).strip()


def _tool(first: str, rest: list[str]) -> tuple[str, dict[str, str], str] | None:
    """(tool name, input, output) of an answer block that is a tool call, else None."""
    m = _TOOL_HEAD.match(first)
    if not m:
        return None
    name, key = _TOOLS[m.group(1)]
    head = [m.group(2)]
    body = list(rest)
    # a long call wraps over several lines before its output (``⎿``)
    while not head[-1].rstrip().endswith((")…", ")")) and body and "⎿" not in body[0]:
        head.append(body.pop(0).strip())
    arg = " ".join(h.strip() for h in head).rstrip()
    arg = arg[:-1] if arg.endswith("…") else arg
    arg = arg[:-1] if arg.endswith(")") else arg
    out_lines = [re.sub(r"^\s*⎿\s?\s?", "", ln, count=1) if "⎿" in ln[:8] else ln[5:] if ln.startswith("     ")
                 else ln.strip() for ln in body]
    output = "\n".join(out_lines).strip()
    for prefix in (f"{key}: ", "command: ", "file_path: ", "path: ", "pattern: "):   # the older console's form
        if arg.startswith(prefix) and name != "Grep":
            arg = arg[len(prefix):]
    if len(arg) > 1 and arg[0] == arg[-1] == '"':
        arg = arg[1:-1]
    inp = {key: arg}
    if name == "Edit":
        inp.update(old_string="", new_string="\n".join(out_lines[1:]).strip())
    return name, inp, output


def convert(path: Path, day: str, start: datetime, output_chars: int, redact) -> dict[str, list[dict]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    sessions: dict[str, list[dict]] = {}
    n_session, records, t = 0, None, start
    parent = None

    def session_id() -> str:
        return f"bookminder-day{day}" + (f"-{n_session}" if n_session > 1 else "")

    def emit(rec_type: str, uuid: str, content) -> None:
        nonlocal t, parent, records
        if records is None:
            new_session()
        rec = {"parentUuid": parent, "cwd": CWD, "sessionId": session_id(), "type": rec_type,
               "uuid": uuid,
               "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
               "message": {"role": rec_type, "content": content}}
        records.append(rec)
        parent, t = uuid, t + timedelta(seconds=20)

    def new_session() -> None:
        nonlocal n_session, records, parent, t
        n_session += 1
        records, parent = [], None
        sessions[session_id()] = records
        t = start + timedelta(hours=n_session - 1)

    for lineno, kind, body in blocks(lines):
        if kind == "start":
            if records:   # a second `claude` in the same log
                new_session()
            continue
        if kind in ("chrome", "thinking"):
            continue
        if records is None:
            new_session()
        sid = session_id()
        uuid = f"{sid}-L{lineno:05d}"
        if kind == "user":
            text = redact(_dedent(body))
            if text:
                emit("user", uuid, text)
            continue
        first, rest = body[0], body[1:]
        tool = _tool(first, rest)
        if tool is None:
            text = redact(_dedent([first[2:]] + rest))
            if text:
                emit("assistant", uuid, [{"type": "text", "text": text}])
            continue
        name, inp, output = tool
        inp = {k: redact(v) for k, v in inp.items()}
        tool_id = f"toolu_{sid}_{lineno}"
        emit("assistant", uuid, [{"type": "tool_use", "id": tool_id, "name": name, "input": inp}])
        if output:
            output = redact(output)
            cut = output if len(output) <= output_chars else output[:output_chars].rstrip() + " …"
            emit("user", f"{uuid}r", [{"type": "tool_result", "tool_use_id": tool_id, "content": cut,
                                       "is_error": output.startswith("Error")}])
    return sessions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--dates", required=True, help="comma-separated ISO dates, one per file")
    ap.add_argument("--output-chars", type=int, default=400)
    args = ap.parse_args()
    from hela_cli.text.redact import redact

    dates = args.dates.split(",")
    if len(dates) != len(args.files):
        sys.exit("--dates: one date per file")
    args.out.mkdir(parents=True, exist_ok=True)
    for path, date in zip(args.files, dates):
        day = re.search(r"(\d+)", path.stem).group(1)
        start = datetime.fromisoformat(date).replace(tzinfo=timezone.utc)
        for sid, recs in convert(path, day, start, args.output_chars, redact).items():
            (args.out / f"{sid}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs),
                                                   encoding="utf-8")
            print(f"{sid}: {len(recs)} records", file=sys.stderr)


if __name__ == "__main__":
    main()
