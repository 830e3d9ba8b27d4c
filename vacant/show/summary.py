"""`vacant summary BASE..HEAD`: for the lines a change range adds, who wrote them (each agent cell,
each person), through which runs and steps, the findings standing on them and the runs' read
coverage, as text, JSON (SHAPES["summary"] in vacant/show/shapes.py) and Markdown for a pull
request's comment.

Contract:
- The lines a range adds are those `git diff -w -M BASE HEAD` marks added (a re-indented or
  moved line is not added); binary files are left out.
- Each added line is blamed at HEAD by `vacant blame` (vacant/show/gitblame.py): a line a
  recorded step wrote (or one of several open steps) counts for that step's cell; any other line
  counts for the person git names (a line written out of band inside a run too). Attribution is
  carried by content, so a squash or rebase merge keeps it.
- A finding stands on the range when its report is here and the finding's text is found on an
  added line (`vacant blame`'s marks); for a run known only from the team's record (no text),
  when the step it blames (after lineage hops) wrote an added line of the finding's file. That
  last rule cannot see a person's fix of the very line: the finding is then still listed.
- Read coverage: each run that wrote an added line, as its Stop report graded it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from vacant.show.gitblame import Row

CELL_PARTS = ("platform", "agent_definition", "model", "task_family")
SEVERAL = "several open steps"  # the cell of a line one of several open steps wrote


@dataclass(frozen=True)
class FindingFact:
    id: str
    name: str
    level: str
    step: int | None
    path: str | None


@dataclass(frozen=True)
class RunFacts:
    """What the summary says of one run (from its record, local or the team's)."""
    run: str
    source: str  # local | team
    key_name: str | None
    read_coverage: str | None  # complete | partial | none, or null when the run had no Stop
    findings: tuple[FindingFact, ...] = ()
    by_text: bool = False  # its report is here: its findings stand only where their text is found


@dataclass
class FileLines:
    path: str
    rows: list[Row]  # every line of the file at HEAD
    added: list[int]  # the line numbers the range adds


@dataclass
class Summary:
    base: str
    head: str
    files: list[dict[str, Any]] = field(default_factory=list)
    cells: Counter = field(default_factory=Counter)
    people: Counter = field(default_factory=Counter)
    steps: dict[str, set[int]] = field(default_factory=dict)
    run_lines: Counter = field(default_factory=Counter)
    findings: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    runs: dict[str, RunFacts] = field(default_factory=dict)
    rejected: int = 0

    @property
    def added(self) -> int:
        return sum(item["added"] for item in self.files)

    @property
    def agent_lines(self) -> int:
        return sum(self.cells.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base, "head": self.head, "added": self.added, "agent_lines": self.agent_lines,
            "people_lines": sum(self.people.values()),
            "cells": [{"cell": _cell_json(cell), "lines": n} for cell, n in self.cells.most_common()],
            "people": [{"author": who[0], "author_mail": who[1], "lines": n} for who, n in self.people.most_common()],
            "runs": [{"run": run, "source": self.runs[run].source if run in self.runs else None,
                      "key_name": self.runs[run].key_name if run in self.runs else None,
                      "lines": self.run_lines[run], "steps": sorted(self.steps.get(run, ())),
                      "read_coverage": self.runs[run].read_coverage if run in self.runs else None}
                     for run in sorted(self.run_lines)],
            "findings": sorted(self.findings.values(), key=lambda f: (f["run"], f["id"])),
            "levels": dict(sorted(Counter(f["level"] for f in self.findings.values()).items())),
            "files": self.files, "rejected": self.rejected,
        }


def _cell_key(actor: dict[str, Any] | None) -> tuple:
    if not actor:
        return (SEVERAL,)
    return tuple(str(actor.get(part) or "?") for part in CELL_PARTS)


def _cell_json(cell: tuple) -> dict[str, Any] | None:
    return None if cell == (SEVERAL,) else dict(zip(CELL_PARTS, cell))


def cell_label(cell: tuple) -> str:
    return SEVERAL if cell == (SEVERAL,) else "/".join(cell)


def summarize(base: str, head: str, files: list[FileLines], runs: dict[str, RunFacts], rejected: int) -> Summary:
    """Count the added lines of `files` by who wrote them, with the runs' findings and coverage."""
    summary = Summary(base, head, runs=runs, rejected=rejected)
    for item in files:
        added = set(item.added)
        agent = people = 0
        wrote: set[tuple[str, int]] = set()
        for row in item.rows:
            if row.line not in added:
                continue
            author = row.author
            if row.agent and author.run is not None:
                agent += 1
                summary.cells[_cell_key(getattr(author, "actor", None))] += 1
                summary.run_lines[author.run] += 1
                steps = summary.steps.setdefault(author.run, set())
                for step in ([author.step] if author.step is not None else getattr(author, "open_steps", ())):
                    steps.add(step)
                    wrote.add((author.run, step))
            else:
                people += 1
                commit = row.git.commit
                summary.people[(commit.author, commit.author_mail) if commit.committed else ("Not Committed Yet", None)] += 1
            for finding in row.findings:
                _stand(summary, item.path, finding, runs)
        for run, step in wrote:
            if run not in runs or runs[run].by_text:
                continue
            for finding in runs[run].findings:
                if finding.step == step and finding.path == item.path:
                    _stand(summary, item.path, finding.id, {run: runs[run]})
        summary.files.append({"path": item.path, "added": len(added), "agent_lines": agent, "people_lines": people})
    return summary


def _stand(summary: Summary, path: str, finding_id: str, runs: dict[str, RunFacts]) -> None:
    """Record the finding `finding_id` (of whichever of `runs` reported it) as standing."""
    for facts in runs.values():
        for finding in facts.findings:
            if finding.id == finding_id and (facts.run, finding.id) not in summary.findings:
                summary.findings[(facts.run, finding.id)] = {
                    "id": finding.id, "run": facts.run, "name": finding.name, "level": finding.level,
                    "step": finding.step, "path": finding.path or path}


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "0%"


def render_text(summary: Summary) -> str:
    data = summary.to_json()
    out = [f"{summary.base[:12]}..{summary.head[:12]}: {data['added']} line(s) added, "
           f"{data['agent_lines']} by agents ({_percent(data['agent_lines'], data['added'])}), "
           f"{data['people_lines']} by people"]
    out += [f"  agent {cell_label(cell)}: {n}" for cell, n in summary.cells.most_common()]
    out += [f"  person {who[0]}{' ' + who[1] if who[1] else ''}: {n}" for who, n in summary.people.most_common()]
    for run in data["runs"]:
        steps = ",".join(map(str, run["steps"]))
        out.append(f"  run {run['run']} ({run['source'] or '?'}): {run['lines']} line(s), steps {steps}, "
                   f"read coverage {run['read_coverage'] or 'not graded'}")
    for finding in data["findings"]:
        out.append(f"  finding {finding['id']} [{finding['level']}] {finding['name']} in {finding['path']} "
                   f"(run {finding['run']} step {finding['step']})")
    if not data["findings"]:
        out.append("  no finding stands on the added lines")
    if summary.rejected:
        out.append(f"  {summary.rejected} team record(s) rejected and left out (vacant sync --status says why)")
    return "\n".join(out)


def render_markdown(summary: Summary) -> str:
    """The pull request comment: a headline, then tables (who wrote what, runs, findings)."""
    data = summary.to_json()
    out = [f"### vacant: {data['agent_lines']} of {data['added']} added line(s) written by agents "
           f"({_percent(data['agent_lines'], data['added'])})", "",
           f"Range `{summary.base[:12]}..{summary.head[:12]}`.", "", "| who | lines |", "|---|---:|"]
    out += [f"| agent `{_md(cell_label(cell))}` | {n} |" for cell, n in summary.cells.most_common()]
    out += [f"| {_md(who[0] or '?')} | {n} |" for who, n in summary.people.most_common()]
    if data["runs"]:
        out += ["", "| run | source | lines | steps | read coverage |", "|---|---|---:|---|---|"]
        out += [f"| `{_md(run['run'])}` | {run['source'] or '?'} | {run['lines']} | "
                f"{', '.join(map(str, run['steps']))} | {run['read_coverage'] or 'not graded'} |" for run in data["runs"]]
    if data["findings"]:
        out += ["", "| finding | level | check | file | run, step |", "|---|---|---|---|---|"]
        out += [f"| `{_md(f['id'])}` | {f['level']} | {_md(f['name'])} | `{_md(f['path'])}` | "
                f"`{_md(f['run'])}`, {f['step']} |" for f in data["findings"]]
    else:
        out += ["", "No finding stands on the added lines."]
    if summary.rejected:
        out += ["", f"{summary.rejected} team record(s) were rejected and left out."]
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell or code span of a comment (no pipes, backticks, tags)."""
    return str(text).replace("|", "\\|").replace("`", "'").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")
