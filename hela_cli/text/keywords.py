"""Lexical keywords: one fast extractor shared by ingest (node keywords) and retrieval (query keywords).

Lower-cases, splits on letters/digits, drops English stop words and very short tokens (two-letter words
are kept when written in capitals: LA, UK, AI), and applies a Snowball stemmer so "painting", "paints"
and "painted" meet at "paint". No model call.
"""

from __future__ import annotations

import functools
import re

import snowballstemmer

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)

STOP_WORDS = frozenset("""
a about above after again against all also am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each even ever few for from further get gets got had hadn't has hasn't have haven't having he he'd
he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't
it it's its itself just let's like me more most much mustn't my myself no nor not now of off oh ok okay on
once only or other ought our ours ourselves out over own really same shan't she she'd she'll she's should
shouldn't so some such than that that's the their theirs them themselves then there there's these they
they'd they'll they're they've this those through to too under until up us very was wasn't we we'd we'll
we're we've well were weren't what what's when when's where where's which while who who's whom why why's
will with won't would wouldn't yeah yes yet you you'd you'll you're you've your yours yourself yourselves
hey hi hello thanks thank lot lots one really wow great good cool awesome sure yep hmm also just going
gonna wanna did does do done make made thing things something anything everything way much many
""".split())


_stemmer = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """English Snowball (Porter 2) stem, cached: "painting", "paints", "painted" -> "paint"."""
    return _stemmer.stemWord(word)


def _lower_token(raw: str) -> str:
    t = raw.lower()
    if "'" in t:
        head, _, tail = t.partition("'")
        t = head if tail in ("s", "t", "re", "ve", "ll", "d", "m") else t.replace("'", "")
    return t


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (apostrophe suffixes such as 's are dropped)."""
    return [_lower_token(raw) for raw in _TOKEN.findall(text)]


def _is_content(t: str, raw: str, shouting: bool) -> bool:
    """Not a stop word, and 3+ characters, a number, or a two-letter word written in capitals in a text
    that is not all capitals (LA, UK, NY, AI: abbreviations carry the meaning; lower-case two-letter words
    are mostly function words, and in "OK GO TO IT" capitals mark nothing)."""
    if t in STOP_WORDS:
        return False
    if len(t) >= 3 or t.isdigit():
        return True
    return len(t) == 2 and not shouting and raw.partition("'")[0].isupper()


#: what recall reads of a question at most (characters): its first and its last half (issue 44). Every
#: benchmark question is far shorter (LoCoMo dev: 131 characters at most; LongMemEval-S dev30: 190)
QUERY_CHARS = 16_000


def query_text(text: str, limit: int = QUERY_CHARS) -> str:
    """What recall reads of a question (a recall's query, a hook's prompt): the text itself up to ``limit``
    characters; of a longer one (a pasted log or document, the question often after it) the first and the
    last ``limit // 2`` characters. The embedder reads the first few hundred tokens of a query anyway; the
    keywords, the time expressions and the search stay bounded: a 50,000-word prompt is read in the time of
    a 2,500-word one."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n...\n{text[-half:]}"


def keywords(text: str) -> list[str]:
    """Distinct stemmed content words of ``text``, in first-seen order."""
    seen: dict[str, None] = {}
    shouting = text.isupper()
    for raw in _TOKEN.findall(text):
        t = _lower_token(raw)
        if _is_content(t, raw, shouting):
            seen.setdefault(stem(t), None)
    return list(seen)


def keyword_match(query_keywords: list[str] | set[str], node_keywords: list[str] | set[str]) -> float:
    """Share of the query's keywords found among the node's keywords (0 when the query has none)."""
    q = set(query_keywords)
    if not q:
        return 0.0
    return len(q & set(node_keywords)) / len(q)
