"""Secret redaction (issue 32): real-looking keys become ``[REDACTED:kind]``; ordinary text stays byte-identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from hela_cli.text.redact import redact

# Made-up keys in the real formats (none of them is a live credential).
SECRETS = [
    ("my key is sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdEFGH ok", "anthropic-key"),
    ("use sk-proj-abcDEF1234567890ghiJKL0987654321mnoPQR please", "openai-key"),
    ("legacy sk-aBcDeFgHiJkLmNoPqRsT3BlbkFJaBcDeFgHiJkLmNoPqRsT", "openai-key"),
    ("token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 here", "github-token"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012", "github-token"),
    ("glpat-AbCdEfGhIjKlMnOpQrSt", "gitlab-token"),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack-token"),
    ("id AKIAIOSFODNN7EXAMPLE for aws", "aws-access-key"),
    ("maps AIzaSyA1234567890abcdefghijklmnopqrstuv", "google-api-key"),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "huggingface-token"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
    ('curl -H "Authorization: Bearer 0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT"', "auth-header"),
    ('curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop"', "jwt"),
    ("send it with bearer 0123456789abcdefABCDEF0123456789", "bearer-token"),
    ("postgresql://me:s3cretPass@db.example.com/hela", "url-password"),
    ("DB_PASSWORD=postgres", "password"),
    ("export HELA_API_KEY=abc123def456", "secret"),
    ('{"client_secret": "a8f9e7d6c5b4a3"}', "secret"),
    ("password: hunter2!", "password"),
    ("AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "secret"),
    ('password = "correct horse battery"', "password"),
    ("jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "jwt"),
]

PRIVATE_KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\n"
               "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
               "QyNTUxOQAAACDzQ1Xq9v8YbIuKJ0wVw2Yb5n1o3l0mYh8jv4d1QmPpGgAAAJg=\n-----END OPENSSH PRIVATE KEY-----")

ORDINARY = [
    "I met Caroline at the LGBTQ support group on 7 May 2023.",
    "Secret: chocolate. The key: the door is red.",
    "commit 3f2a9c1b4e5d6f708192a3b4c5d6e7f8091a2b3c fixed the token parser",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "the author=Alice wrote max_tokens=4096 and sort_key=timestamp",
    "token = token\nself.api_key = api_key\napi_key = args.api_key\ns3.get_object(Bucket=b, Key=s3_key)",
    'Use $API_KEY or API_KEY=${API_KEY} or OPENAI_API_KEY=<your key> or TOKEN="..."',
    'database_url = "postgresql://user:password@localhost/mydatabase"',
    "The password is something only you know; never share your API key.",
    "Ask for a skeleton key, sk-8 is a part number, ghp_short too.",
    "",
]


@pytest.mark.parametrize("text,kind", SECRETS)
def test_secret_replaced_by_its_kind(text: str, kind: str) -> None:
    out = redact(text)
    assert f"[REDACTED:{kind}]" in out, out
    assert redact(out) == out   # idempotent


def test_assignment_keeps_the_name() -> None:
    assert redact("OPENAI_API_KEY=sk-proj-abcDEF1234567890ghiJKL0987654321mnoPQR") == \
        "OPENAI_API_KEY=[REDACTED:openai-key]"
    assert redact("DB_PASSWORD=postgres\nDEBUG=1") == "DB_PASSWORD=[REDACTED:password]\nDEBUG=1"
    assert redact('{"client_secret": "a8f9e7d6c5b4a3", "name": "x"}') == \
        '{"client_secret": "[REDACTED:secret]", "name": "x"}'


def test_private_key_block_whole_and_cut_off() -> None:
    out = redact(f"here it is:\n{PRIVATE_KEY}\nthanks")
    assert out == "here it is:\n[REDACTED:private-key]\nthanks"
    cut = PRIVATE_KEY[:120]   # a block cut off (no END line): redacted to the end of the text
    assert redact("key:\n" + cut) == "key:\n[REDACTED:private-key]"


def test_no_secret_material_left() -> None:
    for text, _ in SECRETS:
        out = redact(text)
        for word in text.replace('"', " ").split():
            if len(word) >= 16 and any(c.isdigit() for c in word) and "://" not in word:
                assert word not in out, (word, out)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_untouched(text: str) -> None:
    assert redact(text) == text


# --------------------------------------------------------------------------- stored nowhere

KEY = "sk-proj-Zq9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9876"
GH = "ghp_Zq9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"


def _everywhere(db_path, needle: str) -> list[str]:
    """Where ``needle`` is in the SQLite file: every text column of every table, and the raw bytes of the
    database file and its WAL."""
    import sqlite3

    found = []
    con = sqlite3.connect(db_path)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table')")]
        for t in tables:
            try:
                rows = con.execute(f'SELECT * FROM "{t}"').fetchall()
            except sqlite3.OperationalError:   # a virtual table this sqlite3 cannot read (vec0): bytes below
                continue
            if any(needle in str(v) for row in rows for v in row):
                found.append(t)
    finally:
        con.close()
    for suffix in ("", "-wal"):
        p = f"{db_path}{suffix}"
        try:
            if needle.encode() in open(p, "rb").read():
                found.append(f"bytes of {p}")
        except FileNotFoundError:
            pass
    return found


def test_cli_add_redact_key_in_no_table_and_not_in_the_file(cli_env) -> None:
    from typer.testing import CliRunner

    from hela_cli.cli import app

    runner = CliRunner()
    db = cli_env / "hela.db"
    r = runner.invoke(app, ["add", "-s", "dev", "--redact", "--id", "m1",
                            f"deploy with OPENAI_API_KEY={KEY} and token {GH} please"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["add", "-s", "dev", "--id", "m2", "a turn without a secret"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["memories", "-s", "dev", "--json"])
    assert "OPENAI_API_KEY=[REDACTED:openai-key] and token [REDACTED:github-token] please" in r.output
    for needle in (KEY, GH, KEY[8:30]):
        assert _everywhere(db, needle) == [], needle
    # the same turn without --redact is stored as given (the check above can fail)
    r = runner.invoke(app, ["add", "-s", "dev", "--id", "m3", f"key {KEY}"])
    assert r.exit_code == 0 and _everywhere(db, KEY)


def test_ingest_redact_flag_and_config(tmp_path, make_memory, hash_embedder) -> None:
    import json

    f = tmp_path / "chat.jsonl"
    f.write_text(json.dumps({"role": "user", "content": f"my key {KEY}"}) + "\n", encoding="utf-8")
    mem = make_memory(embedder=hash_embedder, ingest__redact=True)
    mem.ingest([f], space="on")
    mem.ingest([f], space="off", redact=False)
    assert [m["text"] for m in mem.memories("on")] == ["my key [REDACTED:openai-key]"]
    assert [m["text"] for m in mem.memories("off")] == [f"my key {KEY}"]
    mem.add("on", f"again {GH}", source_id="x")
    mem.add_many("off", [{"text": f"again {GH}"}], redact=True)
    assert all(GH not in m["text"] for s in ("on", "off") for m in mem.memories(s))


def test_mcp_remember_redacts_by_default(tmp_path, hash_embedder) -> None:
    """The MCP tool ``remember`` redacts by default, and a call's ``redact: false`` is honoured only when the
    server's ``ingest.redact_assistant`` is off (the tools without the protocol; the schema is the SDK's)."""
    from hela_cli.config import Config
    from hela_cli.mcp_server.tools import HelaServer, TurnIn

    for allow, want_c in ((True, "use [REDACTED:openai-key]"), (False, f"use {KEY}")):
        server = HelaServer(Config(db=str(tmp_path / f"m{allow}.db")).replace(
            **{"ingest.redact_assistant": allow}))
        server.memory._embedder = hash_embedder
        try:
            server.remember("s", [TurnIn(text=f"use {KEY}", id="a")], redact=True)
            server.remember("s", [TurnIn(text=f"use {KEY}", id="b")])
            server.remember("s", [TurnIn(text=f"use {KEY}", id="c")], redact=False)
            texts = {m["source_id"]: m["text"] for m in server.memory.memories("s")}
            b = "use [REDACTED:openai-key]" if allow else f"use {KEY}"   # None: ingest.redact (off) decides
            assert texts == {"a": "use [REDACTED:openai-key]", "b": b, "c": want_c}, allow
        finally:
            server.memory.close()


def test_ingest_assistant_transcripts_redacted_by_default(tmp_path, make_memory, hash_embedder) -> None:
    """``hela ingest`` of Claude Code, Codex and Gemini CLI sessions and of a ChatGPT export redacts without
    being asked; other formats follow ``ingest.redact`` (off); ``redact=False`` (``--no-redact``) stores all
    as given."""
    import json

    agents = Path(__file__).parent / "data" / "agents"   # the real binaries' sessions (test_agent_formats.py)
    AGENTS = [("claude_code", agents / "claude-code" / "session.jsonl"),
              ("codex", next((agents / "codex").glob("rollout-*.jsonl"))),
              ("gemini", next((agents / "gemini").glob("session-*.jsonl")))]
    AGENT_KEY = "sk-proj-abcDEF1234567890ghiJKL0987654321mnoPQR"   # the key their second prompt pastes

    exports = Path(__file__).parent / "data" / "exports"
    chatgpt, claude = tmp_path / "conversations.json", tmp_path / "claude" / "conversations.json"
    claude.parent.mkdir()
    chatgpt.write_text((exports / "chatgpt_conversations.json").read_text(encoding="utf-8").replace(
        "smells like nail polish.", f"smells like nail polish. my key {AGENT_KEY}"), encoding="utf-8")
    claude.write_text((exports / "claude_conversations.json").read_text(encoding="utf-8").replace(
        "Which tomatoes grow well on a shady balcony?", f"Which tomatoes? my key {AGENT_KEY}"), encoding="utf-8")
    plain = tmp_path / "chat.jsonl"
    plain.write_text(json.dumps({"role": "user", "content": f"my key {AGENT_KEY}"}) + "\n", encoding="utf-8")
    mem = make_memory(embedder=hash_embedder)
    for i, (fmt, path) in enumerate([*AGENTS, ("chatgpt", chatgpt), ("claude", claude)]):
        mem.ingest([path], space=f"a{i}")
        texts = [m["text"] for m in mem.memories(f"a{i}", limit=None)]
        assert texts and not any(AGENT_KEY in t for t in texts), fmt
        assert any("[REDACTED:openai-key]" in t for t in texts), fmt
        mem.ingest([path], space=f"n{i}", redact=False)
        assert any(AGENT_KEY in m["text"] for m in mem.memories(f"n{i}", limit=None)), fmt
    mem.ingest([plain], space="plain")   # messages format: ingest.redact (off) decides
    assert [m["text"] for m in mem.memories("plain")] == [f"my key {AGENT_KEY}"]
    off = make_memory(embedder=hash_embedder, ingest__redact_assistant=False)
    off.ingest([AGENTS[0][1]], space="off")
    assert any(AGENT_KEY in m["text"] for m in off.memories("off", limit=None))


# --------------------------------------------------------------------------- the hook log (issue 40)

def test_hook_log_key_straddling_the_cut_is_redacted() -> None:
    """``_safe`` redacts first, then cuts to 300: a key that starts before the cut and ends after it is
    replaced whole, so no piece of it reaches the log (cut first, its piece fell below the pattern's length)."""
    from hela_cli.hooks.log import safe as _safe

    for lead in (280, 285, 290, 295):
        out = _safe("x" * lead + " " + KEY + " and more text after the key")
        assert len(out) <= 300
        assert not any(KEY[i:i + 6] in out for i in range(len(KEY) - 6)), out[-40:]
    assert _safe("a\nb\t c") == "a b c"


def test_hook_log_key_in_unknown_arguments(tmp_path, monkeypatch) -> None:
    """End to end: ``hela hook`` with unknown arguments that end in a key straddling the cut writes one log
    line with the key redacted (the message used to be cut to 200 before redaction)."""
    import io
    import json

    from hela_cli.hooks import log
    from hela_cli.hooks.process import main

    monkeypatch.setenv("HELA_HOME", str(tmp_path / "home"))
    assert main(["UserPromptSubmit", "--agent", "claude-code", "--bogus", "y" * 170 + " " + KEY],
                stdin=io.BytesIO(b"{}"), stdout=io.StringIO()) == 0
    lines = log.log_path().read_text().splitlines()
    entry = json.loads(lines[-1])
    assert entry["result"] == "error" and "[REDACTED:openai-key]" in entry["detail"], entry
    assert not any(KEY[i:i + 6] in lines[-1] for i in range(len(KEY) - 6))


def test_hook_log_redaction_failure_writes_nothing_of_the_message(monkeypatch) -> None:
    import hela_cli.text.redact as r
    from hela_cli.hooks.log import safe as _safe

    def boom(text: str) -> str:
        raise RuntimeError("no")

    monkeypatch.setattr(r, "redact", boom)
    assert _safe(f"failed with {KEY}") == "(detail withheld: redaction failed with RuntimeError)"


def test_agent_tool_line_redacted_before_its_cut() -> None:
    """A tool call's line is cut to 160 characters and a kept tool output to ``limit``: a secret the cut
    would split is redacted whole first (cut first, its piece was too short for any pattern)."""
    from hela_cli.formats.agent import TOOL_LINE_CHARS, tool_line, tool_output

    token = "0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT"
    for pad in range(100, 150, 7):
        line = tool_line("Bash", {"command": "x" * pad + f' && curl -H "Authorization: Bearer {token}" https://a.io'})
        assert len(line) <= TOOL_LINE_CHARS and not any(token[i:i + 5] in line for i in range(len(token) - 5)), line
        out = tool_output("y" * pad + f" Authorization: Bearer {token} done", pad + 30)
        assert not any(token[i:i + 5] in out for i in range(len(token) - 5)), out
    short = f"[tool] Bash: curl -H 'Authorization: Bearer {token}'"   # fits: left to the redaction setting
    assert tool_line("Bash", {"command": short[len('[tool] Bash: '):]}) == short
