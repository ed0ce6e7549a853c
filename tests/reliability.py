"""Helpers for the reliability suite (issue 6): real ``hela`` processes, input files, DB fingerprints.

Every ``hela`` here is a real process (``python -m hela_cli``) with its own environment: a private
database, the shared model dir of the test session, one llama.cpp thread (the machine is shared).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

from tests.conftest import MODEL_DIR, REPO

PY = sys.executable


def hela_env(tmp: Path, db: Path | None = None, **extra: str) -> dict[str, str]:
    """A clean environment for a hela process: no inherited ``HELA_*``, private paths under ``tmp``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_")}
    env.update({
        "HELA_HOME": str(tmp / "home"),
        "HELA_MODELS_DIR": str(MODEL_DIR),
        "HELA_MODELS_N_THREADS": "1",
        "PYTHONPATH": str(REPO),
        "PYTHONDONTWRITEBYTECODE": "1",
        "COLUMNS": "200",
        # every hook in its own process unless a test asks for the managed server (tests/test_hooks_managed.py):
        # a server started by a test would outlive it
        "HELA_HOOKS_SERVER": "off",
    })
    if db is not None:
        env["HELA_DB"] = str(db)
    env.update(extra)
    return env


def hela(args: Sequence[str], env: dict[str, str], timeout: float = 300, cwd: Path | None = None,
         ) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "hela_cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=str(cwd or REPO))


def popen_hela(args: Sequence[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([PY, "-m", "hela_cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=str(REPO))


def messages_file(path: Path, n: int, tag: str, sessions: int = 2) -> list[dict[str, Any]]:
    """A JSONL chat of ``n`` distinct turns with explicit ids ``{tag}-{i}``, spread over sessions."""
    topics = ["hiking", "cooking", "a dog named Tofu", "the new job", "a trip to Lisbon", "piano lessons",
              "the garden", "a bike repair", "a birthday party", "the book club"]
    rows = []
    per = max(1, -(-n // sessions))
    for i in range(n):
        s = i // per + 1
        rows.append({"role": "user" if i % 2 == 0 else "assistant", "id": f"{tag}-{i}", "session": s,
                     "content": f"[{tag} {i}] We talked about {topics[i % len(topics)]} on day {i} of {tag}.",
                     "timestamp": f"2024-0{s}-1{i % 10}T1{i % 10}:00:00Z"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def locomo_file(path: Path, samples: dict[str, int], sessions: int = 2) -> dict[str, list[str]]:
    """A LoCoMo JSON with one sample per ``{sample_id: n_turns}``; returns the dia_ids per sample."""
    data, ids = [], {}
    for sid, n in samples.items():
        conv: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
        per = max(1, -(-n // sessions))
        ids[sid] = []
        for i in range(n):
            s = i // per + 1
            key = f"session_{s}"
            if key not in conv:
                conv[key] = []
                conv[f"{key}_date_time"] = f"1:0{s} pm on {s} May, 2023"
            dia = f"D{s}:{len(conv[key]) + 1}"
            conv[key].append({"speaker": "Ana" if i % 2 == 0 else "Ben", "dia_id": dia,
                              "text": f"{sid} turn {i}: a note about item {i * 7 % 13} and place {i % 5}."})
            ids[sid].append(dia)
        data.append({"sample_id": sid, "conversation": conv, "qa": []})
    path.write_text(json.dumps(data), encoding="utf-8")
    return ids


def file_digest(path: Path) -> str | None:
    """sha256 of a file, or None when it does not exist."""
    p = Path(path)
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None


def db_state(path: Path) -> dict[str, Any] | None:
    """A logical fingerprint of a hela database (every row of the plain tables), read-only."""
    if not Path(path).exists():
        return None
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
    try:
        out: dict[str, Any] = {}
        for table in ("meta", "spaces", "nodes", "edges", "semantic", "semantic_evidence", "hubs", "asks",
                      "migrations"):
            try:
                out[table] = con.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            except sqlite3.OperationalError:
                out[table] = None
        return out
    finally:
        con.close()


def one_line(s: str) -> str:
    """The single non-empty line of ``s`` (asserts there is exactly one)."""
    lines = [ln for ln in s.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line, got {len(lines)}: {s[:2000]!r}"
    return lines[0]


def build_base_db(path: Path, embedder: Any, space: str = "base", turns: int = 6) -> Path:
    """A small real database: ``turns`` chat turns in ``space``, embedded with the session embedder."""
    from hela_cli.config import Config
    from hela_cli.memory import Memory

    f = path.parent / f"{space}.jsonl"
    messages_file(f, turns, space, sessions=1)
    with Memory(Config(db=str(path)), embedder=embedder) as m:
        m.ingest([f], space=space)
    return path
