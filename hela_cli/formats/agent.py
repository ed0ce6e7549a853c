"""What the coding-agent transcript parsers share (``claude_code``, ``codex``, ``gemini``): a tool call as
one short line, a tool's output cut to ``Source.tool_output_chars``, the time of a record, and what a
session did, read without a model (:class:`SessionWork`). The lines themselves are written, cut (redacted
first) and read by :mod:`hela_cli.text.session_lines`:

* a file tool's call names its file relative to the project (the call's line names ``billing/api.py``);
  reads are kept as their line too (weak evidence: the recall by file never injects them);
* a command's result becomes one result line whatever ``tool_output_chars`` says: its exit status and, when
  it failed, its first error line;
* a ``git commit`` that succeeded: a commit line with its hash, subject and files, the files being those
  edited since the previous commit of the session;
* the user's answers to the agent's questions (Claude Code's ``AskUserQuestion`` arrives as a tool result):
  an answer line, a user turn (decisions are often made there);
* a turn that states a decision (``hela_cli.text.coding.is_decision``), answers the agent's question or is a
  command that failed, and does not name the files edited in its exchange (a user's prompt and everything up
  to the next one) gets the files tag appended.

The text of the memories is the index from a path to them: the recall by file asks for the memories whose
text holds the path (``Memory.memories(contains=...)``), so ``hela ingest``, ``hela copy``, export and
import keep it without a table of their own."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from hela_cli.formats.base import Turn, _Bad
from hela_cli.formats.chat_export import _time
from hela_cli.text.coding import (commit_message, commit_of, exit_status, is_commit_command, is_decision,
                                  patch_paths, relative_path)
from hela_cli.text.session_lines import (CHANGES, COMMAND_TOOLS, FILE_TOOLS, MAX_TAGGED_FILES,  # noqa: F401
                                         QUESTION_TOOLS, SHELL_PATCH, TOOL_LINE_CHARS, answer_line, call_line,
                                         commit_line, is_failed_command, is_tool_line, line_kind, result_line,
                                         tool_output_line, with_files)

# the argument that says what a call does, by the names the three agents give their tools' arguments
_MAIN_ARGS = ("command", "cmd", "file_path", "path", "absolute_path", "pattern", "query", "url", "prompt",
              "description", "notebook_path", "dir_path", "skill", "name")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def tool_line(name: str, args: Any) -> str:
    """A call's line (:func:`hela_cli.text.session_lines.call_line`): the tool's name and its main argument
    (the first of :data:`_MAIN_ARGS` it has, else its arguments as JSON)."""
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
    return call_line(name, shown)


def tool_output(text: str, limit: int) -> str:
    """A tool's output kept as a turn (``ingest.tool_output_chars`` > 0), cut at ``limit`` characters
    (:func:`hela_cli.text.session_lines.tool_output_line`); "" when outputs are dropped (``limit`` 0) or empty."""
    return tool_output_line(text, limit)


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
# the tool tables (FILE_TOOLS, COMMAND_TOOLS, QUESTION_TOOLS, CHANGES) live with the lines they classify
_PATH_ARGS = ("file_path", "notebook_path", "absolute_path", "path")
_LIST_ARGS = ("paths", "file_paths")


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
        """The call's one line (its name and main argument, paths relative to the project)."""
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
            return tool_line(name, SHELL_PATCH + ", ".join(self.rel(p) for _, p in touched))
        return tool_line(name, args)

    def result(self, call_id: Any, output: Any, is_error: bool | None = None) -> str:
        """The line a call's result becomes: a command's outcome, a commit, the user's answer; "" for the rest
        (a file tool's "updated" notice, a read's content, a search's hits)."""
        name, args = self._calls.get(str(call_id), ("", None)) if call_id is not None else ("", None)
        text = output if isinstance(output, str) else ""
        if name in QUESTION_TOOLS:
            return answer_line(text)
        command = command_of(name, args)
        if command is None:
            return ""
        code = exit_status(text, is_error)
        if code is None:
            return ""
        if code == 0 and is_commit_command(command):
            found = commit_of(text)
            subject = found[1] if found else commit_message(command)
            files, self._uncommitted = self._uncommitted, []
            return commit_line(found[0] if found else None, subject, files)
        return result_line(command, code, text)

    def bind(self, source_id: str) -> None:
        """The files changed by the calls seen since the last bind belong to the turn ``source_id``."""
        if self._pending:
            self.files.setdefault(source_id, []).extend(p for p in self._pending
                                                        if p not in self.files.get(source_id, []))
            self._pending = []

    def annotate(self, turns: list[Turn]) -> list[Turn]:
        """Each decision, answer or failed command that does not name the files changed in its exchange gets
        them appended (:func:`hela_cli.text.session_lines.with_files`)."""
        out = list(turns)
        start = 0
        for end in [i for i, t in enumerate(out) if _starts_exchange(t)][1:] + [len(out)]:
            files: list[str] = []
            for t in out[start:end]:
                files += [p for p in self.files.get(t.source_id or "", []) if p not in files]
            if files:
                for i in range(start, end):
                    t = out[i]
                    if (_is_statement(t) and (line_kind(t.text) == "answer" or is_decision(t.text))) \
                            or is_failed_command(t.text):
                        missing = [p for p in files if p not in t.text][:MAX_TAGGED_FILES]
                        if missing:
                            out[i] = replace(t, text=with_files(t.text, missing))
            start = end
        return out


def _starts_exchange(t: Turn) -> bool:
    return (t.role or "").lower() == "user" and not t.text.startswith(("[", "<"))


def _is_statement(t: Turn) -> bool:
    """A turn of words (the user's or the assistant's), not a call's line or a command's result."""
    return (t.role or "").lower() in ("user", "assistant") and not is_tool_line(t.text) \
        and line_kind(t.text) not in ("result", "commit")
