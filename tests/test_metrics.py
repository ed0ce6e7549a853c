"""Tests for hela_cli.bench.metrics. Expected values are derived by hand in comments."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hela_cli.bench import metrics as m
from hela_cli.bench.metrics import (
    aggregate,
    amem_bleu1,
    amem_f1,
    amem_tokenize,
    evidence_ids,
    evidence_recall,
    gold_answer,
    locomo_f1,
    locomo_f1_score,
    locomo_multi_f1,
    normalize_answer,
)

approx = pytest.approx


# ---------------------------------------------------------------- A-Mem F1


def test_amem_tokenize():
    # lower-case; each of . , ! ? -> space; apostrophes are kept
    assert amem_tokenize("Hi, Caroline's cat! Ok?Yes.") == ["hi", "caroline's", "cat", "ok", "yes"]
    assert amem_tokenize(2022) == ["2022"]
    assert amem_tokenize(None) == []


def test_amem_f1_hand_examples():
    # P={the,cat,sat}, R={the,cat}: common 2, p=2/3, r=1 -> 2*(2/3)/(5/3) = 0.8
    assert amem_f1("The cat sat.", "the cat") == approx(0.8)
    # sets: duplicates count once -> {the,cat} vs {the,cat} -> 1.0
    assert amem_f1("the the cat", "the cat") == 1.0
    assert amem_f1("Yes!", "yes") == 1.0
    # "caroline's" is one token, not "caroline" -> 0
    assert amem_f1("Caroline's", "caroline") == 0.0
    assert amem_f1("dog", "cat") == 0.0


def test_amem_f1_int_answers():
    assert amem_f1(2022, "2022") == 1.0
    assert amem_f1("2022", 2022) == 1.0
    # {in,2022} vs {2022}: p=1/2, r=1 -> 2*(1/2)/(3/2) = 2/3
    assert amem_f1("In 2022.", 2022) == approx(2 / 3)
    # integer 0 is the answer "0" here (A-Mem would return 0 for a falsy 0)
    assert amem_f1(0, 0) == 1.0


def test_amem_f1_empty():
    assert amem_f1("", "cat") == 0.0
    assert amem_f1(None, "cat") == 0.0
    assert amem_f1("cat", "") == 0.0
    assert amem_f1("...", "cat") == 0.0  # only separators -> no tokens
    assert amem_f1("", "") == 0.0


# ---------------------------------------------------------------- A-Mem BLEU-1
# BLEU-1 = clipped unigram precision * BP, BP = exp(1 - r/c) if c < r else 1.


def test_amem_bleu1_hand_examples():
    assert amem_bleu1("The cat sat", "the cat sat") == approx(1.0)
    # c=2 tokens, both match -> precision 1; r=6 -> BP = exp(1 - 6/2) = exp(-2)
    assert amem_bleu1("the cat", "the cat sat on the mat") == approx(math.exp(-2))
    # "the" x3 clipped to 1 reference count -> 1/3; c=3 >= r=2 -> BP=1
    assert amem_bleu1("the the the", "the cat") == approx(1 / 3)
    # tokens [the,cat,sat,.] vs [the,cat]: 2/4 matches, BP=1 -> 0.5
    assert amem_bleu1("The cat sat.", "the cat") == approx(0.5)
    # one-token hypothesis (no bigrams at all): p1=1, BP = exp(1 - 2/1) = e^-1
    assert amem_bleu1("cat", "the cat") == approx(math.exp(-1))
    assert amem_bleu1("dog", "cat") == 0.0


def test_amem_bleu1_ints_and_empty():
    assert amem_bleu1(2022, 2022) == approx(1.0)
    # tokens [in, 2022] vs [2022]: 1/2, BP=1 -> 0.5
    assert amem_bleu1("In 2022", 2022) == approx(0.5)
    assert amem_bleu1("", "cat") == 0.0
    assert amem_bleu1(None, "cat") == 0.0
    assert amem_bleu1("   ", "cat") == 0.0
    assert amem_bleu1("cat", "") == 0.0


def test_amem_bleu1_tokenizer_deviation_is_pinned():
    # Without punkt, a mid-string sentence-final period stays on its word:
    # [i, went, home., then, i, slept, .] has no "home" -> 0.0
    # (nltk.word_tokenize with punkt would split "home" "." -> 1/8).
    assert m._bleu_tokens("I went home. Then I slept.") == [
        "i", "went", "home.", "then", "i", "slept", ".",
    ]
    assert amem_bleu1("I went home. Then I slept.", "home") == 0.0
    # The final period is split off as word_tokenize does.
    assert amem_bleu1("Home.", "home") == approx(0.5)  # [home, .] vs [home]


def test_no_nltk_data_needed(monkeypatch):
    import nltk.data

    def refuse(*args, **kwargs):
        raise LookupError("nltk data must not be needed")

    monkeypatch.setattr(nltk.data, "load", refuse)
    monkeypatch.setattr(nltk.data, "find", refuse)
    m._word_tokenizer.cache_clear()
    m._stemmer.cache_clear()
    m._stem.cache_clear()
    assert amem_bleu1("The cat sat. It slept!", "the cat") > 0
    assert locomo_f1("running shoes", "run shoe", 2) == 1.0


# ---------------------------------------------------------------- LoCoMo F1


def test_normalize_answer():
    # drop ',', lower, drop punctuation, drop a/an/the/and, collapse spaces
    assert normalize_answer("The cat, and the Hat!") == "cat hat"
    assert normalize_answer("An apple a day") == "apple day"
    assert normalize_answer("Andrew and Anna") == "andrew anna"  # whole words only
    assert normalize_answer("Caroline's") == "carolines"
    assert normalize_answer("7 May, 2023") == "7 may 2023"
    assert normalize_answer(2022) == "2022"
    assert normalize_answer(None) == ""


def test_locomo_f1_score_hand_examples():
    # Porter: running->run, shoes->shoe
    assert locomo_f1_score("running shoes", "run shoe") == 1.0
    # multiset: [cat, cat] vs [cat]: same=1, p=1/2, r=1 -> 2/3
    assert locomo_f1_score("the cat cat", "cat") == approx(2 / 3)
    # A-Mem's set F1 on "cat cat" vs "cat": {cat} vs {cat} -> 1.0
    assert amem_f1("cat cat", "cat") == 1.0
    # [cat, sat] vs [cat]: p=1/2, r=1 -> 2/3
    assert locomo_f1_score("The cat sat.", "the cat") == approx(2 / 3)
    assert locomo_f1_score("", "cat") == 0.0
    assert locomo_f1_score("the", "a") == 0.0  # both normalize to nothing


def test_locomo_f1_category_2_4_and_ints():
    assert locomo_f1("7 May 2023", "7 May 2023", 2) == 1.0
    assert locomo_f1("2022", 2022, 2) == 1.0
    # [in, 2022] vs [2022]: p=1/2, r=1 -> 2/3
    assert locomo_f1("In 2022", 2022, 4) == approx(2 / 3)
    assert locomo_f1("", "Paris", 4) == 0.0
    assert locomo_f1(None, "Paris", 2) == 0.0
    assert locomo_f1("Paris", "Paris", "2") == 1.0  # category given as a string


def test_locomo_f1_category_1_comma_splits():
    # gold parts [London, Berlin]; London -> best 1.0, Berlin -> 0 -> mean 0.5
    assert locomo_f1("Paris, London", "London, Berlin", 1) == approx(0.5)
    # one prediction part [she, like, pari, london] (and removed);
    # gold "Paris": 1 shared, p=1/4, r=1 -> 2*(1/4)/(5/4) = 0.4; same for London
    assert locomo_f1("She likes Paris and London", "Paris, London", 1) == approx(0.4)
    # plain F1 on the same pair: [she, like, pari, london] vs [pari, london] -> p=1/2, r=1 -> 2/3
    assert locomo_f1("She likes Paris and London", "Paris, London", 2) == approx(2 / 3)
    assert locomo_multi_f1("a, b", "c") == 0.0
    assert locomo_f1("", "Paris, London", 1) == 0.0


def test_locomo_f1_category_3_semicolon_cut():
    # gold cut to "Summer 2022" -> exact match
    assert locomo_f1("summer 2022", "Summer 2022; the second week", 3) == 1.0
    # without the cut (category 2): [summer, 2022] vs [summer, 2022, second, week]
    # p=1, r=1/2 -> 2/3
    assert locomo_f1("summer 2022", "Summer 2022; the second week", 2) == approx(2 / 3)
    # int gold in category 3
    assert locomo_f1("2022", 2022, 3) == 1.0


def test_locomo_f1_category_5_phrases():
    assert locomo_f1("No information available.", "ignored", 5) == 1.0
    assert locomo_f1("That is NOT MENTIONED in the conversation", "", 5) == 1.0
    assert locomo_f1("She went to Paris", "She went to Paris", 5) == 0.0
    assert locomo_f1("not mention", "x", 5) == 0.0
    assert locomo_f1("", "x", 5) == 0.0
    assert locomo_f1(None, "x", 5) == 0.0


def test_locomo_f1_unknown_category():
    with pytest.raises(ValueError):
        locomo_f1("a", "a", 6)


# ---------------------------------------------------------------- evidence


def test_evidence_ids_splitting():
    assert evidence_ids(["D8:6; D9:17", "D1:3", "D1:3"]) == ["D8:6", "D9:17", "D1:3"]
    assert evidence_ids("D1:1,D1:2 D1:3") == ["D1:1", "D1:2", "D1:3"]
    assert evidence_ids(["D3:05"]) == ["D3:5"]  # leading zero canonicalised
    assert evidence_ids(["S2", None, " "]) == ["S2"]
    assert evidence_ids(None) == []


def test_evidence_recall():
    # gold {D8:6, D9:17, D1:3}; found D9:17 and D1:3 -> 2/3
    assert evidence_recall(["D8:6; D9:17", "D1:3"], ["D9:17", "D1:3", "D2:2"]) == approx(2 / 3)
    assert evidence_recall(["D1:3", "D1:3"], ["D1:3"]) == 1.0  # deduped
    assert evidence_recall("D8:6; D9:17", ["D8:6"]) == 0.5  # bare string entry
    assert evidence_recall(["D3:05"], ["D3:5"]) == 1.0
    assert evidence_recall(["D1:1"], []) == 0.0
    assert evidence_recall(["D1:1"], None) == 0.0
    assert evidence_recall([], ["D1:1"]) is None
    assert evidence_recall(None, ["D1:1"]) is None
    assert evidence_recall(["", " ; "], ["D1:1"]) is None


# ---------------------------------------------------------------- gold answer


def test_gold_answer():
    assert gold_answer({"answer": 2022, "category": 2}) == "2022"
    assert gold_answer({"answer": "Paris", "category": 1}) == "Paris"
    assert gold_answer({"adversarial_answer": "self-care", "category": 5}) == "self-care"
    assert gold_answer({"answer": "a", "adversarial_answer": "b", "category": 5}) == "b"
    assert gold_answer({"answer": "a", "category": 5}) == "a"  # fallback
    assert gold_answer({"adversarial_answer": "b", "category": 2}) == ""
    assert gold_answer({"category": 3}) == ""


# ---------------------------------------------------------------- aggregate


def test_aggregate_with_none_values():
    records = [
        {"category": 1, "f1": 1.0, "recall": None, "question": "q1"},
        {"category": 1, "f1": 0.5, "recall": 1.0},
        {"category": 2, "f1": 0.0, "recall": 0.5},
        {"category": 5, "f1": 1.0},
    ]
    out = aggregate(records)
    assert set(out) == {"per_category", "overall", "overall_all"}
    assert list(out["per_category"]) == [1, 2, 5]
    c1 = out["per_category"][1]
    # f1 (1 + 0.5)/2 = 0.75; recall only the non-None 1.0
    assert c1 == {"count": 2, "means": {"f1": 0.75, "recall": 1.0}, "counts": {"f1": 2, "recall": 1}}
    c5 = out["per_category"][5]
    assert c5["means"] == {"f1": 1.0, "recall": None}
    assert c5["counts"] == {"f1": 1, "recall": 0}
    # categories 1-4: f1 (1 + 0.5 + 0)/3 = 0.5; recall (1 + 0.5)/2 = 0.75
    assert out["overall"]["count"] == 3
    assert out["overall"]["means"] == {"f1": approx(0.5), "recall": approx(0.75)}
    # all: f1 2.5/4 = 0.625; recall unchanged (category 5 has none)
    assert out["overall_all"]["count"] == 4
    assert out["overall_all"]["means"] == {"f1": approx(0.625), "recall": approx(0.75)}
    assert out["overall_all"]["counts"] == {"f1": 4, "recall": 2}


def test_aggregate_edge_cases():
    empty = aggregate([])
    assert empty["per_category"] == {}
    assert empty["overall"] == {"count": 0, "means": {}, "counts": {}}
    # bools count as 0/1, NaN is skipped, category may be a digit string
    out = aggregate([{"category": "3", "em": True}, {"category": 3, "em": False, "f1": float("nan")}])
    assert out["per_category"][3]["means"] == {"em": 0.5}
    with pytest.raises(ValueError):
        aggregate([{"f1": 1.0}])


# ---------------------------------------------------------------- properties

_text = st.text(max_size=40)


@settings(max_examples=60, deadline=None)
@given(_text, _text)
def test_f1_scores_in_unit_interval(a, b):
    for score in (amem_f1(a, b), locomo_f1_score(a, b), locomo_multi_f1(a, b), amem_bleu1(a, b)):
        assert 0.0 <= score <= 1.0 + 1e-12


@settings(max_examples=60, deadline=None)
@given(_text)
def test_f1_of_self_is_one(x):
    if amem_tokenize(x):
        assert amem_f1(x, x) == approx(1.0)
    if normalize_answer(x):
        assert locomo_f1_score(x, x) == approx(1.0)
