"""``text``: a plain ``Speaker: text`` transcript with optional session headers (docs/formats.md)."""

from __future__ import annotations

import re

from hela_cli.text.dates import parse_date
from hela_cli.formats.base import Conversation, Source, Turn, _Bad, _fill_times, _show

_HEADER_MD = re.compile(
    r"#{1,6}\s*session\s+(?P<n>\d+)\s*(?:(?:[\u2014\u2013:-]+|\|)\s*(?P<date>.*?)|\((?P<pdate>[^()]*)\))?\s*",
    re.IGNORECASE,
)
_HEADER_RULE = re.compile(
    r"(?:-{3,}|={3,})\s*session\s+(?P<n>\d+)\s*"
    r"(?:\((?P<pdate>[^()]*)\)|[\u2014\u2013:]\s*(?P<date>.*?))?\s*(?:-{3,}|={3,})\s*",
    re.IGNORECASE,
)
_HEADER_LIKE = re.compile(r"(?:#{1,6}|-{3,}|={3,})\s*s+e+s+i*o+n", re.IGNORECASE)
_RULE_LINE = re.compile(r"[-=*_ ]{3,}")
_SPEAKER_LINE = re.compile(
    r"(?P<speaker>[^\W\d_][\w.'\-]*(?: [\w.'\-]+){0,3}):(?:\s+(?P<text>.*))?\s*"
)


def parse(src: Source) -> list[Conversation]:
    text, name = src.text, src.name
    lines = text.split("\n")
    # (lineno, session_no, when, speaker, [text lines])
    sess_no = 1
    sess_when: tuple[float, str] | None = None
    seen_sessions: dict[int, int] = {}
    had_header = False
    turns_raw: list[list] = []
    cur: list | None = None
    for lineno, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        stripped = line.strip()
        indented = line[:1].isspace()
        if not indented and _RULE_LINE.fullmatch(stripped):
            continue  # a bare horizontal rule such as '---'
        if not indented and (stripped.startswith("#") or stripped.startswith(("---", "==="))):
            m = _HEADER_MD.fullmatch(stripped) or _HEADER_RULE.fullmatch(stripped)
            if m:
                n = int(m.group("n"))
                if n in seen_sessions:
                    raise _Bad(f"line {lineno}", f"duplicate session {n} (first at line {seen_sessions[n]})")
                if not had_header and any(t[1] == sess_no for t in turns_raw):
                    if n == 1:
                        raise _Bad(
                            f"line {lineno}",
                            "header 'session 1' after turns already placed in session 1; "
                            "put a header before the first turn",
                        )
                    seen_sessions[1] = 0
                had_header = True
                seen_sessions[n] = lineno
                date = (m.group("date") or m.group("pdate") or "").strip()
                if date:
                    try:
                        sess_when = (parse_date(date), date)
                    except ValueError as e:
                        raise _Bad(f"line {lineno}", f"session header: {e}") from None
                else:
                    sess_when = None
                sess_no = n
                cur = None
                continue
            if _HEADER_LIKE.match(stripped):
                raise _Bad(
                    f"line {lineno}",
                    f"malformed session header {_show(stripped, 50)}; use '## Session N — DATE' "
                    "or '--- session N (DATE) ---'",
                )
            if stripped.startswith("#"):
                continue  # comment
        m = None if indented else _SPEAKER_LINE.fullmatch(stripped)
        if m and len(m.group("speaker")) <= 40:
            cur = [lineno, sess_no, sess_when, m.group("speaker"), [m.group("text") or ""]]
            turns_raw.append(cur)
            continue
        if cur is None:
            raise _Bad(f"line {lineno}", f"text before the first 'Speaker: text' line: {_show(stripped, 40)}")
        cur[4].append(stripped)
    if not turns_raw:
        raise _Bad("top level", "no 'Speaker: text' lines found")
    rows = []
    counters: dict[int, int] = {}
    for lineno, sno, when, speaker, parts in turns_raw:
        body = "\n".join(p for p in parts if p).strip()
        if not body:
            raise _Bad(f"line {lineno}", f"turn by {_show(speaker)} has empty text")
        try:
            body.encode("utf-8")
        except UnicodeEncodeError:  # pragma: no cover - decoded from UTF-8, cannot happen
            raise _Bad(f"line {lineno}", "text is not valid UTF-8") from None
        counters[sno] = counters.get(sno, 0) + 1
        rows.append((when, (speaker, body, f"session_{sno}", f"D{sno}:{counters[sno]}")))
    turns = _fill_times(rows, lambda w, p: Turn(p[0], p[1], w[0], w[1], p[2], p[3], None))
    return [Conversation(None, turns, name, [])]
