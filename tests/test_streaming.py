"""Streaming answers: what `hela ask` prints as the answer is generated equals the cleaned answer."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from hela_cli.cli import app
from hela_cli.answering.prompts import ANSWER_STOP, answer_messages, clean_answer
from hela_cli.answering.answer import AnswerStream
from tests.conftest import SAMPLE

MEMORIES = [{"speaker": "Caroline", "timestamp": 1683540000.0, "text": "I adopted Tofu."},
            {"speaker": "Mel Ann", "timestamp": 1683540000.0, "text": "Hiking."}]
PIECES = ["Answer:", "answer: ", "ANSWER", "[8 May 2023]", "[", "]", "Caroline", "Caroline:", "Car", "Mel Ann",
          "Mel", ":", " ", "  ", "\n", "\r\n", "\r", "Tofu", "x" * 45, "15 July 2023", "Question:", "\t", "é", "a:b"]


def stream(raw: str, cuts: list[int], memories=MEMORIES) -> tuple[str, bool]:
    s = AnswerStream(memories)
    printed = ""
    pos = 0
    for cut in sorted(set(c % (len(raw) + 1) for c in cuts)) + [len(raw)]:
        printed += s.feed(raw[pos:cut])
        pos = cut
    rest, ok = s.finish()
    return printed + rest, ok


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12), st.lists(st.integers(0, 400), max_size=12))
def test_streamed_text_is_the_cleaned_answer(parts, cuts):
    raw = "".join(parts)
    printed, ok = stream(raw, cuts)
    assert ok and printed == clean_answer(raw, MEMORIES)


def test_prefixes_are_held_back_then_the_answer_flows():
    s = AnswerStream(MEMORIES)
    assert [s.feed(c) for c in ["Ans", "wer: ", "[8 May", " 2023] ", "Caro", "line: ", "She", " adopted", " Tofu",
                                "\nQuestion: more"]] == ["", "", "", "", "", "", "She", " adopted", " Tofu", ""]
    assert s.finish() == ("", True) and s.printed == "She adopted Tofu"
    # a line that can no longer become a prefix is printed at once
    s = AnswerStream(MEMORIES)
    assert s.feed("Tof") == "Tof" and s.feed("u ") == "u" and s.feed("the dog") == " the dog"


def test_local_model_streams_the_same_answer(chat):
    messages = answer_messages("What is the name of Caroline's dog?", MEMORIES, [])
    whole = chat.generate(messages, max_tokens=32, stop=ANSWER_STOP)
    pieces: list[str] = []
    streamed = chat.generate(messages, max_tokens=32, stop=ANSWER_STOP, on_text=pieces.append)
    assert streamed == whole and len(pieces) > 1 and "".join(pieces).strip() == whole


def test_cli_ask_streams_and_prints_the_answer_once(cli_env):
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(SAMPLE / "conversation.json")]).exit_code == 0
    q = ["ask", "What is the name of Jonas's dog?", "--space", "demo", "--no-learn"]
    as_json = json.loads(runner.invoke(app, [*q, "--json"]).stdout)
    plain = runner.invoke(app, q)
    quiet = runner.invoke(app, [*q, "--quiet"])
    assert plain.exit_code == 0 and as_json["answer"]
    lines = plain.stdout.splitlines()
    assert lines[0] == as_json["answer"]  # streamed, then the sources: the answer is not printed twice
    assert len(lines) == 1 or lines[1] == "sources:"
    assert quiet.stdout.strip() == as_json["answer"]


class _StreamingChat:
    model_id, n_ctx = "scripted-stream", 4096

    def __init__(self, raw):
        self.raw = raw

    def count_tokens(self, text):
        return len(text.split())

    def generate(self, messages, *, max_tokens=256, temperature=0.0, json_schema=None, stop=None, on_text=None):
        for ch in self.raw:
            if on_text is not None:
                on_text(ch)
        return self.raw.strip()


class _WholeChat(_StreamingChat):
    def generate(self, messages, *, max_tokens=256, temperature=0.0, json_schema=None, stop=None):
        return self.raw.strip()


def test_library_on_text_pieces_join_to_the_answer(make_memory, hash_embedder, tmp_path):
    conv = tmp_path / "c.jsonl"
    conv.write_text(json.dumps({"role": "user", "name": "Caroline", "content": "I adopted Tofu.",
                                "timestamp": "2023-05-08T10:00:00Z"}) + "\n")
    for chat in (_StreamingChat("Answer: [8 May 2023] Caroline: Tofu, a greyhound\nQuestion: more?"),
                 _WholeChat("Caroline: Tofu")):
        mem = make_memory(embedder=hash_embedder, chat=chat, ingest=[conv])
        pieces: list[str] = []
        res = mem.ask("What is the dog's name?", "default", on_text=pieces.append, learn=False)
        assert "".join(pieces) == res["answer"] and res["answer"].startswith("Tofu")
        assert (len(pieces) > 1) == (type(chat) is _StreamingChat)
