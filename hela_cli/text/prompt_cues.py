"""What a prompt says about where it points (pure): does it speak of the project itself ("we", "our",
"this repo", "last time", "still"), and which files, paths, commands or identifiers does it name? The prompt
hook's relevance decision (:mod:`hela_cli.mechanics.relevance`) takes these as anchors: a memory only
loosely close to a prompt in meaning is injected when the prompt points at the project, and a memory that
holds a file or identifier the prompt names is injected whatever its score."""

from __future__ import annotations

import re

# the project, its people and its past, as a person refers to them in a prompt to their agent
_PROJECT = re.compile(
    r"\b(?:we|we're|we've|we'd|our|ours|us|this (?:repo|repository|project|codebase|code base|app|package)|"
    r"the (?:project|repo|codebase)|last time|so far|still|earlier|before|previously|again)\b", re.I)
# a path or a file name with an extension, a snake_case or dotted identifier, code in backticks
_NAMED = re.compile(r"`([^`\n]{2,80})`|((?:[\w.-]*/)+[\w.-]+/?|[\w-]+\.[A-Za-z][\w]{0,9}\b|\.[\w-]{2,}(?:\.[\w-]+)*|"
                    r"[A-Za-z]\w*_\w+)")
_TRIM = ".,:;!?()[]{}'\""
_BARE_FILES = re.compile(r"\b(?:[A-Z][a-z]+file|Containerfile|LICENSE|CODEOWNERS|CHANGELOG|README)\b")   # Dockerfile, Makefile
MIN_NAMED = 4   # a named thing shorter than this ("a.b") matches too much to be an anchor


def refers_to_project(prompt: str) -> bool:
    """True for "Why did we remove requirements.txt?", "Is the venv still in .uvenv?", "How should I stage
    files in this repo?"; False for "How do I squash the last three commits into one?"."""
    return bool(_PROJECT.search(prompt or ""))


def named_things(prompt: str) -> list[str]:
    """The files, paths, identifiers and backticked code a prompt names, lower-cased, each once:
    ``"I want to edit .claude/commands/hi.md"`` -> ``[".claude/commands/hi.md"]``; a plain word is not one.
    A bare number with a dot ("3.12") and a version-like token are not named things."""
    out: list[str] = []
    for code, token in _NAMED.findall(prompt or ""):
        t = (code or token).strip().strip(_TRIM).lower()
        if len(t) < MIN_NAMED or re.fullmatch(r"[\d.]+", t) or t in out:
            continue
        if not code and not any(c in t for c in "/._"):
            continue
        out.append(t)
    for name in _BARE_FILES.findall(prompt or ""):
        if name.lower() not in out:
            out.append(name.lower())
    return out


def names_in(text: str, named: list[str]) -> bool:
    """Does ``text`` hold one of ``named`` (case-insensitive substring)?"""
    if not named or not text:
        return False
    low = text.lower()
    return any(n in low for n in named)
