"""``hela bench locomo`` and ``hela bench longmemeval``.

Flag parsing and rendering only; the benchmark itself is :func:`hela_cli.bench.locomo.run_locomo`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from hela_cli.errors import InputError
from hela_cli.cli.clicklib import core as click_core
from hela_cli.cli.helpers import check_out_dir, progress_bar, state, write_out
from hela_cli.cli.render import clean, console, err_console, print_json, text

app = typer.Typer(name="bench", no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]},
                  help="Benchmarks (LoCoMo, LongMemEval).")

VARIANT_HELP = "full|no-spreading|no-reflect|no-forget|no-learn|cosine|bm25"


def _explicit_root_db(ctx: typer.Context) -> Optional[str]:
    """The root ``--db`` only when given on the command line: ``HELA_DB`` from the environment must not
    send benchmark spaces into the user's database."""
    root = ctx.find_root()
    try:
        source = root.get_parameter_source("db")
    except Exception:  # noqa: BLE001 - older click
        return None
    if source == click_core.ParameterSource.COMMANDLINE:
        return root.params.get("db")
    return None


def _with_reader(cfg: Any, reader: Optional[str]) -> Any:
    """``--reader REF``: the benchmark answers with that chat model (``models.chat`` for this run)."""
    if reader is None:
        return cfg
    from hela_cli.models.routes import route

    if not reader.strip() or route(reader).lent:
        raise InputError("--reader: give a chat model (alias, GGUF path, ollama:NAME or openai:MODEL@BASE_URL); "
                         "'client' exists only inside `hela mcp`")
    return cfg.replace(**{"models.chat": reader.strip()})


def _fmt(v: Any, pct: bool = True) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.1f}" if pct else f"{v:.0f}"


def render_summary(s: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    qa = not s["retrieval_only"]
    title = (f"LoCoMo {s['variant']}: {', '.join(s['samples'])}, {s['questions']} questions, "
             f"k={s['k']} + m={s['m']} memories, scores in %")
    if s.get("feedback") not in (None, "none"):
        title += f", feedback {s['feedback']}"
    t = Table(title=clean(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
              collapse_padding=True)
    cols = ["category", "n", "recall", "base", "flip", "share", "tokens"]
    if qa:
        cols += ["F1", "BLEU1", "LF1"]
    for c in cols:
        t.add_column(c, justify="left" if c == "category" else "right", no_wrap=True)

    def row(label: str, g: dict[str, Any] | None, style: str = "") -> None:
        if not g:
            return
        cells = [label, str(g["count"]), _fmt(g["recall"]), _fmt(g["recall_base"]), _fmt(g["recall_flipped"]),
                 _fmt(g["flipped_share"]), _fmt(g["context_tokens"], pct=False)]
        if qa:
            cells += [_fmt(g["amem_f1"]), _fmt(g["amem_bleu1"]), _fmt(g["locomo_f1"])]
        t.add_row(*cells, style=style)

    for cat, g in s["per_category"].items():
        row(f"{cat} {g['name']}", g)
    row("overall 1-4", s["overall"], "bold")
    row("all 1-5", s["overall_all"], "dim")
    for p, ps in (s.get("by_pass") or {}).items():   # test-retest: the table above is pass 1
        for cat, g in ps["per_category"].items():
            row(f"pass {p}: {cat} {g['name']}", g)
        row(f"pass {p}: overall 1-4", ps["overall"], "bold")
        row(f"pass {p}: all 1-5", ps["overall_all"], "dim")
    for name, ps in (s.get("by_overlap") or {}).items():   # pass 1, by evidence shared with an earlier question
        row(f"{name}: all 1-5", ps.get("overall_all"), "dim")
    console.print(t)
    console.print(text("recall: LoCoMo evidence recall of the episodic context (base path + flipped path); share: "
                       "flipped / recall" + ("; F1, BLEU1: A-Mem; LF1: LoCoMo's F1" if qa else "")), style="dim")
    tm = s["timing"]
    line = (f"{tm['seconds']:.0f}s total, ingest {tm['ingest_s']:.0f}s, {tm['asked']} asked, "
            f"{tm['resumed']} resumed from records")
    if tm.get("retrieval_ms_mean") is not None:
        line += f", retrieval {tm['retrieval_ms_mean']:.0f} ms/question"
    if tm.get("generate_ms_mean") is not None:
        line += f", answer {tm['generate_ms_mean'] / 1000:.1f} s/question"
    _footer(line, s.get("notes", []))


def _footer(line: str, notes: list[str]) -> None:
    """The dim timing line under a summary table, then the run's notes."""
    console.print(text(line), style="dim")
    for note in notes:
        console.print(text(f"note: {note}"), style="yellow")


@app.command("locomo")
def bench_locomo(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="A LoCoMo JSON file (e.g. locomo10.json)."),
    samples: Optional[str] = typer.Option(None, "--samples", help="Comma-separated sample ids, e.g. "
                                          "conv-26,conv-30 (default: all)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="At most N questions per conversation "
                                        "(the first N in dataset order)."),
    retrieval_only: bool = typer.Option(False, "--retrieval-only", help="No answers: evidence recall and "
                                        "context tokens only (fast)."),
    variant: str = typer.Option("full", "--variant", help=VARIANT_HELP),
    k: Optional[int] = typer.Option(None, "--k", min=1, max=200, help="Top-k by base activation (default 10); "
                                    "baselines get k+m memories."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the summary JSON to this file."),
    records: Optional[Path] = typer.Option(None, "--records", help="Append one JSON line per question; an "
                                           "interrupted run given the same file resumes."),
    db: Optional[str] = typer.Option(None, "--db", metavar="PATH", help="Keep the spaces in this database "
                                     "(default: a temporary one per conversation, deleted afterwards)."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    passes: int = typer.Option(1, "--passes", min=1, max=10, help="Test-retest: ask each conversation's "
                               "questions this many times in a row on the same learning memory (table per pass)."),
    categories: Optional[str] = typer.Option(None, "--categories", help="Score only these LoCoMo categories, "
                                             "e.g. 1,2,3,4; questions of the others are still asked without an "
                                             "answer, so learning sees the same sequence (default: all)."),
    reader: Optional[str] = typer.Option(None, "--reader", metavar="REF", help="Answer with this chat model: "
                                         "any models.chat value (alias, GGUF path, ollama:NAME, "
                                         "openai:MODEL@BASE_URL); default models.chat."),
    feedback: str = typer.Option("none", "--feedback", help="Use signals, applied after each question is scored: "
                                 "none|evidence|answer|noisy:P (simulations) or cite (the reader's own "
                                 "citations)."),
) -> None:
    """Evaluate on LoCoMo: fresh space per conversation, questions in order with learning on."""
    from hela_cli.bench import VARIANTS, run_locomo

    if variant not in VARIANTS:
        raise InputError(f"unknown variant '{variant}' (choose from {', '.join(VARIANTS)})")
    check_out_dir(out)
    st = state(ctx)
    cfg = _with_reader(st.config(), reader)
    sample_list = [s for s in samples.split(",") if s.strip()] if samples is not None else None
    if samples is not None and not sample_list:
        raise InputError("--samples: no sample id given")
    cats = None
    if categories is not None:
        try:
            cats = sorted({int(c) for c in categories.split(",") if c.strip()})
        except ValueError:
            raise InputError(f"--categories: expected comma-separated numbers like 1,2,3,4, got {categories!r}")
        if not cats or any(c < 1 or c > 5 for c in cats):
            raise InputError(f"--categories: LoCoMo categories are 1-5, got {categories!r}")
    kwargs: dict[str, Any] = dict(samples=sample_list, limit=limit, retrieval_only=retrieval_only,
                                  variant=variant, k=k, cfg=cfg, db=db or _explicit_root_db(ctx),
                                  records=records, passes=passes, categories=cats, feedback=feedback)
    last = {"label": None}

    def plain(done: int, total: int, label: str) -> None:  # logs (nohup): one line per stage / 25 questions
        if label != last["label"] or done % 25 == 0 or done == total:
            if not json_out:
                err_console.print(text(f"[{done}/{total}] {label}"))
            last["label"] = label

    with progress_bar(elapsed=True) as bar:
        summary = run_locomo(file, progress=bar or plain, **kwargs)
    if out is not None:
        write_out(out, json.dumps(summary, ensure_ascii=False, indent=2, default=str) + "\n", private=False)
    if json_out:
        print_json(summary)
    else:
        render_summary(summary)


# ----------------------------------------------------------------------------------- longmemeval
_LME_COLS = (("sess_any", "session_recall_any"), ("sess_all", "session_recall_all"), ("turn", "turn_recall"))


def _progress_run(fn: Any, json_out: bool, **kwargs: Any) -> dict[str, Any]:
    """Run a benchmark function with a Rich progress bar on a terminal, plain stage lines otherwise."""
    def plain(done: int, total: int, label: str) -> None:  # logs (nohup): one line per step
        if not json_out:
            err_console.print(text(f"[{done}/{total}] {label}"))

    with progress_bar(elapsed=True) as bar:
        return fn(progress=bar or plain, **kwargs)


def render_lme(s: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    qa = not s["retrieval_only"]
    for v in s["variants"].values():
        title = (f"LongMemEval {v['variant']}: {v['questions']} items, {v['budget']} memories "
                 f"(k={v['k']} + m={v['m']}), scores in %")
        t = Table(title=clean(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                  show_edge=False, collapse_padding=True)
        cols = ["question type", "n", *(c for c, _ in _LME_COLS), "tokens"]
        if qa:
            cols += ["F1", "EM", "abstain"]
        for c in cols:
            t.add_column(c, justify="left" if c == "question type" else "right", no_wrap=c != "question type")

        def row(label: str, g: dict[str, Any] | None, style: str = "") -> None:
            if not g or not g["count"]:
                return
            cells = [label, str(g["count"]), *(_fmt(g[key]) for _, key in _LME_COLS),
                     _fmt(g["context_tokens"], pct=False)]
            if qa:
                cells += [_fmt(g["f1"]), _fmt(g["em"]), _fmt(g["abstained"])]
            t.add_row(*cells, style=style)

        for name, g in v["per_type"].items():
            row(name, g)
        row("overall", v["overall"], "bold")
        row("abstention (_abs)", v["abstention"], "dim")
        console.print(t)
    if len(s["variants"]) > 1:
        t = Table(title="LongMemEval variants, overall (%)", title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False, show_edge=False, collapse_padding=True)
        cols = ["variant", "budget", *(c for c, _ in _LME_COLS)] + (["F1", "EM", "abstain"] if qa else [])
        for c in cols:
            t.add_column(c, justify="left" if c == "variant" else "right", no_wrap=True)
        for v in s["variants"].values():
            g = v["overall"] or {}
            cells = [v["variant"], str(v["budget"]), *(_fmt(g.get(key)) for _, key in _LME_COLS)]
            if qa:
                cells += [_fmt(g.get("f1")), _fmt(g.get("em")), _fmt(g.get("abstained"))]
            t.add_row(*cells)
        console.print(t)
    console.print(text("sess_any / sess_all: an / every answer session holds a retrieved memory; turn: share of "
                       "has_answer turns retrieved; abstention items are left out of these"
                       + ("; F1, EM: offline token F1 / exact match vs 'answer'; abstain: share of abstention "
                          "items answered with an abstention" if qa else "")), style="dim")
    ing = s["ingest"]
    line = f"{s['timing']['seconds']:.0f}s total, {s['timing']['asked']} asked, {s['timing']['resumed']} resumed"
    if ing["ingested"]:
        line += (f"; ingest: {ing['ingested']} items, {ing['turns']} turns in {ing['seconds']:.0f}s "
                 f"({ing['turns_per_s']} turns/s" + (f", {ing['tokens_per_s']:.0f} tokens/s" if ing["tokens_per_s"]
                                                      else "") + ")")
    if ing["cached"]:
        line += f"; {ing['cached']} items from the cache"
    _footer(line, s.get("notes", []))


@app.command("longmemeval")
def bench_longmemeval(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="A LongMemEval JSON file (e.g. longmemeval_s.json)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N items (dataset order)."),
    items: Optional[str] = typer.Option(None, "--items", help="Comma-separated question_ids: only these "
                                        "items, in this order."),
    per_type: Optional[int] = typer.Option(None, "--per-type", min=1, help="Only the first N items of each "
                                           "question type (dataset order; --limit applies after)."),
    retrieval_only: bool = typer.Option(False, "--retrieval-only", help="No answers: session / turn recall and "
                                        "context tokens only (fast)."),
    variant: str = typer.Option("full", "--variant", help="One or more of " + VARIANT_HELP.replace("|", ", ")
                                + ", separated by commas (all run on one ingest per item)."),
    k: Optional[int] = typer.Option(None, "--k", min=1, max=200, help="Top-k by base activation (default 10); "
                                    "baselines get k+m memories."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the summary JSON to this file."),
    records: Optional[Path] = typer.Option(None, "--records", help="Append one JSON line per item and variant; "
                                           "an interrupted run given the same file resumes."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Keep each item's ingested database in "
                                             "this directory (keyed by item, embedder and ingest settings); "
                                             "later runs copy it instead of ingesting."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    reader: Optional[str] = typer.Option(None, "--reader", metavar="REF", help="Answer with this chat model: "
                                         "any models.chat value (alias, GGUF path, ollama:NAME, "
                                         "openai:MODEL@BASE_URL); default models.chat."),
    feedback: str = typer.Option("none", "--feedback", help="Simulated use signals (a simulation), applied after "
                                 "each item is scored: none|evidence|answer|noisy:P."),
) -> None:
    """Evaluate on LongMemEval: one fresh space per item, its question asked at the item's question_date."""
    from hela_cli.bench import VARIANTS
    from hela_cli.bench.longmemeval import run_longmemeval

    variants = [v.strip() for v in variant.split(",") if v.strip()]
    if not variants:
        raise InputError("--variant: no variant given")
    for v in variants:
        if v not in VARIANTS:
            raise InputError(f"unknown variant '{v}' (choose from {', '.join(VARIANTS)})")
    check_out_dir(out)
    if cache_dir is not None and not cache_dir.is_dir():
        raise InputError(f"--cache-dir: {cache_dir} is not a directory")
    item_ids = [i for i in items.split(",") if i.strip()] if items is not None else None
    if items is not None and not item_ids:
        raise InputError("--items: no question_id given")
    cfg = _with_reader(state(ctx).config(), reader)
    summary = _progress_run(run_longmemeval, json_out, path=file, variants=variants, limit=limit,
                            per_type=per_type, item_ids=item_ids,
                            retrieval_only=retrieval_only, k=k, cfg=cfg, records=records, cache_dir=cache_dir,
                            feedback=feedback)
    if out is not None:
        write_out(out, json.dumps(summary, ensure_ascii=False, indent=2, default=str) + "\n", private=False)
    if json_out:
        print_json(summary)
    else:
        render_lme(summary)
