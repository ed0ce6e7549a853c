"""A database hela cannot write (issue 57): on a read-only mount, in a directory nobody may write, or an
immutable file. Reading works (`memories`, `spaces`, `ask`, which then learns nothing); a write is one line,
exit 4, and changes nothing. Before: "not a usable hela database (unable to open database file)" for reads,
"unexpected OperationalError", exit 70, for a write to an immutable file."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from tests.reliability import hela, hela_env


@contextlib.contextmanager
def frozen(path: Path) -> Iterator[str]:
    """``path`` (a file or a directory) made unwritable: immutable (``chattr +i``, which stops root too), else
    read-only permissions for a user other than root, else (root without chattr) a read-only bind mount."""
    res = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
    if res.returncode == 0:
        try:
            yield "immutable"
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        return
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield "read-only"
        finally:
            path.chmod(mode)
        return
    assert path.is_dir(), "a read-only bind mount needs a directory"
    subprocess.run(["mount", "--bind", str(path), str(path)], check=True)
    subprocess.run(["mount", "-o", "remount,ro,bind", str(path)], check=True)
    try:
        yield "read-only mount"
    finally:
        subprocess.run(["umount", str(path)], check=True)


@pytest.fixture()
def made(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "m.db"
    env = hela_env(tmp_path, db)
    for text in ("Our wiki lives at wiki.example.org", "Deploys go out on Tuesdays"):
        assert hela(["add", "--space", "s", text], env).returncode == 0
    return {"db": db, "env": env, "folder": folder}


def _bytes(folder: Path) -> str:
    """The database's bytes, its WAL's too (the -shm index is shared memory a reader maps, not data; a reader
    may leave an empty -wal)."""
    return hashlib.sha256(b"".join(p.name.encode() + p.read_bytes() for p in sorted(folder.iterdir())
                                   if not p.name.endswith("-shm") and p.stat().st_size)).hexdigest()


@pytest.mark.parametrize("what", ["folder", "file"])
def test_reads_work_and_a_write_is_one_line(made, what):
    env, db = made["env"], made["db"]
    target = made["folder"] if what == "folder" else db
    assert hela(["memories", "--space", "s"], env).returncode == 0   # a checkpointed file, WAL and all
    before = _bytes(made["folder"])
    with frozen(target):
        res = hela(["memories", "--space", "s", "--json"], env)
        assert res.returncode == 0, res.stderr
        assert {m["text"] for m in json.loads(res.stdout)} == {"Our wiki lives at wiki.example.org",
                                                               "Deploys go out on Tuesdays"}
        assert hela(["spaces"], env).returncode == 0
        res = hela(["ask", "where is the wiki?", "--space", "s", "--no-llm", "--json"], env)
        assert res.returncode == 0, res.stderr
        out = json.loads(res.stdout)
        assert "wiki.example.org" in out["context"] and out["recall_id"] is None   # answered, nothing learnt
        res = hela(["add", "--space", "s", "The cache is redis"], env)
        assert res.returncode == 4 and "Traceback" not in res.stderr and "unexpected" not in res.stderr
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and "cannot be written here" in lines[0], res.stderr
        assert _bytes(made["folder"]) == before, [(p.name, p.stat().st_size) for p in made["folder"].iterdir()]
    res = hela(["memories", "--space", "s", "--json"], env)
    assert len(json.loads(res.stdout)) == 2   # nothing was written


def test_a_full_disk_says_what_was_stored_and_the_same_command_resumes(tmp_path, hash_embedder):
    """issue 57: a full disk was "database or disk is full", exit 70, without the count of what was stored.
    SQLite's own limit on the file's size (``max_page_count``) gives the same SQLITE_FULL a full disk gives."""
    from hela_cli.config import Config
    from hela_cli.errors import StoreFull
    from hela_cli.memory import Memory
    from hela_cli.store import Store

    n = 400
    session = [{"speaker": "A" if i % 2 else "B", "dia_id": f"D1:{i}",
                "text": f"Turn {i}: the widget {i} ships with build {1000 + i}, " + "padding " * 40} for i in range(n)]
    src = tmp_path / "talk.json"
    src.write_text(json.dumps({"sample_id": "talk", "qa": [], "conversation": {
        "speaker_a": "A", "speaker_b": "B", "session_1": session, "session_1_date_time": "1:00 pm on 8 May, 2023"}}))
    db = tmp_path / "full.db"
    store = Store(str(db))
    with Memory(Config(db=str(db)), store=store, embedder=hash_embedder) as mem:
        mem.add("talk", "a first memory so the schema is there")
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages + 60}")   # room for some of the turns, not all
        with pytest.raises(StoreFull) as e:
            mem.ingest([str(src)], space="talk")
        msg = e.value.message
        stored = store.db.execute("SELECT count(*) FROM nodes").fetchone()[0] - 1
        assert 0 < stored < n and f"{stored} of {n} turns are stored" in msg, (stored, msg)
        assert "run the same command again" in msg and "\n" not in msg
        store.db.execute("PRAGMA max_page_count = 1073741823")
        rep = mem.ingest([str(src)], space="talk")   # the same command: the rest added, nothing twice
        assert rep["nodes_added"] == n - stored and rep["skipped_duplicates"] == stored
        assert store.db.execute("SELECT count(*) FROM nodes").fetchone()[0] == n + 1
