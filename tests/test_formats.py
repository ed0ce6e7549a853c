"""Tests for hela_cli.formats: every format, detection, dates and bad input."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hela_cli import formats
from hela_cli.errors import InputError
from hela_cli.formats import (
    FORMATS,
    Conversation,
    Turn,
    detect_format,
    parse_date,
    parse_file,
)
from tests.cases import BAD, lme_item, locomo_sample, write

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"


def utc(*args: int) -> float:
    return datetime(*args, tzinfo=timezone.utc).timestamp()




def key(t: Turn):
    return (t.speaker, t.text, t.timestamp, t.session, t.source_id)


# --------------------------------------------------------------------------- sample data


def test_sample_locomo():
    convs = parse_file(SAMPLE / "conversation.json")
    assert len(convs) == 1
    c = convs[0]
    assert isinstance(c, Conversation)
    assert c.name == "demo"
    assert c.source == str(SAMPLE / "conversation.json")
    assert 60 <= len(c.turns) <= 90
    sessions = [t.session for t in c.turns]
    assert sorted(set(sessions), key=sessions.index) == ["session_1", "session_2", "session_3", "session_4"]
    assert c.turns[0].source_id == "D1:1" and c.turns[0].speaker == "Maya"
    assert c.turns[0].timestamp == utc(2024, 3, 3, 14, 15)
    assert c.turns[0].time_str == "2:15 pm on 3 March, 2024"
    assert c.turns[-1].timestamp == utc(2024, 4, 28, 20, 30)
    ts = [t.timestamp for t in c.turns]
    assert ts == sorted(ts)
    captions = [t for t in c.turns if "[shares an image: " in t.text]
    assert len(captions) >= 1
    assert captions[0].text.endswith(" [shares an image: a photo of a grey greyhound curled up on a blue couch]")
    assert all(t.role is None for t in c.turns)
    assert 8 <= len(c.qa) <= 10
    ids = {t.source_id for t in c.turns}
    assert len(ids) == len(c.turns)
    cats = {q["category"] for q in c.qa}
    assert cats == {1, 2, 3, 4, 5}
    for q in c.qa:
        assert set(q["evidence"]) <= ids
        assert ("adversarial_answer" if q["category"] == 5 else "answer") in q


def test_sample_text_matches_json():
    a = parse_file(SAMPLE / "conversation.json")[0]
    b = parse_file(SAMPLE / "conversation.txt", "text")[0]
    assert b.name is None and b.qa == []
    assert [key(t) for t in a.turns] == [key(t) for t in b.turns]
    assert b.turns[0].time_str == "3 March 2024 2:15 pm"


def test_sample_questions_evidence():
    ids = {t.source_id for t in parse_file(SAMPLE / "conversation.json")[0].turns}
    qs = json.loads((SAMPLE / "questions.json").read_text(encoding="utf-8"))
    assert len(qs) == 5
    for q in qs:
        assert set(q) == {"question", "answer", "evidence"}
        assert q["evidence"] and set(q["evidence"]) <= ids
    assert any(len({e.split(":")[0] for e in q["evidence"]}) >= 2 for q in qs)


def test_sample_chat():
    c = parse_file(SAMPLE / "chat.jsonl")[0]
    assert c.name is None
    assert 10 <= len(c.turns) <= 14
    assert {t.role for t in c.turns} == {"user", "assistant"}
    assert all(t.speaker == t.role for t in c.turns)
    assert all(t.session == "session_1" for t in c.turns)
    assert c.turns[0].timestamp == utc(2024, 5, 2, 8, 58)
    ts = [t.timestamp for t in c.turns]
    assert ts == sorted(ts)
    assert [t.source_id for t in c.turns[:2]] == ["session_1:0", "session_1:1"]


@pytest.mark.parametrize(
    "name,fmt",
    [("conversation.json", "locomo"), ("conversation.txt", "text"), ("chat.jsonl", "messages")],
)
def test_sample_detect(name, fmt):
    assert detect_format(SAMPLE / name) == fmt


# --------------------------------------------------------------------------- locomo


def test_locomo_session_order_10_plus(tmp_path):
    order = [12, 3, 10, 1, 11, 2, 9, 4, 8, 5, 7, 6]
    sessions = {n: (f"10:00 am on {n} May, 2023", [("Ann", f"s{n} a"), ("Bob", f"s{n} b")]) for n in order}
    p = write(tmp_path, "many.json", [locomo_sample("many", sessions)])
    c = parse_file(p)[0]
    seen = []
    for t in c.turns:
        if t.session not in seen:
            seen.append(t.session)
    assert seen == [f"session_{n}" for n in range(1, 13)]
    assert c.turns[0].text == "s1 a" and c.turns[-1].text == "s12 b"
    assert [t.timestamp for t in c.turns] == sorted(t.timestamp for t in c.turns)
    assert c.turns[18].session == "session_10" and c.turns[18].source_id == "D10:1"


def test_locomo_single_object_and_multiple_samples(tmp_path):
    p = write(tmp_path, "one.json", locomo_sample("solo"))
    c = parse_file(p, "locomo")
    assert [x.name for x in c] == ["solo"]
    p2 = write(tmp_path, "two.json", [locomo_sample("a"), locomo_sample("b")])
    assert [x.name for x in parse_file(p2)] == ["a", "b"]


def test_locomo_caption_and_fields(tmp_path):
    s = locomo_sample("cap")
    turns = s["conversation"]["session_1"]
    turns[0].update({"img_url": ["https://example.invalid/x.jpg"], "blip_caption": "a cat on a mat", "query": "cat"})
    turns.append({"speaker": "Ann", "dia_id": "D1:3", "text": "", "blip_caption": "a red kite",
                  "img_url": "https://example.invalid/k.jpg"})
    s["qa"] = [{"question": "q?", "answer": 2022, "evidence": ["D1:1"], "category": 2}]
    c = parse_file(write(tmp_path, "cap.json", [s]))[0]
    assert c.turns[0].text == "hello [shares an image: a cat on a mat]"
    assert c.turns[2].text == "[shares an image: a red kite]"
    assert c.turns[0].timestamp == utc(2023, 5, 8, 13, 56)
    assert c.turns[0].time_str == "1:56 pm on 8 May, 2023"
    assert c.qa == s["qa"]


def test_locomo_qa_absent_and_extra_keys(tmp_path):
    s = locomo_sample("x")
    del s["qa"]
    s["event_summary"] = {"whatever": 1}
    s["conversation"]["session_7_date_time"] = "1:00 pm on 1 June, 2023"  # date without a session: ignored
    c = parse_file(write(tmp_path, "x.json", [s]))[0]
    assert c.qa == [] and len(c.turns) == 2


def test_long_text_kept_intact(tmp_path):
    long = ("word " * 6000).strip()
    assert len(long) > 20000
    s = locomo_sample("long", {1: ("1:56 pm on 8 May, 2023", [("Ann", long)])})
    assert parse_file(write(tmp_path, "long.json", [s]))[0].turns[0].text == long
    p = write(tmp_path, "long.txt", f"Ann: {long}\n")
    assert parse_file(p)[0].turns[0].text == long


# --------------------------------------------------------------------------- longmemeval


def test_longmemeval(tmp_path):
    p = write(tmp_path, "lme.json", [lme_item("q1"), lme_item("q2", haystack_session_ids=["x", "y"])])
    assert detect_format(p) == "longmemeval"
    convs = parse_file(p)
    assert [c.name for c in convs] == ["q1", "q2"]
    c = convs[0]
    assert [t.source_id for t in c.turns] == ["s_a:0", "s_a:1", "s_b:0"]
    assert [t.session for t in c.turns] == ["s_a", "s_a", "s_b"]
    assert [t.speaker for t in c.turns] == ["user", "assistant", "user"]
    assert [t.role for t in c.turns] == ["user", "assistant", "user"]
    assert c.turns[0].timestamp == utc(2023, 5, 20, 2, 21)
    assert c.turns[2].time_str == "2023/05/21 (Sun) 10:00"
    assert c.qa == [{"question": "What did I buy?", "answer": "a lamp", "question_date": "2023/05/30 (Tue) 23:40"}]


def test_longmemeval_repeated_session_id_kept(tmp_path):
    item = lme_item("dup", haystack_session_ids=["s_a", "s_a"])
    item["haystack_sessions"][1] = item["haystack_sessions"][0]
    c = parse_file(write(tmp_path, "dup.json", [item]))[0]
    assert [t.source_id for t in c.turns] == ["s_a:0", "s_a:1", "s_a#2:0", "s_a#2:1"]
    assert [t.session for t in c.turns] == ["s_a", "s_a", "s_a#2", "s_a#2"]
    assert c.turns[2].timestamp == utc(2023, 5, 21, 10, 0)


def test_longmemeval_without_ids_and_question(tmp_path):
    item = lme_item("solo")
    del item["haystack_session_ids"], item["question"], item["answer"], item["question_date"]
    c = parse_file(write(tmp_path, "lme1.json", item), "longmemeval")[0]
    assert [t.source_id for t in c.turns] == ["session_1:0", "session_1:1", "session_2:0"]
    assert c.qa == []


# --------------------------------------------------------------------------- messages


def test_messages_json_array(tmp_path):
    msgs = [
        {"role": "user", "name": "Lena", "content": "hi", "created_at": 1700000000},
        {"role": "assistant", "content": "hello", "session": 2},
        {"role": "user", "content": "bye", "timestamp": "2024-01-01T10:00:00+02:00", "session": "later", "id": "m3"},
    ]
    p = write(tmp_path, "chat.json", msgs)
    assert detect_format(p) == "messages"
    c = parse_file(p)[0]
    assert [t.speaker for t in c.turns] == ["Lena", "assistant", "user"]
    assert [t.role for t in c.turns] == ["user", "assistant", "user"]
    assert [t.session for t in c.turns] == ["session_1", "session_2", "later"]
    assert [t.source_id for t in c.turns] == ["session_1:0", "session_2:1", "m3"]
    assert c.turns[0].timestamp == 1700000000.0 and c.turns[0].time_str == "1700000000"
    assert c.turns[1].timestamp == 1700000000.0  # inherited
    assert c.turns[2].timestamp == utc(2024, 1, 1, 8, 0)


def test_messages_no_timestamps_rule(tmp_path):
    p = write(tmp_path, "n.jsonl", '{"role":"user","content":"a"}\n\n{"role":"assistant","content":"b"}\n')
    c = parse_file(p)[0]
    assert [(t.timestamp, t.time_str) for t in c.turns] == [(0.0, ""), (0.0, "")]


def test_messages_leading_turns_take_first_timestamp(tmp_path):
    lines = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b", "timestamp": "2024-02-02"},
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "d", "timestamp": 1800000000.5},
    ]
    p = write(tmp_path, "lead.jsonl", "\n".join(json.dumps(x) for x in lines))
    c = parse_file(p)[0]
    d = utc(2024, 2, 2)
    assert [t.timestamp for t in c.turns] == [d, d, d, 1800000000.5]
    assert c.turns[0].time_str == "2024-02-02"


def test_messages_single_object_and_bom(tmp_path):
    p = write(tmp_path, "one.json", '\ufeff{"role": "user", "content": "solo"}')
    c = parse_file(p)[0]
    assert [t.text for t in c.turns] == ["solo"]


def test_messages_jsonl_explicit_on_json_extension(tmp_path):
    p = write(tmp_path, "m.json", '{"role":"user","content":"a"}\n{"role":"user","content":"b"}\n')
    assert detect_format(p) == "messages"
    assert [t.text for t in parse_file(p, "messages")[0].turns] == ["a", "b"]
    assert [t.text for t in parse_file(p)[0].turns] == ["a", "b"]


# --------------------------------------------------------------------------- text


def test_text_headers_and_continuations(tmp_path):
    content = (
        "# a comment line\n"
        "--- session 1 (2023-05-12 15:00) ---\n"
        "Ann: first line\n"
        "second line of the same turn\n"
        "    Note: indented, so still Ann's turn\n"
        "\n"
        "Bob Smith: reply: with a colon\n"
        "----\n"
        "## Session 2 — 14 May 2023 9:30 am\n"
        "Ann: later\n"
        "=== Session 3 ===\n"
        "Bob Smith: undated session inherits\n"
        "## Session 4: May 20, 2023\n"
        "Ann: last\n"
    )
    p = write(tmp_path, "t.txt", content.replace("\n", "\r\n"))
    assert detect_format(p) == "text"
    c = parse_file(p)[0]
    assert [t.speaker for t in c.turns] == ["Ann", "Bob Smith", "Ann", "Bob Smith", "Ann"]
    assert c.turns[0].text == "first line\nsecond line of the same turn\nNote: indented, so still Ann's turn"
    assert c.turns[1].text == "reply: with a colon"
    assert [t.session for t in c.turns] == ["session_1", "session_1", "session_2", "session_3", "session_4"]
    assert [t.source_id for t in c.turns] == ["D1:1", "D1:2", "D2:1", "D3:1", "D4:1"]
    assert c.turns[0].timestamp == utc(2023, 5, 12, 15, 0)
    assert c.turns[2].timestamp == utc(2023, 5, 14, 9, 30)
    assert c.turns[3].timestamp == c.turns[2].timestamp and c.turns[3].time_str == "14 May 2023 9:30 am"
    assert c.turns[4].timestamp == utc(2023, 5, 20)


def test_text_without_headers(tmp_path):
    c = parse_file(write(tmp_path, "plain.txt", "Ann: hi\nBob: yo\n"))[0]
    assert [(t.session, t.timestamp, t.time_str, t.role) for t in c.turns] == [("session_1", 0.0, "", None)] * 2


def test_text_turns_before_first_header_are_session_1(tmp_path):
    c = parse_file(write(tmp_path, "pre.txt", "Ann: hi\n## Session 2 — 1 June 2023\nBob: yo\n"))[0]
    assert [t.session for t in c.turns] == ["session_1", "session_2"]
    assert c.turns[0].timestamp == c.turns[1].timestamp == utc(2023, 6, 1)  # leading take the first date


# --------------------------------------------------------------------------- detection and dates


@pytest.mark.parametrize(
    "name,content,fmt",
    [
        ("a.json", [locomo_sample()], "locomo"),
        ("a.json", locomo_sample(), "locomo"),
        ("b.json", [lme_item()], "longmemeval"),
        ("c.json", [{"role": "user", "content": "x"}], "messages"),
        ("d.data", '{"role": "user", "content": "x"}\n{"role": "user", "content": "y"}\n', "messages"),
        ("e.jsonl", '{"role": "user", "content": "x"}\n', "messages"),
        ("f.log", "Ann: hi\n", "text"),
        ("g.json", "Ann: hi\n", "text"),
    ],
)
def test_detect(tmp_path, name, content, fmt):
    p = write(tmp_path, name, content)
    assert detect_format(p) == fmt
    assert parse_file(p)  # and it parses


def test_formats_tuple():
    assert FORMATS == ("auto", "locomo", "longmemeval", "messages", "text", "chatgpt", "claude", "whatsapp",
                       "claude_code", "codex", "gemini")


@pytest.mark.parametrize(
    "s,expected",
    [
        ("1:56 pm on 8 May, 2023", utc(2023, 5, 8, 13, 56)),
        ("12:05 am on 1 January, 2024", utc(2024, 1, 1, 0, 5)),
        ("12:05 pm on 1 Jan, 2024", utc(2024, 1, 1, 12, 5)),
        ("2023/05/20 (Sat) 02:21", utc(2023, 5, 20, 2, 21)),
        ("2023-05-12", utc(2023, 5, 12)),
        ("2023-05-12T15:00:00Z", utc(2023, 5, 12, 15)),
        ("2023-05-12T15:00:00-05:00", utc(2023, 5, 12, 20)),
        ("12 May 2023 3:00 pm", utc(2023, 5, 12, 15)),
        ("May 12, 2023 3:00 PM", utc(2023, 5, 12, 15)),
        ("12 Sept 2023", utc(2023, 9, 12)),
    ],
)
def test_parse_date(s, expected):
    assert parse_date(s) == expected


@pytest.mark.parametrize(
    "s", ["", "tomorrow", "31 February 2023", "9999-01-01", "1:56 pm on 8 May, 9999", "13:00 pm on 1 May, 2023",
          "1899-12-31", "2023-13-01", "3 Smarch 2023", "2023/05/20 (Sat) 25:00"],
)
def test_parse_date_rejects(s):
    with pytest.raises(ValueError):
        parse_date(s)


# --------------------------------------------------------------------------- bad input




@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input(tmp_path, case):
    _id, name, content, fmt, expected = case
    p = write(tmp_path, name, content)
    with pytest.raises(InputError) as ei:
        parse_file(p, fmt)
    msg = str(ei.value)
    assert "\n" not in msg and "\r" not in msg
    assert msg.startswith(str(p) + ": ")
    assert name in msg
    assert expected in msg[len(str(p)):]
    assert ei.value.exit_code == 2


def test_error_message_exact(tmp_path):
    p = write(tmp_path, "chat.jsonl", '{"role":"user","content":"a"}\n{"role": "user" "content": "b"}\n')
    with pytest.raises(InputError) as ei:
        parse_file(p)
    assert str(ei.value) == f"{p}: line 2: invalid JSON (Expecting ',' delimiter, col 17)"
    s = locomo_sample("conv-30", {4: ("1:56 pm on 8 May, 2023", [("Ann", "a")] * 7)})
    del s["conversation"]["session_4"][6]["text"]
    p = write(tmp_path, "conv.json", [locomo_sample("conv-1"), s])
    with pytest.raises(InputError) as ei:
        parse_file(p)
    assert str(ei.value) == f"{p}: sample 2 (conv-30) session_4 turn 7 (D4:7): missing 'text'"


def test_bad_input_count():
    assert len(BAD) >= 40


def test_missing_file(tmp_path):
    p = tmp_path / "nope.json"
    with pytest.raises(InputError, match="nope.json: no such file"):
        parse_file(p)
    with pytest.raises(InputError, match="nope.json"):
        detect_format(p)


def test_directory(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        parse_file(tmp_path)


def test_unknown_format(tmp_path):
    p = write(tmp_path, "x.txt", "Ann: hi\n")
    with pytest.raises(InputError) as ei:
        parse_file(p, "csv")
    assert "x.txt" in str(ei.value) and "unknown format" in str(ei.value)


def test_permission_denied(tmp_path, monkeypatch):
    p = write(tmp_path, "secret.txt", "Ann: hi\n")
    if os.name == "posix" and os.geteuid() != 0:
        p.chmod(0)
    else:  # root can read anything: simulate the OS refusing
        def deny(self):
            raise PermissionError(13, "Permission denied", str(self))
        monkeypatch.setattr(Path, "read_bytes", deny)
    try:
        with pytest.raises(InputError, match=r"secret\.txt: cannot read file \(permission denied\)"):
            parse_file(p)
    finally:
        p.chmod(0o644)


def test_newline_in_path_stays_one_line(tmp_path):
    p = write(tmp_path, "odd\nname.txt", "no speaker here\n")
    with pytest.raises(InputError) as ei:
        parse_file(p)
    assert "\n" not in str(ei.value) and "odd\\nname.txt" in str(ei.value)


# --------------------------------------------------------------------------- properties

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12))
_json = st.recursive(
    _json_leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4),
        st.dictionaries(
            st.sampled_from(["role", "content", "conversation", "sample_id", "session_1", "session_1_date_time",
                             "speaker_a", "speaker_b", "haystack_sessions", "haystack_dates", "question_id",
                             "text", "speaker", "dia_id", "timestamp", "x"]),
            kids, max_size=6),
    ),
    max_leaves=20,
)


def _only_input_error(data: bytes, suffix: str, fmt: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"f{suffix}"
        p.write_bytes(data)
        try:
            res = parse_file(p, fmt)
        except InputError as e:
            assert "\n" not in str(e) and str(p) in str(e)
        else:
            assert isinstance(res, list) and res and all(isinstance(c, Conversation) for c in res)


@FAST
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".json", ".jsonl", ".txt"]),
       fmt=st.sampled_from(FORMATS))
def test_random_bytes_only_input_error(data, suffix, fmt):
    _only_input_error(data, suffix, fmt)


@FAST
@given(text=st.text(max_size=300), suffix=st.sampled_from([".json", ".jsonl", ".txt"]),
       fmt=st.sampled_from(FORMATS))
def test_random_text_only_input_error(text, suffix, fmt):
    _only_input_error(text.encode("utf-8", "surrogatepass"), suffix, fmt)


@FAST
@given(doc=_json, fmt=st.sampled_from(FORMATS), jsonl=st.booleans())
def test_random_json_only_input_error(doc, fmt, jsonl):
    if jsonl and isinstance(doc, list):
        data = "\n".join(json.dumps(x) for x in doc)
    else:
        data = json.dumps(doc)
    _only_input_error(data.encode("utf-8", "surrogatepass"), ".json", fmt)


_message = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "system"]),
        "content": st.text(min_size=1, max_size=40).filter(lambda s: s.strip()),
    },
    optional={
        "name": st.text(alphabet="abcXYZ ", min_size=1, max_size=8).filter(lambda s: s.strip()),
        "timestamp": st.one_of(
            st.integers(min_value=0, max_value=4_000_000_000),
            st.datetimes(min_value=datetime(1900, 1, 2), max_value=datetime(2199, 12, 30)).map(
                lambda d: d.isoformat()),
        ),
    },
)


@FAST
@given(msgs=st.lists(_message, min_size=1, max_size=15))
def test_messages_jsonl_roundtrip(msgs):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "rt.jsonl"
        p.write_text("\n".join(json.dumps(m) for m in msgs) + "\n", encoding="utf-8")
        (c,) = parse_file(p)
    assert len(c.turns) == len(msgs)
    assert [t.text for t in c.turns] == [m["content"].strip() for m in msgs]
    assert [t.role for t in c.turns] == [m["role"] for m in msgs]
    assert [t.speaker for t in c.turns] == [m.get("name", "").strip() or m["role"] for m in msgs]
    assert [t.source_id for t in c.turns] == [f"session_1:{i}" for i in range(len(msgs))]
    stamped = [i for i, m in enumerate(msgs) if "timestamp" in m]
    for i in stamped:
        assert c.turns[i].time_str == str(msgs[i]["timestamp"])
    if not stamped:
        assert all(t.timestamp == 0.0 for t in c.turns)


def test_module_exports():
    assert set(formats.__all__) >= {"FORMATS", "Turn", "Conversation", "parse_file", "detect_format"}


def test_every_format_is_a_registered_module_documented_for_users():
    """One module per format, registered in PARSERS (``auto`` aside, FORMATS is the registry); each has
    its section in docs/formats.md."""
    import importlib

    assert FORMATS == ("auto", *formats.PARSERS)
    doc = (Path(__file__).resolve().parent.parent / "docs" / "formats.md").read_text(encoding="utf-8")
    for name, parse in formats.PARSERS.items():
        assert parse is importlib.import_module(f"hela_cli.formats.{name}").parse
        assert f"# `{name}`" in doc, name
