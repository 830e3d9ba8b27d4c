"""`vacant reputation`, `vacant route --task-family F`: reviews per agent cell with Wilson 95%
intervals, the team's verified reviews folded in unless `--local`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from vacant.commands.common import print_json
from vacant.store import reputation


def register(app: typer.Typer) -> None:
    @app.command("reputation")
    def reputation_command(
        as_json: bool = typer.Option(False, "--json"),
        local: bool = typer.Option(False, "--local", help="This machine's reviews only, not the team's."),
    ) -> None:
        """Per agent cell: n, mean and a Wilson 95% interval; plus source and coverage counts.
        The team's verified reviews (from `vacant sync`) are folded in unless --local."""
        stats, provenance = _folded(local)
        cells = [s.to_json() for s in stats]
        sources = [{"source": s, "count": n} for s, n in reputation.counts("source_counts", "source")]
        gaps = [{"platform": p, "count": n} for p, n in reputation.counts("coverage_gaps", "platform")]
        if as_json:
            print_json({"cells": cells, "sources": sources, "integration_coverage": gaps,
                        "provenance": provenance.to_json()})
            return
        if not cells:
            typer.echo("no reviews yet")
        for cell in cells:
            name = "/".join(cell[k] for k in reputation.CELL_FIELDS)
            low, high = cell["wilson95"]
            verdict = "" if cell["enough_data"] else "  (not enough data)"
            typer.echo(f"{name}: n={cell['n']} mean={cell['mean']:.2f} 95% [{low:.2f}, {high:.2f}]{verdict}")
        for row in sources:
            typer.echo(f"source {row['source']}: {row['count']} finding(s) traced to it")
        for row in gaps:
            typer.echo(f"integration coverage {row['platform']}: {row['count']} out-of-band finding(s)")
        typer.echo(provenance.sentence())

    @app.command("route")
    def route_command(
        task_family: str = typer.Option(..., "--task-family", metavar="FAMILY", help="The task family to route (the contract's task_family)."),
        as_json: bool = typer.Option(False, "--json"),
        local: bool = typer.Option(False, "--local", help="This machine's reviews only, not the team's."),
    ) -> None:
        """Cells with at least 5 reviews for a task family, best interval lower bound first."""
        stats, provenance = _folded(local)
        ranked = [s.to_json() for s in reputation.route(task_family, stats=stats)]
        if as_json:
            print_json({"task_family": task_family, "ranked": ranked, "enough_data": bool(ranked),
                        "provenance": provenance.to_json()})
            return
        if not ranked:
            typer.echo(f"not enough data: no cell has {reputation.MIN_REVIEWS} reviews for {task_family!r}")
        for cell in ranked:
            low, high = cell["wilson95"]
            typer.echo(f"{cell['platform']}/{cell['agent_definition']}/{cell['model']}: lower bound {low:.2f} "
                       f"(n={cell['n']}, mean={cell['mean']:.2f}, 95% [{low:.2f}, {high:.2f}])")
        typer.echo(provenance.sentence())


def _folded(local: bool) -> tuple[list[reputation.CellStats], Any]:
    """The figures with the team's reviews folded in (vacant/share/fold.py)."""
    # imported here: the share package loads cryptography and the Stop pipeline (~0.2 s), which
    # every other `vacant` command would otherwise pay at start-up
    from vacant.share.fold import folded_stats
    from vacant.share.sync import repository_root

    return folded_stats(None if local else repository_root(Path.cwd()), local_only=local)
