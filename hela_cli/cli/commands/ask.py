"""``hela ask``: answer from memory, or print the retrieved context (:meth:`hela_cli.memory.Memory.ask`)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from hela_cli.cli.helpers import pick_space, space_option, state
from hela_cli.cli.render import citation_lines, console, err_console, print_json, text

app = typer.Typer()


def parse_now(value: Optional[str]) -> Optional[float]:
    from hela_cli.text.dates import parse_time

    return None if value is None else parse_time(value, "--now")[0]


@app.command("ask")
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question."),
    space: Optional[str] = space_option(),
    k: Optional[int] = typer.Option(None, "--k", min=1, max=200, help="Top-k by base activation (default 10)."),
    flip: Optional[int] = typer.Option(None, "--flip", min=0, max=100, help="Extra nodes by spread activation (default 3)."),
    now: Optional[str] = typer.Option(None, "--now", help="The present for time decay (default: the newest memory)."),
    no_llm: bool = typer.Option(False, "--no-llm", help="Retrieval only: print the context."),
    no_learn: bool = typer.Option(False, "--no-learn", help="Read-only: no Hebbian update, no access counts."),
    explain: bool = typer.Option(False, "--explain", help="Show the score trace of every memory."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print the answer alone (no sources), for scripts."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
    speaker: Optional[str] = typer.Option(None, "--speaker", help="Recall only what this speaker said."),
    session: Optional[str] = typer.Option(None, "--session", help="Recall only from this session."),
    since: Optional[str] = typer.Option(None, "--since", help="Recall only memories at or after this time."),
    until: Optional[str] = typer.Option(None, "--until", help="Recall only memories at or before this time."),
    current_only: bool = typer.Option(False, "--current-only", help="Leave out memories a later one superseded "
                                      "(possibly superseded ones stay, marked)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Recall as of this date: later memories and later "
                                        "supersessions are ignored."),
) -> None:
    """Answer a question from memory, then the memories it rests on (retrieval learns from use unless
    --no-learn)."""
    from hela_cli.mechanics.request import RecallRequest

    st = state(ctx)
    request = RecallRequest.of(speaker=speaker, session=session, since=since, until=until,
                               current_only=current_only, as_of=as_of)
    mem = st.memory(**{"retrieval.k": k, "retrieval.m": flip})
    # plain output: the answer is printed as it is generated (what is printed equals the final answer)
    def on_text(piece: str) -> None:
        console.print(text(piece), style="bold", end="", soft_wrap=True)
        console.file.flush()

    plain = not (json_out or quiet or explain or no_llm)
    with mem:
        space = pick_space(mem, space)
        learn = mem.config.retrieval.learn and not no_learn
        res = mem.ask(question, space, request, now=parse_now(now), llm=not no_llm, learn=learn,
                      on_text=on_text if plain else None)
        _print_answer(res, json_out, explain, no_llm, quiet, streamed=plain)
        # the answer is printed before a due auto-consolidation runs (a minute with a small CPU model)
        rep = mem.consolidate_if_due(space) if not no_llm and learn and res["memories"] else None
    if rep is not None and rep.get("error"):
        err_console.print(text(f"warning: auto-consolidation failed: {rep['error']}"), style="yellow",
                          soft_wrap=True)
    elif rep is not None and not json_out and rep.get("distilled"):
        err_console.print(text(f"consolidated {rep['distilled']} hub(s) into semantic records "
                               f"in {rep.get('seconds', 0):.0f} s"), style="dim")


def _print_answer(res: dict, json_out: bool, explain: bool, no_llm: bool, quiet: bool = False,
                  streamed: bool = False) -> None:
    if json_out:
        print_json(res)
    elif quiet:
        if no_llm:
            console.print(text(res["context"]), soft_wrap=True)
        else:
            console.print(text(res["answer"] or ""), soft_wrap=True)
    else:
        if explain:
            from hela_cli.cli.explain import render_explain

            render_explain(res)
        if no_llm:
            console.print(text(res["context"]), soft_wrap=True)  # verbatim: no wrapping inserted
        else:
            console.print(text("" if streamed else res["answer"] or ""), style="bold", soft_wrap=True)
            if res.get("citations"):
                console.print(text("sources:"), style="dim")
                for line in citation_lines(res["citations"], console.width):
                    console.print(text(line), soft_wrap=True)
        if explain or no_llm:
            tokens = res["context_tokens"]
            counted = f"{tokens} context tokens" if tokens is not None else "context tokens not counted (no chat model)"
            console.print(text(f"{len(res['memories'])} memories, {counted}, "
                               f"{res['timings_ms']['total']:.0f} ms"), style="dim")
    sys.stdout.flush()  # out before a consolidation that may follow in this process
