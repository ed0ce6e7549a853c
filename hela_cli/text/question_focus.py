"""What a question asks about, read without a model (issue 47, round 4).

- :func:`focus_text`: the question's content words in their own order, without its question and stop words,
  the names of the people it is about and the words that only frame it ("What books has Tim read?" ->
  "books read"; "What martial arts has John done?" -> "martial arts"). Recall embeds it as a second, focused
  dense probe (``retrieval.focus_weight`` / ``retrieval.focus_max``, :mod:`hela_cli.mechanics.retrieval`):
  the full question's vector carries the person and the question's form, and evidence told in other words
  ("I'm doing kickboxing") is nearer the topic alone.
- :func:`asks_for_list`: whether it asks for several things ("What books has Tim read?", "Which cities has
  John been to?", "How many games ..."), whose evidence lies in several sessions; recall may then give more of
  its k + m places to the spreading path (``retrieval.list_slots``).
"""

from __future__ import annotations

import re

from hela_cli.text.keywords import STOP_WORDS, tokens

#: words that frame a question rather than name what it asks about ("What *type* of ...", "... *mention*")
FRAME_WORDS = frozenset("""
type types kind kinds sort sorts mention mentions mentioned mentioning name names named say says said tell
told talk talks talked likely probably specific particular example examples whose
""".split())

# an auxiliary that ends the asked-for noun phrase of "What books HAS ...", "Which cities DOES ..."
_AUX = frozenset("has have had does do did is are was were will would can could should".split())
# plurals that do not end in -s
_IRREGULAR_PLURALS = frozenset("people children men women feet teeth mice geese".split())
# words ending in s that are not plurals (or are not the asked-for noun)
_NOT_PLURAL = frozenset("this his its was has is does us bus gas yes news series species".split())
_LIST_OPEN = re.compile(r"^\s*(?:what|which)\b", re.IGNORECASE)
_HOW_MANY = re.compile(r"\bhow many\b", re.IGNORECASE)


def focus_text(question: str, names: frozenset[str] | set[str] = frozenset()) -> str:
    """The question's content words, in order and as written (lower-cased): no stop words, no word under
    3 letters, no framing word (:data:`FRAME_WORDS`), none of ``names`` (lower-cased name tokens: the
    speakers' names). Empty when nothing is left."""
    out = []
    for t in tokens(question):
        if t in STOP_WORDS or t in FRAME_WORDS or t in names or (len(t) < 3 and not t.isdigit()):
            continue
        out.append(t)
    return " ".join(out)


def _plural(word: str) -> bool:
    if word in _IRREGULAR_PLURALS:
        return True
    return len(word) > 3 and word.endswith("s") and not word.endswith("ss") and word not in _NOT_PLURAL


def asks_for_list(question: str) -> bool:
    """A question that asks for several things: "how many ...", or "What / Which" followed, before its
    first auxiliary verb, by a plural noun ("What books has", "Which US cities does", "What people has",
    "What kinds of art does"), or "What has / have ..." ("What has Melanie painted?"). "What is ...",
    "What did X do ..." are not."""
    if _HOW_MANY.search(question):
        return True
    if not _LIST_OPEN.match(question):
        return False
    words = tokens(question)[1:]
    if words and words[0] in ("has", "have"):   # "What has Melanie painted?": everything so far
        return True
    for w in words[:5]:
        if w in _AUX:
            return False
        if _plural(w):
            return True
    return False
