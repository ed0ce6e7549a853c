"""The stored lines of a coding agent's session, in one place: how each is written, read back and classified.

What a session did is stored as short lines of text (the parsers of formats/ write them through
:class:`hela_cli.formats.agent.SessionWork`; the hooks read them back):

* a tool call: ``[tool] NAME: its main input`` (:func:`call_line`, at most :data:`TOOL_LINE_CHARS`);
* a command's outcome: ``[result] `cmd` exit 1: the first error line`` or ``[result] `cmd` exit 0``
  (:func:`result_line`: the command cut at :data:`COMMAND_CHARS`, the error line at :data:`ERROR_CHARS`);
* a commit: ``[result] commit 1a2b3c4 "subject" (files: a.py, b.py)`` (:func:`commit_line`, the subject cut
  at :data:`SUBJECT_CHARS`);
* the user's answer to the agent's question: ``[answer] ...`` (:func:`answer_line`, :data:`ANSWER_CHARS`);
* a tool's output, when kept: ``[tool output] ...`` (:func:`tool_output_line`);
* the files a decision, an answer or a failure is about, appended: ``\\n[files: a.py, b.py]``
  (:func:`with_files`).

Every cut goes through :func:`cut`, which redacts the whole text (:func:`hela_cli.text.redact.redact`) before
it cuts, whatever the redaction setting: a cut can split a secret into a piece no pattern finds any more, and
the line as a whole is redacted (or not) later like every turn. A redaction marker is never cut in half.
Choosing a part of a text (an output's first error line, the sentences that state a decision) is a cut too:
:func:`picked`.

The readers: :func:`line_kind` (which line a text is), :func:`command_result`, :func:`commit_text`,
:func:`changed_paths`, :func:`answer_text`, :func:`without_files`; the classifiers the hooks filter with:
:func:`is_tool_line`, :func:`is_passed_command`, :func:`is_failed_command`, :func:`capture_kind` (what the
capture keeps) and :func:`file_memory_kind` (what the recall by file shows). Pure functions."""

from __future__ import annotations

import re
from typing import Callable

from hela_cli.text.coding import decision_sentences, first_error_line, is_decision
from hela_cli.text.content import is_content_free

TOOL_PREFIX = "[tool] "
RESULT_PREFIX = "[result] "
ANSWER_PREFIX = "[answer] "
TOOL_OUTPUT_PREFIX = "[tool output] "
FILES_PREFIX = "[files: "
_COMMIT_HEAD = RESULT_PREFIX + "commit"

TOOL_LINE_CHARS = 160   # a tool call's line, whole
COMMAND_CHARS = 100     # a command in its result's line
ERROR_CHARS = 160       # a command's first error line
SUBJECT_CHARS = 120     # a commit's subject
ANSWER_CHARS = 400      # the user's answer
MAX_TAGGED_FILES = 6    # files named in a commit's line or a [files: ...] tag

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
SHELL_PATCH = "apply_patch "   # a patch applied through the shell: "[tool] shell: apply_patch a.py, b.py"
_ANSWER_PREAMBLE = "User has answered your questions: "   # Claude Code's words before the answers

_MARKED = re.compile(r"\[REDACTED:[a-z0-9-]+\]")   # hela_cli.text.redact.MARK (not imported: the prompt hook's path)
_RESULT = re.compile(r"^" + re.escape(RESULT_PREFIX) + r"`(.+)` exit (-?\d+)(?:: (.*))?$", re.S)
_COMMIT = re.compile(r"^" + re.escape(_COMMIT_HEAD) + r"\b(.*)$", re.S)
_FILES_TAG = re.compile(r"\n" + re.escape(FILES_PREFIX) + r"[^\]]*\]$")


# ------------------------------------------------------------------------------------------ the one cut
def cut(text: str, limit: int, *, flat: bool = True, tail: str = "…", stored: bool = False) -> str:
    """``text`` in at most ``limit`` characters, ``tail`` ending one that was cut. ``flat``: on one line (runs
    of whitespace as one space); else as it is (its ends stripped).

    Nothing is cut, and no line break removed, before the whole text is redacted: a secret the limit falls
    inside is replaced first (a ``[REDACTED:kind]`` marker the limit falls inside goes whole), and so is one
    that only its lines show (an ``.env`` line, a YAML block). A one-line text that fits comes back
    unredacted (the stored turn is redacted, or not, as configured). ``stored``: the text of a memory
    already stored, shown (the injected context): the store's redaction applied when it was written (or was
    opted out of), so it is not redacted again (a few milliseconds a line on the prompt hook's path), only
    its markers are kept whole."""
    shown = " ".join(text.split()) if flat else text.strip()
    if len(shown) <= limit and (stored or not (flat and ("\n" in text or "\r" in text))):
        return shown
    if stored:
        return _cut_at(shown, limit, tail)
    from hela_cli.text.redact import redact

    whole = redact(text)
    shown = " ".join(whole.split()) if flat else whole.strip()
    if flat and shown != whole:
        shown = redact(shown)   # words a line break kept apart (``--password`` and its value) meet here
    return shown if len(shown) <= limit else _cut_at(shown, limit, tail)


def _cut_at(shown: str, limit: int, tail: str) -> str:
    """``shown`` cut to ``limit`` characters with ``tail``; a redaction marker the cut falls inside goes whole."""
    end = max(limit - len(tail), 0)
    for m in _MARKED.finditer(shown, max(0, end - 40)):
        if m.start() < end < m.end():
            end = m.start()
            break
    return shown[:end].rstrip() + tail


def picked(text: str, pick: Callable[[str], str]) -> str:
    """What ``pick`` keeps of ``text`` (a line of an output, the sentences that state a decision): choosing a
    part is a cut too, so when the part is less than the whole, it is chosen from the text redacted whole."""
    part = pick(text)
    if " ".join(part.split()) == " ".join(text.split()):
        return part
    from hela_cli.text.redact import redact

    return pick(redact(text))


def decisions_said(text: str, limit: int = 3) -> str:
    """The sentences of ``text`` that state a decision (:func:`hela_cli.text.coding.decision_sentences`, at most
    ``limit``), through :func:`picked`; "" when none does."""
    return picked(text, lambda t: " ".join(decision_sentences(t, limit=limit)))


# ------------------------------------------------------------------------------------------ writing
def call_line(name: str, shown: str = "") -> str:
    """``[tool] Bash: pytest -x``: a call's name and its main input (``shown``), at most TOOL_LINE_CHARS."""
    head = f"{TOOL_PREFIX}{name}"
    if not shown.strip():
        return cut(head, TOOL_LINE_CHARS)
    if len(head) > TOOL_LINE_CHARS // 2:
        return cut(f"{head}: {shown}", TOOL_LINE_CHARS)
    return f"{head}: {cut(shown, TOOL_LINE_CHARS - len(head) - 2)}"   # the input redacted as its own lines


def error_line(output: str) -> str:
    """The first line of a command's output that reads as an error (:func:`hela_cli.text.coding.first_error_line`),
    picked from the output redacted whole (:func:`picked`), cut at ERROR_CHARS."""
    if not output or not output.strip():
        return ""
    return cut(picked(output, first_error_line), ERROR_CHARS, flat=False)


def result_line(command: str, code: int, output: str = "") -> str:
    """``[result] `cmd` exit N`` (N != 0: ``: the first error line`` of ``output`` after it)."""
    err = error_line(output) if code != 0 else ""
    return f"{RESULT_PREFIX}`{cut(command, COMMAND_CHARS)}` exit {code}" + (f": {err}" if err else "")


def commit_line(sha: str | None, subject: str, files: list[str]) -> str:
    """``[result] commit 1a2b3c4 "subject" (files: a.py, b.py)``: the files edited since the session's last
    commit (at most MAX_TAGGED_FILES named)."""
    named = ", ".join(files[:MAX_TAGGED_FILES]) + (" …" if len(files) > MAX_TAGGED_FILES else "")
    head = f"{_COMMIT_HEAD} {sha[:7]}" if sha else _COMMIT_HEAD
    return head + (f' "{cut(subject, SUBJECT_CHARS)}"' if subject else "") + (f" (files: {named})" if named else "")


def answer_line(answer: str) -> str:
    """``[answer] ...``: the user's answer to the agent's question, at most ANSWER_CHARS; "" for none."""
    return ANSWER_PREFIX + cut(answer, ANSWER_CHARS) if answer and answer.strip() else ""


def tool_output_line(output: str, limit: int) -> str:
    """A tool's output kept as a turn: ``[tool output] ...``, its lines kept, its first ``limit`` characters
    and " …" when it was longer; "" when outputs are dropped (``limit`` 0) or it is empty."""
    if limit <= 0 or not output or not output.strip():
        return ""
    return TOOL_OUTPUT_PREFIX + cut(output, limit + 2, flat=False, tail=" …")


def with_files(text: str, files: list[str]) -> str:
    """``text`` with ``\\n[files: a.py, b.py]`` appended (the files it is about that it does not name)."""
    return f"{text}\n{FILES_PREFIX}{', '.join(files)}]"


# ------------------------------------------------------------------------------------------ reading
def line_kind(text: str | None) -> str | None:
    """Which stored line ``text`` is: "tool" (a call), "result" (a command's outcome), "commit", "answer",
    "tool_output"; None for a turn of words."""
    t = str(text or "")
    if t.startswith(RESULT_PREFIX):
        return "commit" if _COMMIT.match(t) else "result"
    if t.startswith(ANSWER_PREFIX):
        return "answer"
    if t.startswith(TOOL_OUTPUT_PREFIX):
        return "tool_output"
    if t.lstrip().startswith(TOOL_PREFIX) or t.strip() == TOOL_PREFIX.strip():
        return "tool"
    return None


def command_result(text: str) -> tuple[str, int, str] | None:
    """``(command, exit status, first error line)`` of a command's result line, or None."""
    m = _RESULT.match(text or "")
    return (m.group(1), int(m.group(2)), (m.group(3) or "").strip()) if m else None


def commit_text(text: str) -> str | None:
    """What a commit's line says after ``commit`` (hash, subject, files), or None for another line."""
    m = _COMMIT.match(text or "")
    return m.group(1).strip() if m else None


def changed_paths(text: str) -> list[str]:
    """The files a call's line says it changed (an edit, a write, a patch); [] for any other line."""
    if not (text or "").startswith(TOOL_PREFIX):
        return []
    name, sep, rest = text[len(TOOL_PREFIX):].split("\n", 1)[0].partition(": ")
    if not sep or not rest:
        return []
    if FILE_TOOLS.get(name.strip()) in CHANGES:
        shown = rest
    elif rest.startswith(SHELL_PATCH) and re.fullmatch(r"[\w.]+", name):
        shown = rest[len(SHELL_PATCH):]
    else:
        return []
    return [p.strip() for p in shown.split(", ") if p.strip()]


def answer_text(text: str) -> str:
    """The answer an answer's line holds (less the prefix)."""
    return text[len(ANSWER_PREFIX):] if (text or "").startswith(ANSWER_PREFIX) else text


def plain_answer(text: str) -> str:
    """An answer's line less Claude Code's preamble ("User has answered your questions: ")."""
    return ANSWER_PREFIX + answer_text(text).replace(_ANSWER_PREAMBLE, "", 1) if line_kind(text) == "answer" else text


def without_files(text: str) -> str:
    """``text`` less its ``[files: ...]`` tag."""
    return _FILES_TAG.sub("", text or "")


# ------------------------------------------------------------------------------------------ classifying
def is_tool_line(text: str | None) -> bool:
    """True for a bare tool-call line, ``[tool] Edit: billing/api.py`` or ``[tool] Bash: pytest -x``;
    False for a command's outcome, an answer, a tool's output and every text turn."""
    return text is not None and line_kind(text) == "tool"


# what a tool says when it only confirms that it did what it was asked: a receipt, not knowledge
_RECEIPT = re.compile(
    r"(?:^|\n)\s*(?:<tool_use_error>|(?:The )?file .{0,300}? has been (?:updated|created|written|modified|saved)|"
    r"File (?:created|written|updated|deleted) successfully|Successfully (?:wrote|created|updated|edited|deleted)|"
    r"Todos have been modified|Applied patch|Success\. Updated the following files|No (?:files|matches) found|"
    r"Found \d+ (?:files?|matches)|Command running in background|Wrote \d+ lines? to|"
    r"Updated (?:task|todo) list|Running in the background|Shell cwd was reset)", re.I)
_NUMBERED = re.compile(r"^\s*\d+(?:→|\t|:)")   # a file as a read tool shows it: "   12→text", "2:First ..."
_LISTED = re.compile(r"^\s*[\w.~/-]+/[\w.@+-]*/?\s*$|^[-dlrwxs@+.]{10}\s")   # a path alone, or ls -l


def is_receipt(text: str | None) -> bool:
    """A tool's confirmation, listing or error rather than an outcome: "File created successfully at: ...",
    "The file ... has been updated successfully", ``<tool_use_error>``, a file's numbered lines as a read
    tool returns them, a listing of paths. Stored for history and the recall by file, never injected by
    meaning (:func:`hela_cli.hooks.context.injectable`). A failed command's result is an outcome, not a
    receipt."""
    t = str(text or "")
    kind = line_kind(t)
    if kind != "tool_output":   # a passed command is left out anyway (is_passed_command); a failed one is an outcome
        return kind is None and t.lstrip().startswith("<tool_use_error>")
    body = t[len(TOOL_OUTPUT_PREFIX):]
    if _RECEIPT.search(body[:400]):
        return True
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if lines and (sum(bool(_NUMBERED.match(ln)) for ln in lines) * 2 >= len(lines)
                  or (len(lines) >= 2 and sum(bool(_LISTED.match(ln)) for ln in lines) * 3 >= len(lines) * 2)):
        return True
    return False


def is_outcome(text: str | None) -> bool:
    """A command's outcome, a commit or the user's answer: what a call did."""
    return line_kind(text) in ("result", "commit", "answer")


def is_tool_result(text: str | None) -> bool:
    """A tool's output or a command's outcome (not the user's answer, which is the user's turn)."""
    return line_kind(text) in ("result", "commit", "tool_output")


def _passed(text: str) -> bool:
    return text.split("\n", 1)[0].endswith(" exit 0")


def is_passed_command(text: str | None) -> bool:
    """A command that merely passed (``[result] `cmd` exit 0``)."""
    return line_kind(text) == "result" and str(text)[len(RESULT_PREFIX):].startswith("`") and _passed(str(text))


def is_failed_command(text: str | None) -> bool:
    """A command whose exit status was not 0."""
    return line_kind(text) == "result" and str(text)[len(RESULT_PREFIX):].startswith("`") and not _passed(str(text))


def capture_kind(text: str, role: str | None) -> str:
    """What the capture's settings decide about a transcript's turn: "outcome" (kept whatever they say),
    "tool_output" (``hooks.tool_outputs``), "tool_call" (``hooks.tool_calls``) or "text"."""
    if is_outcome(text):
        return "outcome"
    if (role or "").lower() == "tool":
        return "tool_output"
    if line_kind(text) == "tool" and "\n" not in text:
        return "tool_call"
    return "text"


def file_memory_kind(text: str) -> str | None:
    """What a memory about a file tells the recall by file: "decision" (a decision stated, the user's answer),
    "failure" (a command that failed), "commit", "change" (an edit, a write, a patch); None for reads, passed
    commands, tool outputs and the rest."""
    kind = line_kind(text)
    if kind == "commit":
        return "commit"
    if kind == "result":
        return None if _passed(text) else "failure"
    if kind == "answer":
        return "decision"
    if kind == "tool":
        return "change" if changed_paths(text) else None
    if kind == "tool_output" or is_content_free(text):
        return None
    return "decision" if is_decision(text) else None
