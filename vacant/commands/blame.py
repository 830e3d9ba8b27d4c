"""`vacant blame FILE [--run RUN | --all-runs | --team] [--json]`: who wrote each line (vacant/show/blame.py;
--team: vacant/share/teamblame.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.locations import WorkspaceError, list_runs, resolve_run
from vacant.show.blame import blame_file, finding_marks, render, workspace_path
from vacant.store.loaded import latest_report


def register(app: typer.Typer) -> None:
    @app.command("blame")
    def blame_command(
        file: str = typer.Argument(..., metavar="FILE", help="A file of the workspace."),
        run: Optional[str] = typer.Option(None, "--run", metavar="RUN", help="Run id or prefix (default: the latest)."),
        all_runs: bool = typer.Option(False, "--all-runs", help="Carry authorship through every recorded run."),
        as_json: bool = typer.Option(False, "--json"),
        team: bool = typer.Option(False, "--team", help="Line by line across machines: this workspace's runs and the team's synced run records."),
    ) -> None:
        """For every line of FILE as it is now: the step that last wrote it, or baseline / outside any run."""
        root = workspace()
        if team:
            if run is not None or all_runs:
                raise WorkspaceError("--team considers every run that changed FILE: give it without --run or --all-runs")
            _team_blame(root, file, as_json)
            return
        if run is not None and all_runs:
            raise WorkspaceError("give --run RUN or --all-runs, not both")
        runs = list_runs(root) if all_runs else [resolve_run(root, run)]
        if not runs:
            resolve_run(root, None)  # raises the "no runs recorded" error
        blame = blame_file(root, workspace_path(root, file, Path.cwd()), runs)
        print_json(blame.to_json()) if as_json else typer.echo(render(blame))


def _team_blame(root: Path, file: str, as_json: bool) -> None:
    """Line-level across machines: this workspace's runs and the team's synced run records."""
    # imported here: the share package loads cryptography (~50 ms) that plain blame never needs
    from vacant.share.sync import open_store, repository_root
    from vacant.share.teamblame import render as render_team
    from vacant.share.teamblame import team_blame

    repo = repository_root(Path.cwd())
    path = workspace_path(repo, file, Path.cwd())
    runs = list_runs(root)
    blame = team_blame(root, open_store(repo), path, runs, (repo / path).read_bytes())
    reports = [report for report in map(latest_report, runs) if report]
    blame.findings = finding_marks(root, path, blame.texts, reports)
    print_json(blame.to_json()) if as_json else typer.echo(render_team(blame))
