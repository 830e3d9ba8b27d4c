"""`vacant scan`: one full scan of the workspace, with counts and time."""

from __future__ import annotations

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.progress import progress
from vacant.store.states import open_scanner


def register(app: typer.Typer) -> None:
    @app.command("scan")
    def scan_command(as_json: bool = typer.Option(False, "--json", help="One JSON object.")) -> None:
        """Scan the whole workspace against the previous scan."""
        scanner = open_scanner(workspace())
        with progress("scanning the workspace…", enabled=not as_json):
            result = scanner.scan()
        summary = {
            "files": result.files,
            "hashed": result.hashed,
            "reused": result.reused,
            "added": sorted(result.added),
            "changed": sorted(result.changed),
            "removed": result.removed,
            "unrestorable": result.unrestorable,
            "errors": result.errors,
            "seconds": round(result.seconds, 4),
        }
        if as_json:
            print_json(summary)
            return
        typer.echo(
            f"{result.files} files: {result.hashed} hashed, {result.reused} reused; "
            f"{len(result.added)} added, {len(result.changed)} changed, {len(result.removed)} removed "
            f"in {result.seconds:.3f} s"
        )
        for error in result.errors:
            typer.echo(f"vacant: warning: {error}", err=True)
