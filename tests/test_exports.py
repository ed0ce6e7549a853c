"""Chat exports (issue 12): ChatGPT and Claude.ai ``conversations.json``, WhatsApp "export chat" text.

The fixtures in ``tests/data/exports/`` are small files written by hand from the public descriptions of
these formats (one quirk each: regenerated and edited branches, hidden system and tool messages, content
blocks, iPhone and Android time stamps, US dates, media notes, multi-line messages).
"""

from __future__ import annotations

import copy
import json
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hela_cli.errors import InputError
from hela_cli.formats import Conversation, detect_format, parse_file
from tests.cases import (BAD_EXPORTS, CHATGPT, CLAUDE, GPT3, LRM, WA_ANDROID, WA_IOS, WA_US, _gpt, _set,
                         write)



def utc(*a) -> float:
    return datetime(*a, tzinfo=timezone.utc).timestamp()


def turns(convs: list[Conversation]):
    return [t for c in convs for t in c.turns]


# ----------------------------------------------------------------------------------- chatgpt
def test_chatgpt_flattens_the_current_branch():
    assert detect_format(CHATGPT) == "chatgpt"
    convs = parse_file(CHATGPT)
    # the empty "New chat" (only a hidden system message) is dropped; the oldest conversation comes first
    assert [c.title for c in convs] == ["Trip to Lisbon", "Sourdough starter"]
    assert all(c.name is None and c.qa == [] and c.source == str(CHATGPT) for c in convs)
    lisbon = convs[0].turns
    # the branch ending at current_node: no regenerated (a-1-old) or edited-away (u-2-old, a-2-old) nodes,
    # no system / custom-instruction (hidden), tool call (recipient browser) or tool messages
    assert [t.source_id for t in lisbon] == ["u-1", "a-1", "u-2", "a-3", "u-3"]
    assert [t.speaker for t in lisbon] == ["user", "assistant", "user", "assistant", "user"]
    assert [t.role for t in lisbon] == [t.speaker for t in lisbon]
    assert not any("away" in t.text for t in lisbon)
    assert lisbon[2].text == "What is this tower in my photo?"  # the image part of multimodal_text dropped
    assert lisbon[3].text == "That is the Belem Tower, built in the 16th century.\nIt stands on the Tagus river."
    assert {t.session for t in lisbon} == {"Trip to Lisbon (6f1e2a3b)"}
    assert lisbon[0].timestamp == utc(2023, 6, 1, 11, 1) and lisbon[0].time_str == "2023-06-01T11:01:00Z"
    assert lisbon[4].timestamp == lisbon[3].timestamp  # create_time null: the previous message's time
    bread = convs[1].turns
    assert [t.text[:20] for t in bread] == ["My sourdough starter", "No, it is hungry: fe"]
    assert bread[0].session == "Sourdough starter (0a9b8c7d)"


def test_chatgpt_time_falls_back_to_the_conversation(tmp_path):
    doc = json.loads(CHATGPT.read_text())
    lisbon = doc[2]
    lisbon["mapping"]["u-1"]["message"]["create_time"] = None
    lisbon["mapping"]["a-1"]["message"]["create_time"] = None
    (conv, _) = parse_file(write(tmp_path, "c.json", doc), "chatgpt")
    assert conv.turns[0].timestamp == conv.turns[1].timestamp == lisbon["create_time"]
    assert conv.turns[2].timestamp == lisbon["mapping"]["u-2"]["message"]["create_time"]


def test_chatgpt_single_conversation_object_and_untitled(tmp_path):
    doc = json.loads(CHATGPT.read_text())[1]
    doc["title"] = None
    (conv,) = parse_file(write(tmp_path, "one.json", doc))
    assert conv.title == "untitled" and conv.turns[0].session == "untitled (0a9b8c7d)"


# ----------------------------------------------------------------------------------- claude
def test_claude_messages_and_content_blocks():
    assert detect_format(CLAUDE) == "claude"
    convs = parse_file(CLAUDE)
    assert [c.title for c in convs] == ["untitled", "Garden planning"]  # chronological; the empty one dropped
    cat, garden = convs[0].turns, convs[1].turns
    # no content blocks: the plain 'text' field
    assert [(t.speaker, t.role) for t in cat] == [("user", "user"), ("assistant", "assistant")]
    assert cat[0].text == "My cat Miso is afraid of the vacuum cleaner."
    assert cat[0].timestamp == utc(2023, 11, 20, 18, 0, 5) and cat[0].time_str == "2023-11-20T18:00:05Z"
    # thinking, tool use and tool results dropped; a message with only a tool call skipped
    assert [t.source_id for t in garden] == ["m-21", "m-22", "m-24"]
    assert garden[1].text == ("Cherry tomatoes such as Sungold cope best with partial shade.\n\n"
                              "Give them at least four hours of sun.")
    assert garden[2].timestamp == utc(2024, 3, 2, 9, 16)  # created_at null: the previous message's time
    assert {t.session for t in garden} == {"Garden planning (c2d4e6f8)"}


# ----------------------------------------------------------------------------------- whatsapp
def test_whatsapp_iphone():
    assert detect_format(WA_IOS) == "whatsapp"
    convs = parse_file(WA_IOS)
    assert [c.turns[0].session for c in convs] == ["2023-05-08", "2023-05-13"]  # one session per day
    ts = turns(convs)
    assert [t.speaker for t in ts] == ["Ann Smith", "Bob", "Ann Smith", "Bob"]
    assert all(t.role is None for t in ts)
    assert ts[1].text == "Yes, at 7.\nAlso gave her the pills:\n  half a tablet, as the vet said"  # multi-line
    assert ts[2].text == "Thanks! She looks happy"  # "<This message was edited>" removed
    assert ts[3].text == "The vet appointment is on Tuesday at 10."  # the photo alone was skipped
    assert ts[0].timestamp == utc(2023, 5, 8, 13, 56, 12) and ts[0].time_str == "08/05/2023, 13:56:12"
    # K counts the day's message lines, so system notes and media keep their numbers
    assert [t.source_id for t in ts] == ["2023-05-08:2", "2023-05-08:3", "2023-05-08:5", "2023-05-13:2"]
    assert not any(LRM in t.text or "encrypted" in t.text or "deleted" in t.text for t in ts)


def test_whatsapp_android():
    assert detect_format(WA_ANDROID) == "whatsapp"
    ts = turns(parse_file(WA_ANDROID))
    assert [(t.speaker, t.text) for t in ts] == [
        ("Ann", "Next book: The Left Hand of Darkness.\nWe meet at mine on the 20th."),
        ("Bob", "My copy arrived!"),  # the attached file's caption stays, the file note goes
        ("Ann", "That was a great evening, thanks all"),
    ]  # system lines skipped, even 'Ann created group "Book club: 2023"' with its colon
    assert ts[0].timestamp == utc(2023, 5, 8, 13, 58) and ts[2].timestamp == utc(2023, 5, 21, 22, 10)
    assert [t.session for t in ts] == ["2023-05-08", "2023-05-08", "2023-05-21"]


def test_whatsapp_us_dates_and_12_hour_clock():
    ts = turns(parse_file(WA_US))
    assert ts[0].timestamp == utc(2023, 12, 13, 9, 5)  # 12/13/23: month first, detected from the 13
    assert ts[2].timestamp == utc(2023, 12, 13, 12, 30)
    assert ts[3].timestamp == utc(2024, 1, 2, 20, 0)  # 1/2/24 read month-first like the rest of the file
    assert ts[0].time_str == "12/13/23, 9:05\u202fAM"


@pytest.mark.parametrize("lines, expected", [
    # every date ambiguous: the order under which time runs forward wins ...
    (["02/01/23, 10:00 - A: x", "02/03/23, 10:00 - A: y", "03/01/23, 10:00 - A: z"],
     [utc(2023, 2, 1, 10), utc(2023, 2, 3, 10), utc(2023, 3, 1, 10)]),
    # ... and a tie goes to day-first
    (["01/02/23, 10:00 - A: x", "03/02/23, 10:00 - A: y"], [utc(2023, 2, 1, 10), utc(2023, 2, 3, 10)]),
    (["[2023-05-08, 1:56:00 p.m.] A: x"], [utc(2023, 5, 8, 13, 56)]),
    (["08.05.23, 13:56 - A: x"], [utc(2023, 5, 8, 13, 56)]),
    (["[8/5/2023 12:05:00 AM] A: x"], [utc(2023, 5, 8, 0, 5)]),
    (["8/5/23, 12:05 pm - A: x"], [utc(2023, 5, 8, 12, 5)]),
    ([f"{LRM}[08/05/2023, 13:56:12] A: x"], [utc(2023, 5, 8, 13, 56, 12)]),
    (["[12.3.2022 klo 14.08.18] Matti: x"], [utc(2022, 3, 12, 14, 8, 18)]),
])
def test_whatsapp_date_shapes(tmp_path, lines, expected):
    p = write(tmp_path, "chat.txt", "\n".join(lines) + "\n")
    assert detect_format(p) == "whatsapp"
    assert [t.timestamp for t in turns(parse_file(p))] == expected


def test_whatsapp_invisible_marks_removed(tmp_path):
    p = write(tmp_path, "chat.txt", "[08/05/2023, 13:56:12] \u2068Ann\u2069: thanks @\u2068Bob Lee\u2069 \U0001F468\u200d\U0001F469\n")
    (t,) = turns(parse_file(p))
    assert (t.speaker, t.text) == ("Ann", "thanks @Bob Lee \U0001F468\u200d\U0001F469")  # the ZWJ emoji stays


def test_whatsapp_crlf_and_leading_blank_lines(tmp_path):
    p = write(tmp_path, "chat.txt", ("\r\n\r\n" + WA_ANDROID.read_text().replace("\n", "\r\n")).encode())
    assert detect_format(p) == "whatsapp"
    assert [(t.speaker, t.text) for t in turns(parse_file(p))] == [
        (t.speaker, t.text) for t in turns(parse_file(WA_ANDROID))]


def test_chats_sharing_a_title_stay_apart(tmp_path):
    doc = json.loads(CHATGPT.read_text())
    twin = copy.deepcopy(doc[1])
    twin.update(id="1b2c3d4e-0000-0000-0000-000000000000", conversation_id="1b2c3d4e-0000-0000-0000-000000000000")
    convs = parse_file(write(tmp_path, "c.json", [doc[1], twin]))
    assert [c.title for c in convs] == ["Sourdough starter"] * 2
    assert [c.turns[0].session for c in convs] == ["Sourdough starter (0a9b8c7d)", "Sourdough starter (1b2c3d4e)"]


def test_long_and_multi_line_titles_make_one_line_sessions(tmp_path):
    doc = json.loads(CHATGPT.read_text())[1]
    doc["title"] = "Sour\ndough " + "x" * 200
    (conv,) = parse_file(write(tmp_path, "c.json", doc))
    assert conv.title == doc["title"]
    assert conv.turns[0].session == "Sour dough " + "x" * 69 + "... (0a9b8c7d)"


# ----------------------------------------------------------------------------------- detection
@pytest.mark.parametrize("name, content, fmt", [
    ("t.txt", "Ann: on 08/05/2023, 13:56 - we met\nBob: ok\n", "text"),
    ("t.txt", "## Session 1 — 8 May 2023\nAnn: 08/05/23, 13:56 - hi\n", "text"),
    ("m.json", [{"role": "user", "content": "[08/05/2023, 13:56:12] A: x"}], "messages"),
    ("m.json", [{"mapping": {}, "role": "user", "content": "x"}], "chatgpt"),
    ("c.json", {"uuid": "u", "chat_messages": [{"sender": "human", "text": "hi"}]}, "claude"),
    ("w.log", "\n\n08/05/23, 13:56 - A: x\n", "whatsapp"),
])
def test_detection_does_not_steal(tmp_path, name, content, fmt):
    p = write(tmp_path, name, content)
    assert detect_format(p) == fmt


def test_sample_data_keeps_its_formats():
    sample = Path(__file__).resolve().parents[1] / "sample_data"
    found = {name: detect_format(sample / name) for name in ("chat.jsonl", "conversation.json", "conversation.txt")}
    assert found == {"chat.jsonl": "messages", "conversation.json": "locomo", "conversation.txt": "text"}


# ----------------------------------------------------------------------------------- broken exports


@pytest.mark.parametrize("case", BAD_EXPORTS, ids=[c[0] for c in BAD_EXPORTS])
def test_broken_exports(tmp_path, case):
    _id, name, content, fmt, expected = case
    p = write(tmp_path, name, content)
    with pytest.raises(InputError) as ei:
        parse_file(p, fmt)
    msg = str(ei.value)
    assert "\n" not in msg and msg.startswith(f"{p}: ")
    assert expected in msg, msg
    assert ei.value.exit_code == 2


# ----------------------------------------------------------------------------------- properties
FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
                  st.sampled_from(["user", "assistant", "human", "system", "text", "a", "b", "all"]))
_export_json = st.recursive(
    _leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4),
        st.dictionaries(st.sampled_from(
            ["id", "uuid", "title", "name", "mapping", "current_node", "parent", "children", "message", "author",
             "role", "content", "content_type", "parts", "create_time", "created_at", "chat_messages", "sender",
             "text", "type", "metadata", "recipient", "a", "b"]), kids, max_size=6),
    ),
    max_leaves=25,
)


def _only_input_error(data: str, fmt: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "conversations.json"
        p.write_bytes(data.encode("utf-8", "surrogatepass"))
        try:
            res = parse_file(p, fmt)
        except InputError as e:
            assert "\n" not in str(e) and str(p) in str(e)
        else:
            assert res and all(isinstance(c, Conversation) and c.turns for c in res)


@FAST
@given(doc=_export_json, fmt=st.sampled_from(["auto", "chatgpt", "claude"]))
def test_random_json_exports_only_input_error(doc, fmt):
    _only_input_error(json.dumps(doc), fmt)


_wa_line = st.one_of(
    st.builds(lambda d, m, y, h, mi, rest: f"{d}/{m}/{y}, {h}:{mi:02d} - {rest}",
              st.integers(0, 40), st.integers(0, 40), st.integers(0, 2300), st.integers(0, 30), st.integers(0, 70),
              st.text(max_size=15)),
    st.builds(lambda d, m, y, h, mi, ap, rest: f"[{d}.{m}.{y}, {h}:{mi:02d}:00 {ap}] {rest}",
              st.integers(0, 40), st.integers(0, 40), st.integers(0, 99), st.integers(0, 30), st.integers(0, 70),
              st.sampled_from(["AM", "pm", "p.m.", ""]), st.text(max_size=15)),
    st.text(max_size=20),
)


@FAST
@given(lines=st.lists(_wa_line, min_size=1, max_size=8), fmt=st.sampled_from(["auto", "whatsapp"]))
def test_random_whatsapp_only_input_error(lines, fmt):
    _only_input_error("\n".join(lines), fmt)


# ----------------------------------------------------------------------------------- end to end
runner = CliRunner()


def _ingest(path, *extra):
    from hela_cli.cli import app

    res = runner.invoke(app, ["ingest", str(path), "-s", "x", "--json", *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_ingest_exports_end_to_end(cli_env, tmp_path):
    from hela_cli.cli import app

    out = _ingest(CHATGPT)
    assert out["nodes_added"] == 7 and out["spaces"] == {"x": 7}
    assert _ingest(CHATGPT)["skipped_duplicates"] == 7  # idempotent
    # a later export: one more message in an old chat and a new chat, listed first as ChatGPT does
    doc = json.loads(CHATGPT.read_text())
    bread = doc[1]
    bread["mapping"]["b-2"]["children"] = ["b-3"]
    bread["mapping"]["b-3"] = {"id": "b-3", "parent": "b-2", "children": [], "message": {
        "id": "b-3", "author": {"role": "user"}, "create_time": bread["create_time"] + 600,
        "content": {"content_type": "text", "parts": ["Fed it twice today, it smells of yoghurt now."]}}}
    bread["current_node"] = "b-3"
    new = copy.deepcopy(bread)
    new.update(id="99990000-0000-0000-0000-000000000000", title="Bike repair", create_time=1.7e9,
               current_node="n-2", mapping={
                   "n-1": {"id": "n-1", "parent": None, "children": ["n-2"], "message": {
                       "id": "n-1", "author": {"role": "user"}, "create_time": 1.7e9,
                       "content": {"content_type": "text", "parts": ["My bike chain keeps slipping."]}}},
                   "n-2": {"id": "n-2", "parent": "n-1", "children": [], "message": {
                       "id": "n-2", "author": {"role": "assistant"}, "create_time": 1.7e9 + 5,
                       "content": {"content_type": "text", "parts": ["Check the derailleur."]}}}})
    later = write(tmp_path, "later.json", [new, *doc])
    again = _ingest(later)
    assert (again["nodes_added"], again["skipped_duplicates"]) == (3, 7)
    # the other exports into the same space, then a retrieval finds an imported turn with its id and date
    assert _ingest(CLAUDE)["nodes_added"] == 5
    assert _ingest(WA_IOS, "--format", "whatsapp")["nodes_added"] == 4
    res = runner.invoke(app, ["ask", "Which tower is in the photo of Lisbon?", "-s", "x", "--no-llm", "--json"])
    assert res.exit_code == 0, res.output
    mems = json.loads(res.stdout)["memories"]
    belem = [m for m in mems if m["source_id"] == "a-3"]
    assert belem and "Belem Tower" in belem[0]["text"] and belem[0]["timestamp"] == utc(2023, 6, 1, 11, 3, 10)


def test_ingest_broken_export_through_cli(cli_env, tmp_path):
    from hela_cli.cli import app

    p = write(tmp_path, "conversations.json", _gpt(_set(current_node="nope")))
    res = runner.invoke(app, ["ingest", str(p), "-s", "x"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"{p}: {GPT3}: 'current_node' \"nope\" is not in 'mapping'" in res.stderr
    assert not (cli_env / "hela.db").exists()  # nothing written, not even a database
