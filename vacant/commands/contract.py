"""`vacant contract add`, `list`, `status` and `stop`: the guards and checks in vacant.toml, each
probed before it is added (vacant/policy/contract/red_first.py); a guard's probe may finish in the
background (vacant/policy/contract/background.py)."""

from __future__ import annotations

import shlex
from typing import List, Optional

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.exitcodes import Exit
from vacant.policy.contract.contract import CONTRACT_FILE, load_contract
from vacant.core import children
from vacant.policy.contract import background
from vacant.policy.contract.contract import CheckRefused
from vacant.policy.contract.red_first import Added, add_check, start_guard


def command_line(words: list[str]) -> str:
    """One argument is a shell line as written; several are an argv, quoted exactly."""
    return words[0] if len(words) == 1 else shlex.join(words)


def _show_added(added: Added, as_json: bool) -> None:
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


def _add_guard(name: str, command: str, timeout: float | None, probe_cap: float | None, allow_broken: bool,
               network: bool, as_json: bool) -> None:
    """A guard's probe runs in a process of its own; `contract add` waits for it a while, then leaves
    it to the background (an interrupt too): the guard is added when it finishes (background.py)."""
    root = workspace()
    try:
        record = start_guard(root, name, command, timeout=timeout, probe_cap=probe_cap, allow_broken=allow_broken,
                             network=network)
    except background.AlreadyProbing as running:
        raise CheckRefused(f"guard {name!r} is being probed already ({running.record.describe()}): nothing new was "
                           f"started; {_watch(name)}") from None
    try:
        ended = background.wait(root, name, background.foreground_s())
    except children.Interrupted as stop:
        now = background.load(root, name) or record
        typer.echo(f"vacant: stopped waiting ({stop.name}); the probe of guard {name!r} goes on in the background "
                   f"({now.describe()}) and adds it when it finishes, if it holds; {_watch(name)}", err=True)
        raise typer.Exit(int(Exit.INTERRUPTED)) from None
    if ended is None:
        now = background.load(root, name) or record
        if as_json:
            print_json({"kind": "guard", "name": name, "command": command, "state": now.state, "line": now.describe()})
            return
        typer.echo(f"guard {name!r} is being probed in the background ({now.describe()}): it took longer than "
                   f"{background.foreground_s():g} s; it is added to {CONTRACT_FILE} when its probe finishes, if it "
                   f"holds, and counts from then (a run that starts before does not block on it); {_watch(name)}")
        return
    if ended.state != background.ADDED:
        raise CheckRefused(ended.message or f"the probe of guard {name!r} ended without a result")
    contract = load_contract(root)
    check = next(item for item in contract.guards if item.name == name) if contract else None
    if check is None:
        raise CheckRefused(f"guard {name!r} was added and is no longer in {CONTRACT_FILE}")
    _show_added(Added(check, True, warnings=ended.warnings, tail=ended.tail), as_json)


def _watch(name: str) -> str:
    return (f"watch it with `vacant contract status`, stop it with `vacant contract stop {name}`")


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
        if keep or precondition:
            _add_guard(name, command_line(command), timeout, probe_cap, allow_broken, network, as_json)
            return
        try:
            added = add_check(workspace(), name, command_line(command), timeout=timeout,
                              probe_cap=probe_cap, allow_broken=allow_broken, network=network)
        except children.Interrupted as stop:
            typer.echo(f"vacant: stopped by {stop.name}; the probe of {name!r} was killed with its process group; "
                       f"nothing was added to {CONTRACT_FILE}", err=True)
            raise typer.Exit(int(Exit.INTERRUPTED)) from None
        _show_added(added, as_json)

    @group.command("status")
    def status_command(as_json: bool = typer.Option(False, "--json", help="One JSON object.")) -> None:
        """Each guard's probe: still probing (with its progress), or how it ended."""
        records = background.all_records(workspace())
        if as_json:
            print_json({"probes": [{**record.__dict__, "running": background.alive(record),
                                    "line": record.describe()} for record in records]})
            return
        if not records:
            typer.echo("no guard is being probed, and no background probe has ended here")
        for record in records:
            typer.echo(f"guard {record.name!r}: {record.describe()}")
            if record.state == background.RUNNING:
                typer.echo(f"  stop it with `vacant contract stop {record.name}`")

    @group.command("stop")
    def stop_command(name: str = typer.Argument(..., help="The guard whose probe to stop.")) -> None:
        """Stop a guard's background probe; nothing is added."""
        record = background.load(workspace(), name)
        if record is None or not background.alive(record):
            raise CheckRefused(f"no probe of {name!r} is running" +
                               (f" ({record.describe()})" if record is not None else ""))
        background.stop(workspace(), name)
        typer.echo(f"stopped the probe of guard {name!r}; nothing was added to {CONTRACT_FILE}")

    @group.command("list")
    def list_command(as_json: bool = typer.Option(False, "--json", help="One JSON object.")) -> None:
        """Show the guards and checks with their probe evidence (and the guards still being probed)."""
        contract = load_contract(workspace())
        if not as_json:
            for record in background.running(workspace()):
                typer.echo(f"{'guard':<12} {record.name:<20} {record.command}")
                typer.echo(f"{'':<12} {'':<20} {record.describe()} (not a guard until its probe finishes)")
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
