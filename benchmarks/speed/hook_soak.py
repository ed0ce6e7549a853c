"""Soak of the managed hook server (issue 53; a benchmark, not a test): real ``hela hook`` processes from
parallel sessions over two databases for minutes, the servers SIGKILLed at random moments and one database
deleted once (then restored), every process and listening socket counted all along.

    python benchmarks/speed/hook_soak.py --minutes 10 --sessions 8 --json soak.json

1. Two git projects, each with its own database holding a few memories (hooks.server auto, the default;
   ``HELA_DB`` differs, so two configurations and two servers).
2. ``--sessions`` workers, half on each database, each a Claude Code session: a loop of prompt hooks
   (``UserPromptSubmit``), a ``Stop`` capture every 5 prompts of a transcript that grew by one user turn and one
   assistant turn since (each turn's text unique), a ``SessionStart`` at the start.
3. A killer: every 10-40 s (random, seeded) a SIGKILL to a random live server; once, at a third of the run, one
   database file (and its -wal / -shm) deleted, as a user's ``rm`` would (the next hooks make a new one).
4. A sampler, every 0.5 s: the number of hela processes (hooks in flight + servers) and of listening TCP
   sockets held by them.
5. At the end: one more ``Stop`` per session (what the deleted database held is captured again into the new
   one), ``hela hooks stop``, then every turn of every transcript counted in its database (stored exactly
   once?), the database's integrity, and the processes and sockets left.

Reported: hook runs, their wall time (p50 / p95 / max per event and how many went over their budget:
``hooks.budget_s`` 2 s for a prompt, ``hooks.capture_budget_s`` 10 s for a capture), the answers by the server
and in-process, the servers started and killed, the peak process and socket counts against the bound (one
server per database plus the hooks in flight), turns stored 0, 1 or more times, what was left.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable
FACTS = ["The staging database listens on port 6543 because 5432 belongs to billing.",
         "We deploy the api with blue-green releases behind the nginx ingress.",
         "The nightly job rebuilds the search index at 02:00 UTC."]
PROMPTS = ["which port does the staging database use?", "how do we deploy the api?",
           "when is the search index rebuilt?", "what should I name this variable?",
           "write a haiku about autumn", "explain python list comprehensions"]


HOME = b""   # the soak's HELA_HOME: processes of other hela users of this machine are not counted


def hela_pids() -> dict[int, str]:
    """This soak's processes running hela (a hook or a server): pid -> what."""
    out = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            if b"hela_cli" not in b" ".join(cmd) or \
                    b"HELA_HOME=" + HOME not in (proc / "environ").read_bytes().split(b"\0"):
                continue
        except OSError:
            continue
        line = b" ".join(cmd)
        if b"hela_cli.hooks.server" in line:
            out[int(proc.name)] = "server"
        elif b"hela_cli" in line and b" hook " in line + b" ":
            out[int(proc.name)] = "hook"
    return out


def listening(pids: dict[int, str]) -> int:
    """Listening TCP sockets held by ``pids``."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            for row in Path(table).read_text().splitlines()[1:]:
                f = row.split()
                if f[3] == "0A":   # LISTEN
                    inodes.add(f[9])
        except OSError:
            pass
    n = 0
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                try:
                    target = os.readlink(fd)
                except OSError:
                    continue
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    n += 1
        except OSError:
            pass
    return n


def turn(kind: str, sid: str, i: int, text: str) -> str:
    ts = f"2026-12-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z"
    if kind == "user":
        msg = {"role": "user", "content": text}
    else:
        msg = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return json.dumps({"type": kind, "sessionId": sid, "uuid": f"{sid}-{kind}-{i}", "timestamp": ts,
                       "message": msg}) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--seed", type=int, default=53)
    ap.add_argument("--think", type=float, default=0.0, help="seconds a session waits between its prompts "
                    "(0: back to back, a stress far beyond an agent's pace)")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    tmp = Path(tempfile.mkdtemp(prefix="hela-soak-"))
    global HOME
    HOME = str(tmp / "home").encode()
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("HELA_")}
    base_env.update({"HELA_HOME": str(tmp / "home"), "PYTHONDONTWRITEBYTECODE": "1",
                     "HELA_MODELS_DIR": os.environ.get("HELA_MODELS_DIR", str(Path.home() / ".local/share/hela/models"))})
    sys.path.insert(0, str(REPO))
    from hela_cli.config import load_config
    from hela_cli.hooks.space import project_space
    from hela_cli.memory import Memory

    dbs = []
    for d in range(2):
        proj = tmp / f"proj{d}"
        proj.mkdir()
        subprocess.run(["git", "init", "-q", str(proj)], check=True)
        db = tmp / f"db{d}.db"
        env = {**base_env, "HELA_DB": str(db)}
        os.environ.update({k: v for k, v in env.items() if k.startswith("HELA_")})
        with Memory(load_config(overrides={"db": str(db)})) as mem:
            mem.add_many(project_space(proj), [{"speaker": "user", "text": t, "session": "old", "id": f"f{i}"}
                                               for i, t in enumerate(FACTS)])
        dbs.append({"proj": proj, "db": db, "env": env, "copy": tmp / f"db{d}.copy"})
    for k in [k for k in os.environ if k.startswith("HELA_")]:
        del os.environ[k]

    stop_at = time.monotonic() + a.minutes * 60
    runs: list[dict] = []
    lock = threading.Lock()
    transcripts: list[dict] = []
    peak = {"processes": 0, "servers": 0, "hooks": 0, "listening": 0}
    events: list[dict] = []

    def run_hook(d: dict, event: str, payload: dict) -> None:
        t = time.perf_counter()
        res = subprocess.run([PY, "-m", "hela_cli", "hook", event, "--agent", "claude-code"],
                             input=json.dumps(payload).encode(), capture_output=True, env=d["env"],
                             cwd=str(d["proj"]), timeout=120)
        ms = (time.perf_counter() - t) * 1000
        with lock:
            runs.append({"event": event, "ms": ms, "rc": res.returncode, "out": bool(res.stdout)})

    def worker(w: int) -> None:
        d = dbs[w % 2]
        sid = f"soak-{w}"
        path = tmp / f"t{w}.jsonl"
        path.write_text("")
        mine = {"db": d, "path": path, "texts": []}
        with lock:
            transcripts.append(mine)
        base = {"session_id": sid, "transcript_path": str(path), "cwd": str(d["proj"])}
        run_hook(d, "SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"})
        i = 0
        while time.monotonic() < stop_at:
            i += 1
            run_hook(d, "UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit",
                                             "prompt": rng.choice(PROMPTS)})
            if a.think:
                time.sleep(a.think)
            if i % 5 == 0:
                u = f"Session {w} turn {i}: remember that widget {w}-{i} ships on build {w * 1000 + i}."
                r = f"Noted: widget {w}-{i} goes out with build {w * 1000 + i}."
                with path.open("a") as f:
                    f.write(turn("user", sid, 2 * i, u) + turn("assistant", sid, 2 * i + 1, r))
                mine["texts"] += [u, r]
                run_hook(d, "Stop", {**base, "hook_event_name": "Stop"})
        mine["final"] = base

    follow = {"ino": None, "pos": 0, "rows": []}   # the hook log read as it grows (it rotates at 1 MB)

    def read_log() -> None:
        path = tmp / "home" / "hooks.log"
        try:
            st = path.stat()
        except OSError:
            return
        if follow["ino"] is not None and st.st_ino != follow["ino"]:   # rotated: the rest of the old file
            old = path.with_name("hooks.log.1")
            try:
                with old.open("rb") as f:
                    f.seek(follow["pos"])
                    follow["rows"] += [json.loads(x) for x in f.read().splitlines() if x.strip()]
            except OSError:
                pass
            follow["pos"] = 0
        follow["ino"] = st.st_ino
        with path.open("rb") as f:
            f.seek(follow["pos"])
            data = f.read()
        cut = data.rfind(b"\n") + 1
        follow["rows"] += [json.loads(x) for x in data[:cut].splitlines() if x.strip()]
        follow["pos"] += cut

    def sampler() -> None:
        while time.monotonic() < stop_at + 5:
            read_log()
            pids = hela_pids()
            n_srv = sum(1 for v in pids.values() if v == "server")
            with lock:
                peak["processes"] = max(peak["processes"], len(pids))
                peak["servers"] = max(peak["servers"], n_srv)
                peak["hooks"] = max(peak["hooks"], len(pids) - n_srv)
                peak["listening"] = max(peak["listening"], listening(pids))
            time.sleep(0.5)

    def killer() -> None:
        deleted = False
        while time.monotonic() < stop_at - 30:
            time.sleep(rng.uniform(10, 40))
            if not deleted and time.monotonic() > stop_at - a.minutes * 60 * 2 / 3:
                deleted = True
                d = dbs[0]
                for suffix in ("", "-wal", "-shm"):   # as a user's rm: the open connections keep the old
                    Path(str(d["db"]) + suffix).unlink(missing_ok=True)   # inodes, new ones make a new file
                events.append({"t": round(time.monotonic() - start, 1), "what": "database 0 deleted",
                               "at": time.time()})
                continue
            servers = [p for p, v in hela_pids().items() if v == "server"]
            if servers:
                victim = rng.choice(servers)
                try:
                    os.kill(victim, signal.SIGKILL)
                    events.append({"t": round(time.monotonic() - start, 1), "what": f"SIGKILL server {victim}",
                                   "at": time.time()})
                except OSError:
                    pass

    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(a.sessions)]
    threads += [threading.Thread(target=sampler, daemon=True), threading.Thread(target=killer, daemon=True)]
    for t in threads:
        t.start()
    for t in threads[: a.sessions]:
        t.join()
    threads[a.sessions].join()   # the sampler's last read of the log
    for m in transcripts:   # what a deleted database lost is captured again from the transcript
        run_hook(m["db"], "Stop", {**m["final"], "hook_event_name": "Stop"})
    for d in dbs:
        subprocess.run([PY, "-m", "hela_cli", "hooks", "stop"], env=d["env"], capture_output=True, timeout=60)
    time.sleep(2)
    left = hela_pids()
    import sqlite3

    counts = {"0": 0, "1": 0, "more": 0}
    broken: set[str] = set()
    for m in transcripts:
        con = sqlite3.connect(m["db"]["db"])
        try:
            stored = [t for (t,) in con.execute("SELECT text FROM nodes")]
            integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
        except sqlite3.DatabaseError as e:
            stored, integrity = [], f"{m['db']['db'].name}: {e}"
        con.close()
        if integrity != "ok":
            broken.add(integrity)
        for text in m["texts"]:
            n = sum(1 for s in stored if text in s)
            counts["0" if n == 0 else "1" if n == 1 else "more"] += 1
    read_log()
    log = follow["rows"]
    by = {}
    for ev in ("SessionStart", "UserPromptSubmit", "Stop"):
        ms = sorted(r["ms"] for r in runs if r["event"] == ev)
        if ms:   # budget: the hook stops itself at hooks.budget_s (prints nothing: "timeout" in its log
            # line); the agent's limit: it kills a hook past the timeout hela installs (10 s; 60 s a capture)
            limit = 60_000 if ev == "Stop" else 10_000
            by[ev] = {"runs": len(ms), "p50_ms": round(statistics.median(ms), 1),
                      "p95_ms": round(ms[int(len(ms) * 0.95) - 1], 1), "max_ms": round(ms[-1], 1),
                      "budget_spent": sum(1 for r in log if r.get("event") == ev and r.get("result") == "timeout"
                                          and not r.get("detached")),
                      "over_agent_limit": sum(1 for x in ms if x > limit)}
    servers = [r.get("server") for r in log if r.get("role") in ("prompt", "start")]
    out = {"minutes": a.minutes, "sessions": a.sessions, "databases": 2, "hook_runs": len(runs),
           "nonzero_exit": sum(1 for r in runs if r["rc"] != 0), "by_event": by,
           "answered_by_server": sum(1 for s in servers if s == "managed"),
           "in_process": sum(1 for s in servers if s != "managed"),
           "servers_started": sum(1 for r in log if str(r.get("server", "")).endswith("started")),
           "servers_killed": sum(1 for e in events if e["what"].startswith("SIGKILL")),
           "think_s": a.think,
           "log_errors": sum(1 for r in log if r.get("result") in ("error", "timeout")),
           # a hook that spent its budget within 15 s after a server was killed or the database deleted (the
           # sessions' hooks then run in-process at once, beside the new server's loading) or elsewhere
           "timeouts_after_a_disruption": sum(1 for r in log if r.get("result") == "timeout" and any(
               0 <= r["time"] - e["at"] <= 15 for e in events)),
           "timeouts_elsewhere": sum(1 for r in log if r.get("result") == "timeout" and not any(
               0 <= r["time"] - e["at"] <= 15 for e in events)),
           "log_error_kinds": dict(__import__("collections").Counter(
               f"{r.get('event')} {r.get('result')}: {str(r.get('detail', ''))[:70]}" for r in log
               if r.get("result") in ("error", "timeout")).most_common(8)),
           "peak": peak, "bound": f"2 servers + {a.sessions} hooks in flight",
           "turns_stored": counts, "integrity": sorted(broken) or "ok", "left_processes": left, "events": events}
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
