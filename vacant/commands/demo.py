"""`vacant demo`: record a bundled Claude Code session through the real hook entry, print its log.

The session is a list of real hook payloads (captured from Claude Code 2.1.197) with the file
effects their tools had; the demo plays the tools' part, calls `vacant-hook claude` exactly as
Claude would, then prints the step log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import typer

from vacant.commands.runs import describe
from vacant.steplog import StepLog, verify
from vacant.workspace import list_runs

SESSION = Path(__file__).resolve().parent.parent / "demo" / "session.json"


def play(session: dict, workspace: Path) -> None:
    """Feed each payload to the hook entry, applying the tool's file effects in between."""
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(workspace))
    for item in session["events"]:
        for rel, content in (item.get("write") or {}).items():
            target = workspace / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        payload = json.dumps(item["payload"]).replace("<ws>", str(workspace))
        subprocess.run(
            [sys.executable, "-m", "vacant.hook", "claude"], input=payload.encode(), env=env, cwd=workspace, check=False
        )


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo_command(keep: bool = typer.Option(False, "--keep", help="Keep the demo workspace.")) -> None:
        """Record a bundled agent session in a scratch workspace and print its step log."""
        session = json.loads(SESSION.read_text())
        scratch = Path(tempfile.mkdtemp(prefix="vacant-demo-"))
        for rel, content in session.get("files", {}).items():
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            (scratch / rel).write_text(content)
        play(session, scratch)
        log = StepLog(list_runs(scratch)[-1])
        typer.echo(f"demo workspace: {scratch}\n")
        for record in log.records():
            typer.echo(describe(record))
        problems = [p for p in verify(log) if p.fatal]
        typer.echo(f"\nhash chain: {'BROKEN' if problems else 'intact'} ({len(log.records())} records)")
        if not keep:
            import shutil

            shutil.rmtree(scratch, ignore_errors=True)
