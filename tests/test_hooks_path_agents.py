"""The recall by file in the real Codex CLI and Gemini CLI binaries, offline (tests/agents_support.py); Claude
Code's is in tests/test_hooks_claude.py. In each, session 1 edits billing/api.py and says why; in session 2
the file hook brings the reason to the model, and the next request carries it. The start brief and the
prompt recall are off in session 2, so only the recall by file can bring it.

* Gemini CLI: its ``BeforeTool`` hooks cannot add context, so hela answers its ``AfterTool`` of
  ``read_file`` / ``replace`` / ``write_file``, whose ``additionalContext`` Gemini appends to the tool's
  result: the model reads the file before changing it, and the result of that read holds the reason.
* Codex CLI: ``PreToolUse`` with ``additionalContext``. Offline (a model provider Codex has no metadata for)
  Codex 0.171 offers no ``apply_patch`` tool; the model applies its patch through the shell
  (``apply_patch <<'EOF'``), which Codex hands its hooks as tool ``Bash`` with the patch as the command. The
  test widens the installed matcher (``apply_patch|Edit|Write``) to ``Bash`` so that this call reaches the
  same hook (docs/agents.md says why the install does not)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.agents_support import (Shell, ToolUse, captured, codex_session, gemini_session, hook_log, install_hooks,
                                  require_agent, steps, wait_for_log)
from tests.reliability import hela_env

REASON = "floats lose cents on refunds"


def _shop(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A git project with ``billing/api.py`` and the environment of a hela on a fresh database."""
    proj = tmp_path / "shop"
    (proj / "billing").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    api_py = proj / "billing" / "api.py"
    api_py.write_text("def refund(amount):\n    return float(amount)\n")
    henv = hela_env(tmp_path, tmp_path / "hela.db", HELA_HOOKS_BUDGET_S="60", HELA_HOOKS_CAPTURE_BUDGET_S="120")
    return proj, api_py, henv


def test_read_before_an_edit_brings_the_reason_stated_in_an_earlier_session(tmp_path):
    gemini = require_agent("gemini")
    proj, api_py, henv = _shop(tmp_path)
    install_hooks("gemini", proj, henv)
    env = {k: v for k, v in henv.items() if k.startswith(("HELA_", "PYTHON"))}
    home = tmp_path / "agent-home"

    edit = ToolUse("replace", {"file_path": str(api_py), "old_string": "float(amount)", "new_string": "Decimal(amount)",
                               "instruction": "use Decimal"})
    res, _ = gemini_session(gemini, home, proj, "Use Decimal for refunds.",
                            steps("gemini", edit, f"Switched billing/api.py to Decimal because {REASON}."), env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Decimal(amount)" in api_py.read_text()
    sid1 = next(r["session"] for r in hook_log(tmp_path / "home") if r.get("event") == "SessionStart")
    wait_for_log(tmp_path / "home", captured(sid1))

    quiet = {**env, "HELA_HOOKS_START_TOKENS": "0", "HELA_HOOKS_PROMPT_MIN_SCORE": "99"}
    read = ToolUse("read_file", {"file_path": str(api_py)})
    res, api = gemini_session(gemini, home, proj, "Add rounding to the refund function.",
                              steps("gemini", read, "Read it."), env=quiet)
    assert res.returncode == 0, res.stderr[-3000:]
    bodies = [json.dumps(b) for b in api.messages()]
    after = [b for b in bodies if "functionResponse" in b and "<hook_context>hela:" in b]
    before = [b for b in bodies if "functionResponse" not in b and "Add rounding" in b]
    assert before and not any(REASON in b for b in before)   # not in the context before the read
    assert after, [b[-1500:] for b in bodies]
    assert "<hook_context>hela: what earlier sessions left about billing/api.py" in after[0] and REASON in after[0]
    rows = hook_log(tmp_path / "home")
    path_rows = [r for r in rows if r.get("event") == "AfterTool" and r.get("session") != sid1]
    assert [r["result"] for r in path_rows] == ["ok"] and path_rows[0]["tokens"] > 0, path_rows


def _patch(old: str, new: str) -> str:
    return ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: billing/api.py\n@@\n"
            f"-    return {old}\n+    return {new}\n*** End Patch\nEOF\n")


def test_codex_patch_of_a_file_brings_the_reason_stated_in_an_earlier_session(tmp_path):
    codex = require_agent("codex")
    proj, api_py, henv = _shop(tmp_path)
    installed = install_hooks("codex", proj, henv)
    hooks = Path(installed["path"])
    data = json.loads(hooks.read_text())
    [group] = data["hooks"]["PreToolUse"]
    assert group["matcher"] == "apply_patch|Edit|Write"
    group["matcher"] = "Bash|apply_patch|Edit|Write"   # offline, the patch comes through the shell (see above)
    hooks.write_text(json.dumps(data, indent=2))
    env = {k: v for k, v in henv.items() if k.startswith(("HELA_", "PYTHON"))}
    home = tmp_path / "agent-home"

    res, _ = codex_session(codex, home, proj, "Use Decimal for refunds.",
                           steps("codex", Shell(_patch("float(amount)", "Decimal(amount)")),
                                 f"Switched billing/api.py to Decimal because {REASON}."), env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Decimal(amount)" in api_py.read_text()
    rows = hook_log(tmp_path / "home")
    sid1 = next(r["session"] for r in rows if r.get("event") == "SessionStart")
    assert [r["result"] for r in rows if r.get("event") == "PreToolUse"] == ["empty"]   # nothing known yet
    wait_for_log(tmp_path / "home", captured(sid1))

    quiet = {**env, "HELA_HOOKS_START_TOKENS": "0", "HELA_HOOKS_PROMPT_MIN_SCORE": "99"}
    res, api = codex_session(codex, home, proj, "Add rounding to the refund function.",
                             steps("codex", Shell(_patch("Decimal(amount)", "round(Decimal(amount), 2)")), "Rounded."),
                             env=quiet)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "round(Decimal(amount), 2)" in api_py.read_text()
    bodies = [json.dumps(b) for b in api.messages()]
    before = [b for b in bodies if "function_call_output" not in b]
    after = [b for b in bodies if "function_call_output" in b]
    assert before and not any(REASON in b for b in before)   # not in the context before the patch
    assert after and "what earlier sessions left about billing/api.py" in after[0] and REASON in after[0], \
        after[0][-3000:] if after else bodies
    path_rows = [r for r in hook_log(tmp_path / "home") if r.get("event") == "PreToolUse" and r.get("session") != sid1]
    assert [r["result"] for r in path_rows] == ["ok"] and path_rows[0]["tokens"] > 0, path_rows
