"""`vacant gate`: the gate's policy for this workspace (ACT rules, exceptions, the arms directory)."""

from __future__ import annotations

import typer

from vacant.commands.asks import fail
from vacant.commands.common import print_json, workspace
from vacant.policy.contract.contract import load_contract
from vacant.policy.gate.rules import load_policy
from vacant.policy.shipped import CODE_RULES


def register(app: typer.Typer) -> None:
    @app.command("gate")
    def gate_command(as_json: bool = typer.Option(False, "--json", help="One JSON object.")) -> None:
        """Show the gate's policy for this workspace: ACT rules, exceptions, the arms directory."""
        root = workspace()
        load_contract(root)  # a broken vacant.toml: one clear message (exit 3)
        policy = load_policy(root)
        if policy.error:
            fail(f"the [gate] table cannot be used: {policy.error}")
        act = [{"name": r.name, "tool": r.tool.pattern if r.tool else None,
                "command": r.command.pattern if r.command else None, "why": r.why} for r in policy.act]
        act += [{"name": name, "tool": None, "command": "(in code)", "why": why}
                for name, why in CODE_RULES.items() if name not in policy.removed]
        allow = [{"name": r.name, "tool": r.tool.pattern if r.tool else None,
                  "command": r.command.pattern if r.command else None} for r in policy.allow]
        if as_json:
            print_json({"arms": policy.arms, "act": act, "allow": allow, "removed": sorted(policy.removed)})
            return
        typer.echo(f"arms: {policy.arms}/ (a script there declares `MODE: READ` or `MODE: ACT` on its first line)")
        for rule in act:
            where = f"tool {rule['tool']}" if rule["tool"] else "shell"
            typer.echo(f"act    {rule['name']:<26} {where}: {rule['why']}")
        for rule in allow:
            typer.echo(f"allow  {rule['name']:<26} tool {rule['tool'] or 'shell'} command {rule['command']}")
        if policy.removed:
            typer.echo(f"removed: {', '.join(sorted(policy.removed))}")
