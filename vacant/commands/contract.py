"""`vacant contract add` and `vacant contract list`: the checks in vacant.toml, born red-first."""

from __future__ import annotations

import shlex
from typing import List, Optional

import typer

from vacant.commands.common import print_json, workspace
from vacant.policy.contract import CONTRACT_FILE, PROBE_CAP_S, load_contract
from vacant.policy.red_first import add_check


def command_line(words: list[str]) -> str:
    """One argument is a shell line as written; several are an argv, quoted exactly."""
    return words[0] if len(words) == 1 else shlex.join(words)


def register(app: typer.Typer) -> None:
    group = typer.Typer(no_args_is_help=True, help="The workspace's contract (vacant.toml).")
    app.add_typer(group, name="contract")

    @group.command("add")
    def add_command(
        name: str = typer.Argument(..., help="The check's name: lowercase letters, digits, '-'."),
        command: List[str] = typer.Argument(..., help="After `--`: the command, one line of shell."),
        precondition: bool = typer.Option(False, "--precondition", help="A statement that holds now and must stay true."),
        timeout: Optional[float] = typer.Option(None, "--timeout", metavar="SECONDS",
                                                help="Seconds before the check is killed (default 300)."),
        as_json: bool = typer.Option(False, "--json", help="The added check and its probe as one JSON object."),
    ) -> None:
        """Add a check after probing it: an acceptance check must fail now, a precondition must hold."""
        added = add_check(workspace(), name, command_line(command), precondition=precondition, timeout=timeout,
                          probe_cap=PROBE_CAP_S)
        probe = added.check.probe
        kind = "precondition" if precondition else "check"
        if as_json:
            print_json({"kind": kind, **added.check.model_dump(), "warnings": list(added.warnings)})
            return
        evidence = "timed out" if probe and probe.timed_out else f"exit {probe.exit_code if probe else '?'}"
        typer.echo(f"added {kind} {added.check.name!r} to {CONTRACT_FILE} (probe: {evidence} in {probe.seconds if probe else 0:.2f} s)")
        for warning in added.warnings:
            typer.echo(f"vacant: warning: {warning}", err=True)

    @group.command("list")
    def list_command(as_json: bool = typer.Option(False, "--json", help="One JSON object.")) -> None:
        """Show the preconditions and checks with their probe evidence."""
        contract = load_contract(workspace())
        if contract is None:
            if as_json:
                print_json({"contract": None, "checks": []})
            else:
                typer.echo(f"no {CONTRACT_FILE} here: add a check with `vacant contract add NAME -- COMMAND`")
            return
        rows = [
            {"kind": "precondition" if pre else "check", **check.model_dump()}
            for check, pre in contract.all_checks()
        ]
        if as_json:
            print_json({"task_family": contract.task_family, "pinned": contract.pinned,
                        "deliverables": contract.deliverables, "stop": contract.stop.model_dump(), "checks": rows})
            return
        if not rows:
            typer.echo("no checks yet: add one with `vacant contract add NAME -- COMMAND`")
        for row in rows:
            probe = row["probe"]
            if probe:
                result = "timed out" if probe["timed_out"] else f"exit {probe['exit_code']}"
                env = f", {'env/' + probe['env']}" if probe.get("env") else ""
                evidence = f"probe {result} in {probe['seconds']:.2f} s at {probe['at']}{env}"
            else:
                evidence = "no probe evidence (written by hand)"
            typer.echo(f"{row['kind']:<12} {row['name']:<20} {row['command']}")
            typer.echo(f"{'':<12} {'':<20} timeout {row['timeout']:g} s; {evidence}")
