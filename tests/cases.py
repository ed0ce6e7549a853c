"""Cases shared by several test modules (instead of test modules importing each other): the bad-input
cases of every parser (``BAD``, ``BAD_EXPORTS``, run by the parser tests and end to end through the CLI by
tests/test_bad_input.py), the builders they use, and the small conversation of the consolidation tests."""

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
