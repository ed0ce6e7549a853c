"""Citations: the pure selection rule, the 80-column one-line rendering, and `hela ask` output."""


import pytest

from hela_cli.answering.citations import select_citations
from hela_cli.cli.render import citation_lines, one_line

MAY8 = 1683504000.0  # 8 May 2023 00:00 UTC
MAY20 = 1684540800.0


def mem(i, text, speaker="Jonas", ts=MAY8, source=None):
    return {"id": i, "source_id": source or f"D1:{i}", "time_str": "x", "timestamp": ts, "speaker": speaker,
            "text": text}


MEMS = [mem(1, "We hiked all day in the mountains."),        # rank 0: best retrieval score
        mem(2, "My dog Tofu loves the beach."),
        mem(3, "Oma looked after Tofu while we were in Madeira.", speaker="Maya"),
        mem(4, "The weather was fine.", ts=MAY20)]


def test_overlap_first_then_rank():
    cites = select_citations("Oma looked after Tofu", MEMS)
    assert [c["id"] for c in cites] == [3, 2, 1]       # 3 words, then 1 ("tofu"), then the best-ranked rest
    assert [c["overlap"] for c in cites] == [3, 1, 0]
    assert set(cites[0]) >= {"id", "source_id", "time_str", "speaker", "text"}


def test_ties_keep_retrieval_rank():
    cites = select_citations("Tofu", MEMS)
    assert [c["id"] for c in cites] == [2, 3, 1]


def test_no_overlap_falls_back_to_the_best_scored():
    assert [c["id"] for c in select_citations("Paris", MEMS)] == [1, 2, 3]
    assert [c["overlap"] for c in select_citations("Paris", MEMS)] == [0, 0, 0]


def test_dates_and_speakers_count():
    assert select_citations("20 May 2023", MEMS)[0]["id"] == 4
    assert select_citations("Maya", MEMS)[0]["id"] == 3


def test_stemmed_words_match():
    assert select_citations("hiking", MEMS)[0]["id"] == 1


def test_edge_cases():
    assert select_citations(None, MEMS) == [] and select_citations("  ", MEMS) == []
    assert select_citations("Tofu", []) == []
    assert len(select_citations("Tofu", MEMS[:2])) == 2
    assert [c["id"] for c in select_citations("Tofu", MEMS, n=1)] == [2]
    assert select_citations("Tofu", MEMS, n=0) == []


def test_one_line_marks_truncation():
    assert one_line("a  b\nc", 80) == "a b c"
    cut = one_line("word " * 40, 30)
    assert len(cut) <= 30 and cut.endswith("…") and "  " not in cut
    assert one_line("x" * 100, 10) == "x" * 9 + "…"
    assert "\x1b" not in one_line("\x1b[31mred", 80)


@pytest.mark.parametrize("width", [60, 80, 120])
def test_citation_lines_fit(width):
    cites = select_citations("Tofu", [mem(1, "Tofu " + "very long text " * 30)] + MEMS)
    lines = citation_lines(cites, width)
    assert len(lines) == 3
    assert all(len(line) <= width for line in lines)
    assert lines[0].startswith("  D1:1 · 8 May 2023 · Jonas: Tofu") and lines[0].endswith("…")
    assert citation_lines([{**cites[0], "source_id": None}], width)[0].startswith("  #1 ·")


def test_words_the_question_already_has_do_not_count():
    # "Jonas" and "dog" restate the question: every memory of Jonas would otherwise tie with the answer's one
    cites = select_citations("Jonas's dog is Tofu", MEMS, question="What is the name of Jonas's dog?")
    assert [c["id"] for c in cites] == [2, 3, 1] and cites[0]["words"] == ["tofu"]
    # an answer made only of question words keeps them all
    assert select_citations("Jonas", MEMS, question="Who is Jonas?")[0]["overlap"] == 1


def test_excerpt_shows_the_matched_word():
    from hela_cli.answering.citations import excerpt

    text = "It is a bit small, but she is a retired racing greyhound and mostly sleeps. Her name is Tofu. " * 2
    ex = excerpt(text, ["tofu"], 40)
    assert len(ex) <= 40 and ex.startswith("…") and "Tofu" in ex
    head = excerpt(text, ["small"], 40)
    assert head.startswith("It is a bit small") and head.endswith("…") and len(head) <= 40
    assert excerpt("short", ["x"], 40) == "short"
