"""What a coding session's text says, read without a model (pure functions): a stated decision (cue
phrases), a command's exit status and its first error line, the paths a patch touches, a path relative to
the project. The capture (formats/agent.py) and the recall by file (hooks/context.py) share them."""

from __future__ import annotations

import re
from typing import Any

# a decision stated in words: "we decided", "let's use", "because", "instead of", "going with", ...
_DECISION = re.compile(
    r"\b(we|i|they|you)(?:'ve| have)? (?:decided|chose|agreed|settled on|opted)\b"
    r"|\bdecid(?:ed|ing) (?:to|on|against)\b|\bdecision\b"
    r"|\blet'?s (?:use|go with|keep|switch|stick|not|avoid|move|drop|make)\b"
    r"|\b(?:going|go|went) with\b|\bswitch(?:ed|ing)? (?:to|from)\b|\bmov(?:ed|ing) (?:to|away from)\b"
    r"|\binstead of\b|\brather than\b|\bbecause\b|\bso that\b|\bdue to\b|\bthe reason\b"
    r"|\bprefer(?:red)?\b|\bconvention\b|\bfrom now on\b|\balways\b|\bnever\b|\bdon'?t use\b|\bdo not use\b"
    r"|\bwe (?:use|keep|want|need)\b|\bmust (?:not )?\b",
    re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def is_decision(text: str) -> bool:
    """Does the text state a decision, a reason or a convention (one cue phrase is enough)?"""
    return bool(_DECISION.search(text or ""))


def decision_sentences(text: str, limit: int = 3) -> list[str]:
    """The sentences of ``text`` that carry a decision cue, in order (at most ``limit``)."""
    out = []
    for s in _SENTENCE.split(text or ""):
        s = s.strip()
        if s and _DECISION.search(s):
            out.append(s)
            if len(out) >= limit:
                break
    return out


# ------------------------------------------------------------------------------------------ command outcome
_EXIT = re.compile(r"(?:exit(?:ed)? (?:with )?code|exit code|exit status)[:\s]+(-?\d+)", re.I)
_ERROR_LINE = re.compile(r"error|exception|traceback|failed|failure|fatal|not found|no such|denied|"
                         r"cannot|can't|unable|invalid|assert|panic|refused|undefined|E\s{2,}", re.I)
_NOISE = re.compile(r"^(?:chunk id|wall time|original token count|process group pgid|output):\s*$|"
                    r"^(?:chunk id|wall time|original token count|process group pgid):", re.I)
_OUTPUT_LABEL = re.compile(r"^output:\s*", re.I)   # Gemini CLI: "Output: <first line of the output>"


def exit_status(output: str, is_error: bool | None = None) -> int | None:
    """The exit status a tool's output states ("Exit code 1", "Process exited with code 0", "Exit Code:
    2"); else 1 when the agent flagged the result as an error, 0 when it flagged it as not one, else None."""
    m = _EXIT.search(output or "")
    if m:
        return int(m.group(1))
    if is_error is None:
        return None
    return 1 if is_error else 0


def first_error_line(output: str) -> str:
    """The first line of ``output`` that reads as an error (else its last non-empty line), whole (the result
    line cuts it: :func:`hela_cli.text.session_lines.error_line`)."""
    lines = [_OUTPUT_LABEL.sub("", ln.strip()) if not _NOISE.match(ln.strip()) else ln.strip()
             for ln in (output or "").splitlines()]
    lines = [ln for ln in lines if ln and not _NOISE.match(ln) and not _EXIT.fullmatch(ln)
             and not ln.lower().startswith(("exit code", "error: exit code"))]
    if not lines:
        return ""
    return next((ln for ln in lines if _ERROR_LINE.search(ln)), lines[-1])


# ------------------------------------------------------------------------------------------ paths
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$"
                         r"|^\+\+\+ b/(.+)$|^diff --git a/\S+ b/(.+)$", re.M)
_COMMIT_OUT = re.compile(r"^\[([^\]\s]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$", re.M)


def patch_paths(patch: str) -> list[str]:
    """The files a patch touches (Codex ``apply_patch`` envelopes and unified diffs), in order, once each."""
    out: list[str] = []
    for groups in _PATCH_FILE.findall(patch or ""):
        p = next((g for g in groups if g), "").strip()
        if p and p not in out:
            out.append(p)
    return out


def relative_path(path: str, root: str | None) -> str:
    """``path`` relative to ``root`` when it lies inside it (``/p/proj/billing/api.py`` -> ``billing/api.py``),
    else as given (normalized: no ``./``)."""
    p = str(path).strip()
    if root:
        r = str(root).rstrip("/")
        if r and p.startswith(r + "/"):
            p = p[len(r) + 1:]
    while p.startswith("./"):
        p = p[2:]
    return p


def path_needles(path: str, roots: Any) -> list[str]:
    """What a memory's text holds when it is about ``path``: the path relative to each of ``roots`` it lies in
    (the project's top-level directory, the agent's working directory: a transcript names files relative to
    the latter), longest first; an absolute mention holds each of them too."""
    roots = [str(r) for r in (roots if isinstance(roots, (list, tuple)) else [roots]) if r] or [None]
    out: list[str] = []
    for r in roots:
        rel = relative_path(path, r)
        if rel and rel not in out:
            out.append(rel)
    return sorted(out, key=len, reverse=True)


def mentions_path(text: str, needle: str) -> bool:
    """Does ``text`` name the file ``needle`` (not merely contain it: ``data.py`` does not name ``a.py``;
    ``/repo/billing/api.py`` and ```billing/api.py``` name ``billing/api.py``)?"""
    return re.search(r"(?<![\w.-])" + re.escape(needle) + r"(?![\w-])", text or "") is not None


def commit_of(output: str) -> tuple[str, str] | None:
    """``(hash, subject)`` from ``git commit``'s output (``[main 1a2b3c4] subject``), or None."""
    m = _COMMIT_OUT.search(output or "")
    return (m.group(2), m.group(3).strip()) if m else None


def is_commit_command(command: str) -> bool:
    return bool(re.search(r"\bgit\b(?:\s+-[cC]\s+\S+)*\s+commit\b", command or ""))


def commit_message(command: str) -> str:
    """The subject a ``git commit -m "..."`` command gives, or ""."""
    m = re.search(r"(?:-m|--message)(?:=|\s+)(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)'|(\S+))", command or "")
    if not m:
        return ""
    msg = next(g for g in m.groups() if g is not None)
    return msg.splitlines()[0].strip() if msg else ""
