"""Answer-quality metrics for the LoCoMo benchmark (pure functions, no I/O).

Two families of scores are reported in the literature and both are kept here:

* **A-Mem metrics** (``amem_f1``, ``amem_bleu1``), as computed by A-Mem's
  ``utils.py`` (``calculate_metrics`` / ``calculate_bleu_scores``), which the
  HeLa-Mem paper's F1 / BLEU-1 tables follow.
* **LoCoMo's own F1** (``locomo_f1``), as computed by the LoCoMo repository's
  ``task_eval/evaluation.py`` (``normalize_answer`` + Porter-stemmed multiset
  F1 with per-category rules).

Plus benchmark helpers: ``evidence_recall``, ``gold_answer`` and ``aggregate``.

Nothing here needs nltk *data* files (punkt etc.); only the nltk package
(Porter stemmer, Treebank-style word tokenizer, ``sentence_bleu``), which is
imported lazily so ``import hela_cli.bench.metrics`` never fails.

Known deviations from the references (all deliberate, all small):

* ``amem_bleu1`` tokenizes with ``NLTKWordTokenizer().tokenize`` instead of
  ``nltk.word_tokenize``. ``word_tokenize`` first splits the text into
  sentences with the punkt model (a data file) and then runs that same
  tokenizer on each sentence. The tokenizer only splits off a period when it
  ends its input, so the results differ only where a sentence-final period is
  followed by more text: ``"i went home. then i slept."`` gives the token
  ``home.`` here versus ``home`` + ``.`` with punkt (the final period is split
  off in both); the unigram ``home`` then no longer matches a reference
  ``home``. (``?``/``!`` are split off everywhere, so they do not matter.)
  Conversely punkt keeps known abbreviations such as ``mr.`` whole, as this
  tokenizer does mid-string, so those agree. Single-sentence texts -- almost
  all LoCoMo gold answers and most short predictions -- tokenize identically.
* A-Mem returns 0 when ``not prediction`` -- which is also true of the
  integer ``0``. Here only ``None`` and blank strings count as empty, so an
  integer answer ``0`` is scored as the string ``"0"``.
* LoCoMo's reference uses the third-party ``regex`` module for the article
  regex; the standard ``re`` module is used here (same result for the
  ``\\b(a|an|the|and)\\b`` pattern on ordinary text).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from functools import lru_cache
from typing import Any, Iterable, Mapping

from hela_cli.errors import InputError

__all__ = [
    "amem_tokenize",
    "amem_f1",
    "amem_bleu1",
    "normalize_answer",
    "locomo_f1_score",
    "locomo_multi_f1",
    "locomo_f1",
    "evidence_ids",
    "evidence_recall",
    "gold_answer",
    "aggregate",
    "ADVERSARIAL_PHRASES",
    "PAPER_CATEGORIES",
]

#: Phrases that make a category-5 (adversarial) prediction count as correct in
#: LoCoMo's evaluation (checked on the lower-cased prediction).
ADVERSARIAL_PHRASES = ("no information available", "not mentioned")

#: Categories averaged into ``aggregate(...)["overall"]`` (the paper excludes
#: the adversarial category 5).
PAPER_CATEGORIES = (1, 2, 3, 4)


def _text(value: Any) -> str:
    """``None`` -> ``""``; anything else -> ``str(value)`` (ints: ``2022`` -> ``"2022"``)."""
    return "" if value is None else str(value)


# --------------------------------------------------------------------------
# A-Mem metrics
# --------------------------------------------------------------------------

_AMEM_SPLIT = str.maketrans({".": " ", ",": " ", "!": " ", "?": " "})


def amem_tokenize(text: Any) -> list[str]:
    """A-Mem's ``simple_tokenize``: lower-case, ``.,!?`` -> space, split on whitespace."""
    return _text(text).lower().translate(_AMEM_SPLIT).split()


def amem_f1(prediction: Any, reference: Any) -> float:
    """A-Mem token F1 over token *sets* (duplicates count once).

    ``precision = |P & R| / |P|``, ``recall = |P & R| / |R|`` where ``P`` and
    ``R`` are the sets of :func:`amem_tokenize` tokens; 0.0 when either set is
    empty or nothing is shared.
    """
    pred = set(amem_tokenize(prediction))
    ref = set(amem_tokenize(reference))
    if not pred or not ref:
        return 0.0
    common = len(pred & ref)
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


def require_nltk() -> None:
    """The answer metrics need the nltk package (the ``bench`` extra); say so before a run starts, not at
    its first score."""
    try:
        import nltk  # noqa: F401
    except ImportError:
        raise InputError("hela bench needs the nltk package for its answer metrics: "
                         "pip install 'hela[bench]'") from None


@lru_cache(maxsize=1)
def _word_tokenizer():
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def _bleu_tokens(text: str) -> list[str]:
    # See the module docstring: word_tokenize minus the punkt sentence split.
    return _word_tokenizer().tokenize(text.lower())


def amem_bleu1(prediction: Any, reference: Any) -> float:
    """A-Mem BLEU-1: nltk ``sentence_bleu`` with weights ``(1, 0, 0, 0)`` and
    ``SmoothingFunction().method1`` on lower-cased word tokens.

    That is the clipped unigram precision times the brevity penalty
    ``exp(1 - len(ref) / len(pred))`` (when the prediction is shorter).
    Empty (``None``/blank) prediction or reference -> 0.0.
    """
    pred_text = _text(prediction).strip()
    ref_text = _text(reference).strip()
    if not pred_text or not ref_text:
        return 0.0
    pred_tokens = _bleu_tokens(pred_text)
    ref_tokens = _bleu_tokens(ref_text)
    if not pred_tokens or not ref_tokens:
        return 0.0
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    return float(
        sentence_bleu(
            [ref_tokens],
            pred_tokens,
            weights=(1, 0, 0, 0),
            smoothing_function=SmoothingFunction().method1,
        )
    )


# --------------------------------------------------------------------------
# LoCoMo's own F1
# --------------------------------------------------------------------------

_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


def normalize_answer(text: Any) -> str:
    """LoCoMo ``normalize_answer``: drop commas, lower-case, drop ASCII
    punctuation, drop the words a/an/the/and, collapse whitespace."""
    s = _text(text).replace(",", "")
    s = s.lower().translate(_PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


def _locomo_tokens(text: Any) -> list[str]:
    return [_stem(w) for w in normalize_answer(text).split()]


def locomo_f1_score(prediction: Any, ground_truth: Any) -> float:
    """LoCoMo ``f1_score``: multiset (Counter) overlap F1 of Porter-stemmed,
    normalized tokens; 0.0 when nothing is shared (including empty inputs)."""
    pred = _locomo_tokens(prediction)
    gold = _locomo_tokens(ground_truth)
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


def locomo_multi_f1(prediction: Any, ground_truth: Any) -> float:
    """LoCoMo ``f1`` (multi-answer, category 1): split both on ``,``; for each
    gold part take the best F1 against any prediction part; average."""
    preds = [p.strip() for p in _text(prediction).split(",")]
    golds = [g.strip() for g in _text(ground_truth).split(",")]
    return sum(max(locomo_f1_score(p, g) for p in preds) for g in golds) / len(golds)


def locomo_f1(prediction: Any, answer: Any, category: int) -> float:
    """Score one LoCoMo QA the way LoCoMo's ``eval_question_answering`` does.

    * category 1 (multi-hop): :func:`locomo_multi_f1`;
    * category 3: gold answer cut at the first ``;`` (and stripped), then
      :func:`locomo_f1_score`;
    * categories 2 and 4: :func:`locomo_f1_score`;
    * category 5 (adversarial): 1.0 if the lower-cased prediction contains one
      of :data:`ADVERSARIAL_PHRASES`, else 0.0 (``answer`` is ignored).

    Any other category raises ``ValueError`` (as the reference does).
    """
    category = int(category)
    pred = _text(prediction)
    gold = _text(answer)
    if category == 1:
        return float(locomo_multi_f1(pred, gold))
    if category == 3:
        return locomo_f1_score(pred, gold.split(";")[0].strip())
    if category in (2, 4):
        return locomo_f1_score(pred, gold)
    if category == 5:
        low = pred.lower()
        return 1.0 if any(p in low for p in ADVERSARIAL_PHRASES) else 0.0
    raise ValueError(f"unknown LoCoMo category: {category!r}")


# --------------------------------------------------------------------------
# Retrieval and bookkeeping helpers
# --------------------------------------------------------------------------

_ID_SPLIT = re.compile(r"[;,\s]+")
_DIA_ID = re.compile(r"^D(\d+):(\d+)$")


def _canonical_id(raw: str) -> str:
    # "D30:05" and "D30:5" name the same turn; other ids are kept verbatim.
    m = _DIA_ID.match(raw)
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else raw


def evidence_ids(entries: Iterable[Any] | str | None) -> list[str]:
    """Flatten evidence entries into distinct ids, in first-seen order.

    An entry may hold several ids separated by ``;``, ``,`` or whitespace
    (``"D8:6; D9:17"`` -> ``["D8:6", "D9:17"]``). A bare string is one entry;
    ``None`` entries are skipped. Dialogue ids ``D<n>:<m>`` are canonicalised
    (leading zeros dropped) so ``"D3:05"`` matches ``"D3:5"``.
    """
    if entries is None:
        return []
    if isinstance(entries, str):
        entries = [entries]
    seen: dict[str, None] = {}
    for entry in entries:
        if entry is None:
            continue
        for part in _ID_SPLIT.split(str(entry)):
            if part:
                seen.setdefault(_canonical_id(part), None)
    return list(seen)


def evidence_recall(
    gold_ids: Iterable[Any] | str | None, retrieved_ids: Iterable[Any] | str | None
) -> float | None:
    """Share of distinct gold evidence ids that appear among ``retrieved_ids``.

    Both sides go through :func:`evidence_ids`. Returns ``None`` when there is
    no gold id (the question cannot be scored; ``aggregate`` skips ``None``).
    """
    gold = evidence_ids(gold_ids)
    if not gold:
        return None
    got = set(evidence_ids(retrieved_ids))
    return sum(1 for g in gold if g in got) / len(gold)


def gold_answer(qa: Mapping[str, Any]) -> str:
    """The gold answer of a LoCoMo QA dict, as a string.

    Category 5 (adversarial) questions carry ``adversarial_answer`` instead of
    ``answer``; it is used for them (falling back to ``answer`` if absent).
    Other categories use ``answer``. Missing/``None`` -> ``""``; ints are
    stringified (``2022`` -> ``"2022"``).
    """
    try:
        category = int(qa.get("category"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        category = None
    if category == 5 and qa.get("adversarial_answer") is not None:
        return _text(qa["adversarial_answer"])
    return _text(qa.get("answer"))


def _metric_value(value: Any) -> float | None:
    """A numeric metric value as float; ``None``/NaN/non-numbers -> ``None``."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        v = float(value)
        return None if math.isnan(v) else v
    return None


def _summarize(rows: list[Mapping[str, Any]], names: list[str]) -> dict[str, Any]:
    means: dict[str, float | None] = {}
    counts: dict[str, int] = {}
    for name in names:
        values = [v for v in (_metric_value(r.get(name)) for r in rows) if v is not None]
        counts[name] = len(values)
        means[name] = sum(values) / len(values) if values else None
    return {"count": len(rows), "means": means, "counts": counts}


def aggregate(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Average per-question metric records by category.

    Each record is a mapping with an int-like ``category`` and any number of
    metric keys. A key is a metric if, in at least one record, its value is a
    number (bools count as 0/1); other keys (question text, ...) are ignored.
    ``None`` (and NaN) values are skipped, so e.g. ``evidence_recall`` of a
    question without evidence does not count as 0.

    Returns::

        {
          "per_category": {cat: GROUP, ...},   # int keys, ascending
          "overall":      GROUP,               # categories 1-4 (as the paper reports)
          "overall_all":  GROUP,               # all categories, 5 included
        }

    where ``GROUP = {"count": n_records, "means": {metric: mean | None},
    "counts": {metric: n_values_used}}``. Means are per question
    (micro-averaged), not averages of category means; a metric with no value
    in a group has mean ``None``. Records without a usable category raise
    ``ValueError``.
    """
    rows = list(records)
    names: dict[str, None] = {}
    by_cat: dict[int, list[Mapping[str, Any]]] = {}
    for i, row in enumerate(rows):
        try:
            cat = int(row["category"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"record {i}: missing or non-integer 'category'") from None
        by_cat.setdefault(cat, []).append(row)
        for key, value in row.items():
            if key != "category" and _metric_value(value) is not None:
                names.setdefault(key, None)
    metric_names = list(names)
    return {
        "per_category": {c: _summarize(by_cat[c], metric_names) for c in sorted(by_cat)},
        "overall": _summarize(
            [r for c in sorted(by_cat) if c in PAPER_CATEGORIES for r in by_cat[c]],
            metric_names,
        ),
        "overall_all": _summarize(rows, metric_names),
    }
