"""`vacant report [RUN] [--stop N] [--json | --format md] [--html FILE]`: what a Stop found, and the
text rendering every command that shows a report uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from vacant.attribute import others, recordaudit
from vacant.attribute.timesplit import time_lines
from vacant.commands.common import print_json, workspace
from vacant.core.cells import shown
from vacant.core.locations import WorkspaceError, resolve_run
from vacant.show import markdown as show_markdown


def _rounds(report: dict[str, Any]) -> str:
    if not report.get("rounds"):
        return "report only: no feedback round here"
    return f"feedback round {report.get('round')} of {report.get('rounds')}"


def render_report(report: dict[str, Any]) -> str:
    coverage = report["read_coverage"]
    lines = [f"run {report['run']}: {len(report['findings'])} finding(s); "
             f"{report['check_runs']} check run(s) over {report['states']} state(s) in {report['seconds']} s",
             f"read_coverage: {coverage['state']} ({coverage['why']})"]
    lines += [f"  {line}" for line in time_lines(report)]
    if report.get("contract_error"):
        lines.append(f"  contract error: {report['contract_error']['message']} (nothing was verified)")
    for pending in report.get("pending_guards") or []:
        lines.append(f"  guard {pending['name']} was not run at this Stop: {pending['why']}")
    if report.get("left_out"):
        lines.append(f"  left out: {report['left_out']['sentence']}")
    walled = report.get("walled") or {}
    if walled.get("walled") is False:
        lines.append(f"  warning: the checks ran unwalled, as the person ({walled.get('why')}): code the agent "
                     "wrote could read what the person can")
    faithful = report.get("faithful") or {}
    if faithful.get("faithful") is False:
        lines.append(f"  warning: the replay is not faithful: {faithful.get('why')}")
    for name in report.get("vacuous", []):
        lines.append(f"  warning: check {name} already passed before any work (vacuous: the workspace drifted)")
    for check in report["checks"]:
        lines.append(f"  {check.get('kind', 'check')} {check['name']}: {'pass' if check['passed'] else 'FAIL'} "
                     f"(exit {check['exit_code']})")
    if report.get("workspace"):
        lines += workspace_lines(report["workspace"])
    for item in report["findings"]:
        where = f"{item['path']}:{item['line']}" if item["path"] else "(no location)"
        actor = item["actor"] or {}
        who = "/".join(shown(actor, k) for k in ("platform", "agent_definition", "model")) if actor else "nobody"
        step = f"step {item['step']} ({item['tool']})" if item["step"] is not None else "no step"
        lines.append(f"  [{item['id']}] {item['level']:<16} {where}  {step}  actor {who}")
        lines.append(f"      {item['source']} {item['name']}: {item['message'][:120]}")
        if item["lineage_source"]:
            lines.append(f"      value {item['evidence'].get('value')} seen in {item['lineage_source']}")
        if item["evidence"].get("why"):
            lines.append(f"      why: {item['evidence']['why']}")
        if item["evidence"].get("written_by"):
            lines.append(f"      written by: {others.describe(item['evidence']['written_by'])} "
                         f"({item['evidence']['written_by'].get('why')}); not sent to the agent")
        if item.get("diff"):
            lines.append(f"      step {item.get('flip_step')} changed:")
            lines += [f"        {row}" for row in item["diff"].splitlines()]
    lines += _question_lines(report.get("questions") or [])
    if report.get("no_review"):
        lines.append(f"reputation: {report['no_review']}")
    if report.get("decision"):
        lines.append(f"decision: {report['decision']} ({_rounds(report)})")
    lines += [f"record problem: {p['kind']}: {p['detail']}" for p in report.get("record_problems") or []]
    return "\n".join(lines)


def _question_lines(questions: list[dict[str, Any]]) -> list[str]:
    """What the Stop asked the person: each card, its fate, and what the agent proposed."""
    fates = {"awaiting-human": "waits on you", "approved": "accepted", "declined": "rejected"}
    lines = []
    for item in questions:
        lines.append(f"  question {item['ask'] or '(none yet)'} ({fates.get(item['fate'], item['fate'])}): {item['what']}")
        if item.get("proposed"):
            lines.append("      proposed:")
            lines += [f"        {row}" for row in item["proposed"].splitlines()]
    return lines


def workspace_lines(workspace: dict[str, Any]) -> list[str]:
    """What the live workspace holds that this run did not make, who wrote it, and the checks it turns."""
    lines = [f"  not this run's: {others.sentence(workspace)}"]
    lines += [f"    {item['change']} {item['path']}: {others.describe(item['by'])}" for item in workspace["changes"]]
    for row in workspace.get("checks") or []:
        named = "; ".join(f"{f['path'] or '(no location)'}: {f['message'][:80]}" for f in row["findings"])
        lines.append(f"    {row['kind']} {row['name']}: {'pass' if row['passed'] else 'FAIL'} on this run's work, "
                     f"{'pass' if row['passed_live'] else 'FAIL'} on the workspace" + (f" ({named})" if named else ""))
    return lines


def _with_current_record_problems(root, run_dir, report: dict[str, Any]) -> dict[str, Any]:
    """The saved report plus what is wrong with the record now (found on the way: a chain broken
    since, a flag removed since, torn lines)."""
    known = {(p["kind"], p["detail"]) for p in report.get("record_problems") or []}
    fresh = [p for p in recordaudit.problems(root, run_dir) if (p["kind"], p["detail"]) not in known]
    report["record_problems"] = list(report.get("record_problems") or []) + fresh
    return report


def _why_none(root, run_dir) -> str:
    """What to do about a missing report; a contract that does not read is said first."""
    from vacant.policy.contract.contract import ContractError, load_contract  # its models load pydantic

    try:
        load_contract(root)
    except ContractError as error:
        return f"the contract cannot be read ({error}); fix it, then `vacant replay {run_dir.name}` makes one"
    return f"`vacant replay {run_dir.name}` makes one"


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_command(
        run: Optional[str] = typer.Argument(None, help="Run id or prefix (default: the latest)."),
        as_json: bool = typer.Option(False, "--json"),
        stop_number: Optional[int] = typer.Option(None, "--stop", metavar="N", help="The N-th Stop of the run (default: the last)."),
        html_file: Optional[Path] = typer.Option(None, "--html", metavar="FILE", help="Also write the run view to this HTML file."),
        form: str = typer.Option("text", "--format", metavar="FORMAT", help="text, json or md (GitHub-flavoured Markdown)."),
    ) -> None:
        """Print the last Stop's result for a run (or the N-th with --stop)."""
        root = workspace()
        run_dir = resolve_run(root, run)
        if form not in ("text", "json", "md"):
            raise typer.BadParameter(f"--format {form!r}: use text, json or md")
        if html_file is not None:  # the view shows the steps even before any Stop
            from vacant.show import html as show_html  # the run view's model loads the Stop pipeline

            written = show_html.write_view(root, run_dir, html_file, stop_number)
            typer.echo(f"run view written to {written}", err=True)
        path = run_dir / "report.json" if stop_number is None else run_dir / "reports" / f"{stop_number:04d}.json"
        if not path.exists():
            which = "no Stop report yet" if stop_number is None else f"no report for Stop {stop_number}"
            raise WorkspaceError(f"run {run_dir.name} has {which}: {_why_none(root, run_dir)}")
        edited = [p for p in recordaudit.report_problems(run_dir) if p["path"] == str(path)]
        if edited:  # never print a report edited behind vacant's back as if it were vacant's
            raise WorkspaceError(f"{edited[0]['detail']}; `vacant replay {run_dir.name}` makes a fresh one")
        report = _with_current_record_problems(root, run_dir, json.loads(path.read_text()))
        if as_json or form == "json":
            print_json(report)
        else:
            typer.echo(show_markdown.render(report) if form == "md" else render_report(report))
