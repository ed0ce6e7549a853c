"""``hela demo``: the sample conversation shipped in the package, ingested into a demo database of its own and
asked its sample questions (no clone needed; ``scripts/demo.sh`` is the longer tour of a clone)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from hela_cli.cli.helpers import state
from hela_cli.cli.render import console, err_console, text

SPACE = "demo"   # the sample conversation's LoCoMo sample_id

app = typer.Typer()


@app.command("demo")
def demo(
    ctx: typer.Context,
    file: Optional[Path] = typer.Option(None, "--file", metavar="PATH", help="The demo database, made afresh "
                                        "(default: demo.db in hela's data dir; never your --db)."),
    no_llm: bool = typer.Option(False, "--no-llm", help="Retrieval only: the best memory for each "
                                                        "question instead of an answer (no chat model)."),
) -> None:
    """Ingest the packaged sample conversation into a fresh demo database and ask its sample questions."""
    from hela_cli.paths import data_dir, ensure_private_dir, sample_data

    path = (file or data_dir() / "demo.db").expanduser()
    ensure_private_dir(path.parent)
    for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        stale.unlink(missing_ok=True)
    samples = sample_data()
    questions = json.loads((samples / "questions.json").read_text(encoding="utf-8"))
    from hela_cli.memory import Memory

    mem = Memory(state(ctx).config().replace(db=str(path)))   # the demo's own file, whatever --db says
    with mem:
        err_console.print(text(f"hela demo: ingesting the sample conversation into {path}"), soft_wrap=True)
        summary = mem.ingest([str(samples / "conversation.json")], space=SPACE)
        console.print(text(f"{summary['nodes_added']} memories in space '{SPACE}' "
                           f"({summary['seconds']:.1f} s)"), soft_wrap=True)
        for item in questions:
            console.print()
            console.print(text(f"Q: {item['question']}"), style="bold", soft_wrap=True)
            res = mem.ask(item["question"], SPACE, llm=not no_llm, learn=False)
            if no_llm:
                top = res["memories"][0] if res["memories"] else None
                shown = f"{top['speaker']}: {top['text']}" if top else "(nothing recalled)"
                console.print(text(f"   best memory: {shown}"), soft_wrap=True)
            else:
                console.print(text(f"   answer:   {(res['answer'] or '').strip()}"), soft_wrap=True)
            console.print(text(f"   expected: {item['answer']}"), style="dim", soft_wrap=True)
    last = questions[-1]["question"]
    console.print()
    console.print(text("Next: the score trace of a recall, and the memory graph in the browser:"), soft_wrap=True)
    console.print(text(f"   hela --db {path} ask {json.dumps(last)} -s {SPACE} --explain --no-llm --no-learn"),
                  soft_wrap=True)
    console.print(text(f"   hela --db {path} ui"), soft_wrap=True)
