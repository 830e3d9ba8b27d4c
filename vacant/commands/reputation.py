"""`vacant reputation`, `vacant route --task-family F`: reviews per agent cell with Wilson 95%
intervals, the team's verified reviews folded in unless `--local`.

typer is imported in `register` only: `vacant reputation [--json] [--local]` is answered by
`answer_quickly` before the command line (typer and every command, ~1 s here) is imported
(vacant/__main__.py), which is most of a cold reputation's time. Every text it prints is sealed
for the warm answer (vacant/share/warm.py), printed again while nothing it came from changed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vacant.commands.common import print_json
from vacant.store import reputation

if TYPE_CHECKING:
    import typer


def reputation_text(as_json: bool, local: bool) -> str:
    """What `vacant reputation` prints, whole (nothing is printed until it is all known), sealed
    for the warm answer under the inputs as they were before it was computed."""
    from vacant.share import warm

    variant = warm.variant_of(["reputation", *(["--json"] if as_json else []), *(["--local"] if local else [])])
    described = warm.described_now(variant) if variant else None
    text = _computed_text(as_json, local)
    if variant and described is not None:
        warm.seal(variant, described, text)
    return text


def _computed_text(as_json: bool, local: bool) -> str:
    stats, provenance = _folded(local)
    cells = [s.to_json() for s in stats]
    sources = [{"source": s, "count": n} for s, n in reputation.counts("source_counts", "source")]
    gaps = [{"platform": p, "count": n} for p, n in reputation.counts("coverage_gaps", "platform")]
    if as_json:
        return json.dumps({"cells": cells, "sources": sources, "integration_coverage": gaps,
                           "provenance": provenance.to_json()}, sort_keys=False) + "\n"
    out = [] if cells else ["no reviews yet"]
    for cell in cells:
        name = "/".join(cell[k] for k in reputation.CELL_FIELDS)
        low, high = cell["wilson95"]
        verdict = "" if cell["enough_data"] else "  (not enough data)"
        out.append(f"{name}: n={cell['n']} mean={cell['mean']:.2f} 95% [{low:.2f}, {high:.2f}]{verdict}")
    out += [f"source {row['source']}: {row['count']} finding(s) traced to it" for row in sources]
    out += [f"integration coverage {row['platform']}: {row['count']} out-of-band finding(s)" for row in gaps]
    out.append(provenance.sentence())
    return "\n".join(out) + "\n"


def answer_quickly(args: list[str]) -> bool:
    """`vacant reputation [--json] [--local]` answered without the command line; False (nothing
    printed) for any other arguments or when anything goes wrong, so the full command line runs
    it and says what, as every command does. An interrupt stops it as it stops any command."""
    from vacant.share.warm import variant_of

    if variant_of(args) is None:
        return False
    from vacant.core import children

    try:
        with children.interruptible():
            text = reputation_text("--json" in args, "--local" in args)
    except Exception:
        return False
    sys.stdout.write(text)
    return True


def register(app: typer.Typer) -> None:
    import typer

    @app.command("reputation")
    def reputation_command(
        as_json: bool = typer.Option(False, "--json"),
        local: bool = typer.Option(False, "--local", help="This machine's reviews only, not the team's."),
    ) -> None:
        """Per agent cell: n, mean and a Wilson 95% interval; plus source and coverage counts.
        The team's verified reviews (from `vacant sync`) are folded in unless --local."""
        sys.stdout.write(reputation_text(as_json, local))

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
    from vacant.share.teamkey import repository_root

    return folded_stats(None if local else repository_root(Path.cwd()), local_only=local)
