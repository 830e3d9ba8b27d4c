"""`vacant restore RUN --step K [--before] --to DIR [--json]` (vacant/show/restore.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.exitcodes import Exit
from vacant.core.locations import resolve_run
from vacant.show.restore import render, restore


def register(app: typer.Typer) -> None:
    @app.command("restore")
    def restore_command(
        run: str = typer.Argument(..., metavar="RUN", help="Run id or prefix."),
        step: int = typer.Option(..., "--step", metavar="K", help="The step number (`vacant log RUN` lists them)."),
        before: bool = typer.Option(False, "--before", help="The state before the step started (default: after it ended)."),
        to: Path = typer.Option(..., "--to", metavar="DIR", help="A new or empty directory outside the workspace."),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Write the workspace as it was after (or before) step K into a new or empty directory."""
        root = workspace()
        result = restore(root, resolve_run(root, run), step, to, before)
        print_json(result.to_json()) if as_json else typer.echo(render(result))
        if result.unrestorable:
            raise typer.Exit(int(Exit.FAILED))
