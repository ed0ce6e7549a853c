"""``hela ingest``: transcript files into spaces (:meth:`hela_cli.memory.Memory.ingest`, :mod:`hela_cli.formats`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hela_cli.cli.helpers import progress_bar, state
from hela_cli.cli.render import console, print_json, text
from hela_cli.errors import HelaError

app = typer.Typer()


@app.command("ingest")
def ingest(
    ctx: typer.Context,
    paths: list[Path] = typer.Argument(..., help="Transcript files to ingest (a folder: the coding-agent "
                                       "sessions in it)."),
    fmt: str = typer.Option("auto", "--format", "-f",
                           help="auto|locomo|longmemeval|messages|text|chatgpt|claude|whatsapp|claude_code|codex|gemini"),
    space: Optional[str] = typer.Option(None, "--space", "-s", help="Memory space (default: the LoCoMo "
                                        "sample_id or 'default')."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON summary."),
    redact: Optional[bool] = typer.Option(None, "--redact/--no-redact", help="Replace secrets (API keys, "
                                          "tokens, private keys, passwords) with [REDACTED:kind] before storing "
                                          "(default: on for coding-agent sessions and ChatGPT / Claude "
                                          "exports, ingest.redact for other formats; --no-redact: off for all)."),
) -> None:
    """Ingest transcripts: one node per turn, consecutive turns linked. Idempotent."""
    from hela_cli.formats import FORMATS

    if fmt not in FORMATS:
        raise HelaError(f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})", 2)
    mem = state(ctx).memory()
    with mem, progress_bar("embedding turns", enabled=not json_out) as bar:
        summary = mem.ingest([str(p) for p in paths], fmt, space, progress=bar, redact=redact)
    if json_out:
        print_json(summary)
        return
    console.print(text(f"added {summary['nodes_added']} memories, skipped {summary['skipped_duplicates']} "
                       f"duplicates, {len(summary['spaces'])} space(s): {', '.join(summary['spaces'])} "
                       f"in {summary['seconds']:.1f}s"))
    if summary["embedding_truncated"]:
        ing = mem.config.ingest
        budget = f" or {ing.embed_tokens} embedder tokens" if ing.embed_tokens > 0 else ""
        console.print(text(f"note: {summary['embedding_truncated']} long turn(s) were embedded from their first "
                           f"{ing.max_turn_chars} characters{budget} (full text stored)"), style="yellow")
