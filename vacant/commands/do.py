"""`vacant do`: run an agent (or any command) for several rounds, recorded; see vacant/do/."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from vacant.commands.common import print_json
from vacant.commands.report import render_report
from vacant.core.exitcodes import Exit
from vacant.do.runner import DEFAULT_BURST_GAP_S, PLATFORMS, Runner, do_root
from vacant.platforms.driver import DoError


def register(app: typer.Typer) -> None:
    @app.command(
        "do",
        context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
    )
    def do_command(
        command: List[str] = typer.Argument(..., metavar="-- AGENT ARGS…", help="The agent's command line."),
        rounds: Optional[int] = typer.Option(
            None, "--rounds", min=0,
            help="Continue the session with the feedback at most N times (default: the contract's stop.rounds).",
        ),
        platform: str = typer.Option("auto", "--platform", metavar="NAME", help=", ".join(PLATFORMS) + ", or auto."),
        burst_gap: float = typer.Option(
            DEFAULT_BURST_GAP_S, "--burst-gap", min=0.05,
            help="A command without hooks: seconds of quiet that end a burst of changes (one step).",
        ),
        no_wall: bool = typer.Option(False, "--no-wall", help="Run the agent without vacant's wall (bubblewrap, or "
                                     "the platform's own sandbox): the record is then unwalled, and says so."),
        as_json: bool = typer.Option(False, "--json", help="At the end, print the last Stop's report as JSON on "
                                                           "stdout (the agent's own output is left as it is)."),
        feedback_text: Optional[str] = typer.Option(
            None, "--feedback-text", metavar="FEEDBACK",
            help="Continue the session with this fixed text instead of vacant's located feedback "
                 "(the same checks decide; `vacant experiment`'s generic-feedback arm).",
        ),
    ) -> None:
        """Run AGENT recorded, with vacant's hooks there for the duration only; while blocking
        findings remain and rounds are left, continue its session with the feedback. Exit 0 when
        the deliverable ends green, 1 when findings are left, 4 when there was nothing to verify."""
        try:
            result = Runner(list(command), do_root(Path.cwd()), platform, rounds, burst_gap,
                            feedback_text=feedback_text, wall=not no_wall).run()
        except DoError as error:
            typer.echo(f"vacant: {error}", err=True)
            raise typer.Exit(int(Exit.USER_ERROR))
        if result.report is not None and result.run is not None:
            if as_json:
                print_json({"run": result.run.name, "rounds": result.rounds, "exit_code": result.code,
                            "report": result.report})
            else:
                typer.echo(render_report(result.report), err=True)
        raise typer.Exit(result.code)
