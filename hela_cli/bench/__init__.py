"""The benchmarks, as library functions (no typer / rich here; their CLI is ``cli/commands/bench.py``).

* :mod:`~hela_cli.bench.runner` - what both benchmarks share: the variants, the resumable records file and
  the runner that asks one conversation's questions against one fresh space;
* :mod:`~hela_cli.bench.locomo` - ``hela bench locomo`` (:func:`run_locomo`, :func:`summarize`);
* :mod:`~hela_cli.bench.longmemeval` - ``hela bench longmemeval``;
* :mod:`~hela_cli.bench.metrics` - LoCoMo / A-Mem F1, BLEU-1 (pure functions);
* :mod:`~hela_cli.bench.feedback` - simulated use signals for the prequential runs (a simulation).
"""

from hela_cli.bench.locomo import CATEGORY_NAMES, question_category, run_locomo, summarize
from hela_cli.bench.runner import BASELINES, VARIANTS, load_records, variant_config

__all__ = ["VARIANTS", "BASELINES", "CATEGORY_NAMES", "run_locomo", "variant_config", "load_records",
           "summarize", "question_category"]
