"""`vacant scan`: one full scan of the workspace, with counts and time."""

from __future__ import annotations

import sys
import threading

import typer

from vacant.commands.common import print_json, workspace
from vacant.store.states import open_scanner

PROGRESS_AFTER_S = 1.0


def _spinner(done: threading.Event) -> None:
    """A progress line on a terminal, only when the scan takes longer than a second."""
    if done.wait(PROGRESS_AFTER_S):
        return
    from rich.console import Console

    with Console(stderr=True).status("scanning the workspace…"):
        done.wait()


def register(app: typer.Typer) -> None:
    @app.command("scan")
    def scan_command(as_json: bool = typer.Option(False, "--json", help="One JSON object.")) -> None:
        """Scan the whole workspace against the previous scan."""
        scanner = open_scanner(workspace())
        done = threading.Event()
        progress = None
        if sys.stderr.isatty() and not as_json:
            progress = threading.Thread(target=_spinner, args=(done,), daemon=True)
            progress.start()
        try:
            result = scanner.scan()
        finally:
            done.set()
            if progress:
                progress.join()
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
