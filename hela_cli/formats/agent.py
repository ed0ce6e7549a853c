"""What the coding-agent transcript parsers share (``claude_code``, ``codex``, ``gemini``): a tool call as
one short line, a tool's output cut to ``Source.tool_output_chars``, the time of a record, and what a
session did, read without a model (:class:`SessionWork`):

* a file tool's call names its file relative to the project (``[tool] Edit: billing/api.py``); reads are
  kept as their line too (weak evidence: the recall by file never injects them);
* a command's result becomes one ``[result]`` turn whatever ``tool_output_chars`` says:
  ``[result] `pytest -x` exit 1: E   AssertionError: ...`` (the first error line) or ``... exit 0``;
* a ``git commit`` that succeeded: ``[result] commit 1a2b3c4 "subject" (files: a.py, b.py)``, the files
  being those edited since the previous commit of the session;
* the user's answers to the agent's questions (Claude Code's ``AskUserQuestion`` arrives as a tool result):
  ``[answer] ...``, a user turn (decisions are often made there);
* a turn that states a decision (``hela_cli.text.coding.is_decision``), answers the agent's question or is a
  command that failed, and does not name the files edited in its exchange (a user's prompt and everything up to the next one) gets ``[files: ...]`` appended.

The text of the memories is the index from a path to them: the recall by file asks for the memories whose
text holds the path (``Memory.memories(contains=...)``), so ``hela ingest``, ``hela copy``, export and
import keep it without a table of their own."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from hela_cli.formats.base import Turn, _Bad, _short
from hela_cli.formats.chat_export import _time
from hela_cli.text.coding import (commit_message, commit_of, exit_status, first_error_line, is_commit_command,
                                  is_decision, patch_paths, relative_path)
from hela_cli.text.content import TOOL_PREFIX

TOOL_LINE_CHARS = 160   # a tool call's line: "[tool] NAME: its short input", at most this long

# the argument that says what a call does, by the names the three agents give their tools' arguments
_MAIN_ARGS = ("command", "cmd", "file_path", "path", "absolute_path", "pattern", "query", "url", "prompt",
              "description", "notebook_path", "dir_path", "skill", "name")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def tool_line(name: str, args: Any) -> str:
    """``[tool] Bash: python3 --version``: the tool's name and its main argument (the first of
    :data:`_MAIN_ARGS` it has, else its arguments as JSON), on one line of at most ``TOOL_LINE_CHARS``."""
    if isinstance(args, str):   # Codex gives arguments as a JSON string
        try:
            args = json.loads(args)
        except ValueError:
            pass
    shown: str = ""
    if isinstance(args, dict):
        for key in _MAIN_ARGS:
            v = args.get(key)
            if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                v = " ".join(v)   # Codex's shell: {"command": ["bash", "-lc", "ls"]}
            if isinstance(v, str) and v.strip():
                shown = v
                break
        else:
            shown = json.dumps(args, ensure_ascii=False) if args else ""
    elif args is not None:
        shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    head = f"{TOOL_PREFIX}{name}"
    return _cut(f"{head}: {shown}" if shown.strip() else head, TOOL_LINE_CHARS)


def _cut(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters; a longer one is redacted before it is cut, whatever
    the redaction setting: a cut can split a secret into a piece no pattern finds any more (the line as a
    whole is redacted, or not, later like every turn)."""
    one = " ".join(text.split())
    if len(one) <= limit:
        return one
    from hela_cli.text.redact import redact

    return _short(redact(one), limit)


def tool_output(text: str, limit: int) -> str:
    """A tool's output kept as a turn (``ingest.tool_output_chars`` > 0): ``[tool output] ...`` cut at
    ``limit`` characters; "" when outputs are dropped (``limit`` 0) or empty."""
    text = text.strip()
    if limit <= 0 or not text:
        return ""
    if len(text) <= limit:
        return "[tool output] " + text
    from hela_cli.text.redact import redact   # before the cut, as in _cut

    return "[tool output] " + redact(text)[:limit].rstrip() + " …"


def without_reminders(text: str) -> str:
    """The text less the ``<system-reminder>`` blocks an agent injects into a user's message."""
    return _REMINDER.sub("", text).strip() if "<system-reminder>" in text else text.strip()


def record_time(obj: dict, key: str, place: str) -> tuple[float, str] | None:
    """The ISO 8601 time of a record, or None when it has none."""
    return _time(obj.get(key), place, key, iso_only=True)


def want_str(obj: dict, key: str, place: str) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or not v.strip():
        raise _Bad(place, f"missing {key!r}" if v is None else f"{key!r} must be a non-empty string")
    return v


# ------------------------------------------------------------------------------------------ what a session did
#: tool name -> what it does to a file (the three agents' names for their file tools)
FILE_TOOLS = {"Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit", "replace": "edit", "edit": "edit",
              "edit_file": "edit", "str_replace_based_edit_tool": "edit",
              "Write": "write", "write_file": "write", "create_file": "write",
              "apply_patch": "patch",
              "Read": "read", "read_file": "read", "read_many_files": "read", "NotebookRead": "read", "view": "read"}
COMMAND_TOOLS = frozenset({"Bash", "bash", "shell", "shell_command", "exec_command", "local_shell",
                           "run_shell_command", "container.exec"})
QUESTION_TOOLS = frozenset({"AskUserQuestion", "ask_user", "request_user_input"})
CHANGES = ("edit", "write", "patch")
RESULT_PREFIX, ANSWER_PREFIX, FILES_PREFIX = "[result] ", "[answer] ", "[files: "
_PATH_ARGS = ("file_path", "notebook_path", "absolute_path", "path")
_LIST_ARGS = ("paths", "file_paths")
ANSWER_CHARS = 400
MAX_TAGGED_FILES = 6


def _args_dict(args: Any) -> Any:
    if isinstance(args, str):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return args


def command_of(name: str, args: Any) -> str | None:
    """The shell command a command tool runs (Codex: a list of words), or None for other tools."""
    if name not in COMMAND_TOOLS:
        return None
    args = _args_dict(args)
    if isinstance(args, dict):
        v = args.get("command", args.get("cmd"))
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            v = v[-1] if len(v) >= 3 and v[1] in ("-lc", "-c") else " ".join(v)
        return v if isinstance(v, str) else None
    return args if isinstance(args, str) else None


def files_of(name: str, args: Any) -> list[tuple[str, str]]:
    """``(kind, path)`` of each file a tool call edits, writes, patches or reads (kind from
    :data:`FILE_TOOLS`; a shell command that applies a patch counts as ``patch``)."""
    args = _args_dict(args)
    kind = FILE_TOOLS.get(name)
    if kind == "patch" or (kind is None and name in COMMAND_TOOLS):
        text = args if isinstance(args, str) else ""
        if isinstance(args, dict):
            text = next((v for k in ("input", "patch", "command", "cmd") if isinstance(v := args.get(k), str)), "")
            if not text and isinstance(args.get("command"), list):
                text = " ".join(x for x in args["command"] if isinstance(x, str))
        if kind is None and "*** Begin Patch" not in text:
            return []
        return [("patch", p) for p in patch_paths(text)]
    if kind is None or not isinstance(args, dict):
        return []
    out = [(kind, args[k]) for k in _PATH_ARGS if isinstance(args.get(k), str) and args[k].strip()][:1]
    for k in _LIST_ARGS:
        if isinstance(args.get(k), list):
            out += [(kind, p) for p in args[k] if isinstance(p, str) and p.strip()]
    return out


class SessionWork:
    """What a transcript's tool calls did, fed in transcript order by a parser: :meth:`call` gives a call's
    line, :meth:`result` its result's line (or ""), :meth:`bind` ties the files edited by the calls since the
    last bind to the turn being emitted, :meth:`annotate` tags the decisions of the finished turns."""

    def __init__(self, root: str | None = None):
        self.root = root or None
        self._calls: dict[str, tuple[str, Any]] = {}
        self._uncommitted: list[str] = []      # edited since the last commit
        self._pending: list[str] = []          # edited by calls not bound to a turn yet
        self.files: dict[str, list[str]] = {}  # a turn's source id -> the files its calls changed

    def set_root(self, root: Any) -> None:
        if isinstance(root, str) and root.strip() and self.root is None:
            self.root = root.rstrip("/")

    def rel(self, path: str) -> str:
        return relative_path(path, self.root)

    def call(self, call_id: Any, name: str, args: Any) -> str:
        """The call's one line (``[tool] NAME: main argument``, paths relative to the project)."""
        args = _args_dict(args)
        if call_id is not None:
            self._calls[str(call_id)] = (name, args)
        touched = files_of(name, args)
        for kind, path in touched:
            if kind in CHANGES:
                p = self.rel(path)
                for lst in (self._uncommitted, self._pending):
                    if p not in lst:
                        lst.append(p)
        if isinstance(args, dict) and touched and FILE_TOOLS.get(name) not in (None, "patch"):
            shown = dict(args)
            for k in _PATH_ARGS:
                if isinstance(shown.get(k), str):
                    shown[k] = self.rel(shown[k])
            return tool_line(name, shown)
        if touched and FILE_TOOLS.get(name) == "patch":
            return tool_line(name, ", ".join(self.rel(p) for _, p in touched))
        if touched and name in COMMAND_TOOLS:   # a patch applied through the shell (Codex: apply_patch <<'EOF')
            return tool_line(name, "apply_patch " + ", ".join(self.rel(p) for _, p in touched))
        return tool_line(name, args)

    def result(self, call_id: Any, output: Any, is_error: bool | None = None) -> str:
        """The line a call's result becomes: a command's outcome, a commit, the user's answer; "" for the rest
        (a file tool's "updated" notice, a read's content, a search's hits)."""
        name, args = self._calls.get(str(call_id), ("", None)) if call_id is not None else ("", None)
        text = output if isinstance(output, str) else ""
        if name in QUESTION_TOOLS:
            answer = " ".join(text.split())
            return ANSWER_PREFIX + _short(answer, ANSWER_CHARS) if answer else ""
        command = command_of(name, args)
        if command is None:
            return ""
        code = exit_status(text, is_error)
        if code is None:
            return ""
        shown = _short(command, 100)
        if code == 0 and is_commit_command(command):
            found = commit_of(text)
            subject = found[1] if found else commit_message(command)
            files = ", ".join(self._uncommitted[:MAX_TAGGED_FILES]) + (" …" if len(self._uncommitted) > MAX_TAGGED_FILES else "")
            self._uncommitted = []
            head = f"{RESULT_PREFIX}commit {found[0][:7]}" if found else f"{RESULT_PREFIX}commit"
            return head + (f' "{_short(subject, 120)}"' if subject else "") + (f" (files: {files})" if files else "")
        if code == 0:
            return f"{RESULT_PREFIX}`{shown}` exit 0"
        err = first_error_line(text)
        return f"{RESULT_PREFIX}`{shown}` exit {code}" + (f": {err}" if err else "")

    def bind(self, source_id: str) -> None:
        """The files changed by the calls seen since the last bind belong to the turn ``source_id``."""
        if self._pending:
            self.files.setdefault(source_id, []).extend(p for p in self._pending
                                                        if p not in self.files.get(source_id, []))
            self._pending = []

    def annotate(self, turns: list[Turn]) -> list[Turn]:
        """Each decision, answer or failed command that does not name the files changed in its exchange gets
        ``[files: ...]``."""
        out = list(turns)
        start = 0
        for end in [i for i, t in enumerate(out) if _starts_exchange(t)][1:] + [len(out)]:
            files: list[str] = []
            for t in out[start:end]:
                files += [p for p in self.files.get(t.source_id or "", []) if p not in files]
            if files:
                for i in range(start, end):
                    t = out[i]
                    if (_is_statement(t) and (t.text.startswith(ANSWER_PREFIX) or is_decision(t.text))) \
                            or _is_failure(t):
                        missing = [p for p in files if p not in t.text][:MAX_TAGGED_FILES]
                        if missing:
                            out[i] = replace(t, text=f"{t.text}\n{FILES_PREFIX}{', '.join(missing)}]")
            start = end
        return out


def _is_failure(t: Turn) -> bool:
    """A command's result that failed (``[result] `cmd` exit N``, N != 0)."""
    return t.text.startswith(RESULT_PREFIX + "`") and not t.text.split("\n", 1)[0].endswith(" exit 0")


def _starts_exchange(t: Turn) -> bool:
    return (t.role or "").lower() == "user" and not t.text.startswith(("[", "<"))


def _is_statement(t: Turn) -> bool:
    """A turn of words (the user's or the assistant's), not a tool line or result."""
    return (t.role or "").lower() in ("user", "assistant") and not t.text.startswith(("[tool]", RESULT_PREFIX))
