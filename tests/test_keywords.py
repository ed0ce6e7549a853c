from hela_cli.text.keywords import keyword_match, keywords, stem


def test_keywords_drop_stop_words_and_stem():
    assert keywords("I went to the pottery class yesterday and loved painting!") == [
        "went", "potteri", "class", "yesterday", "love", "paint"]


def test_stem_meets_variants():
    assert stem("paintings") == stem("painted") == "paint"
    assert stem("painting") == stem("paint") == "paint"
    assert stem("hiking") == stem("hike")
    assert stem("cities") == stem("city")


def test_keyword_match_share():
    assert keyword_match(["a", "b"], ["b", "c"]) == 0.5
    assert keyword_match([], ["b"]) == 0.0


def test_keywords_are_verbatim_safe():
    # SQL / FTS syntax is just text to the extractor
    assert keywords('DROP TABLE nodes; -- "NEAR" OR *') == ["drop", "tabl", "node", "near"]


def test_two_letter_abbreviations_are_keywords():
    assert keywords("She moved to LA, then the UK; he works on AI in NY.") == [
        "move", "la", "uk", "work", "ai", "ny"]
    assert keywords("LA's beaches") == ["la", "beach"]
    # lower-case two-letter words, and capitalised stop words, stay out
    assert keywords("we go to la la land") == ["land"]
    assert keywords("IT IS OK TO GO") == []  # all capitals: no two-letter word stands out
