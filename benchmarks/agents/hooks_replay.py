"""What the agent benchmarks that replay sessions through hela's hooks share (a module, not a script;
``coding_memory.py`` and ``agent_model_cost.py`` import it): the real BookMinder sessions, oldest first,
``hela hook EVENT`` run in this process, and the hooks' environment set around a replay and restored after.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
DATA = HERE / "coding_memory" / "data" / "bookminder"
CWD = "/Users/palimondo/Developer/BookMinder"   # the project folder the sessions ran in (their records' ``cwd``)
SPACE = "bookminder"


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in ``os.environ`` for the block; the previous values (or their absence) restored after."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def hook_env(work: Path, **extra: str) -> dict[str, str]:
    """The hooks' database and home in ``work``, their budgets raised (this process is the only client, and
    a capture stores everything inline), the caller's model folder; ``extra`` on top."""
    from hela_cli.paths import model_dir

    return {"HELA_DB": str(work / "hela.db"), "HELA_HOME": str(work / "home"),
            "HELA_MODELS_DIR": os.environ.get("HELA_MODELS_DIR") or str(model_dir()),
            "HELA_HOOKS_CAPTURE_INLINE": "1000000", "HELA_HOOKS_CAPTURE_BUDGET_S": "100000",
            "HELA_HOOKS_BUDGET_S": "600", **extra}


def hook(event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``hela hook EVENT --agent claude-code --space bookminder`` in this process: the additional context it
    printed ('' for none) and the hook log's line for the run."""
    from hela_cli.hooks.log import log_path
    from hela_cli.hooks.process import main

    out = io.StringIO()
    main([event, "--agent", "claude-code", "--space", SPACE], stdin=io.BytesIO(json.dumps(payload).encode()),
         stdout=out)
    text = out.getvalue()
    context = json.loads(text)["hookSpecificOutput"]["additionalContext"] if text.strip() else ""
    lines = log_path().read_text(encoding="utf-8").splitlines()
    return context, json.loads(lines[-1]) if lines else {}


def session_files(data: Path = DATA, sessions: int | None = None) -> list[Path]:
    """The transcripts, oldest session first (the first ``sessions`` of them when given)."""
    def first_time(p: Path) -> str:
        with p.open(encoding="utf-8") as f:
            return json.loads(f.readline())["timestamp"]
    files = sorted(data.glob("*.jsonl"), key=first_time)
    return files[:sessions] if sessions else files
