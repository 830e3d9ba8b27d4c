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
        team: bool = typer.Option(False, "--team", help="Also the steps of synced runs from other machines that changed FILE."),
    ) -> None:
        """For every line of FILE as it is now: the step that last wrote it, or baseline / outside any run."""
        root = workspace()
        if team:
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
    """Path-level: the shared run records (vacant sync) whose steps changed FILE, then the local blame."""
    # imported here: the share package loads cryptography (~50 ms) that plain blame never needs
    from vacant.share.sync import open_store, repository_root
    from vacant.share.team import path_history

    repo = repository_root(Path.cwd())
    path = workspace_path(repo, file, Path.cwd())
    shared = path_history(repo, open_store(repo), path)
    runs = list_runs(root)
    local = blame_file(root, path, runs) if runs and (root / path).is_file() else None
    if as_json:
        print_json({"path": path, "shared_steps": shared, "local": local.to_json() if local else None})
        return
    for item in shared:
        cell = item["cell"] or {}
        who = "/".join(str(cell.get(k)) for k in ("platform", "agent_definition", "model")) if cell else "no actor"
        typer.echo(f"{item['run']} step {item['step']} ({item['tool']}) by {who}; key {item['name'] or item['author']}, "
                   f"from commit {(item['commit'] or '?')[:12]}")
    if not shared:
        typer.echo(f"no synced run changed {path} (vacant sync fetches the team's records)")
    if local is not None:
        typer.echo(render(local))
