"""Cases shared by several test modules (instead of test modules importing each other): the bad-input
cases of every parser (``BAD``, ``BAD_EXPORTS``, run by the parser tests and end to end through the CLI by
tests/test_bad_input.py), the builders they use, and the small conversation of the consolidation tests, and the redaction corpus (``CORPUS``: real-world shapes of
secrets, run by tests/test_redact_corpus.py and, inside every stored line of an agent session, by
tests/test_stored_line_secrets.py)."""

from __future__ import annotations

import json
from pathlib import Path


def write(tmp_path: Path, name: str, content) -> Path:
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    elif isinstance(content, str):
        p.write_text(content, encoding="utf-8")
    else:
        p.write_text(json.dumps(content), encoding="utf-8")
    return p



def locomo_sample(sample_id="s1", sessions=None, **extra):
    """A minimal valid LoCoMo sample; sessions: {n: (date, [(speaker, text), ...])}."""
    if sessions is None:
        sessions = {1: ("1:56 pm on 8 May, 2023", [("Ann", "hello"), ("Bob", "hi there")])}
    conv = {"speaker_a": "Ann", "speaker_b": "Bob"}
    for n, (date, turns) in sessions.items():
        conv[f"session_{n}_date_time"] = date
        conv[f"session_{n}"] = [
            {"speaker": sp, "dia_id": f"D{n}:{i}", "text": tx} for i, (sp, tx) in enumerate(turns, 1)
        ]
    d = {"sample_id": sample_id, "conversation": conv, "qa": []}
    d.update(extra)
    return d


def lme_item(qid="q1", **over):
    d = {
        "question_id": qid,
        "question": "What did I buy?",
        "answer": "a lamp",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["s_a", "s_b"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 10:00"],
        "haystack_sessions": [
            [{"role": "user", "content": "I bought a lamp."}, {"role": "assistant", "content": "Nice!"}],
            [{"role": "user", "content": "It is green.", "has_answer": True}],
        ],
    }
    d.update(over)
    return d



def _lc(mut):
    """A LoCoMo file content produced by mutating a valid sample."""
    s = locomo_sample("conv-30", {1: ("1:56 pm on 8 May, 2023", [("Ann", "a"), ("Bob", "b")]),
                                  2: ("2:00 pm on 9 May, 2023", [("Ann", "c"), ("Bob", "d")])})
    mut(s)
    return [locomo_sample("conv-1"), s]


def _lm(mut):
    item = lme_item("q7")
    mut(item)
    return [item]


def _set(path, value):
    def mut(obj):
        *head, last = path
        for k in head:
            obj = obj[k]
        obj[last] = value
    return mut


def _del(path):
    def mut(obj):
        *head, last = path
        for k in head:
            obj = obj[k]
        del obj[last]
    return mut


C = ("conversation",)
T = ("conversation", "session_2", 1)

BAD = [
    # (id, file name, content, fmt, expected substring)
    ("empty", "e.json", b"", "auto", "empty"),
    ("whitespace", "w.txt", b"  \n\t\n", "auto", "empty"),
    ("bom-only", "b.txt", b"\xef\xbb\xbf\n", "auto", "empty"),
    ("latin1", "l.txt", "Ann: caf\u00e9\n".encode("latin-1"), "auto", "byte 8"),
    ("utf16", "u.txt", "Ann: hi\n".encode("utf-16"), "auto", "UTF-16"),
    ("binary", "img.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "auto", "binary"),
    ("control-bytes", "c.txt", bytes(range(1, 9)) * 20, "auto", "binary"),
    ("truncated-json", "t.json", json.dumps([locomo_sample()], indent=1)[:150], "auto", "truncated"),
    ("bad-json", "bad.json", '[{"sample_id": "x" "conversation": {}}]', "auto", "line 1"),
    ("bad-json-multiline", "bad2.json", '[\n {"a": 1,\n  "b": }\n]', "locomo", "line 3"),
    ("top-number", "n.json", "42", "locomo", "top level"),
    ("top-empty-array", "ea.json", "[]", "auto", "empty JSON array"),
    ("array-of-numbers", "an.json", "[1, 2, 3]", "auto", "array of numbers"),
    ("unknown-object", "uo.json", {"foo": 1}, "auto", "cannot tell"),
    ("text-as-locomo", "x.txt", "Ann: hi\n", "locomo", "invalid JSON"),
    ("locomo-as-lme", "lc.json", [locomo_sample()], "longmemeval", "question_id"),
    # locomo
    ("lc-no-sample-id", "conv.json", _lc(_del(("sample_id",))), "auto", "sample 2: missing 'sample_id'"),
    ("lc-sample-id-number", "conv.json", _lc(_set(("sample_id",), 30)), "auto", "'sample_id' must be a string"),
    ("lc-dup-sample", "conv.json", _lc(_set(("sample_id",), "conv-1")), "auto", "duplicate sample_id"),
    ("lc-not-object", "conv.json", [locomo_sample(), "oops"], "locomo", "sample 2: expected a sample object"),
    ("lc-no-conversation", "conv.json", _lc(_del(C)), "locomo", "missing 'conversation'"),
    ("lc-conversation-list", "conv.json", _lc(_set(C, [])), "locomo", "expected an object, got array"),
    ("lc-no-speaker-a", "conv.json", _lc(_del(C + ("speaker_a",))), "auto", "missing 'speaker_a'"),
    ("lc-no-sessions", "conv.json",
     [{"sample_id": "z", "conversation": {"speaker_a": "A", "speaker_b": "B"}}], "auto", "no 'session_N'"),
    ("lc-session-not-list", "conv.json", _lc(_set(C + ("session_2",), {"a": 1})), "auto",
     "'session_2' must be an array"),
    ("lc-dup-session-number", "conv.json", _lc(_set(C + ("session_01",), [])), "auto", "duplicate session number"),
    ("lc-no-date", "conv.json", _lc(_del(C + ("session_2_date_time",))), "auto", "missing 'session_2_date_time'"),
    ("lc-bad-date", "conv.json", _lc(_set(C + ("session_2_date_time",), "sometime in May")), "auto",
     "session_2: 'session_2_date_time': unparseable date"),
    ("lc-year-9999", "conv.json", _lc(_set(C + ("session_2_date_time",), "1:56 pm on 8 May, 9999")), "auto",
     "year 9999"),
    ("lc-feb-30", "conv.json", _lc(_set(C + ("session_2_date_time",), "1:56 pm on 30 February, 2023")), "auto",
     "invalid date"),
    ("lc-date-number", "conv.json", _lc(_set(C + ("session_2_date_time",), 1683554160)), "auto", "must be a string"),
    ("lc-turn-not-object", "conv.json", _lc(_set(T, "text")), "auto", "session_2 turn 2: expected a turn object"),
    ("lc-missing-text", "conv.json", _lc(_del(T + ("text",))), "auto",
     "sample 2 (conv-30) session_2 turn 2 (D2:2): missing 'text'"),
    ("lc-text-number", "conv.json", _lc(_set(T + ("text",), 7)), "auto", "'text' must be a string, got number"),
    ("lc-text-list", "conv.json", _lc(_set(T + ("text",), ["a"])), "auto", "'text' must be a string, got array"),
    ("lc-text-empty", "conv.json", _lc(_set(T + ("text",), "   ")), "auto", "empty 'text'"),
    ("lc-missing-speaker", "conv.json", _lc(_del(T + ("speaker",))), "auto", "missing 'speaker'"),
    ("lc-missing-dia", "conv.json", _lc(_del(T + ("dia_id",))), "auto", "missing 'dia_id'"),
    ("lc-dup-dia", "conv.json", _lc(_set(T + ("dia_id",), "D1:1")), "auto", "duplicate dia_id \"D1:1\""),
    ("lc-caption-number", "conv.json", _lc(_set(T + ("blip_caption",), 3)), "auto", "'blip_caption' must be"),
    ("lc-img-url-number", "conv.json", _lc(_set(T + ("img_url",), 3)), "auto", "'img_url' must be"),
    ("lc-qa-not-list", "conv.json", _lc(_set(("qa",), {"q": 1})), "auto", "'qa' must be an array"),
    ("lc-qa-item", "conv.json", _lc(_set(("qa",), [1])), "auto", "qa 1: expected a qa object"),
    ("lc-no-turns", "conv.json",
     [locomo_sample("empty", {1: ("1:56 pm on 8 May, 2023", [])})], "auto", "no turns"),
    # longmemeval
    ("lm-no-qid", "lme.json", _lm(_del(("question_id",))), "auto", "item 1: missing 'question_id'"),
    ("lm-no-dates", "lme.json", _lm(_del(("haystack_dates",))), "auto", "missing 'haystack_dates'"),
    ("lm-len-mismatch", "lme.json", _lm(_set(("haystack_dates",), ["2023/05/20 (Sat) 02:21"])), "auto",
     "2 haystack_sessions but 1 haystack_dates"),
    ("lm-ids-mismatch", "lme.json", _lm(_set(("haystack_session_ids",), ["a"])), "auto", "haystack_session_ids"),
    ("lm-bad-date", "lme.json", _lm(_set(("haystack_dates", 1), "2023/02/30 (Thu) 10:00")), "auto",
     "item 1 (q7) session 2 (s_b): haystack_dates: invalid date"),
    ("lm-session-not-list", "lme.json", _lm(_set(("haystack_sessions", 0), {"role": "user"})), "auto",
     "session must be an array"),
    ("lm-missing-content", "lme.json", _lm(_del(("haystack_sessions", 0, 1, "content"))), "auto",
     "session 1 (s_a) turn 2: missing 'content'"),
    ("lm-role-number", "lme.json", _lm(_set(("haystack_sessions", 0, 0, "role"), 1)), "auto", "'role' must be"),
    ("lm-bad-question-date", "lme.json", _lm(_set(("question_date",), "yesterday")), "auto", "question_date"),
    ("lm-dup-qid", "lme.json", [lme_item("q1"), lme_item("q1")], "auto", "duplicate question_id"),
    # messages
    ("jsonl-bad-line", "chat.jsonl", '{"role":"user","content":"a"}\n\n{"role": "user" "content": "b"}\n', "auto",
     "line 3: invalid JSON (Expecting ',' delimiter, col 17)"),
    ("jsonl-array-line", "chat.jsonl", '{"role":"user","content":"a"}\n[1]\n', "auto",
     "line 2: expected a JSON object"),
    ("msg-no-role", "chat.jsonl", '{"content":"a"}\n', "auto", "line 1: missing 'role'"),
    ("msg-content-number", "chat.jsonl", '{"role":"user","content":5}\n', "auto", "'content' must be a string"),
    ("msg-content-list", "chat.json", '[{"role":"user","content":[{"type":"text"}]}]', "auto",
     "message 1: 'content' must be a string, got array"),
    ("msg-empty-content", "chat.jsonl", '{"role":"user","content":"a"}\n{"role":"user","content":""}\n', "auto",
     "line 2: 'content' is empty"),
    ("msg-bad-ts", "chat.jsonl", '{"role":"user","content":"a","timestamp":"last tuesday"}\n', "auto",
     "'timestamp': unparseable date"),
    ("msg-ts-bool", "chat.jsonl", '{"role":"user","content":"a","timestamp":true}\n', "auto", "got boolean"),
    ("msg-ts-ms", "chat.jsonl", '{"role":"user","content":"a","created_at":1700000000000}\n', "auto",
     "milliseconds"),
    ("msg-ts-9999", "chat.jsonl", '{"role":"user","content":"a","timestamp":"9999-12-31T00:00:00Z"}\n', "auto",
     "year 9999"),
    ("msg-ts-nan", "chat.jsonl", '{"role":"user","content":"a","timestamp":NaN}\n', "auto", "not a finite"),
    ("msg-dup-id", "chat.jsonl", '{"role":"user","content":"a","id":1}\n{"role":"user","content":"b","id":"1"}\n',
     "auto", "duplicate id"),
    ("msg-session-float", "chat.jsonl", '{"role":"user","content":"a","session":1.5}\n', "auto", "'session' must"),
    ("msg-array-item", "chat.json", '[{"role":"user","content":"a"}, 3]', "auto", "message 2: expected a message"),
    ("msg-surrogate", "chat.jsonl", '{"role":"user","content":"a\\ud800b"}\n', "auto", "unpaired surrogate"),
    ("json-deep", "deep.json", "[" * 100000 + "]" * 100000, "auto", "nested too deeply"),
    ("json-huge-int", "big.jsonl", '{"role":"user","content":"a","timestamp":' + "9" * 5000 + "}\n", "auto",
     "line 1"),
    # text
    ("txt-before-speaker", "t.txt", "hello there\nAnn: hi\n", "auto", "line 1: text before the first"),
    ("txt-bad-header", "t.txt", "Ann: hi\n## Sesion two\nBob: yo\n", "auto", "line 2: malformed session header"),
    ("txt-bad-header-date", "t.txt", "## Session 1 — 45 May 2023\nAnn: hi\n", "auto", "line 1: session header"),
    ("txt-header-9999", "t.txt", "--- session 1 (9999-01-01 10:00) ---\nAnn: hi\n", "auto", "year 9999"),
    ("txt-dup-session", "t.txt", "## Session 1\nAnn: hi\n## Session 1\nBob: yo\n", "auto", "line 3: duplicate session"),
    ("txt-session-1-late", "t.txt", "Ann: hi\n## Session 1\nBob: yo\n", "auto", "line 2"),
    ("txt-empty-turn", "t.txt", "Ann: hi\nBob:\n\nAnn: ok\n", "auto", "line 2: turn by \"Bob\" has empty text"),
    ("txt-no-turns", "t.txt", "# only a comment\n", "text", "no 'Speaker: text' lines"),
    ("txt-json-start", "t.txt", "{not json at all\n", "auto", "invalid JSON"),
]


# --------------------------------------------------------------------------- chat exports

DATA = Path(__file__).parent / "data" / "exports"
CHATGPT = DATA / "chatgpt_conversations.json"
CLAUDE = DATA / "claude_conversations.json"
WA_IOS = DATA / "whatsapp_ios.txt"
WA_ANDROID = DATA / "whatsapp_android.txt"
WA_US = DATA / "whatsapp_us.txt"
LRM = "\u200e"


def _gpt(mut, pick=2):
    doc = json.loads(CHATGPT.read_text())
    mut(doc[pick])
    return doc


def _cl(mut, pick=0):
    doc = json.loads(CLAUDE.read_text())
    mut(doc[pick])
    return doc


def _node(nid, **kw):
    def mut(conv):
        conv["mapping"][nid].update(kw)
    return mut


def _msg(nid, **kw):
    def mut(conv):
        conv["mapping"][nid]["message"].update(kw)
    return mut


def _cmsg(i, **kw):
    def mut(conv):
        conv["chat_messages"][i].update(kw)
    return mut


def _set(**kw):
    return lambda conv: conv.update(kw)


def _drop(key):
    return lambda conv: conv.pop(key)


GPT3 = "conversation 3 (Trip to Lisbon)"
CL1 = "conversation 1 (Garden planning)"
CHATGPT_TEXT = CHATGPT.read_text()

BAD_EXPORTS = [
    # (id, file name, content, fmt, expected substring)
    ("gpt-truncated", "conversations.json", CHATGPT_TEXT[: len(CHATGPT_TEXT) // 2], "auto", "truncated?"),
    ("gpt-current-missing", "conversations.json", _gpt(_set(current_node="nope")), "auto",
     f"{GPT3}: 'current_node' \"nope\" is not in 'mapping'"),
    ("gpt-no-current", "conversations.json", _gpt(_drop("current_node")), "auto", f"{GPT3}: missing 'current_node'"),
    ("gpt-parent-missing", "conversations.json", _gpt(_node("a-1", parent="gone")), "auto",
     f"{GPT3}: parent of node \"a-1\" \"gone\" is not in 'mapping'"),
    ("gpt-cycle", "conversations.json", _gpt(_node("root-0", parent="u-1")), "auto", "'parent' links form a cycle"),
    ("gpt-mapping-array", "conversations.json", _gpt(_set(mapping=[])), "auto", "'mapping' must be an object, got array"),
    ("gpt-no-mapping", "conversations.json", _gpt(_drop("mapping")), "chatgpt", f"{GPT3}: missing 'mapping'"),
    ("gpt-parts-string", "conversations.json", _gpt(_msg("a-1", content={"content_type": "text", "parts": "hi"})),
     "auto", f"{GPT3} node a-1: 'parts' must be an array, got string"),
    ("gpt-no-parts", "conversations.json", _gpt(_msg("a-1", content={"content_type": "text"})), "auto",
     "node a-1: missing 'content.parts'"),
    ("gpt-ms-time", "conversations.json", _gpt(_msg("u-1", create_time=1685617260000)), "auto",
     "node u-1: 'create_time': epoch timestamp 1685617260000 is outside years 1900..2200 (milliseconds? use seconds)"),
    ("gpt-bad-time", "conversations.json", _gpt(_msg("u-1", create_time="yesterday")), "auto",
     "node u-1: 'create_time': unparseable date \"yesterday\""),
    ("gpt-no-author", "conversations.json", _gpt(_msg("u-1", author=None)), "auto",
     "node u-1: expected 'author' to be an object, got null"),
    ("gpt-role-number", "conversations.json", _gpt(_msg("u-1", author={"role": 1})), "auto",
     "node u-1: 'author.role' must be a string, got number"),
    ("gpt-no-id", "conversations.json", _gpt(lambda c: (c.pop("id"), c.pop("conversation_id"))), "auto",
     "conversation 3: missing 'id'"),
    ("gpt-dup-id", "conversations.json", _gpt(_set(id="0a9b8c7d-1111-2222-3333-444455556666")), "auto",
     "duplicate conversation id \"0a9b8c7d-1111-2222-3333-444455556666\" (also conversation 2)"),
    ("gpt-not-object", "conversations.json", [json.loads(CHATGPT_TEXT)[1], 7], "chatgpt",
     "conversation 2: expected a conversation object, got number"),
    ("gpt-nothing-visible", "conversations.json", [json.loads(CHATGPT_TEXT)[0]], "auto",
     "top level: no user or assistant messages with text in any conversation"),
    ("gpt-empty-array", "conversations.json", [], "chatgpt", "top level: empty JSON array; no conversations"),
    ("claude-no-messages-key", "conversations.json", _cl(_drop("chat_messages")), "claude",
     f"{CL1}: missing 'chat_messages'"),
    ("claude-messages-object", "conversations.json", _cl(_set(chat_messages={})), "auto",
     f"{CL1}: 'chat_messages' must be an array, got object"),
    ("claude-sender", "conversations.json", _cl(_cmsg(1, sender=None)), "auto",
     f"{CL1} message 2: 'sender' must be a string, got null"),
    ("claude-bad-date", "conversations.json", _cl(_cmsg(0, created_at="2024-13-02T09:15:10Z")), "auto",
     f"{CL1} message 1: 'created_at': unparseable date"),
    ("claude-epoch-date", "conversations.json", _cl(_cmsg(0, created_at=1709370910)), "auto",
     f"{CL1} message 1: 'created_at': expected an ISO 8601 string, got number"),
    ("claude-content-string", "conversations.json", _cl(_cmsg(0, content="hi")), "auto",
     f"{CL1} message 1: 'content' must be an array, got string"),
    ("claude-block-text", "conversations.json", _cl(_cmsg(0, content=[{"type": "text", "text": 5}])), "auto",
     f"{CL1} message 1 content 1: 'text' must be a string, got number"),
    ("claude-no-uuid", "conversations.json", _cl(_drop("uuid")), "auto", "conversation 1: missing 'uuid'"),
    ("claude-nothing", "conversations.json", [json.loads(CLAUDE.read_text())[2]], "auto",
     "top level: no user or assistant messages with text in any conversation"),
    ("wa-not-whatsapp", "chat.txt", "Ann: hi\n", "whatsapp", "line 1: expected a WhatsApp message line"),
    ("zip", "export.zip", b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + b"\x00" * 30, "auto",
     "a zip archive; unzip it and ingest the file inside"),
    ("wa-bad-day", "chat.txt", "31/01/2023, 10:00 - A: x\n31/02/2023, 10:00 - A: y\n", "auto",
     "line 2: invalid date \"31/02/2023\""),
    ("wa-mixed-order", "chat.txt", "13/01/23, 10:00 - A: x\n01/14/23, 10:00 - A: y\n", "auto",
     "line 2: dates mix day-first (line 1) and month-first (line 2) order"),
    ("wa-13pm", "chat.txt", "[08/05/2023, 13:56:12 PM] A: x\n", "auto", "line 1: hour 13 is not a 12-hour clock hour"),
    ("wa-25h", "chat.txt", "08/05/23, 25:10 - A: x\n", "auto", "line 1: invalid time \"25:10\""),
    ("wa-year", "chat.txt", "08/05/1850, 10:10 - A: x\n", "auto", "line 1: year 1850 out of range"),
    ("wa-only-system", "chat.txt", "08/05/23, 13:56 - Messages and calls are end-to-end encrypted.\n"
     "08/05/23, 13:57 - Bob: <Media omitted>\n", "auto", "top level: no messages with text"),
]


# --------------------------------------------------------------------------- a small conversation

TURNS = [
    ("Caroline", "I adopted a greyhound called Tofu yesterday, she is very calm.", "2023-05-08T10:00:00Z"),
    ("Melanie", "Congratulations! Greyhounds are lovely dogs.", "2023-05-08T10:01:00Z"),
    ("Caroline", "I repainted the kitchen a pale green over the weekend.", "2023-05-08T10:02:00Z"),
    ("Melanie", "Our book club is reading a thriller set in Oslo.", "2023-05-08T10:03:00Z"),
    ("Caroline", "Tofu loves long walks by the river in the morning.", "2023-06-02T09:00:00Z"),
    ("Melanie", "The train to Porto was delayed by an hour.", "2023-06-02T09:01:00Z"),
    ("Caroline", "I take Tofu to the vet in Lisbon for her hip operation next week.", "2023-06-20T09:00:00Z"),
    ("Melanie", "We watched a documentary about octopuses.", "2023-06-20T09:01:00Z"),
]


def write_conversation(path):
    path.write_text("".join(json.dumps({"role": "user", "name": s, "content": t, "timestamp": ts}) + "\n"
                            for s, t, ts in TURNS))
    return path


# ------------------------------------------------------------------------------------------ the redaction corpus
PW = "Xy9secretPass"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPL3KEY"
RSA = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7BFUAyJ0vB2Yl2nE0b9Qm1Jx4lW0N8ZzF3T0s5gD0sUuP5nB2g\n"
       "c2sFv9cTq8Lk2Zy7Xw6Vu5Ts4Rq3Po2Nm1Lk0Ji9Hg8Fe7Dc6Ba5\n-----END RSA PRIVATE KEY-----")

CORPUS: list[tuple[str, list[str], list[str]]] = [
    # ---- shell environment (the cases first)
    (f"export PGPASSWORD={PW}", [PW], ["export PGPASSWORD=[REDACTED:password]"]),
    ("AUTHTOKEN=abcd1234efgh5678 ./run.sh", ["abcd1234efgh5678"], ["AUTHTOKEN=", "./run.sh"]),
    ("DBPASS=hunter2pass make migrate", ["hunter2pass"], ["DBPASS=[REDACTED:password]", "make migrate"]),
    (f"PGPASSWORD={PW} psql -h db -U app -p 5432 app", [PW], ["psql -h db -U app -p 5432 app"]),
    (f"MYSQL_PWD={PW} mysql -u root", [PW], ["MYSQL_PWD=[REDACTED:password]", "mysql -u root"]),
    ("export DB_PASS='p@ss w0rd!'", ["p@ss w0rd!"], ["export DB_PASS='[REDACTED:password]'"]),
    ("REDISCLI_AUTH=r3disS3cret redis-cli -p 6380", ["r3disS3cret"], ["REDISCLI_AUTH=", "-p 6380"]),
    ('$env:DB_PASSWORD = "W1nd0wsPw!"', ["W1nd0wsPw!"], ["$env:DB_PASSWORD = "]),
    (f"docker run -e POSTGRES_PASSWORD={PW} -p 5432:5432 postgres:16", [PW],
     ["-e POSTGRES_PASSWORD=[REDACTED:password]", "-p 5432:5432 postgres:16"]),
    ("docker build --build-arg NPM_TOKEN=npmT0kenValue42 .", ["npmT0kenValue42"], ["--build-arg NPM_TOKEN="]),
    # ---- .env files
    (f"DATABASE_URL=postgres://app:{PW}@db:5432/app\nDEBUG=true\nPORT=8000", [PW],
     ["postgres://app:[REDACTED:url-password]@db:5432/app", "DEBUG=true\nPORT=8000"]),
    ("SECRET_KEY=django-insecure-7h#k2!x9zq\nALLOWED_HOSTS=*", ["django-insecure-7h#k2!x9zq"],
     ["SECRET_KEY=", "ALLOWED_HOSTS=*"]),
    ('JWT_SECRET="a-long-random-signing-string-42"', ["a-long-random-signing-string-42"], ["JWT_SECRET="]),
    ("SMTP_PASSWORD=mailPw2024", ["mailPw2024"], ["SMTP_PASSWORD="]),
    ("AWS_SECRET_ACCESS_KEY=" + AWS_SECRET, [AWS_SECRET], ["AWS_SECRET_ACCESS_KEY="]),
    # .env values holding , ; & ( { (unquoted: the value runs to the end of the line or the next whitespace)
    ("DB_PASSWORD=ab,cd;ef&gh\nDEBUG=true", ["ab,cd;ef&gh", "cd;ef", "ef&gh", "gh\n"],
     ["DB_PASSWORD=[REDACTED:password]\nDEBUG=true"]),
    ("export API_TOKEN=tok;en&val,ue42 && ./deploy.sh", ["tok;en", "en&val", "ue42"],
     ["export API_TOKEN=[REDACTED:secret] && ./deploy.sh"]),
    ("cd app && export PGPASSWORD=Xy9,sec;ret psql -h db", ["Xy9", "sec;ret"],
     ["export PGPASSWORD=[REDACTED:password] psql -h db"]),
    ("  SECRET_KEY=k(3y){x}[1]<2>\nPORT=8000", ["k(3y)", "{x}[1]<2>"], ["  SECRET_KEY=[REDACTED:secret]\nPORT=8000"]),
    ("environment:\n  - POSTGRES_PASSWORD=pg,pw;42&x", ["pg,pw", "pw;42", "42&x"],
     ["  - POSTGRES_PASSWORD=[REDACTED:password]"]),
    # ---- libpq keyword strings, the closing quote accepted
    (f'psql "host=db user=app password={PW}"', [PW], ['psql "host=db user=app password=[REDACTED:password]"']),
    (f"conn = psycopg.connect('dbname=x user=app password={PW}')", [PW], ["psycopg.connect('dbname=x user=app "]),
    (f"pg_dump 'host=db port=5432 dbname=app password={PW} sslmode=require'", [PW], ["sslmode=require'"]),
    # ---- connection strings, every common driver syntax
    (f"postgresql://app:{PW}@db.internal:5432/app", [PW], ["postgresql://app:", "@db.internal:5432/app"]),
    (f"postgresql+psycopg2://app:{PW}@localhost/app", [PW], ["postgresql+psycopg2://app:"]),
    (f"mysql://root:{PW}@127.0.0.1:3306/shop", [PW], ["mysql://root:", "@127.0.0.1:3306/shop"]),
    (f"mysql+pymysql://root:{PW}@db/shop?charset=utf8mb4", [PW], ["charset=utf8mb4"]),
    (f"mongodb+srv://admin:{PW}@cluster0.ab1cd.mongodb.net/?retryWrites=true", [PW], ["@cluster0.ab1cd.mongodb.net"]),
    (f"mongodb://admin:{PW}@h1:27017,h2:27017/db?replicaSet=rs0", [PW], ["replicaSet=rs0"]),
    (f"redis://:{PW}@cache:6379/0", [PW], ["redis://:[REDACTED:url-password]@cache:6379/0"]),
    (f"rediss://default:{PW}@cache.example.com:6380", [PW], ["rediss://default:"]),
    (f"amqp://guest:{PW}@rabbit:5672/vhost", [PW], ["amqp://guest:"]),
    (f"sqlalchemy.url = mssql+pyodbc://sa:{PW}@dsn", [PW], ["mssql+pyodbc://sa:"]),
    ("postgres://app:p@ss@word9@db/app", ["p@ss@word9", "ss@word9"], ["@db/app"]),
    (f"jdbc:postgresql://db:5432/app?user=app&password={PW}&ssl=true", [PW], ["user=app&password=", "&ssl=true"]),
    (f"jdbc:sqlserver://db:1433;databaseName=app;user=sa;password={PW};encrypt=true", [PW],
     ["user=sa;password=[REDACTED:password];encrypt=true"]),
    (f"jdbc:mysql://root:{PW}@db:3306/app", [PW], ["jdbc:mysql://root:"]),
    (f"Driver={{ODBC Driver 18 for SQL Server}};Server=db;Uid=sa;Pwd={PW};", [PW], ["Uid=sa;Pwd=[REDACTED:password];"]),
    (f"DRIVER={{PostgreSQL}};SERVER=db;UID=app;PWD={PW};", [PW], ["UID=app;PWD="]),
    (f"Server=tcp:db,1433;User ID=sa;Password={PW};Encrypt=True", [PW], ["Password=[REDACTED:password];Encrypt=True"]),
    # ---- CLI flags
    ("mysql -uroot -pS3cretPw db", ["S3cretPw"], ["mysql -uroot -p[REDACTED:password] db"]),
    ("mysqldump -h db -u root -p'S3cret Pw' shop > shop.sql", ["S3cret Pw"], ["mysqldump -h db -u root -p", "> shop.sql"]),
    ("mysql --user=root --password S3cretPw shop", ["S3cretPw"], ["--password [REDACTED:password] shop"]),
    ("mysql --user=root --password=S3cretPw shop", ["S3cretPw"], ["--password=[REDACTED:password] shop"]),
    ("curl -u admin:S3cretPw https://api.example.com/v1", ["S3cretPw"], ["curl -u admin:", "https://api.example.com/v1"]),
    ("curl --user deploy:S3cretPw -X POST https://ci.example.com", ["S3cretPw"], ["--user deploy:"]),
    ("curl -H 'Authorization: Bearer 0aB1cD2eF3gH4iJ5kL6mN7oP8' https://api.x.io", ["0aB1cD2eF3gH4iJ5kL6mN7oP8"],
     ["Authorization: Bearer", "https://api.x.io"]),
    ("curl -H 'X-API-Key: 9f8e7d6c5b4a3921' https://api.x.io", ["9f8e7d6c5b4a3921"], ["X-API-Key: "]),
    ("redis-cli -h cache -p 6379 -a S3cretPw ping", ["S3cretPw"], ["-p 6379 -a [REDACTED:password] ping"]),
    ("redis-cli --pass S3cretPw info", ["S3cretPw"], ["redis-cli --pass "]),
    ("git clone https://oauth2:glpatT0kenAbc123@gitlab.example.com/team/app.git", ["glpatT0kenAbc123"],
     ["https://oauth2:", "@gitlab.example.com/team/app.git"]),
    ("git remote set-url origin https://jdoe:gh0TokenValue99@github.com/acme/api.git", ["gh0TokenValue99"],
     ["git remote set-url origin https://jdoe:"]),
    ("echo S3 | docker login -u bot -p S3cretPw registry.example.com", ["S3cretPw"], ["-u bot -p", "registry.example.com"]),
    ("docker login --username bot --password S3cretPw ghcr.io", ["S3cretPw"], ["--username bot --password", "ghcr.io"]),
    (f"aws configure set aws_secret_access_key {AWS_SECRET}", [AWS_SECRET], ["aws configure set aws_secret_access_key "]),
    ("aws configure set profile.prod.aws_session_token FwoGZXIvYXdzEJr2SessTok3n", ["FwoGZXIvYXdzEJr2SessTok3n"],
     ["profile.prod.aws_session_token "]),
    ("gcloud sql users set-password root --instance=db1 --password=S3cretPw", ["S3cretPw"], ["--instance=db1 --password="]),
    ("curl -H \"Authorization: Bearer ya29.a0AfB_byC1d2E3f4G5h6I7j8K9\" https://www.googleapis.com", ["ya29.a0AfB_byC1d2E3f4G5h6I7j8K9"],
     ["https://www.googleapis.com"]),
    (f"kubectl --server=https://k8s:6443 --token={JWT} get pods", [JWT], ["--server=https://k8s:6443", "get pods"]),
    ("kubectl config set-credentials admin --username=admin --password=S3cretPw", ["S3cretPw"], ["--username=admin --password="]),
    ("kubectl create secret generic db --from-literal=password=S3cretPw", ["S3cretPw"], ["--from-literal=password="]),
    ("kubectl --token abcdEFGH12345678ijkl get ns", ["abcdEFGH12345678ijkl"], ["kubectl --token", "get ns"]),
    ("sshpass -p S3cretPw ssh -p 2222 deploy@host", ["S3cretPw"], ["ssh -p 2222 deploy@host"]),
    ("mongosh -u admin -p S3cretPw --authenticationDatabase admin", ["S3cretPw"], ["mongosh -u admin -p", "admin"]),
    ("openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:S3cretPw", ["S3cretPw"], ["-passout pass:"]),
    ("wget --http-user=bot --http-password=S3cretPw https://x.io/f", ["S3cretPw"], ["--http-user=bot --http-password="]),
    ("gh auth login --with-token <<< ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", ["ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"],
     ["gh auth login --with-token <<< "]),
    ("gh secret set DEPLOY_TOKEN --body gh0SecretBody77 --repo acme/api", ["gh0SecretBody77"], ["--repo acme/api"]),
    ("kubectl create secret generic app --from-literal=dsn=hostdb77pw --dry-run=client", ["hostdb77pw"],
     ["--from-literal=dsn=", "--dry-run=client"]),
    ("vault login s.Qx7v2Lm3q8Zr5Tn6Wk9Yp1", ["s.Qx7v2Lm3q8Zr5Tn6Wk9Yp1"], ["vault login "]),
    ("export VAULT_TOKEN=hvs.CAESIJ3x9mKq7Lp2Vn8Rt5Wz1Yb4Hc6Fd0Gs", ["hvs.CAESIJ3x9mKq7Lp2Vn8Rt5Wz1Yb4Hc6Fd0Gs"], ["VAULT_TOKEN="]),
    ("echo 'S3cretPw!' | docker login -u bot --password-stdin ghcr.io", ["S3cretPw!"], ["| docker login -u bot --password-stdin"]),
    ("echo S3cretPw | sudo -S apt-get update", ["S3cretPw"], ["| sudo -S apt-get update"]),
    ("az login -u me@acme.io -p S3cretPw --tenant acme", ["S3cretPw"], ["az login -u me@acme.io -p", "--tenant acme"]),
    ("sqlplus scott/Tiger2024@orcl @report.sql", ["Tiger2024"], ["sqlplus scott/", "@orcl @report.sql"]),
    ("smbclient //fs/share -U alice%S3cretPw -c ls", ["S3cretPw"], ["-U alice%", "-c ls"]),
    ("consul kv get -token=c0nsulT0ken99 app/config", ["c0nsulT0ken99"], ["-token=", "app/config"]),
    ("influx -username admin -password S3cretPw -execute 'SHOW DATABASES'", ["S3cretPw"], ["-username admin -password"]),
    ("services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: postgres\n      POSTGRES_DB: shop",
     ["POSTGRES_PASSWORD: postgres"], ["POSTGRES_PASSWORD: [REDACTED:password]", "POSTGRES_DB: shop"]),
    ("npm config set //registry.npmjs.org/:_authToken=abcd1234-ef56-7890-abcd-ef1234567890",
     ["abcd1234-ef56-7890-abcd-ef1234567890"], ["//registry.npmjs.org/:_authToken="]),
    ("terraform apply -var 'db_password=S3cretPw' -auto-approve", ["S3cretPw"], ["-var 'db_password=", "-auto-approve"]),
    ("export http_proxy=http://alice:S3cretPw@proxy.acme.io:3128", ["S3cretPw"], ["@proxy.acme.io:3128"]),
    ("mysql -h db -u root \\\n  -pS3cretPw shop", ["S3cretPw"], ["mysql -h db -u root \\\n  -p[REDACTED:password] shop"]),
    ('{"password": "ab\\"c9d\\"ef", "user": "app"}', ['ab\\"c9d', 'c9d\\"ef'], ['"user": "app"']),
    ('{"access_token": "' + "Zx9" * 100 + '"}', ["Zx9Zx9Zx9"], ['{"access_token": "[REDACTED:secret]"}']),
    # ---- code: quoted and unquoted
    ("api_key = s3cretvalue123", ["s3cretvalue123"], ["api_key = "]),
    ('client = OpenAI(api_key="sk-proj-abcDEF1234567890ghiJKL0987654321mnoPQR")',
     ["sk-proj-abcDEF1234567890ghiJKL0987654321mnoPQR"], ["client = OpenAI(api_key="]),
    ("password = 'correct horse battery staple'", ["correct horse battery staple"], ["password = '"]),
    ('const token = "tok_9a8b7c6d5e4f";', ["tok_9a8b7c6d5e4f"], ["const token = "]),
    # ---- JSON / YAML / INI config
    ('{"user": "app", "password": "Xy9secret!", "host": "db"}', ["Xy9secret!"], ['"user": "app"', '"host": "db"']),
    ('{"auths": {"ghcr.io": {"auth": "Ym90OlMzY3JldFB3MTIzNDU="}}}', ["Ym90OlMzY3JldFB3MTIzNDU="], ['"ghcr.io"']),
    ("database:\n  user: app\n  password: correcthorsebattery\n  host: db", ["correcthorsebattery"],
     ["user: app", "host: db", "password: [REDACTED:password]"]),
    ("secret: s3cr3tV4lue\nport: 8080", ["s3cr3tV4lue"], ["port: 8080"]),
    ("users:\n- name: admin\n  user:\n    token: kubeT0kenValue1234", ["kubeT0kenValue1234"], ["- name: admin"]),
    ("    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=", ["LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo="],
     ["client-key-data: "]),
    (f"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {AWS_SECRET}",
     ["AKIAIOSFODNN7EXAMPLE", AWS_SECRET], ["[default]", "aws_secret_access_key = "]),
    # ---- keys, tokens, JWTs
    (f"here:\n{RSA}\ndone", ["MIIEowIBAAKCAQEAq7BFUAyJ0vB2Yl2nE0b9", "c2sFv9cTq8Lk2Zy7Xw6Vu5"], ["here:\n", "\ndone"]),
    ('{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n'
     '-----END PRIVATE KEY-----\\n"}', ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"], ['"type": "service_account"']),
    (f"the session cookie is {JWT}", [JWT, JWT.split(".")[2]], ["the session cookie is "]),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", ["AbCdEfGhIjKlMnOpQrStUvWx"], []),
]
