"""Who else writes in this workspace: the other runs recorded there, and what they (or the person)
changed that this run's record does not hold.

Each run keeps its own steps: a change another session's hooks scanned first is that session's and
never enters this run's timeline (the workspace's index is shared, so this run's next scan sees
nothing new). This run's Stop checks its own states, then, while the live workspace may also hold
the other session's edits. What a careful user expects is that the Stop says so: which paths differ
between this run's final state and the workspace as last scanned, who is known to have written each
(another session's step, a change another session saw between its steps, unknown), and whether a
check that passes on this run's state fails on the workspace because of them (`Workspace`).

The same records answer who else was writing while one of this run's steps ran, for a change the
step did not write (`written_by`): another session's step open then that names the file (or a
shell step that may write anything), a process an earlier step of this run left running in the
background, or nobody known (the person, an editor, a process).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vacant.core import events
from vacant.store.run import RunView, Step
from vacant.store.states import Manifest, diff

SLACK_S = 1.0  # a scan that follows a step's end may still see what was written while it ran
NAMED = 4  # findings named per check that differs on the workspace
NOT_BACKGROUND = re.compile(r"&&|[0-9]*>&[0-9-]*|&>>?|\|&")  # `&` in a list, a redirection, a pipe
BACKGROUND = re.compile(r"&|\bnohup\b|\bsetsid\b|\bdisown\b")


@dataclass(frozen=True)
class OtherRun:
    """Another run recorded in the same workspace: its id, platform and steps."""

    run: str
    platform: str
    view: RunView

    def describe(self, step: Step) -> dict[str, Any]:
        actor = step.actor or {}
        agent = "/".join(str(actor.get(key) or "?") for key in ("platform", "agent_definition", "model"))
        return {"who": "session", "run": self.run, "platform": self.platform, "step": step.number,
                "tool": step.tool, "agent": agent if actor else None}


def other_runs(runs_dir: Path, own_run_dir: Path) -> list[OtherRun]:
    """Every other run recorded under `runs_dir` whose log can be read (a damaged one is skipped:
    it only tells who else may have written)."""
    found: list[OtherRun] = []
    if not runs_dir.is_dir():
        return found
    for directory in sorted(runs_dir.iterdir()):
        if directory.resolve() == Path(own_run_dir).resolve() or not (directory / "events.jsonl").is_file():
            continue
        try:
            view = RunView.build(events.load(directory / "events.jsonl"))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        start = next((record for record in view.records if record["type"] == "run_start"), None)
        if start is not None:
            found.append(OtherRun(str(start.get("run") or directory.name), str(start.get("platform") or "?"), view))
    return found


# -- a change made while one of this run's steps ran ---------------------------------------------

def written_by(step: Step, paths: list[str], view: RunView, others: list[OtherRun]) -> dict[str, Any]:
    """Who is known to have written `paths` while `step` ran, when the step did not: another
    session's step open then (one that names a path, else a shell step), a process an earlier step
    of this run started in the background, else unknown."""
    window = (step.started or 0.0, (step.ended or step.started or 0.0) + SLACK_S)
    named, shells = [], []
    for other in others:
        for candidate in other.view.ordered():
            if candidate.out_of_band or not _overlaps(candidate, window):
                continue
            if candidate.scope and any(_names(scope, path) for scope in candidate.scope for path in paths):
                named.append((other, candidate))
            elif candidate.scope is None and candidate.kind in (None, "shell"):
                shells.append((other, candidate))
    if named:
        other, candidate = named[-1]
        return {**other.describe(candidate), "why": f"run {other.run}'s step {candidate.number} ({candidate.tool}) "
                                                    f"wrote {', '.join(paths)} while this step ran"}
    if shells:
        other, candidate = shells[-1]
        return {**other.describe(candidate), "why": f"run {other.run}'s shell step {candidate.number} was running "
                                                    "then (it may write anything): possibly its doing"}
    earlier = [s for s in view.ordered() if s.number < step.number and _in_background(s)]
    if earlier:
        last = earlier[-1]
        return {"who": "background", "step": last.number, "tool": last.tool,
                "why": f"step {last.number} left a process running in the background: possibly its doing"}
    return {"who": "unknown", "why": "no recorded step wrote it: the person (an editor, a save), or a process"}


def _overlaps(step: Step, window: tuple[float, float]) -> bool:
    started = step.started or 0.0
    ended = step.ended if step.ended is not None else float("inf")  # still open: it may still be writing
    return started <= window[1] and ended + SLACK_S >= window[0]


def _names(scope: str, path: str) -> bool:
    return scope == path or scope.endswith("/" + path)


def _in_background(step: Step) -> bool:
    """A shell step whose command (or the platform's flag) leaves a process running after it returns."""
    if step.kind != "shell":
        return False
    intent = step.intent or {}
    if intent.get("background"):
        return True
    command = intent.get("command") or (step.input.get("command") if isinstance(step.input, dict) else None)
    return isinstance(command, str) and BACKGROUND.search(NOT_BACKGROUND.sub(" ", command)) is not None


def unseen_before(step: Step, paths: list[str], view: RunView, others: list[OtherRun]) -> dict[str, Any] | None:
    """Another session's change to one of `paths` after this run last recorded it and before `step`
    started: this run's state before the step lacks it, so what the step found there (and so what
    its own write added) is not known. The first such change, described; None when there is none."""
    for path in paths:
        mine = [r["ts"] for r in view.of_type("change") if r["ts"] < (step.started or 0.0)
                and path in (*r["added"], *r["changed"], *r["removed"])]
        since = max(mine, default=min((r["ts"] for r in view.of_type("run_start")), default=0.0))
        for other in others:
            for change in other.view.of_type("change"):
                if since < change["ts"] < (step.started or 0.0) and path in (*change["added"], *change["changed"],
                                                                              *change["removed"]):
                    writer = other.view.steps.get(change["step"]) if change["step"] is not None else None
                    by = other.describe(writer) if writer is not None and not writer.out_of_band else \
                        {"who": "out_of_band", "run": other.run, "platform": other.platform}
                    return {"path": path, **by}
    return None


# -- what the live workspace holds that this run did not write ---------------------------------

def workspace_changes(final: Manifest, live: Manifest, others: list[OtherRun]) -> list[dict[str, Any]]:
    """Each path where the workspace differs from this run's final state, with who is known to
    have written it there (the last change record of another run that leaves it so)."""
    delta = diff(final, live)
    changes = [(path, "added", entry) for path, entry in delta["added"].items()]
    changes += [(path, "changed", entry) for path, entry in delta["changed"].items()]
    changes += [(path, "removed", None) for path in delta["removed"]]
    return [{"path": path, "change": how, "by": _last_writer(path, entry, others)}
            for path, how, entry in sorted(changes, key=lambda item: item[0])]


def _last_writer(path: str, entry: list[Any] | None, others: list[OtherRun]) -> dict[str, Any]:
    latest: tuple[float, OtherRun, dict[str, Any]] | None = None
    for other in others:
        for change in other.view.of_type("change"):
            if _leaves(change, path, entry) and (latest is None or change["ts"] >= latest[0]):
                latest = (change["ts"], other, change)
    if latest is None:
        return {"who": "unknown", "why": "no recorded run holds this change (the person, or a process, since the "
                                         "last scan of any run)"}
    _ts, other, change = latest
    step = other.view.steps.get(change["step"]) if change["step"] is not None else None
    if step is None:
        return {"who": "session", "run": other.run, "platform": other.platform, "step": None, "tool": None,
                "agent": None, "why": f"run {other.run} saw it while several of its steps were open"}
    if step.out_of_band:
        return {"who": "out_of_band", "run": other.run, "platform": other.platform,
                "why": f"run {other.run} saw it between its steps: the person, or a process, not an agent's step"}
    return {**other.describe(step), "why": f"run {other.run}'s step {step.number} ({step.tool}) changed it"}


def _leaves(change: dict[str, Any], path: str, entry: list[Any] | None) -> bool:
    if entry is None:
        return path in change["removed"]
    recorded = change["added"].get(path) or change["changed"].get(path)
    return recorded is not None and recorded[0] == entry[0] and recorded[3] == entry[3]


def differing_checks(final: dict[str, Any], live: dict[str, Any], kinds: dict[str, str]) -> list[dict[str, Any]]:
    """Each check whose answer on the workspace differs from this run's final state: `passed` here
    and there, and the findings only the workspace shows (the first few)."""
    rows = []
    for name, result in live.items():
        mine = final.get(name)
        if mine is None:
            continue
        ours = {finding.id for finding in mine.findings}
        new = [finding for finding in result.findings if finding.id not in ours]
        if result.passed == mine.passed and not new:
            continue
        rows.append({"name": name, "kind": kinds.get(name, "check"), "passed": mine.passed,
                     "passed_live": result.passed, "new": len(new),
                     "findings": [{"id": f.id, "path": f.path, "line": f.line, "message": f.message, "test": f.test}
                                  for f in new[:NAMED]]})
    return rows


def sentence(workspace: dict[str, Any], for_agent: bool = False) -> str:
    """One line for the agent or the person: what the workspace holds that this run did not write,
    by whom (for the agent: never which model or cell), and which checks fail there because of it."""
    changes = workspace["changes"]
    named = "; ".join(f"{item['path']} ({describe(item['by'], not for_agent)})" for item in changes[:3])
    more = f" and {len(changes) - 3} more" if len(changes) > 3 else ""
    text = f"the workspace also holds {len(changes)} change(s) this run did not make: {named}{more}"
    red = [row for row in workspace.get("checks") or [] if row["passed"] and not row["passed_live"]]
    if red:
        text += (f"; {', '.join(row['kind'] + ' ' + row['name'] for row in red)} pass(es) on this run's work "
                 "but fail(s) on the workspace because of them")
    elif workspace.get("checks_why"):
        text += f" ({workspace['checks_why']})"
    return text


def describe(by: dict[str, Any], with_agent: bool = True) -> str:
    """Who wrote it, in a few words (`with_agent`: naming the other session's cell)."""
    if by.get("who") == "session":
        step = f", step {by['step']} ({by['tool']})" if by.get("step") is not None else ""
        agent = f" {by['agent'] if by.get('agent') else by.get('platform')}" if with_agent else ""
        return f"another session:{agent} run {by['run']}{step}"
    if by.get("who") == "out_of_band":
        return f"not an agent's step (run {by['run']} saw it between its steps: the person, or a process)"
    if by.get("who") == "background":
        return f"possibly a process step {by['step']} left running in the background"
    return "unknown (the person, or a process)"
