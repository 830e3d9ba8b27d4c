"""`vacant blame FILE [--run RUN | --all-runs] [--json]`: who wrote each line (vacant/show/blame.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.locations import WorkspaceError, list_runs, resolve_run
from vacant.show.blame import blame_file, render, workspace_path


def register(app: typer.Typer) -> None:
    @app.command("blame")
    def blame_command(
        file: str = typer.Argument(..., metavar="FILE", help="A file of the workspace."),
        run: Optional[str] = typer.Option(None, "--run", metavar="RUN", help="Run id or prefix (default: the latest)."),
        all_runs: bool = typer.Option(False, "--all-runs", help="Carry authorship through every recorded run."),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """For every line of FILE as it is now: the step that last wrote it, or baseline / outside any run."""
        root = workspace()
        if run is not None and all_runs:
            raise WorkspaceError("give --run RUN or --all-runs, not both")
        runs = list_runs(root) if all_runs else [resolve_run(root, run)]
        if not runs:
            resolve_run(root, None)  # raises the "no runs recorded" error
        blame = blame_file(root, workspace_path(root, file, Path.cwd()), runs)
        print_json(blame.to_json()) if as_json else typer.echo(render(blame))
