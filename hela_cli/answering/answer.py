"""Answering: :func:`answer` (generate with prompt A.2's settings, then clean; streamed or not), and printing
an answer as it is generated, so that what was printed is exactly the cleaned answer.

:func:`hela_cli.answering.prompts.clean_answer` keeps the first non-empty line of the model's output and removes a
leading ``Answer:`` label, ``[date]`` and ``Speaker:`` (a speaker of the memories) - decisions that the
first few characters cannot settle ("Caro" may become "Caroline: ..."). :class:`AnswerStream` holds text
back only while such a prefix is undecided (and trailing spaces, which the cleaning strips), then passes
the rest through as it comes, and stops at the end of the first line. At the end, :meth:`finish` gives
what is left to print; the printed text then equals ``clean_answer(raw, memories)`` (tested over random
outputs and random chunkings). With ``drop_example_date`` (a whole-line rewrite, off by default) nothing
is printed until the end.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from hela_cli.answering.prompts import ANSWER_STOP, DEFAULT_PROMPT, clean_answer

_BRACKET = re.compile(r"^\[[^\]]{1,40}\]\s*")
_BRACKET_OPEN = re.compile(r"^\[[^\]\n]{0,40}$")
_SPEAKER = re.compile(r"^([^:\n]{1,40}):\s*")
_LABEL = "answer:"


class AnswerStream:
    def __init__(self, memories: Sequence[dict[str, Any]] = (), tidy: bool | None = None,
                 drop_example_date: bool | None = None):
        self.memories = memories
        self.tidy = DEFAULT_PROMPT.tidy if tidy is None else tidy
        self.hold_all = DEFAULT_PROMPT.drop_example_date if drop_example_date is None else drop_example_date
        self.speakers = {str(m.get("speaker")).strip().lower() for m in memories if m.get("speaker")}
        self.raw = ""
        self.printed = ""

    def feed(self, chunk: str) -> str:
        """Add generated text; returns the text to print now (often empty)."""
        self.raw += chunk
        if self.hold_all:
            return ""
        shown = self._settled()
        if shown is None or not shown.startswith(self.printed):
            return ""
        out, self.printed = shown[len(self.printed):], shown
        return out

    def finish(self) -> tuple[str, bool]:
        """``(text still to print, consistent)``: ``consistent`` is False only if what was printed is not a
        prefix of the cleaned answer (never, by construction; the caller then reprints it whole)."""
        final = clean_answer(self.raw, self.memories, tidy=self.tidy, drop_example_date=self.hold_all)
        if not final.startswith(self.printed):
            return final, False
        out, self.printed = final[len(self.printed):], final
        return out, True

    # ------------------------------------------------------------------ the settled part of the answer
    def _settled(self) -> str | None:
        """The cleaned answer as far as more text cannot change it, or None while undecided."""
        lines = self.raw.splitlines(keepends=True)
        for i, raw_line in enumerate(lines):
            complete = raw_line != raw_line.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029") or i < len(lines) - 1
            if complete:
                line = raw_line.strip()
                if line.lower().startswith(_LABEL):
                    line = line[len(_LABEL):].strip()
                if not line:
                    continue
                return clean_answer(self.raw, self.memories, tidy=self.tidy, drop_example_date=False)
            return self._partial(raw_line)
        return None

    def _partial(self, raw_line: str) -> str | None:
        s = raw_line.lstrip()
        if len(s) < len(_LABEL) and _LABEL.startswith(s.lower()):
            return None  # may still become the "Answer:" label (or is empty)
        if s.lower().startswith(_LABEL):
            s = s[len(_LABEL):].lstrip()
            if not s:
                return None  # the label alone so far: this line may yet be skipped
        if self.tidy:
            for _ in range(2):  # as clean_answer: "[date] Speaker:" in either order
                if s.startswith("["):
                    m = _BRACKET.match(s)
                    if m is None:
                        if _BRACKET_OPEN.match(s):
                            return None  # the bracket may still close within 40 characters
                    elif not s[m.end():].strip():
                        return None  # removed only if text follows
                    else:
                        s = s[m.end():]
                m = _SPEAKER.match(s)
                if m is None:
                    if len(s) <= 40 and ":" not in s and \
                            any(sp.startswith(s.strip().lower()) for sp in self.speakers):
                        return None  # may still become "Speaker:"
                elif m.group(1).strip().lower() in self.speakers:
                    if not s[m.end():].strip():
                        return None
                    s = s[m.end():]
        return s.rstrip()


def answer(chat: Any, messages: list[dict[str, str]], memories: Sequence[dict[str, Any]], settings: Any,
           on_text: Any = None) -> str:
    """Prompt A.2's answer: ``chat.generate`` with ``settings.max_tokens`` / ``settings.temperature``
    (:class:`hela_cli.config.AnswerConfig`) and the :data:`ANSWER_STOP` sequences, then
    :func:`clean_answer`. The one way ``Memory.ask``, ``hela bench`` and the benchmark scripts answer.

    ``on_text`` (streaming) gets the cleaned answer as it is generated, in pieces that join to the
    returned answer (:class:`AnswerStream`); with a chat model that cannot stream
    (its ``generate`` takes no ``on_text``), in one piece at the end."""
    if on_text is None:
        raw = chat.generate(messages, max_tokens=settings.max_tokens, temperature=settings.temperature,
                            stop=ANSWER_STOP)
        return clean_answer(raw, memories)
    from hela_cli.models import accepts_on_text

    shown = AnswerStream(memories)
    streams = accepts_on_text(chat)

    def fed(piece: str) -> None:
        out = shown.feed(piece)
        if out:
            on_text(out)

    raw = chat.generate(messages, max_tokens=settings.max_tokens, temperature=settings.temperature,
                        stop=ANSWER_STOP, **({"on_text": fed} if streams else {}))
    if not streams:
        fed(raw)  # nothing was streamed: the whole answer at once
    rest, consistent = shown.finish()
    result = clean_answer(raw, memories)
    if rest:
        on_text(rest if consistent else "\n" + rest)
    return result
