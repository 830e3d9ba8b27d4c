"""`vacant view [RUN]`: write the run's HTML view (vacant/show/html.py) and open it in a browser."""

from __future__ import annotations

import webbrowser
from typing import Optional

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.locations import resolve_run
from vacant.show.html import write_view


def register(app: typer.Typer) -> None:
    @app.command("view")
    def view_command(
        run: Optional[str] = typer.Argument(None, help="Run id or prefix (default: the latest)."),
        stop_number: Optional[int] = typer.Option(None, "--stop", metavar="N", help="The N-th Stop's findings (default: the last)."),
        no_open: bool = typer.Option(False, "--no-open", help="Write the page, do not start a browser."),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Write the run view to view.html in the run's directory (`.git/vacant/runs/RUN/`) and open it (file://, no network)."""
        run_dir = resolve_run(workspace(), run)
        target = write_view(workspace(), run_dir, run_dir / "view.html", stop_number)
        opened = False if no_open else webbrowser.open(target.as_uri())
        if as_json:
            print_json({"run": run_dir.name, "html": str(target), "opened": bool(opened)})
        else:
            typer.echo(f"{target}" + ("" if opened or no_open else "  (no browser found: open it yourself)"))
