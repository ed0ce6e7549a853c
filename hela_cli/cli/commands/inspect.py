"""``hela inspect ...``: look inside a memory space (flags and rendering; the views are plain data from
:mod:`hela_cli.maintenance.inspection`). User text is always rendered through :func:`render.text` (never markup)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from hela_cli.errors import InputError
from hela_cli.cli.helpers import open_store, print_changes, show_space, space_option, write_out
from hela_cli.cli.render import HUB_STYLE, ISOLATED_STYLE, candidates_table, clean, console, err_console, fmt_ts, print_json, table, text

CTX = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(name="inspect", context_settings=CTX, help="Look inside a memory space: hubs, pruning candidates, "
                  "nodes, the edge-weight heatmap, semantic records. Without a subcommand: overview.")

SPACE_HELP = ("Memory space (default: the one given to `hela inspect`, else the database's only space, else "
              "'default').")


def _node_style(hub: bool, isolated: bool) -> str:
    return HUB_STYLE if hub else (ISOLATED_STYLE if isolated else "")


def _num(x: Optional[float], digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"



@app.callback(invoke_without_command=True)
def inspect_main(
    ctx: typer.Context,
    space: Optional[str] = space_option(),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Overview: nodes, edges, weight distribution, hubs, candidates, semantic records."""
    ctx.meta["hela_inspect"] = {"space": space, "json": json_out}
    if ctx.invoked_subcommand is not None:
        return
    from hela_cli.maintenance import inspection

    show_space(ctx, space, json_out, inspection.overview, render_overview)


def render_overview(ov: dict[str, Any], space: str, cfg: Any) -> None:
    from rich.table import Table

    console.print(text(f"space '{ov['space']}'", "bold"))
    h = ov["hubs"]
    console.print(text(f"{ov['nodes']} memories, {ov['edges']} edges, {ov['step']} retrievals "
                       f"(consolidated at step {ov['consolidated_step']}, hebbian.decay {ov['decay']:g}), "
                       f"now {fmt_ts(ov['now'])}"))
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


@app.command("hubs")
def inspect_hubs(
    ctx: typer.Context,
    top: int = typer.Option(20, "--top", min=1, max=10_000, help="How many hubs, strongest first."),
    space: Optional[str] = typer.Option(None, "--space", "-s", help=SPACE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Hubs: D(v) (Eq.2), degree, cluster preview, consolidated or not."""
    from hela_cli.maintenance import inspection

    show_space(ctx, space, json_out, lambda store, sp, cfg: inspection.hubs(store, sp, cfg, top), render_hubs)


def render_hubs(rows: list[dict[str, Any]], space: str, cfg: Any) -> None:
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


@app.command("prune")
def inspect_prune(
    ctx: typer.Context,
    space: Optional[str] = typer.Option(None, "--space", "-s", help=SPACE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Forgetting candidates with the reason for each criterion."""
    from hela_cli.maintenance import inspection

    show_space(ctx, space, json_out, inspection.prune, render_prune)


def render_prune(rep: dict[str, Any], space: str, cfg: Any) -> None:
    c = rep["criteria"]
    console.print(text(f"criteria (all must hold): total edge weight < {c['delta_prune']:g}, idle > "
                       f"{c['delta_age_days']:g} days before {fmt_ts(rep['now'])}, never accessed", "dim"))
    if rep["candidates"]:
        console.print(candidates_table(f"forgetting candidates in '{space}'", rep["candidates"]))
    console.print(text(f"{len(rep['candidates'])} of {rep['nodes']} memories are candidates"))


@app.command("node")
def inspect_node(
    ctx: typer.Context,
    node_id: int = typer.Argument(..., metavar="ID", help="Node id (see `hela ask --json`)."),
    space: Optional[str] = typer.Option(None, "--space", "-s", help="Check the node belongs to this space."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One memory: text, metadata, neighbours with current weights, semantic records citing it."""
    from hela_cli.maintenance import inspection

    parent = ctx.meta.get("hela_inspect", {})
    json_out = json_out or parent.get("json", False)
    store, cfg = open_store(ctx)
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
    print_changes(n["changes"])


@app.command("heatmap")
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
    from hela_cli.maintenance import inspection

    if nodes is not None and hubs_only:
        raise InputError("--nodes and --hubs exclude each other")

    def read(store: Any, sp: Any, cfg: Any) -> dict[str, Any]:
        hm = inspection.heatmap(store, sp, cfg, nodes=nodes or 20, hubs_only=hubs_only,
                                max_nodes=max(nodes or 0, inspection.HEATMAP_MAX_NODES))
        if svg is not None:
            write_out(svg, inspection.heatmap_svg(hm))
        return hm

    def render(hm: dict[str, Any], space: str, cfg: Any) -> None:
        render_heatmap(hm)
        if svg is not None:
            err_console.print(text(f"wrote {svg}"), style="dim")

    show_space(ctx, space, json_out, read, render)


def render_heatmap(hm: dict[str, Any]) -> None:
    """The matrix as a grid of coloured cells (two spaces each) with styled node labels."""
    from hela_cli.maintenance.inspection import heat_char, heat_colour

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


@app.command("semantic")
def inspect_semantic(
    ctx: typer.Context,
    space: Optional[str] = typer.Option(None, "--space", "-s", help=SPACE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Semantic records (traits, facts, knowledge) with their evidence."""
    from hela_cli.maintenance import inspection

    show_space(ctx, space, json_out, lambda store, sp, cfg: inspection.semantic(store, sp), render_semantic)


def render_semantic(recs: list[dict[str, Any]], space: str, cfg: Any) -> None:
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
