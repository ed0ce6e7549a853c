"""The stored lines of an agent session (hela_cli/text/session_lines.py): the one cut (redact the whole text,
then cut; a marker whole or not at all), and each line read back and classified as the hooks do."""

from __future__ import annotations

from hela_cli.text.session_lines import (answer_line, call_line, capture_kind, changed_paths, command_result,
                                         commit_line, commit_text, cut, file_memory_kind, is_failed_command,
                                         is_passed_command, result_line, tool_output_line, with_files,
                                         without_files)

COMMAND, MIN_FRAGMENT = 100, 8


def test_cut_redacts_the_whole_text_before_it_cuts():
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
    for pad in range(60, 100):
        line = cut("x" * pad + f" && export GH={token} && ./release.sh", COMMAND)
        assert len(line) <= COMMAND and line.endswith("…")
        assert not any(token[i:i + MIN_FRAGMENT] in line for i in range(len(token) - MIN_FRAGMENT + 1)), line
        assert "[REDACTED:" not in line or "[REDACTED:github-token]" in line   # a marker whole or not at all
    assert cut(f"export GH={token}", COMMAND) == f"export GH={token}"   # no cut: as it is (redacted later, or not)
    from hela_cli.text.redact import MARK
    from hela_cli.text.session_lines import _MARKED

    assert _MARKED.fullmatch(MARK.format("github-token")) and _MARKED.fullmatch(MARK.format("url-password"))
    shown = "a " * 45 + "[REDACTED:github-token] and more words after it"
    assert cut(shown, 100, stored=True) == ("a " * 45).rstrip() + "…"   # stored text: a marker whole or not at all
    assert cut("x\nexport GH=" + token, 200, stored=True) == "x export GH=" + token   # shown as stored, not again
    block = cut("line one\n" + "y" * 30 + f" GH={token}", 40, flat=False, tail=" …")
    assert block.startswith("line one\n") and block.endswith(" …") and "ghp_" not in block


def test_lines_read_back():
    assert command_result(result_line("pytest -x", 1, "Exit code 1\nE   AssertionError: boom")) == \
        ("pytest -x", 1, "E   AssertionError: boom")
    assert command_result(result_line("pytest -x", 0, "ok")) == ("pytest -x", 0, "")
    assert commit_text(commit_line("1a2b3c4d5", "Use Decimal", ["a.py", "b.py"])) == '1a2b3c4 "Use Decimal" (files: a.py, b.py)'
    assert changed_paths(call_line("Edit", "billing/api.py")) == ["billing/api.py"]
    assert changed_paths(call_line("shell", "apply_patch a.py, b.py")) == ["a.py", "b.py"]
    assert changed_paths(call_line("Read", "billing/api.py")) == [] and changed_paths("Edit: a.py") == []
    tagged = with_files(answer_line("half even"), ["a.py"])
    assert without_files(tagged) == answer_line("half even") and file_memory_kind(tagged) == "decision"
    assert is_failed_command(result_line("make", 2)) and is_passed_command(result_line("make", 0))
    assert file_memory_kind(result_line("make", 2)) == "failure" and file_memory_kind(result_line("make", 0)) is None
    assert [capture_kind(t, r) for t, r in ((result_line("make", 2), "tool"), (call_line("Bash", "ls"), "assistant"),
                                            (tool_output_line("x", 10), "tool"), ("We use Decimal.", "user"))] == \
        ["outcome", "tool_call", "tool_output", "text"]
