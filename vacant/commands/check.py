"""`vacant check`: the guards, checks and human flags, on the live workspace."""

from __future__ import annotations

import warnings

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.exitcodes import Exit
from vacant.policy.contract.acceptance import run_gates
from vacant.policy.contract.contract import load_contract


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check_command(as_json: bool = typer.Option(False, "--json", help="One JSON object.")) -> None:
        """Run the contract's guards and checks, and collect standing flags."""
        root = workspace()
        contract = load_contract(root)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = run_gates(contract, root)
        for warning in caught:
            typer.echo(f"vacant: warning: {warning.message}", err=True)
        if as_json:
            print_json(report.to_json())
        else:
            for result in (*report.guards, *report.checks):
                kind = "guard" if result.precondition else "check"
                if result.passed:
                    status = "PASS"
                elif result.env_missing:
                    status = "ENV "
                elif result.timed_out:
                    status = "TIME"
                else:
                    status = "FAIL"
                code = "" if result.passed or result.timed_out else f" exit {result.exit_code}"
                typer.echo(f"{status} {kind} {result.name}{code} ({result.seconds:.2f} s)")
                for finding in result.findings:
                    where = f"{finding.location}: " if finding.location else ""
                    typer.echo(f"     {finding.id} {where}{finding.message}")
            for flag, finding in report.flags:
                typer.echo(f"FLAG {flag.id} {finding.location}: {finding.message}")
            if report.nothing_to_verify:
                typer.echo("nothing to verify: no acceptance check and no flag (add one with `vacant contract add`)")
            elif not report.findings:
                typer.echo("all gates hold")
        if any(not result.passed for result in (*report.guards, *report.checks)) or report.findings:
            raise typer.Exit(int(Exit.FAILED))
        if report.nothing_to_verify:
            raise typer.Exit(int(Exit.NOTHING_TO_VERIFY))
