"""`vacant experiment`: the preregistered three-arm experiment (docs/EXPERIMENT.md).

tasks (format, hashes) -> plan (preregistration) -> runner (cells through `vacant do`, journal)
-> analysis (rates, paired differences, cost) -> report (summary.md, summary.html).
`run_experiment` is the whole of it; the command line lives in vacant/commands/experiment.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from vacant.core.atomic import atomic_write
from vacant.experiment import analysis, report
from vacant.experiment.plan import PLAN_FILE, cells, make_plan, register
from vacant.experiment.runner import (
    ExperimentError,
    OutLock,
    Settings,
    read_journal,
    run_plan,
)
from vacant.experiment.tasks import load_tasks


@dataclass
class Request:
    tasks_dir: Path
    arms: list[str]
    repeats: int
    rounds: int
    seed: int
    settings: Settings
    only: list[str] | None = None


def run_experiment(request: Request, say: Callable[[str], None]) -> dict[str, Any]:
    """Register the plan (or check it is the registered one), run what is left, write the summary."""
    settings = request.settings
    tasks = load_tasks(request.tasks_dir, request.only)
    plan = make_plan(tasks, request.arms, request.repeats, request.rounds, settings.agent, settings.model,
                     settings.agent_args, request.seed, settings.timeout_s)
    check_out(settings.out)
    settings.out.mkdir(parents=True, exist_ok=True)
    with OutLock(settings.out) as lock:
        digest = register(settings.out, plan, started=bool(read_journal(settings.out)))
        say(f"vacant experiment: plan {digest} ({len(cells(plan))} cells) in {settings.out}")
        records = run_plan(tasks, plan, digest, settings, say, lock)
        return write_summary(settings.out, plan, digest, records)


def check_out(out: Path) -> None:
    """OUT is new, empty, or an experiment's: its files are the experiment's to (re)write."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / PLAN_FILE).exists())):
        raise ExperimentError(f"{out} already holds other files: give --out a new or empty directory")


def write_summary(out: Path, plan: dict[str, Any], digest: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    starts = [r["cell"] for r in read_journal(out) if r.get("event") == "start"]
    restarted = len(starts) - len(set(starts))  # a cell started again after an interruption
    summary = analysis.analyse(records, report.arm_order(plan), digest, restarted, len(cells(plan)))
    atomic_write(out / "summary.json", (json.dumps(summary, indent=1) + "\n").encode())
    atomic_write(out / "summary.md", report.markdown(summary, plan).encode())
    atomic_write(out / "summary.html", report.html(summary, plan, records).encode())
    return summary
