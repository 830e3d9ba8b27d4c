"""The data behind the HTML run view: one JSON-ready dict built from a recorded run.

Bounded for large runs: a step's input is cut at 2,000 characters, a file's diff at 120 lines, a
step's at 400, and the whole page's diffs at 1.5 MB of text (later steps then say the diff was
left out). Binary files and files over 256 KiB get no diff. Reads show origin, ref and size, never
their content.
"""

from __future__ import annotations

import difflib
import json
import time
from pathlib import Path
from typing import Any

from vacant.attribute import others
from vacant.attribute.stop import read_coverage
from vacant.attribute.timesplit import time_lines
from vacant.core import levels
from vacant.core.findings import split_lines
from vacant.core.locations import WorkspaceError
from vacant.policy.contract.flags import nearest_block
from vacant.store import reputation
from vacant.store.loaded import LoadedRun, load_run
from vacant.store.run import Step

INPUT_CHARS = 2000
FILE_DIFF_LINES = 120
STEP_DIFF_LINES = 400
PAGE_DIFF_CHARS = 1_500_000
DIFF_FILE_BYTES = 256 * 1024


class DiffBudget:
    def __init__(self, chars: int = PAGE_DIFF_CHARS) -> None:
        self.left = chars

    def take(self, lines: list[str]) -> list[str] | None:
        size = sum(len(line) + 1 for line in lines)
        if size > self.left:
            return None
        self.left -= size
        return lines


def _text(run: LoadedRun, entry: list[Any] | None) -> list[str] | None:
    """A file version's lines, or None when it is not a small, kept, text file."""
    if entry is None:
        return []
    if entry[0] != "f" or entry[1] > DIFF_FILE_BYTES or not run.store.has(entry[3]):
        return None
    data = run.store.get(entry[3])
    if b"\0" in data:
        return None
    return split_lines(data.decode("utf-8", errors="replace"))


def file_diff(old: list[str], new: list[str], path: str, context: int = 3) -> list[str]:
    return [line.rstrip("\n") for line in difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=context, lineterm="")]


def hunk_at(diff: list[str], new_line: int | None) -> list[str]:
    """The header and the hunk of a unified diff that covers `new_line` of the new file (else the
    first hunk)."""
    header, hunks, current = diff[:2], [], []  # type: list[str], list[list[str]], list[str]
    for line in diff[2:]:
        if line.startswith("@@") and current:
            hunks.append(current)
            current = []
        current.append(line)
    if current:
        hunks.append(current)
    for hunk in hunks:
        start, _, length = hunk[0].split(" ")[2][1:].partition(",")
        first, count = int(start), int(length or 1)
        if new_line is not None and first <= new_line < first + max(count, 1):
            return header + hunk
    return header + hunks[0] if hunks else diff


def _lane(step: Step) -> str:
    return "oob" if step.out_of_band else (step.agent_id or "main")


def _summary(value: Any, workspace: str, width: int = 90) -> str:
    if value is None:
        return "(a change no step made)"
    if isinstance(value, dict):
        for key in ("command", "file_path", "path", "pattern", "description", "prompt", "url", "query"):
            if isinstance(value.get(key), str):
                value = value[key]
                break
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = " ".join((text or "").split()).replace(workspace.rstrip("/") + "/", "") if workspace else " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _times(run: LoadedRun) -> dict[int, tuple[float | None, float | None]]:
    times: dict[int, list[float | None]] = {}
    for record in run.view.records:
        if record["type"] in ("step_start", "step_end") and record.get("step") is not None:
            slot = times.setdefault(record["step"], [None, None])
            slot[0 if record["type"] == "step_start" else 1] = record.get("ts")
    return {number: (a, b) for number, (a, b) in times.items()}


def step_diffs(run: LoadedRun, budget: DiffBudget) -> dict[int, list[dict[str, Any]]]:
    """Per step: [{"path", "kind", "diff": [...] or None, "why"}] for every path it changed."""
    manifest = dict(run.baseline)
    per_step: dict[int, list[dict[str, Any]]] = {}
    for change in run.changes:
        owner = change["step"]
        rows = per_step.setdefault(owner, []) if owner is not None else []
        edits = [(p, "+", e) for p, e in change["added"].items()] + [(p, "~", e) for p, e in change["changed"].items()]
        edits += [(p, "-", None) for p in change["removed"]]
        shown = sum(len(row["diff"] or []) for row in rows)
        for path, kind, entry in sorted(edits):
            row: dict[str, Any] = {"path": path, "kind": kind, "diff": None, "why": ""}
            old, new = _text(run, manifest.get(path)), _text(run, entry)
            if (entry or manifest.get(path) or ["f"])[0] == "d":
                row["why"] = "directory"
            elif old is None or new is None:
                row["why"] = "binary, large or not kept"
            elif shown >= STEP_DIFF_LINES:
                row["why"] = "step diff limit reached"
            else:
                lines = file_diff(old, new, path)
                if len(lines) > FILE_DIFF_LINES:
                    lines = lines[:FILE_DIFF_LINES] + [f"… {len(lines) - FILE_DIFF_LINES} more diff lines"]
                row["diff"] = budget.take(lines)
                row["why"] = "" if row["diff"] is not None else "page diff budget spent"
                shown += len(row["diff"] or [])
            rows.append(row)
        for path in change["removed"]:
            manifest.pop(path, None)
        manifest.update(change["added"])
        manifest.update(change["changed"])
    return per_step


def finding_diff(run: LoadedRun, item: dict[str, Any]) -> dict[str, Any] | None:
    """The diff, at the finding's location, of the change that made the finding appear."""
    number = item.get("flip_step") if item.get("flip_step") is not None else item.get("step")
    path = item.get("path")
    if number is None or not path:
        return None
    manifest = dict(run.baseline)
    found = None
    for change in run.changes:
        before = manifest.get(path)
        for rel in change["removed"]:
            manifest.pop(rel, None)
        manifest.update(change["added"])
        manifest.update(change["changed"])
        if change["step"] == number and (path in change["added"] or path in change["changed"] or path in change["removed"]):
            found = (before, manifest.get(path))
    if found is None:
        return None
    old, new = _text(run, found[0]), _text(run, found[1])
    if old is None or new is None:
        return {"step": number, "path": path, "diff": None, "why": "binary, large or not kept"}
    at = nearest_block(new, [item["text"]], item.get("line") or 1) if item.get("text") else None
    line = at + 1 if at is not None else item.get("line")
    return {"step": number, "path": path, "diff": hunk_at(file_diff(old, new, path), line), "line": line,
            "text": item.get("text") or ""}


def _step_json(step: Step, times: dict[int, tuple[float | None, float | None]], diffs: list[dict[str, Any]],
               marks: list[str], workspace: str) -> dict[str, Any]:
    start, end = times.get(step.number, (None, None))
    text = step.input if isinstance(step.input, str) else json.dumps(step.input, indent=1, sort_keys=True)
    actor = step.actor or {}
    return {
        "n": step.number, "lane": _lane(step), "tool": step.tool, "summary": _summary(step.input, workspace),
        "input": text[:INPUT_CHARS] + ("…" if len(text) > INPUT_CHARS else ""),
        "start": start, "duration": round(end - start, 3) if start is not None and end is not None else None,
        "outcome": step.outcome, "exit_code": step.exit_code, "detail": (step.detail or "")[:INPUT_CHARS],
        "actor": "/".join(str(actor.get(k) or "?") for k in ("agent_definition", "model")) if actor else "out-of-band",
        "changes": diffs, "reads": [{"origin": r["origin"], "ref": str(r["ref"])[:300], "size": r.get("size")} for r in step.reads],
        "findings": marks,
    }


def _elsewhere(workspace: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the workspace holds that the run did not make, in words: who wrote each path, and the
    checks that pass on the run's work and not on the workspace."""
    if not workspace:
        return None
    return {"sentence": others.sentence(workspace),
            "changes": [{"path": item["path"], "change": item["change"], "by": others.describe(item["by"])}
                        for item in workspace["changes"]],
            "checks": [{"name": row["name"], "kind": row["kind"], "passed": row["passed"],
                        "passed_live": row["passed_live"]} for row in workspace.get("checks") or []]}


def _found(finding: dict[str, Any]) -> dict[str, Any]:
    """A finding of a Stop in the rounds overview: what, where, how sure, which step."""
    return {key: finding.get(key) for key in ("id", "level", "path", "line", "message", "flip_step", "blocking")}


def _lanes(run: LoadedRun, steps: list[Step]) -> list[dict[str, str]]:
    kinds = {r["agent_id"]: r.get("agent_type") for r in run.view.of_type("subagent")}
    lanes, seen = [{"id": "main", "label": "main agent"}], {"main"}
    for step in steps:
        lane = _lane(step)
        if lane not in seen:
            seen.add(lane)
            label = "out-of-band" if lane == "oob" else f"sub-agent {kinds.get(lane) or ''} {lane[:10]}".replace("  ", " ")
            lanes.append({"id": lane, "label": label})
    return sorted(lanes, key=lambda lane: {"main": 0, "oob": 2}.get(lane["id"], 1))


def _reputation(steps: list[Step]) -> list[dict[str, Any]]:
    acting = {reputation.cell_key(step.actor) for step in steps if step.actor}
    return [stats.to_json() for stats in reputation.cell_stats() if reputation.cell_key(stats.cell) in acting]


def build(root: Path, run_dir: Path, stop_number: int | None = None) -> dict[str, Any]:
    run = load_run(root, run_dir)
    reports = run.reports()
    report = next((r for r in reports if r.get("stop") == stop_number), None) if stop_number else run.latest_report()
    if stop_number and report is None:
        raise WorkspaceError(f"run {run.id} has no report for Stop {stop_number} (it has {len(reports)})")
    steps = run.view.ordered()
    findings = list((report or {}).get("findings", []))
    marks: dict[int, list[str]] = {}
    for item in findings:
        for number in {item.get("step"), item.get("flip_step")} - {None}:
            marks.setdefault(number, []).append(item["id"])
        item["hunk"] = finding_diff(run, item)
        written = (item.get("evidence") or {}).get("written_by")
        item["written_by"] = f"{others.describe(written)} ({written.get('why')})" if written else None
    diffs, times = step_diffs(run, DiffBudget()), _times(run)
    start = run.start()
    return {
        "run": run.id, "platform": start.get("platform"), "workspace": start.get("workspace"),
        "started": start.get("ts"), "ended": next((r.get("ts") for r in run.view.of_type("run_end")), None),
        "generated": time.time(), "stop": (report or {}).get("stop"), "decision": (report or {}).get("decision"),
        "contract_error": (report or {}).get("contract_error"),
        "elsewhere": _elsewhere((report or {}).get("workspace")),
        "coverage": (report or {}).get("read_coverage") or read_coverage(run.view),
        "lanes": _lanes(run, steps),
        "steps": [_step_json(s, times, diffs.get(s.number, []), marks.get(s.number, []), start.get("workspace") or "")
                  for s in steps],
        "group_changes": len(run.view.group_changes),
        "findings": findings,
        "stops": [{"stop": r.get("stop"), "agent_id": r.get("agent_id"), "decision": r.get("decision"),
                   "round": r.get("round"), "rounds": r.get("rounds"), "checks": r.get("checks", []),
                   "findings": len(r.get("findings", [])), "found": [_found(f) for f in r.get("findings", [])],
                   "time": time_lines(r)}
                  for r in reports],
        "reputation": _reputation(steps),
        "levels": {name: meaning for name, (meaning, _consequence) in levels.LEVELS.items()},
    }
