"""`vacant demo`: vacant's whole job on a bundled planted error, end to end.

It plays a session of real Claude Code hook payload shapes (`vacant/demo/session.json`, shipped in
the package) through `vacant-hook claude` exactly as Claude would call it, doing the tools' file
effects in between: the step log, what the agent was told at Stop, the graded report, and the
reputation table. Nothing outside the package is needed (the end-to-end tests run the same kind
of session on the real binaries).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import typer

from vacant.commands.report import render_report
from vacant.commands.runs import describe
from vacant.core.locations import list_runs, mark_installed, state_dir
from vacant.platforms.claude import PLATFORM as RECORDED_ON  # the demo's session holds Claude Code's payloads
from vacant.platforms.lean_registry import project_env
from vacant.store import reputation
from vacant.store.steplog import StepLog, verify

SESSION = Path(__file__).resolve().parents[1] / "demo" / "session.json"


def seed(workspace: Path, files: dict[str, str]) -> None:
    for rel, content in files.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(content)


def play(session: dict, workspace: Path) -> list[str]:
    """Feed each payload to the hook entry, applying the tool's file effects first; returns what
    the hook answered at each Stop."""
    mark_installed(workspace, via="vacant demo")  # hooks record only in an installed workspace
    env = dict(os.environ, **project_env(RECORDED_ON.name, str(workspace)))
    transcript = workspace.parent / "transcript.jsonl"  # where Claude would note the model id
    transcript.write_text("".join(json.dumps(line) + "\n" for line in session["transcript"]))
    answers = []
    for item in session["events"]:
        seed(workspace, item.get("write") or {})
        payload = json.dumps(item["payload"]).replace("<ws>", str(workspace)).replace("<transcript>", str(transcript))
        proc = subprocess.run([sys.executable, "-m", "vacant.hook.entry", RECORDED_ON.name], input=payload.encode(), env=env,
                              cwd=workspace, capture_output=True, check=False)
        if item["payload"]["hook_event_name"] == "Stop":
            answers.append(proc.stdout.decode() or "(empty: the agent may stop)")
    return answers


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo_command(
        replay: bool = typer.Option(True, "--replay", hidden=True, help="Kept for compatibility: the demo always replays."),
        keep: bool = typer.Option(False, "--keep", help="Keep the demo workspace."),
    ) -> None:
        """Record a bundled agent session with a planted error; show the step, the feedback, the report."""
        scratch = Path(tempfile.mkdtemp(prefix="vacant-demo-"))
        os.environ["VACANT_HOME"] = str(scratch / "vacant-home")  # the demo never touches your reputation table
        workspace = scratch / "ws"
        try:
            typer.echo("demo: real Claude Code hook payloads replayed through `vacant-hook claude`\n")
            workspace.mkdir()
            if shutil.which("git"):  # its record then lives in .git/vacant, where `vacant report` there finds it
                subprocess.run(["git", "init", "-q"], cwd=workspace, capture_output=True, check=False)
            session = json.loads(SESSION.read_text())
            seed(workspace, session["files"])
            answers = play(session, workspace)
            show(workspace, answers)
        finally:
            if keep:
                typer.echo(f"\ndemo workspace kept: {workspace}")
                if not str(state_dir(workspace)).startswith(str(workspace)):
                    typer.echo(f"its record: {state_dir(workspace)} (read it with VACANT_HOME={os.environ['VACANT_HOME']})")
            else:
                shutil.rmtree(scratch, ignore_errors=True)


def show(workspace: Path, answers: list[str]) -> None:
    run_dir = list_runs(workspace)[-1]
    log = StepLog(run_dir)
    typer.echo("== step log (vacant log)")
    for record in log.records():
        typer.echo(describe(record))
    problems = [p for p in verify(log) if p.fatal]
    typer.echo(f"hash chain: {'BROKEN' if problems else 'intact'} ({len(log.records())} records)")
    feedback = [r["text"] for r in log.records() if r["type"] == "feedback"]
    typer.echo("\n== what the agent was told at its first Stop")
    typer.echo(feedback[0] if feedback else "(nothing: no blocking finding)")
    for answer in answers[:1]:
        typer.echo(answer)
    first = run_dir / "reports" / "0001.json"
    if first.exists():
        typer.echo("\n== the first Stop's report (vacant report --stop 1)")
        typer.echo(render_report(json.loads(first.read_text())))
        typer.echo("\n== the last Stop's report (vacant report)")
        typer.echo(render_report(json.loads((run_dir / "report.json").read_text())))
    typer.echo("\n== reputation (vacant reputation)")
    for cell in reputation.cell_stats():
        name = "/".join(cell.cell[k] for k in reputation.CELL_FIELDS)
        low, high = cell.low, cell.high
        typer.echo(f"{name}: n={cell.n} mean={cell.mean:.2f} 95% [{low:.2f}, {high:.2f}]"
                   + ("" if cell.enough else " (not enough data)"))
