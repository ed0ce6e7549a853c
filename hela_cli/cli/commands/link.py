"""``hela link``: ingest links for an existing space (``Memory.link``)."""

from __future__ import annotations

from typing import Optional

import typer

from hela_cli.cli.helpers import pick_space, space_option, state
from hela_cli.cli.render import console, print_json, text

app = typer.Typer()


@app.command("link")
def link(
    ctx: typer.Context,
    space: Optional[str] = space_option(),
    top_k: Optional[int] = typer.Option(None, "--top-k", min=1,
                                        help="Partners per memory (default: ingest.keyword_links)."),
    weight: Optional[float] = typer.Option(None, "--weight", min=0.0,
                                           help="Link weight (default: ingest.keyword_link_weight)."),
    min_score: Optional[float] = typer.Option(None, "--min-score", min=0.0,
                                              help="Least sum of IDFs of shared rare keywords "
                                                   "(default: ingest.keyword_link_min_score)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Ingest links for an existing space: fixed conversation links, and keyword links between sessions."""
    mem = state(ctx).memory()
    with mem:
        rep = mem.link(pick_space(mem, space), top_k=top_k, weight=weight, min_score=min_score)
    if json_out:
        print_json(rep)
        return
    console.print(text(f"{rep['conversation_links']} conversation link(s) and {rep['links_written']} keyword "
                       f"link(s) written in '{rep['space']}' ({rep['nodes']} memories, {rep['edges']} edges)"))
