"""``hela consolidate``, ``hela forget``, ``hela inspect ...`` and ``hela export`` (registered on the main app
at the end of ``cli.py`` through :func:`register`).

Flag parsing and rendering only: the logic is in :mod:`hela_cli.consolidate`, :mod:`hela_cli.forget` and
:mod:`hela_cli.inspection`. Errors are :class:`~hela_cli.errors.HelaError` and are mapped to one line and
an exit code by ``cli.HelaGroup``. User text is always rendered through :func:`render.text` (never markup).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from hela_cli.errors import HelaError, InputError
from hela_cli.cli.render import clean, console, err_console, fmt_ts, print_json, table, text

HUB_STYLE = "bold magenta"       # hubs (Figure 4: the strongly connected centres)
ISOLATED_STYLE = "dim"           # nodes without any edge
CTX = {"help_option_names": ["-h", "--help"]}

inspect_app = typer.Typer(context_settings=CTX, help="Look inside a memory space: hubs, pruning candidates, "
                          "nodes, the edge-weight heatmap, semantic records. Without a subcommand: overview.")

SPACE_HELP = "Memory space (default: the one given to `hela inspect`, else 'default')."


def _state(ctx: typer.Context) -> Any:
    return ctx.find_root().obj


def _open(ctx: typer.Context) -> tuple[Any, Any]:
    """(store, config) for read-only commands; never creates a database."""
    from hela_cli.store import Store

    cfg = _state(ctx).config()
    return Store.open(cfg.db), cfg


def _node_style(hub: bool, isolated: bool) -> str:
    return HUB_STYLE if hub else (ISOLATED_STYLE if isolated else "")


def _num(x: Optional[float], digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _opts(ctx: typer.Context, space: Optional[str], json_out: bool) -> tuple[str, bool]:
    """A subcommand's --space / --json, falling back to the ones given to ``hela inspect`` itself."""
    parent = ctx.meta.get("hela_inspect", {})
    return space or parent.get("space") or "default", json_out or parent.get("json", False)


# ----------------------------------------------------------------------------------- consolidate
def consolidate_cmd(
    ctx: typer.Context,
    space: str = typer.Option("default", "--space", "-s", help="Memory space."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List hubs and clusters; no model call, no write."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Distil hubs (Eq.2) and their clusters into semantic records with the local chat model (prompt A.1)."""
    mem = _state(ctx).memory()
    quiet = json_out

    def progress(i: int, n: int, plan: Any) -> None:
        if not quiet and i < n:
            err_console.print(text(f"distilling hub {plan.node_id} ({i + 1}/{n}, cluster of {len(plan.cluster)})"),
                              style="dim")

    with mem:
        rep = mem.consolidate(space, dry_run=dry_run, progress=progress)
    if json_out:
        print_json(rep)
        return

    t = table(f"{'planned ' if dry_run else ''}consolidation of space '{rep['space']}'",
              [("hub", "key"), ("D(v)", "num"), ("degree", "num"), ("cluster", "text"),
               ("action" if dry_run else "status", "key"), ("records", "num")])
    for h in rep["hubs"]:
        status = h["action"] if dry_run else (h.get("status") or h["action"])
        style = "red" if status.startswith("failed") else ("green" if status == "ok" else "")
        recs = "-"
        if "inserted" in h:
            recs = f"+{len(h['inserted'])}" + (f" ~{len(h['merged_into'])}" if h["merged_into"] else "")
        t.add_row(text(str(h["hub"]), HUB_STYLE), f"{h['strength']:.3f}", str(h["degree"]),
                  text(" ".join(map(str, h["cluster"]))), text(status, style), recs)
    if rep["hubs"]:
        console.print(t)
    if dry_run:
        console.print(text(f"{rep['hubs_found']} hub(s): {rep['to_distill']} to distil, {rep['covered']} covered, "
                           f"{rep['unchanged']} unchanged (dry run: no model call, nothing written)"))
        return
    console.print(text(f"{rep['hubs_found']} hub(s): {rep['distilled']} distilled, {rep['failed']} failed, "
                       f"{rep['covered']} covered, {rep['unchanged']} unchanged; {rep['records_inserted']} new "
                       f"semantic record(s), {rep['records_merged']} merged, {rep['records_rejected']} rejected; "
                       f"{rep['model_calls']} model call(s) in {rep['seconds']:.1f}s"))
    for h in rep["hubs"]:
        if (h.get("status") or "").startswith("failed"):
            console.print(text(f"hub {h['hub']}: {h['status']}"), style="red")


# ----------------------------------------------------------------------------------- forget
def _candidates_table(title: str, cands: list[dict[str, Any]]) -> Any:

    t = table(title, [("id", "num"), ("speaker", "key"), ("text", "text"), ("weight", "num"), ("idle days", "num"),
                      ("accesses", "num"), ("why", "text")])
    for c in cands:
        why = "; ".join(r["reason"] for r in c["reasons"].values())
        t.add_row(text(str(c["id"]), ISOLATED_STYLE if not c["degree"] else ""), text(c["speaker"] or "-"),
                  text(c["text"][:70]), f"{c['total_weight']:.4f}", f"{c['idle_days']:.1f}",
                  str(c["access_count"]), text(why, "dim"))
    return t


def forget_cmd(
    ctx: typer.Context,
    space: str = typer.Option("default", "--space", "-s", help="Memory space."),
    apply: bool = typer.Option(False, "--apply", help="Remove the candidates (default: dry run)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Adaptive forgetting: memories that are weak, idle past delta_age and never accessed (dry run unless --apply)."""
    mem = _state(ctx).memory()
    with mem:
        rep = mem.forget(space, apply=apply)
    if json_out:
        print_json(rep)
        return
    n = len(rep["candidates"])
    if n:
        console.print(_candidates_table(f"forgetting candidates in '{rep['space']}'", rep["candidates"]))
    if apply:
        console.print(text(f"forgot {rep['removed']} memories; {rep['nodes']} remain"
                           + (f"; {len(rep['semantic_affected'])} semantic record(s) lost evidence (kept, counted)"
                              if rep["semantic_affected"] else "")))
    else:
        console.print(text(f"{n} of {rep['nodes']} memories would be forgotten (dry run; --apply removes them)"))


def link_cmd(
    ctx: typer.Context,
    space: str = typer.Option("default", "--space", "-s", help="Memory space."),
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
    mem = _state(ctx).memory()
    with mem:
        rep = mem.link(space, top_k=top_k, weight=weight, min_score=min_score)
    if json_out:
        print_json(rep)
        return
    console.print(text(f"{rep['conversation_links']} conversation link(s) and {rep['links_written']} keyword "
                       f"link(s) written in '{rep['space']}' ({rep['nodes']} memories, {rep['edges']} edges)"))


# ----------------------------------------------------------------------------------- inspect
@inspect_app.callback(invoke_without_command=True)
def inspect_main(
    ctx: typer.Context,
    space: str = typer.Option("default", "--space", "-s", help="Memory space."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Overview: nodes, edges, weight distribution, hubs, candidates, semantic records."""
    ctx.meta["hela_inspect"] = {"space": space, "json": json_out}
    if ctx.invoked_subcommand is not None:
        return
    from hela_cli import inspection

    store, cfg = _open(ctx)
    with store:
        ov = inspection.overview(store, store.require_space(space), cfg)
    if json_out:
        print_json(ov)
        return
    from rich.table import Table

    console.print(text(f"space '{ov['space']}'", "bold"))
    h = ov["hubs"]
    console.print(text(f"{ov['nodes']} memories, {ov['edges']} edges, {ov['step']} retrievals "
                       f"(consolidated at step {ov['consolidated_step']}), now {fmt_ts(ov['now'])}"))
    line = text("")
    line.append(f"{h['count']} hubs", HUB_STYLE)
    line.append(f" (D > {h['delta_hub']:g}, {h['consolidated']} consolidated), ")
    line.append(f"{ov['isolated_nodes']} isolated", ISOLATED_STYLE)
    line.append(f", {ov['forgetting_candidates']} forgetting candidates, {ov['semantic']['count']} semantic records")
    if ov["semantic"]["by_kind"]:
        line.append(" (" + ", ".join(f"{v} {k}" for k, v in sorted(ov["semantic"]["by_kind"].items())) + ")")
    console.print(line)
    wd = ov["weight_distribution"]
    if ov["edges"]:
        t = Table(title="edge weights (current)", show_edge=False)
        t.add_column("weight", justify="right")
        t.add_column("edges", justify="right")
        t.add_column("")
        top = max(wd["counts"]) or 1
        for i, c in enumerate(wd["counts"]):
            t.add_row(f"{wd['bins'][i]:.2f}-{wd['bins'][i + 1]:.2f}", str(c), text("█" * round(30 * c / top), "cyan"))
        console.print(t)
        console.print(text(f"min {wd['min']:.4f}  median {wd['median']:.4f}  mean {wd['mean']:.4f}  "
                           f"max {wd['max']:.4f}", "dim"))
    if h["top"]:
        console.print(text("strongest hubs: " + ", ".join(f"{x['id']} (D={x['strength']:.2f})" for x in h["top"]),
                           HUB_STYLE))


@inspect_app.command("hubs")
def inspect_hubs(
    ctx: typer.Context,
    top: int = typer.Option(20, "--top", min=1, max=10_000, help="How many hubs, strongest first."),
    space: Optional[str] = typer.Option(None, "--space", "-s", help=SPACE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Hubs: D(v) (Eq.2), degree, cluster preview, consolidated or not."""
    from hela_cli import inspection

    space, json_out = _opts(ctx, space, json_out)
    store, cfg = _open(ctx)
    with store:
        rows = inspection.hubs(store, store.require_space(space), cfg, top)
    if json_out:
        print_json(rows)
        return
    if not rows:
        console.print(text(f"no hubs in '{space}' (no node has D(v) > {cfg.consolidation.delta_hub:g})"))
        return

    t = table(f"hubs of '{space}'", [("hub", "key"), ("D(v)", "num"), ("degree", "num"), ("consolidated", "key"),
                                     ("text", "text"), ("cluster: id (weight)", "text")])
    for r in rows:
        cluster = text(", ".join(f"{c['id']} ({c['weight']:.2f})" for c in r["cluster"][1:5]))
        if len(r["cluster"]) > 5:
            cluster.append(f" +{len(r['cluster']) - 5}", "dim")
        cons = text("yes", "green") if r["consolidated"] else text(r["status"] or "no", "red" if r["status"] else "yellow")
        t.add_row(text(str(r["id"]), HUB_STYLE), f"{r['strength']:.3f}", str(r["degree"]), cons,
                  text(f"{r['speaker'] or '-'}: {r['text'][:60]}"), cluster)
    console.print(t)


@inspect_app.command("prune")
def inspect_prune(
    ctx: typer.Context,
    space: Optional[str] = typer.Option(None, "--space", "-s", help=SPACE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Forgetting candidates with the reason for each criterion."""
    from hela_cli import inspection

    space, json_out = _opts(ctx, space, json_out)
    store, cfg = _open(ctx)
    with store:
        rep = inspection.prune(store, store.require_space(space), cfg)
    if json_out:
        print_json(rep)
        return
    c = rep["criteria"]
    console.print(text(f"criteria (all must hold): total edge weight < {c['delta_prune']:g}, idle > "
                       f"{c['delta_age_days']:g} days before {fmt_ts(rep['now'])}, never accessed", "dim"))
    if rep["candidates"]:
        console.print(_candidates_table(f"forgetting candidates in '{space}'", rep["candidates"]))
    console.print(text(f"{len(rep['candidates'])} of {rep['nodes']} memories are candidates"))


@inspect_app.command("node")
def inspect_node(
    ctx: typer.Context,
    node_id: int = typer.Argument(..., metavar="ID", help="Node id (see `hela ask --json`)."),
    space: Optional[str] = typer.Option(None, "--space", "-s", help="Check the node belongs to this space."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One memory: text, metadata, neighbours with current weights, semantic records citing it."""
    from hela_cli import inspection

    parent = ctx.meta.get("hela_inspect", {})
    json_out = json_out or parent.get("json", False)
    store, cfg = _open(ctx)
    with store:
        n = inspection.node(store, node_id, cfg, space)
    if json_out:
        print_json(n)
        return

    kind = "hub" if n["hub"] else ("isolated" if n["isolated"] else "memory")
    head = text("")
    head.append(f"{kind} {n['id']}", _node_style(n["hub"], n["isolated"]) or "bold")
    head.append(f"  space '{clean(n['space'])}'  D(v)={n['strength']:.3f}  degree {n['degree']}")
    console.print(head)
    console.print(text(f"{n['speaker'] or '-'}: {n['text']}"))
    meta = [("time", f"{fmt_ts(n['ts'])} ({n['time_str'] or '-'})"), ("source id", n["source_id"] or "-"),
            ("session", n["session"] or "-"), ("role", n["role"] or "-"), ("accesses", str(n["access_count"])),
            ("last access", fmt_ts(n["last_access"])), ("keywords", " ".join(n["keywords"]) or "-"),
            ("file", n["source"] or "-")]
    if n["hub_state"]:
        meta.append(("hub status", n["hub_state"]["status"]))
    for k, v in meta:
        console.print(text(f"  {k:<12} ", "dim") + text(v))
    if n["neighbours"]:
        t = table("neighbours (current weights)", [("id", "num"), ("weight", "num"), ("speaker", "key"),
                                                    ("text", "text")])
        for x in n["neighbours"]:
            t.add_row(str(x["id"]), f"{x['weight']:.4f}", text(x["speaker"] or "-"), text(x["text"]))
        console.print(t)
    for r in n["semantic"]:
        console.print(text(f"  [{r['kind']}] {r['subject'] + ': ' if r['subject'] else ''}{r['text']}"
                           + (f" ({r['date']})" if r["date"] else "")))


@inspect_app.command("heatmap")
def inspect_heatmap(
    ctx: typer.Context,
    nodes: Optional[int] = typer.Option(None, "--nodes", "-n", min=1, max=200,
                                        help="The N strongest nodes by D(v) (default 20)."),
    hubs_only: bool = typer.Option(False, "--hubs", help="Hubs and their clusters instead."),
    svg: Optional[Path] = typer.Option(None, "--svg", metavar="FILE", help="Also write the matrix as SVG."),
    space: Optional[str] = typer.Option(None, "--space", "-s", help=SPACE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Current edge-weight matrix as a coloured grid (paper appendix B)."""
    from hela_cli import inspection

    if nodes is not None and hubs_only:
        raise InputError("--nodes and --hubs exclude each other")
    space, json_out = _opts(ctx, space, json_out)
    store, cfg = _open(ctx)
    with store:
        hm = inspection.heatmap(store, store.require_space(space), cfg, nodes=nodes or 20, hubs_only=hubs_only,
                                max_nodes=max(nodes or 0, inspection.HEATMAP_MAX_NODES))
    if svg is not None:
        _write_private(svg, inspection.heatmap_svg(hm))
    if json_out:
        print_json(hm)
        return
    render_heatmap(hm)
    if svg is not None:
        err_console.print(text(f"wrote {svg}"), style="dim")


def render_heatmap(hm: dict[str, Any]) -> None:
    """The matrix as a grid of coloured cells (two spaces each) with styled node labels."""
    from hela_cli.inspection import heat_char, heat_colour

    nodes, matrix, cap = hm["nodes"], hm["matrix"], hm["cap"] or 1.0
    if not nodes:
        console.print(text("(no nodes with edges)"))
        return
    width = max(len(str(n["id"])) for n in nodes)
    header = text(" " * (width + 3) + "".join(f"{i % 100:>2}" for i in range(len(nodes))), "dim")
    console.print(header)
    for i, n in enumerate(nodes):
        style = _node_style(n["hub"], n["isolated"])
        row = text(f"{n['id']:>{width}} {'H' if n['hub'] else ('o' if n['isolated'] else ' ')}", style)
        row.append(" ")
        for j, w in enumerate(matrix[i]):
            if i == j:
                row.append("··", "dim")
            elif w > 0:  # ramp characters too, so the grid reads without colour (pipes, NO_COLOR)
                row.append(heat_char(w, cap) * 2, f"black on {heat_colour(w, cap)}")
            else:
                row.append("  ")
        row.append(f"  {n['speaker'] or '-'}: {n['text']}", "dim")
        console.print(row)
    legend = text("scale 0 ")
    for k in range(10):
        w = cap * (k + 1) / 10
        legend.append(heat_char(w, cap), f"black on {heat_colour(w, cap)}")
    legend.append(f" {cap:g}   ")
    legend.append("H hub", HUB_STYLE)
    legend.append("  ")
    legend.append("o isolated", ISOLATED_STYLE)
    console.print(legend)


@inspect_app.command("semantic")
def inspect_semantic(
    ctx: typer.Context,
    space: Optional[str] = typer.Option(None, "--space", "-s", help=SPACE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Semantic records (traits, facts, knowledge) with their evidence."""
    from hela_cli import inspection

    space, json_out = _opts(ctx, space, json_out)
    store, _cfg = _open(ctx)
    with store:
        recs = inspection.semantic(store, store.require_space(space))
    if json_out:
        print_json(recs)
        return
    if not recs:
        console.print(text(f"no semantic records in '{space}' (run `hela consolidate --space {space}`)"))
        return

    t = table(f"semantic records of '{space}'", [("id", "num"), ("kind", "key"), ("subject", "key"), ("text", "text"),
                                                ("date", "key"), ("conf.", "num"), ("evidence", "text")])
    for r in recs:
        ev = " ".join(str(e) for e in r["evidence"])
        if r["forgotten_evidence"]:
            ev += f" (+{r['forgotten_evidence']} forgotten)"
        t.add_row(str(r["id"]), r["kind"], text(r["subject"] or "-"), text(r["text"]), text(r["date"] or "-"),
                  _num(r["confidence"], 2), text(ev))
    console.print(t)


# ----------------------------------------------------------------------------------- export
def _write_private(path: Path, data: str) -> None:
    """Write a file readable by the user only (it holds private conversation text)."""
    path = path.expanduser()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
    except OSError as e:
        raise HelaError(f"{path}: cannot write ({e.strerror})") from None


def export_cmd(
    ctx: typer.Context,
    fmt: str = typer.Option(..., "--format", "-f", help="json|graphml"),
    space: str = typer.Option("default", "--space", "-s", help="Memory space."),
    out: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE", help="Write here (default: stdout)."),
    vectors: bool = typer.Option(False, "--vectors", help="JSON: include the embedding vectors."),
) -> None:
    """Export a whole space (nodes, edges with current weights, semantic records) as JSON or GraphML."""
    import json

    from hela_cli import inspection

    if fmt not in ("json", "graphml"):
        raise InputError(f"unknown export format '{fmt}' (choose json or graphml)")
    if vectors and fmt != "json":
        raise InputError("--vectors is only available with --format json")
    store, cfg = _open(ctx)
    with store:
        sp = store.require_space(space)
        if fmt == "json":
            data = json.dumps(inspection.export_json(store, sp, cfg, vectors=vectors), ensure_ascii=False,
                              indent=1) + "\n"
        else:
            data = inspection.export_graphml(store, sp, cfg)
        counts = (store.count_nodes(sp.id), store.count_edges(sp.id), store.count_semantic(sp.id))
    if out is None:
        sys.stdout.write(data)
        sys.stdout.flush()
        return
    _write_private(out, data)
    err_console.print(text(f"wrote {counts[0]} memories, {counts[1]} edges, {counts[2]} semantic records "
                           f"of '{space}' to {out}"), style="dim")


# ----------------------------------------------------------------------------------- registration
def register(app: typer.Typer) -> None:
    """Add these commands to the main ``hela`` app."""
    app.command("consolidate")(consolidate_cmd)
    app.command("forget")(forget_cmd)
    app.command("link")(link_cmd)
    app.add_typer(inspect_app, name="inspect")
    app.command("export")(export_cmd)
