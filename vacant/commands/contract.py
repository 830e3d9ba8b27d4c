"""`vacant contract add` and `vacant contract list`: the guards and checks in vacant.toml, each
probed before it is added (vacant/policy/contract/red_first.py)."""

from __future__ import annotations

import shlex
from typing import List, Optional

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.exitcodes import Exit
from vacant.policy.contract.contract import CONTRACT_FILE, load_contract
from vacant.core import children
from vacant.policy.contract.red_first import add_check


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
        keep: bool = typer.Option(False, "--keep", help="A guard: holds now and must still hold at every Stop "
                                                        "(the project's test suite)."),
        precondition: bool = typer.Option(False, "--precondition", hidden=True, help="The old name of --keep."),
        timeout: Optional[float] = typer.Option(None, "--timeout", metavar="SECONDS",
                                                help="Seconds before the check is killed (default 300); a guard's "
                                                     "probe runs under it too."),
        probe_cap: Optional[float] = typer.Option(None, "--probe-cap", metavar="SECONDS",
                                                  help="Cap the probe at this (default: 30 s for a check, the "
                                                       "timeout for a guard)."),
        allow_broken: bool = typer.Option(False, "--allow-broken",
                                          help="Add it even though the probe says the check itself is broken "
                                               "(no tests, unknown test id, a misspelt program). A program that is "
                                               "not installed needs no flag: it is added with an env/ warning."),
        network: bool = typer.Option(False, "--network",
                                     help="The check may reach the network (behind the wall it has loopback only)."),
        as_json: bool = typer.Option(False, "--json", help="The added check and its probe as one JSON object."),
    ) -> None:
        """Add a check after probing it: an acceptance check must fail now (for the right reason), a guard
        (--keep) must hold now."""
        try:
            added = add_check(workspace(), name, command_line(command), guard=keep or precondition, timeout=timeout,
                              probe_cap=probe_cap, allow_broken=allow_broken, network=network)
        except children.Interrupted as stop:
            typer.echo(f"vacant: stopped by {stop.name}; the probe of {name!r} was killed with its process group; "
                       f"nothing was added to {CONTRACT_FILE}", err=True)
            raise typer.Exit(int(Exit.INTERRUPTED)) from None
        probe = added.check.probe
        if as_json:
            print_json({"kind": added.kind, **added.check.model_dump(), "warnings": list(added.warnings),
                        "tail": added.tail, "reason": added.verdict.reason if added.verdict else None})
            return
        evidence = f"exit {probe.exit_code if probe else '?'}"
        typer.echo(f"added {added.kind} {added.check.name!r} to {CONTRACT_FILE} "
                   f"(probe: {evidence} in {probe.seconds if probe else 0:.2f} s)")
        for line in added.tail or ["(the probe printed nothing)"]:
            typer.echo(f"  | {line}")
        for warning in added.warnings:
            typer.echo(f"vacant: warning: {warning}", err=True)

    @group.command("list")
    def list_command(as_json: bool = typer.Option(False, "--json", help="One JSON object.")) -> None:
        """Show the guards and checks with their probe evidence."""
        contract = load_contract(workspace())
        if contract is None:
            if as_json:
                print_json({"contract": None, "checks": []})
            else:
                typer.echo(f"no {CONTRACT_FILE} here: add a check with `vacant contract add NAME -- COMMAND`")
            return
        rows = [
            {"kind": "guard" if guard else "check", **check.model_dump()}
            for check, guard in contract.all_checks()
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
                broken = f", added broken ({probe['broken']})" if probe.get("broken") else ""
                evidence = f"probe {result} in {probe['seconds']:.2f} s at {probe['at']}{env}{broken}"
            else:
                evidence = "no probe evidence (written by hand)"
            typer.echo(f"{row['kind']:<12} {row['name']:<20} {row['command']}")
            typer.echo(f"{'':<12} {'':<20} timeout {row['timeout']:g} s; {evidence}")
