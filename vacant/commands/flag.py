"""`vacant flag`, `vacant unflag`, `vacant flags`: findings a person files from a shell."""

from __future__ import annotations

import warnings
from pathlib import Path

import typer

from vacant.commands.common import print_json, speak_for_person, workspace
from vacant.policy.contract.flags import add_flag, list_flags, locate, withdraw


def register(app: typer.Typer) -> None:
    @app.command("flag")
    def flag_command(
        spec: str = typer.Argument(..., metavar="PATH[:A[-B]]", help="The file, and optionally its line or lines."),
        note: str = typer.Argument(..., help="What is wrong, in your words."),
        as_json: bool = typer.Option(False, "--json", help="The flag as one JSON object."),
    ) -> None:
        """Flag lines of a file as wrong (signed with your key); it blocks until the text is gone."""
        speak_for_person("flag")
        flag = add_flag(workspace(), spec, note, cwd=Path.cwd())
        if as_json:
            print_json(flag.to_json())
            return
        typer.echo(f"flagged {flag.spec} as {flag.id}: {flag.note}")

    @app.command("unflag")
    def unflag_command(
        flag_id: str = typer.Argument(..., metavar="ID", help="The flag's id (`vacant flags`)."),
        as_json: bool = typer.Option(False, "--json", help="The withdrawn flag as one JSON object."),
    ) -> None:
        """Withdraw a flag."""
        speak_for_person("unflag")
        flag = withdraw(workspace(), flag_id)
        if as_json:
            print_json(flag.to_json())
            return
        typer.echo(f"withdrew {flag.id} ({flag.spec})")

    @app.command("flags")
    def flags_command(as_json: bool = typer.Option(False, "--json", help="One JSON object per flag, in a list.")) -> None:
        """List the flags with their state: standing, resolved, withdrawn or tampered."""
        root = workspace()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows = list_flags(root, warn=True)
        for warning in caught:
            typer.echo(f"vacant: warning: {warning.message}", err=True)
        if as_json:
            out = []
            for flag, state in rows:
                finding = locate(flag, root) if state == "standing" else None
                out.append({**flag.to_json(), "state": state, "line": finding.line if finding else None,
                            "finding": finding.id if finding else None})
            print_json(out)
            return
        if not rows:
            typer.echo('no flags: file one with `vacant flag PATH[:A[-B]] "what is wrong"`')
        for flag, state in rows:
            where = flag.spec
            if state == "standing":
                finding = locate(flag, root)
                if finding and finding.line != flag.start:
                    where += f" (now at line {finding.line})"
            typer.echo(f"{flag.id}  {state:<9} {where}  {flag.note}")
