"""`vacant init`, `vacant uninstall`, `vacant doctor`: hooks in and out of a platform's config."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from typing import Optional

import typer

from vacant.commands.common import workspace
from vacant.core.exitcodes import Exit
from vacant.core.locations import ensure_state_dir, new_root
from vacant.platforms.all_platforms import load
from vacant.platforms.settings_file import hook_command

SCOPES = ("local", "project", "user")


def _check_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise typer.BadParameter(f"--scope must be one of {', '.join(SCOPES)}")
    return scope


def interpreter_startup_ms(runs: int = 5) -> float:
    """Median wall time of starting the hook's interpreter and importing the hook entry."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import vacant.hook"], check=False)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init_command(
        platform: Optional[str] = typer.Option(None, "--platform", help="Install this platform's hooks (claude, codex, opencode)."),
        scope: str = typer.Option("local", "--scope", help="local, project or user settings."),
    ) -> None:
        """Create `.vacant/` here; with --platform, install vacant's hooks."""
        root = new_root()
        state = ensure_state_dir(root)
        typer.echo(f"state directory: {state}")
        if platform:
            target = load(platform).install(root, _check_scope(scope), hook_command(platform))
            typer.echo(f"{platform} hooks installed in {target}")

    @app.command("uninstall")
    def uninstall_command(
        platform: str = typer.Option(..., "--platform", help="The platform whose hooks to remove."),
        scope: str = typer.Option("local", "--scope", help="local, project or user settings."),
    ) -> None:
        """Remove exactly vacant's hooks (restoring the file byte for byte when nothing else changed)."""
        target = load(platform).uninstall(workspace(), _check_scope(scope))
        typer.echo(f"removed vacant's hooks from {target}" if target else "no vacant hooks were installed there")

    @app.command("doctor")
    def doctor_command(platform: str = typer.Option("claude", "--platform")) -> None:
        """Say whether vacant's hooks are installed, valid and would actually fire."""
        report = load(platform).doctor(workspace(), hook_command(platform))
        report.append(("interpreter", True, f"{sys.executable} (hook import: {interpreter_startup_ms():.0f} ms median)"))
        failed = False
        for name, ok, detail in report:
            typer.echo(f"[{'ok' if ok else '!!'}] {name}: {detail}")
            failed |= not ok
        if failed:
            raise typer.Exit(int(Exit.FAILED))
