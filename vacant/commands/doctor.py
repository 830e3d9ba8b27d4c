"""`vacant doctor [--platform P] [--json]`: are vacant's hooks installed, valid, enabled, trusted
and fast? Each line is ok, warn (advice) or fail; only a fail — a broken install, or none — makes
it exit non-zero."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.exitcodes import Exit
from vacant.platforms.all_platforms import load
from vacant.platforms.base import Diagnosis, advice, diagnosis
from vacant.platforms.settings_file import hook_command

SLOW_IMPORT_MS = 150.0
MARKS = {"ok": "[ok]", "warn": "[warn]", "fail": "[!!]"}


def interpreter_startup_ms(runs: int = 5) -> float:
    """Median wall time of starting the hook's interpreter and importing the hook entry."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "import vacant.hook"], check=False)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _interpreter_line() -> Diagnosis:
    ms = interpreter_startup_ms()
    detail = f"{sys.executable} (hook start and import: {ms:.0f} ms median)"
    if ms > SLOW_IMPORT_MS:
        return advice("interpreter", detail + ": slow; every tool call pays it")
    return diagnosis("interpreter", True, detail)


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor_command(
        platform: str = typer.Option("claude", "--platform", metavar="NAME", help="claude, codex or opencode."),
        as_json: bool = typer.Option(False, "--json", help="One JSON object: every line with its status."),
    ) -> None:
        """Say whether vacant's hooks are installed, valid and would actually fire (warnings exit 0)."""
        chosen = load(platform)
        report = [*chosen.doctor(workspace(), hook_command(chosen.name)), _interpreter_line()]
        failed = any(line.status == "fail" for line in report)
        if as_json:
            print_json({"platform": chosen.name, "ok": not failed, "lines": [line._asdict() for line in report]})
        else:
            for line in report:
                typer.echo(f"{MARKS[line.status]} {line.name}: {line.detail}")
        if failed:
            raise typer.Exit(int(Exit.FAILED))
