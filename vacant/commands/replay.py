"""`vacant replay [RUN] [--stop N] [--json]`: the Stop pipeline again on a recorded run (checks,
replay, grades), telling the agent nothing; `--stop N` reproduces the N-th Stop as it stood.

A replay reads the run and writes nothing into it: its report goes to stdout only, the step log
and the saved reports stay as the run left them (so the latest run stays the latest)."""

from __future__ import annotations

import json
from typing import Optional

import typer

from vacant.attribute.stop import AsOf, Pipeline
from vacant.commands.common import print_json, workspace
from vacant.commands.report import render_report
from vacant.core.exitcodes import Exit
from vacant.core.locations import WorkspaceError, resolve_run
from vacant.core.progress import progress
from vacant.policy.contract.contract import load_contract


def register(app: typer.Typer) -> None:
    @app.command("replay")
    def replay_command(
        run: Optional[str] = typer.Argument(None, help="Run id or prefix (default: the latest)."),
        as_json: bool = typer.Option(False, "--json"),
        budget: Optional[float] = typer.Option(None, "--budget", metavar="SECONDS", help="Seconds (default: the contract's)."),
        stop_number: Optional[int] = typer.Option(None, "--stop", metavar="N", help="Reproduce the N-th Stop: the run as it stood then."),
    ) -> None:
        """Re-run the Stop pipeline on a recorded run: checks, replay, grades (no feedback sent; the run is left unchanged)."""
        root = workspace()
        run_dir = resolve_run(root, run)
        as_of = None
        if stop_number is not None:
            path = run_dir / "reports" / f"{stop_number:04d}.json"
            if not path.exists():
                raise WorkspaceError(f"run {run_dir.name} has no report for Stop {stop_number}: `vacant report` shows the last")
            try:
                as_of = AsOf.of_report(json.loads(path.read_text()))
            except ValueError as error:
                raise WorkspaceError(f"{path}: {error}") from None
        with progress("replaying the run on its recorded states…", enabled=not as_json):
            report = Pipeline(root, run_dir, load_contract(root), budget, as_of=as_of, readonly=True).run()
        print_json(report) if as_json else typer.echo(render_report(report))
        if report["findings"]:
            raise typer.Exit(int(Exit.FAILED))
