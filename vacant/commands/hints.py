"""`vacant hints [RUN]`: the active deterministic checks (they never block)."""

from __future__ import annotations

import warnings
from typing import Optional

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.locations import list_runs, resolve_run
from vacant.policy.contract.contract import load_contract
from vacant.policy.contract.hints import all_hints
from vacant.store.run import RunView


def register(app: typer.Typer) -> None:
    @app.command("hints")
    def hints_command(
        run: Optional[str] = typer.Argument(None, help="Run id or prefix (default: the latest, if any)."),
        as_json: bool = typer.Option(False, "--json", help="One JSON object."),
    ) -> None:
        """Numbers nobody sourced, failed commands nobody handled: hints, never blocking."""
        root = workspace()
        contract = load_contract(root)
        view = None
        run_name = None
        if run is not None or list_runs(root):
            run_dir = resolve_run(root, run)
            run_name = run_dir.name
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                view = RunView.load(run_dir)
        found = all_hints(root, view, contract)
        if as_json:
            print_json({"run": run_name, "hints": [hint.to_json() for hint in found]})
            return
        if not found:
            typer.echo("no hints" + ("" if view else " (no recorded run: only the deliverables were read)"))
        for hint in found:
            typer.echo(f"{hint.kind:<24} {hint.where:<20} {hint.message}")
