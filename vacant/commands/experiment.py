"""`vacant experiment`: the preregistered three-arm experiment on a directory of tasks."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import List, Optional

import typer

from vacant.commands.common import print_json
from vacant.core.children import Interrupted
from vacant.core.exitcodes import Exit
from vacant.experiment import Request, run_experiment
from vacant.experiment.arms import parse_arms
from vacant.experiment.plan import PlanChanged
from vacant.experiment.runner import AGENTS, ExperimentError, Settings, Stopped
from vacant.experiment.tasks import TaskError


def _fail(message: str, code: Exit) -> None:
    typer.echo(f"vacant: {message}", err=True)
    raise typer.Exit(int(code))


def register(app: typer.Typer) -> None:
    @app.command("experiment")
    def experiment_command(
        tasks_dir: Path = typer.Argument(..., help="A directory of tasks (docs/EXPERIMENT.md)."),
        agent: str = typer.Option(..., "--agent", metavar="AGENT", help=", ".join(AGENTS) + "."),
        arms: str = typer.Option("rs,rf,rl", "--arms", metavar="ARMS", help="Arms to run: rs (resample), rf (generic), rl (located)."),
        repeats: int = typer.Option(1, "--repeats", min=1, help="Cells per task and arm."),
        rounds: int = typer.Option(3, "--rounds", min=0, help="Feedback rounds (rs: fresh attempts beyond the first)."),
        out: Path = typer.Option(Path("vacant-experiment"), "--out", metavar="DIR", help="Where the plan, journal, cells and summary go."),
        model: Optional[str] = typer.Option(None, "--model", metavar="MODEL", help="The agent's model (recorded in the plan)."),
        agent_bin: Optional[str] = typer.Option(None, "--agent-bin", metavar="PROGRAM", help="The agent's executable (default: on PATH)."),
        agent_arg: List[str] = typer.Option([], "--agent-arg", metavar="ARG", help="One more argument for the agent (repeatable)."),
        task: List[str] = typer.Option([], "--task", metavar="TASK", help="Only this task (repeatable)."),
        seed: int = typer.Option(1, "--seed", metavar="SEED", help="Seed of the preregistered cell order."),
        cell_timeout: float = typer.Option(1800.0, "--cell-timeout", min=1.0, help="Seconds one attempt may take."),
        as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    ) -> None:
        """Run every task in three arms (resample, generic feedback, vacant's located feedback)
        through `vacant do`, with the plan preregistered before the first run; resumable. Writes
        OUT/summary.md, summary.html and summary.json. Exit 0 when every cell is done."""
        if agent not in AGENTS:
            _fail(f"--agent must be one of {', '.join(AGENTS)}", Exit.USAGE)
        try:
            arm_names = parse_arms(arms)
        except ValueError as error:
            _fail(str(error), Exit.USAGE)
        settings = Settings(out.resolve(), agent, agent_bin, model, list(agent_arg), cell_timeout)
        request = Request(tasks_dir, arm_names, repeats, rounds, seed, settings, list(task) or None)
        try:
            summary = run_experiment(request, lambda line: typer.echo(line, err=True))
        except (TaskError, PlanChanged, ExperimentError) as error:
            _fail(str(error), Exit.USER_ERROR)
        except (Stopped, Interrupted) as stop:
            _fail(f"stopped by {signal.Signals(stop.signum).name}; the running cell's processes were stopped: run "
                  "the same command again to continue (the unfinished cell starts over)", Exit.INTERRUPTED)
        if as_json:
            print_json(summary)
        else:
            typer.echo((settings.out / "summary.md").read_text())
            typer.echo(f"vacant experiment: summary in {settings.out / 'summary.html'}", err=True)
