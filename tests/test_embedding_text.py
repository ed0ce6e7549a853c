"""The embedding-text rule (``hela_cli.ingest.embedding_text``): the turn itself first within a token budget,
the preceding turn(s) get what is left and keep their end. Pure-function tests with simple counters, then
the real embedder's tokenizer and an ingest through it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hela_cli.config import Config, load_config
from hela_cli.errors import HelaError
from hela_cli.formats import Turn
from hela_cli.ingest import embed_budget, embedder_token_counter, embedding_text, embedding_texts


def words(text: str) -> int:
    """A counter like the embedder's: one token a word, plus 2 special tokens."""
    return len(text.split()) + 2


def chars(text: str) -> int:
    return len(text) + 2


def T(speaker: str, text: str, session: str = "s1") -> Turn:
    return Turn(speaker=speaker, text=text, timestamp=0.0, time_str="", session=session, source_id=None)


def numbered(n: int, tag: str) -> str:
    return " ".join(f"{tag}{k}" for k in range(n))


def test_no_budget_is_the_previous_rule():
    turns = [T("A", "first"), T("B", "second"), T("C", "third")]
    assert embedding_text(turns, 2, 1, 2000) == "B: second\nC: third"
    assert embedding_text(turns, 2, 2, 2000) == "A: first\nB: second\nC: third"
    assert embedding_text(turns, 0, 1, 2000) == "A: first"
    assert embedding_text(turns, 2, 1, 3) == "B: sec\nC: thi"  # max_turn_chars cuts each turn
    assert embedding_text(turns, 2, 1, 2000, 0, words) == "B: second\nC: third"  # budget 0: off


def test_text_that_fits_is_unchanged():
    turns = [T("A", numbered(50, "a")), T("B", numbered(20, "b"))]
    assert embedding_text(turns, 1, 1, 2000, 256, words) == embedding_text(turns, 1, 1, 2000)


def test_long_preceding_turn_keeps_its_end_and_the_turn_stays_whole():
    turns = [T("assistant", numbered(500, "a")), T("user", numbered(30, "u"))]
    out = embedding_text(turns, 1, 1, 100_000, 100, words)
    own = "user: " + numbered(30, "u")
    assert out.endswith("\n" + own)                          # the turn itself, whole, last
    assert words(out) <= 100
    ctx = out[: -len(own) - 1]
    assert ctx.startswith("assistant: ")
    assert ctx == "assistant: " + " ".join(f"a{k}" for k in range(500 - len(ctx.split()) + 1, 500))
    assert words(out) == 100                                  # the budget is used up: no word more fits
    # the previous rule put the preceding turn first: a 100-token window would have cut the turn away
    assert "u0" not in " ".join(embedding_text(turns, 1, 1, 100_000).split()[:98])


def test_turn_over_the_budget_keeps_its_start_without_context():
    turns = [T("A", numbered(10, "a")), T("B", numbered(300, "b"))]
    out = embedding_text(turns, 1, 1, 100_000, 64, words)
    assert out == "B: " + numbered(61, "b")                   # "B:" + 61 words + 2 specials = 64
    # max_turn_chars applies before the budget: the turn's first N characters, the context's last N
    assert embedding_text(turns, 1, 1, 20, 64, words) == "A: " + numbered(10, "a")[-20:] + "\nB: " + \
        numbered(300, "b")[:20]


def test_nearest_preceding_turn_first_and_nothing_before_a_cut_one():
    turns = [T("A", numbered(5, "a")), T("B", numbered(40, "b")), T("C", numbered(10, "c"))]
    out = embedding_text(turns, 2, 2, 2000, 30, words)
    assert not out.startswith("A:") and "a0" not in out      # A is left out: B, nearer, was cut
    assert out.startswith("B: ") and out.endswith("C: " + numbered(10, "c"))
    assert words(out) == 30
    # with room for everything, all turns of the window come in order
    assert embedding_text(turns, 2, 2, 2000, 100, words) == embedding_text(turns, 2, 2, 2000)


def test_other_sessions_are_never_context():
    turns = [T("A", "yesterday's news", "s1"), T("B", "hello", "s2")]
    assert embedding_text(turns, 1, 1, 2000, 256, words) == "B: hello"


def test_unicode_without_spaces_is_cut_between_characters():
    cjk = "我昨天去了图书馆借了三本书" * 20  # 260 characters, no space
    emoji = "🎉👍🏽" * 30
    turns = [T("助手", cjk), T("用户", "好的 " + emoji)]
    out = embedding_text(turns, 1, 1, 2000, 150, chars)
    own = "用户: 好的 " + emoji
    assert out.endswith("\n" + own) and chars(out) == 150
    tail = out[: -len(own) - 1].removeprefix("助手: ")
    assert cjk.endswith(tail) and 0 < len(tail) < len(cjk)
    # the turn alone over the budget: its start, cut inside the text
    out = embedding_text([T("用户", cjk)], 0, 1, 2000, 40, chars)
    assert out == ("用户: " + cjk)[:38]


def test_nothing_fits_gives_an_empty_context_not_a_fragment_label():
    turns = [T("assistant", "x" * 50), T("user", numbered(8, "u"))]
    out = embedding_text(turns, 1, 1, 2000, words("user: " + numbered(8, "u")), words)
    assert out == "user: " + numbered(8, "u")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["A", "Bo", "助手"]),
                          st.text(alphabet=st.sampled_from(list("ab é中🎉\n.")), max_size=300)),
                min_size=1, max_size=4),
       st.integers(0, 3), st.integers(8, 200), st.sampled_from([words, chars]))
def test_budget_is_respected_and_the_turn_has_priority(raw, window, budget, count):
    turns = [T(s, t) for s, t in raw]
    i = len(turns) - 1
    out = embedding_text(turns, i, window, 2000, budget, count)
    own = f"{turns[i].speaker}: {turns[i].text}"
    assert count(out) <= budget
    if count(own) <= budget:
        assert out == own or out.endswith("\n" + own)         # the turn whole, last
    else:
        assert own.startswith(out)                            # the turn's start, nothing else
    if count(embedding_text(turns, i, window, 2000)) <= budget:
        assert out == embedding_text(turns, i, window, 2000)  # fits: the previous rule's text


def test_counter_and_budget_from_the_embedder():
    class NoCount:
        n_ctx = 128

    class Counting(NoCount):
        def count_tokens(self, text):
            return 7

    cfg = Config()
    assert cfg.ingest.embed_tokens == 256
    assert embed_budget(NoCount(), cfg) == 128                # never over the embedder's window
    assert embed_budget(NoCount(), cfg.replace(**{"ingest.embed_tokens": 0})) == 0
    assert embedder_token_counter(Counting())("anything") == 7
    assert embedder_token_counter(NoCount())("Hi, there!") == 4 + 2    # estimate: words and punctuation + 2
    with pytest.raises(HelaError, match="embed_tokens"):
        load_config(None, env={"HELA_INGEST_EMBED_TOKENS": "-1"})


# ------------------------------------------------------------------ the real tokenizer and ingest
def test_real_tokenizer_budget_and_ingest(embedder, make_memory, tmp_path):
    long_answer = " ".join(f"Step {k}: preheat the oven, then whisk the eggs with sugar and flour." for k in range(60))
    turns = [T("assistant", long_answer), T("user", "What temperature did you say for the sourdough?")]
    out = embedding_texts(turns, [1], embedder, Config())[0]
    assert embedder.count_tokens(out) <= 256 < embedder.count_tokens(embedding_text(turns, 1, 1, 2000))
    assert out.endswith("\nuser: What temperature did you say for the sourdough?")
    assert out.startswith("assistant: ") and long_answer.endswith(out.split("\n")[0].removeprefix("assistant: "))

    f = tmp_path / "chat.jsonl"
    f.write_text("".join(json.dumps({"role": t.speaker, "content": t.text, "timestamp": "2024-01-01T00:00:00Z"})
                         + "\n" for t in turns))
    mem = make_memory()
    summary = mem.ingest([f], space="s")
    assert summary["embedding_truncated"] == 1  # the long answer; the question is embedded whole
    sp = mem.store.require_space("s")
    nodes = sorted(mem.store.iter_nodes(sp.id), key=lambda n: n["id"])
    vec = mem.store.node_vectors([nodes[1]["id"]], sp.id)[nodes[1]["id"]]
    stored = [T(n["speaker"], n["text"]) for n in nodes]
    assert [t.text for t in stored] == [t.text for t in turns]
    want = embedder.embed(embedding_texts(stored, [1], embedder, Config()))[0]
    assert float(vec @ want) > 0.999
    # `hela add` uses the same rule
    mem.add("s2", long_answer, speaker="assistant", session="x")
    nid = mem.add("s2", "What temperature did you say for the sourdough?", speaker="user", session="x")
    v2 = mem.store.node_vectors([nid], mem.store.require_space("s2").id)[nid]
    assert float(v2 @ embedder.embed([out])[0]) > 0.999


def test_long_word_next_to_the_cut_is_cut_inside_short_words_are_not():
    url = "https://example.org/" + "x" * 200
    out = embedding_text([T("A", "see " + url + " later")], 0, 1, 2000, 100, chars)
    assert out == ("A: see " + url)[:98]                      # fills the budget inside the URL
    out = embedding_text([T("A", "see the " + "longish " * 30)], 0, 1, 2000, 40, chars)
    assert out.split()[-1] == "longish" and chars(out) <= 40  # ends on a whole word
