"""`vacant runs`, `vacant log`, `vacant verify`: reading recorded runs."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Optional

import typer

from vacant.attribute import recordaudit
from vacant.commands.common import print_json, workspace
from vacant.core import events
from vacant.core.cells import shown
from vacant.core.exitcodes import Exit
from vacant.core.locations import list_runs, resolve_run, state_dir
from vacant.store.run import RunView
from vacant.store.steplog import StepLog, verify


def _summary(run_dir) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        records = events.load(run_dir / "events.jsonl")
    counts = events.tally(records)
    start = next((r for r in records if r.get("type") == "run_start"), {})
    steps = sum(1 for r in records if r.get("type") == "step_start")
    return {
        "run": run_dir.name,
        "platform": start.get("platform"),
        "started": start.get("ts"),
        "records": len(records),
        "steps": steps,
        "ended": counts["run_end"] > 0,
    }


def describe(record: dict[str, Any], actors: dict[int, Any] | None = None) -> str:
    """One human line per event; `actors`: each step's cell as resolved over the whole run (a model
    that became known after the step started: vacant.store.run)."""
    kind = record.get("type")
    if kind in ("step_start", "step_end", "change", "read") and record.get("step") is not None:
        head = f"step {record['step']:>3}"
    else:
        head = "        "
    if kind == "step_start":
        actor = (actors or {}).get(record.get("step")) or record.get("actor") or {}
        who = f"{shown(actor, 'agent_definition')}/{shown(actor, 'model')}" if actor else "out-of-band"
        body = f"{record.get('tool')} {_short(record.get('input'))} [{who}]"
    elif kind == "step_end":
        body = f"{record.get('outcome')}" + (f" exit {record['exit_code']}" if "exit_code" in record else "")
    elif kind == "change":
        parts = [f"+{p}" for p in record.get("added", {})] + [f"~{p}" for p in record.get("changed", {})]
        parts += [f"-{p}" for p in record.get("removed", [])]
        body = " ".join(parts[:8]) + (f" (+{len(parts) - 8} more)" if len(parts) > 8 else "")
        if len(record.get("open_steps") or []) > 1 or record.get("step") is None:
            body += f"  (open: {record.get('open_steps')})"
    elif kind == "read":
        body = f"{record.get('origin')} {_short(record.get('ref'))} ({record.get('size', '?')} B)"
    else:
        fields = {k: v for k, v in record.items() if k not in events.ENVELOPE}
        body = _short(fields, 100)
    return f"{record.get('seq', '?'):>5} {head} {kind:<10} {body}"


def _resolved_actors(records: list[dict[str, Any]]) -> dict[int, Any]:
    try:
        return {number: step.actor for number, step in RunView.build(records).steps.items()}
    except (KeyError, TypeError, ValueError):  # a log too damaged to read as steps: each line as written
        return {}


def _short(value: Any, width: int = 70) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


def _edited(root: Path, run_dir: Path) -> list[dict]:
    """Content the chain vouches for, changed behind vacant's back: saved reports, objects, the run's
    state, and calls the transcript never made."""
    return (recordaudit.report_problems(run_dir) + recordaudit.object_problems(state_dir(root))
            + recordaudit.state_problems(run_dir)
            + [p for p in recordaudit.run_problems(run_dir) if p["kind"] in recordaudit.FORGED])


def register(app: typer.Typer) -> None:
    @app.command("runs")
    def runs_command(as_json: bool = typer.Option(False, "--json", help="A JSON list: one object per run, oldest first.")) -> None:
        """List the recorded runs of this workspace, oldest first."""
        rows = [_summary(run_dir) for run_dir in list_runs(workspace())]
        if as_json:
            print_json(rows)
            return
        if not rows:
            typer.echo("no runs recorded yet")
        for row in rows:
            status = "ended" if row["ended"] else "open"
            typer.echo(f"{row['run']}  {row['platform'] or '?':<12} {row['steps']:>4} steps  {row['records']:>5} records  {status}")

    @app.command("log")
    def log_command(
        run: Optional[str] = typer.Argument(None, help="Run id or prefix (default: the latest)."),
        as_json: bool = typer.Option(False, "--json", help="JSON lines: one JSON object per line, one line per record, in order."),
        as_array: bool = typer.Option(False, "--json-array", help="One JSON array of every record, in order."),
    ) -> None:
        """Print a run's step log (`--json`: JSON lines, as the log itself is stored; `--json-array`: one array)."""
        log = StepLog(resolve_run(workspace(), run))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            records = log.records()
        if as_array:
            print_json(records)
        actors = _resolved_actors(records) if not as_json else {}
        for record in records if not as_array else []:
            typer.echo(json.dumps(record) if as_json else describe(record, actors))
        for warning in caught:
            typer.echo(f"vacant: warning: {warning.message}", err=True)

    @app.command("verify")
    def verify_command(
        run: Optional[str] = typer.Argument(None, help="Run id or prefix (default: the latest)."),
        as_json: bool = typer.Option(False, "--json", help="One JSON object: the verdict and every problem."),
    ) -> None:
        """Check a run's hash chain: edits, deletions, insertions, reordering, torn lines."""
        root = workspace()
        log = StepLog(resolve_run(root, run))
        problems = verify(log)
        if as_json:
            fatal = [p for p in problems if p.fatal]
            edited = _edited(root, log.run_dir)
            print_json({"run": log.run_id, "intact": not fatal and not edited, "records": len(log.records()),
                        "problems": [{"line": p.line, "kind": p.kind, "detail": p.detail, "fatal": p.fatal}
                                     for p in problems]
                        + [{"line": None, "kind": e["kind"], "detail": e["detail"], "fatal": True} for e in edited]})
            if fatal or edited:
                raise typer.Exit(int(Exit.FAILED))
            return
        for problem in problems:
            label = "warning" if not problem.fatal else "TAMPERED"
            typer.echo(f"{label}: line {problem.line}: {problem.kind}: {problem.detail}")
        fatal = [p for p in problems if p.fatal]
        for problem in recordaudit.ledger_problems(root) + [p for p in recordaudit.run_problems(log.run_dir)
                                                            if p["kind"] not in recordaudit.FORGED]:
            typer.echo(f"warning: {problem['kind']}: {problem['detail']}")  # the person's records, not the chain
        edited = _edited(root, log.run_dir)
        for problem in edited:  # content the chain vouches for, changed: as fatal as a broken chain
            typer.echo(f"TAMPERED: {problem['kind']}: {problem['detail']}")
        if edited and not fatal:
            typer.echo(f"{log.run_id}: chain intact but the record was edited ({len(edited)} problem(s))")
            raise typer.Exit(int(Exit.FAILED))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torn lines were printed above, one line each
            count = len(log.records())
        if fatal:
            typer.echo(f"{log.run_id}: chain broken ({len(fatal)} problem(s) in {count} records)")
            raise typer.Exit(int(Exit.FAILED))
        typer.echo(f"{log.run_id}: chain intact ({count} records)")
