"""Is a turn worth injecting? A content-free turn ("Noted.", "Done.", "ok", "Sure!", "Let me check.") is
stored like any other (it is what was said) but never put in front of a model: every injection path (the
prompt recall, the session-start brief, the recall by file) filters with :func:`is_content_free`.

A bare tool-call line (:func:`hela_cli.text.session_lines.is_tool_line`) is stored too but left out of the
recall by meaning (the prompt recall, the brief's relevant memories): it says that a file was touched, not
what was decided or what failed there, and a prompt naming a file would fill every slot with such lines. The
recall by file uses it (a file's changes).

A turn is content-free when, less punctuation, emoji and filler words, nothing of substance is left: no
word outside the filler list, no number, no path, no identifier. The filler list is acknowledgements,
politeness and the "I'll do it now" phrases agents open a step with. Pure, no model."""

from __future__ import annotations

import re

# words that carry no content on their own; a turn made only of these (and punctuation) is content-free
_FILLER = frozenset("""
ok okay k kk sure yes yeah yep yup no nope right alright fine great good nice cool perfect awesome excellent
thanks thank thx ty you u please pls noted got it understood roger will do done finished complete completed
all set here hi hello hey sounds sound makes sense agreed agree of course certainly absolutely indeed
let me check look see now i'll ill i will i'm im on working that this the a an and so well then go ahead
continue proceed yes please happy to help glad to no problem np welcome hmm um uh ah oh wow lol
again one moment sec second minute just quick quickly first start starting try trying
fixed updated applied saved changed remember remembered keep in mind for later it's its
""".split())
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_SUBSTANCE = re.compile(r"\d|[/\\`]|[A-Za-z]+[_.][A-Za-z0-9]|[a-z][A-Z]")   # numbers, paths, code, camelCase
MAX_CHARS = 80   # a turn longer than this is never called content-free (real statements run longer)


def is_content_free(text: str | None) -> bool:
    """True for "Noted.", "Done.", "ok", "Sure!", "Thanks!", "Let me check.", "" (empty or whitespace);
    False for anything naming a thing, a number, a path or a reason."""
    if text is None:
        return True
    flat = " ".join(str(text).split())
    if not flat:
        return True
    if len(flat) > MAX_CHARS or _SUBSTANCE.search(flat):
        return False
    return all(w.lower().replace("'", "") in _FILLER or w.lower() in _FILLER for w in _WORD.findall(flat))
