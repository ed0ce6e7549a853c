"""What a turn of a conversation asks of the next one: a question or a complaint expects a reply.

Recall uses it to bring the turn that answers a recalled one (``retrieval.replies``,
:mod:`hela_cli.mechanics.retrieval`): "Did you go to the concert?" matches a question about concerts, and
the answer ("Yes, Muse at the Roundhouse, last Friday!") is the next turn."""

from __future__ import annotations

import functools
import re

# a question mark anywhere in the turn's last 200 characters: a turn that asks ("... How about you?",
# "What did the logs say? I'm lost.")
_QUESTION = re.compile(r"\?")
# a complaint or an error report, whose next turn is the diagnosis or the fix
_COMPLAINT = re.compile(
    r"\b(?:error|exception|traceback|fail(?:s|ed|ing|ure)?|broken|crash(?:es|ed|ing)?|bug|"
    r"(?:does|did|is|are|was|were|do|can|could|would|will|wo)n[o'’]?t (?:work|start|run|build|load|compile)|"
    r"not working|stuck|problem|issue)\b", re.IGNORECASE)


def asks_for_reply(text: str) -> bool:
    """Whether a turn expects an answer from the next one: it asks a question (a ``?`` in its last 200
    characters) or reports a problem (an error, a failure, "doesn't work", "stuck")."""
    if not text:
        return False
    return bool(_QUESTION.search(text[-200:]) or _COMPLAINT.search(text))


# words that open an address ("Thanks, Melanie!", "Hey Jon,", "Wow Mel, that's stunning!")
_OPENERS = (r"hey|hi|hello|thanks|thank you|thx|wow|woah|whoa|yo|oh|ah|aw+|yes|yeah|yep|yup|no|nope|ok|okay|"
            r"great|good|nice|cool|congrats|congratulations|sorry|dear|morning|evening|night|bye|cheers|haha|lol|"
            r"sure|right|totally|absolutely|awesome|amazing|omg|well|hmm|see you|love you|miss you|welcome")


@functools.lru_cache(maxsize=1024)
def _name_rx(name: str) -> re.Pattern[str]:
    n = re.escape(name)
    # an occurrence of the name as a word, and the same occurrence as an address: at the start of the text
    # or of a sentence, after a comma or an opener, and followed by , ! . ? ; : or the end (not "Melanie's")
    return re.compile(rf"(?<![\w'’])({n})(?P<poss>['’]s)?(?![\w'’])(?P<after>[ \t]*(?:[,!.?;:]|$))?",
                      re.IGNORECASE)


_BEFORE_ADDRESS = re.compile(rf"(?:^|[.!?,;:(\-—]|\b(?:{_OPENERS}))[\s,]*$", re.IGNORECASE)


def only_addressed(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` and every occurrence addresses that person ("Thanks, Melanie!",
    "Hey Jon, ...", "Melanie, those bowls are amazing!") rather than speaks of them ("Melanie's painting",
    "I told Melanie about it"). A name said to someone is not what the turn is about: in a two-person chat
    the other person's turns name the one a question asks about by addressing them."""
    if not name or not text:
        return False
    found = False
    for m in _name_rx(name).finditer(text):
        found = True
        if m.group("poss") or m.group("after") is None or not _BEFORE_ADDRESS.search(text[:m.start()][-40:]):
            return False
    return found
