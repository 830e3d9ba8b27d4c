"""The Stop pipeline: checks and flags on the final state, replay to the flip, lineage, grade,
consequences, feedback. Called by the platform's Stop hook and by `vacant replay`.

Everything runs on reconstructed states in a scratch directory outside the workspace. The
pipeline keeps to a time budget; findings it could not replay in time are reported as
`not_replayed`, never dropped.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vacant.attribute import baseline_probe as probe
from vacant.attribute.diffs import step_diff
from vacant.attribute.lineage import Source, find_source, introduced_value
from vacant.attribute.replay import (
    BudgetExceeded,
    Flip,
    Presence,
    Scratch,
    Timeline,
    find_flip,
)
from vacant.core import levels
from vacant.core.atomic import atomic_write
from vacant.core.findings import Finding
from vacant.core.locations import state_dir
from vacant.policy.checks import run_check
from vacant.policy.contract import Contract, load_contract
from vacant.policy.flags import list_flags, standing_flags
from vacant.store import reputation
from vacant.store.objects import ObjectStore
from vacant.store.run import RunView, Step
from vacant.store.steplog import StepLog

MAX_HOPS = 5
HOOK_TIMEOUT_MARGIN_S = 60


@dataclass
class Attribution:
    level: str
    step: Step | None = None
    actor: dict[str, Any] | None = None
    source: Source | None = None  # where the value came from outside the run, if anywhere
    first_hop: str | None = None  # lineage_internal: the run's own read the value was copied from
    final_level: str | None = None  # for lineage_internal: the grade at the producing step
    flip_step: int | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    diff: str | None = None  # what the flip step changed at the finding's location


@dataclass
class Outcome:
    report: dict[str, Any]
    blocking: list[dict[str, Any]]
    feedback: str | None  # the block reason, when the agent must go on
    system_message: str | None  # for the person, when the agent may stop with findings left


class Pipeline:
    def __init__(self, root: Path, run_dir: Path, contract: Contract | None, budget_s: float | None = None) -> None:
        self.root = Path(root)
        self.log = StepLog(run_dir)
        self.contract = contract
        self.store = ObjectStore(state_dir(self.root) / "objects")
        self.view = RunView.load(run_dir)
        self.timeline = Timeline.of(self.view, self.store)
        budget = budget_s if budget_s is not None else (contract.stop.budget_s if contract else 300.0)
        self.budget_s = float(budget)
        self.deadline = time.monotonic() + self.budget_s
        self.check_runs = 0
        self.results: dict[tuple[str, int], Any] = {}
        self.scratch: Scratch | None = None

    # -- checks on states --------------------------------------------------------------------

    def check_at(self, check, index: int, cached: bool = True):
        key = (check.name, index)
        if cached and key in self.results:
            return self.results[key]
        directory = self.scratch.at(index)
        result = run_check(check, directory)
        self.check_runs += 1
        if cached or key not in self.results:
            self.results[key] = result
        return result

    def presence(self, finding: Finding, flag_text: str | None) -> Presence:
        if finding.source == "flag":
            def evaluate(index: int, cached: bool) -> bool:
                content = self.timeline.content(self.store, index, finding.path or "")
                return content is not None and (flag_text or finding.text).encode() in content
        else:
            check = self._check_named(finding.name)

            def evaluate(index: int, cached: bool) -> bool:
                result = self.check_at(check, index, cached)
                return any(f.id == finding.id for f in result.findings)
        return Presence(evaluate)

    def _check_named(self, name: str):
        return next(check for check in self.contract.check if check.name == name)

    # -- the whole run -----------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        started = time.monotonic()
        scratch_dir = Path(tempfile.mkdtemp(prefix="vacant-replay-"))
        self.scratch = Scratch(self.timeline, self.store, scratch_dir, self.root)
        try:
            checks, findings = self._final_findings()
            graded = [self._grade_one(finding, flag_text) for finding, flag_text in findings]
        finally:
            shutil.rmtree(scratch_dir, ignore_errors=True)
        report = {
            "run": self.log.run_id,
            "at": time.time(),
            "read_coverage": read_coverage(self.view),
            "checks": checks,
            "findings": [self._finding_json(finding, attribution) for (finding, _), attribution in zip(findings, graded)],
            "check_runs": self.check_runs,
            "states": self.timeline.last + 1,
            "budget_s": self.budget_s,
            "seconds": round(time.monotonic() - started, 3),
            # a resolved flag still counts as something verified (the person's objection now holds)
            "nothing_to_verify": not checks and not findings and not list_flags(self.root),
            "vacuous": probe.read(self.log.run_dir),  # checks already green at the baseline
        }
        return report

    def _final_findings(self) -> tuple[list[dict[str, Any]], list[tuple[Finding, str | None]]]:
        checks, findings = [], []
        for check in (self.contract.check if self.contract else []):
            result = self.check_at(check, self.timeline.last)
            self.log.emit("check", name=check.name, passed=result.passed, exit_code=result.exit_code,
                          seconds=round(result.seconds, 3), state=self.timeline.last)
            checks.append({"name": check.name, "passed": result.passed, "exit_code": result.exit_code,
                           "seconds": round(result.seconds, 3), "timed_out": result.timed_out})
            findings += [(finding, None) for finding in result.findings]
        for flag, finding in standing_flags(self.root):
            findings.append((finding, getattr(flag, "text", None)))
        for finding, _ in findings:
            self.log.emit("finding", id=finding.id, source=finding.source, name=finding.name, path=finding.path,
                          line=finding.line)
        return checks, findings

    def _grade_one(self, finding: Finding, flag_text: str | None) -> Attribution:
        if finding.env:
            return Attribution(levels.ENV, evidence={"why": "the check's tool is missing; editing code cannot fix it"})
        try:
            flip = find_flip(self.presence(finding, flag_text), self.timeline.last, self.deadline,
                             lambda k: self.timeline.touching(finding.path, after=k))
        except BudgetExceeded:
            return Attribution(levels.NOT_REPLAYED, evidence={"why": f"time budget of {self.budget_s:.0f} s ran out"})
        attribution = grade(self.view, self.timeline, self.store, finding, flip, self.contract)
        attribution.evidence.update(
            method=flip.method, flaky=flip.flaky, states_evaluated=sorted(flip.evaluated),
            rerun=f"vacant replay {self.log.run_id}",
        )
        attribution.diff = step_diff(self.timeline, self.store, flip.index, finding.path, finding.line)
        if flip.index is not None:
            self.log.emit("flip", finding=finding.id, step=attribution.flip_step, state=flip.index, method=flip.method)
        return attribution

    def _finding_json(self, finding: Finding, attribution: Attribution) -> dict[str, Any]:
        step = attribution.step
        return {
            "id": finding.id,
            "source": finding.source,
            "name": finding.name,
            "path": finding.path,
            "line": finding.line,
            "message": finding.message,
            "text": finding.text,
            "level": attribution.level,
            "final_level": attribution.final_level,
            "step": step.number if step else None,
            "flip_step": attribution.flip_step,
            "tool": step.tool if step else None,
            "agent_id": step.agent_id if step else None,
            "actor": attribution.actor,
            "lineage_source": attribution.first_hop or (attribution.source.describe() if attribution.source else None),
            "origin_source": attribution.source.describe() if attribution.source else None,
            "evidence": attribution.evidence,
            "diff": attribution.diff,
            "blocking": attribution.level not in levels.NON_BLOCKING_LEVELS,
        }


def grade(view: RunView, timeline: Timeline, store: ObjectStore, finding: Finding, flip: Flip,
          contract: Contract | None) -> Attribution:
    """The five levels (docs/LEVELS.md), decided from the flip and the reads."""
    if flip.index is None:
        if finding.path is None:
            return Attribution(levels.INCOMPLETE, evidence={"why": "the check never passed on any replayed state"})
        blame = _last_touch(view, finding.path)
        return Attribution(levels.HEURISTIC, blame, blame.actor if blame else None,
                           evidence={"why": "already present at the run's baseline", "pointer": "last step that touched the file"})
    change = timeline.change(flip.index)
    owner = view.steps.get(change["step"]) if change["step"] is not None else None
    writers = [n for n in change["open_steps"] if n in view.steps and view.steps[n].scope != []]
    if owner is None:
        return Attribution(levels.HEURISTIC, evidence={"why": "changed while several steps were open", "group": writers})
    if owner.out_of_band:
        return Attribution(levels.GAP, owner, None, flip_step=owner.number,
                           evidence={"why": "the change came from no recorded step (out-of-band change set)"})
    if len(writers) > 1:
        return Attribution(levels.HEURISTIC, owner, owner.actor, flip_step=owner.number,
                           evidence={"why": "parallel steps that could all write were open", "group": writers})
    if flip.flaky:
        return Attribution(levels.HEURISTIC, owner, owner.actor, flip_step=owner.number,
                           evidence={"why": "the check gave different answers on the same state (flaky)"})
    value = introduced_value(timeline, store, flip.index, finding.path, finding.line)
    pinned = list(contract.pinned) if contract else []
    start_seq = _start_seq(view, owner)
    source = find_source(view, timeline, store, value, start_seq, pinned)
    evidence: dict[str, Any] = {"value": sorted(value)}
    step, hops = owner, []
    while source is not None and source.kind == "internal" and source.producer_step in view.steps and len(hops) < MAX_HOPS:
        hops.append(source.describe())
        step = view.steps[source.producer_step]
        before = source.read_seq if source.origin == "subagent" else _start_seq(view, step)
        source = find_source(view, timeline, store, value, before, pinned)
    if hops:
        evidence["hops"] = hops
        final = levels.LINEAGE_EXACT if source is not None and source.kind == "external" else levels.PROVABLE
        external = source if source is not None and source.kind == "external" else None
        return Attribution(levels.LINEAGE_INTERNAL, step, _producer_actor(view, step, hops), external, hops[0],
                           final, owner.number, evidence)
    if source is not None:
        return Attribution(levels.LINEAGE_EXACT, owner, owner.actor, source, None, None, owner.number, evidence)
    return Attribution(levels.PROVABLE, owner, owner.actor, None, None, None, owner.number, evidence)


def _start_seq(view: RunView, step: Step) -> int:
    return next(r["seq"] for r in view.records if r["type"] == "step_start" and r["step"] == step.number)


def _last_touch(view: RunView, path: str) -> Step | None:
    touching = [s for s in view.ordered() if path in s.changed_paths() and not s.out_of_band]
    return touching[-1] if touching else None


def _producer_actor(view: RunView, step: Step, hops: list[str]) -> dict[str, Any] | None:
    """A sub-agent's reply belongs to the sub-agent's cell, not to the Agent call's caller."""
    if not hops[-1].startswith("subagent:") or not step.actor:
        return step.actor
    agent_id = hops[-1].split(":", 1)[1]
    definition = next((r["agent_type"] for r in view.of_type("subagent") if r["agent_id"] == agent_id), None)
    model = next((r["model"] for r in reversed(view.of_type("actor")) if r["agent_id"] == agent_id), None)
    if definition is None:
        return step.actor
    return {**step.actor, "agent_definition": definition, "model": model}


def read_coverage(view: RunView) -> dict[str, str]:
    reads = view.of_type("read")
    steps = [s for s in view.ordered() if not s.out_of_band]
    if not reads and steps:
        return {"state": "none", "why": "no reads were recorded (no hooks saw this run's inputs)"}
    shell = [s for s in steps if s.scope is None]
    if shell:
        return {"state": "partial",
                "why": f"{len(shell)} shell or unknown-tool step(s) (first: step {shell[0].number}, {shell[0].tool}): "
                       "files read inside them are invisible to the hooks"}
    if any(_unobserved_context(view, r) for r in view.of_type("run_start")):
        return {"state": "partial", "why": "the session was resumed: earlier context was not observed"}
    return {"state": "complete", "why": "every step's inputs went through tools whose reads the hooks record"}


def _unobserved_context(view: RunView, start: dict[str, Any]) -> bool:
    """A compaction, or a resume that is not `vacant do` continuing its own recorded round."""
    if start["source"] == "compact":
        return True
    if start["source"] != "resume":
        return False
    rounds = [r for r in view.of_type("round") if r["seq"] < start["seq"]]
    return not rounds or rounds[-1]["decision"] != "continue"


# -- after grading: consequences, feedback, the decision ---------------------------------------

STOP_STATE = "stop.json"
FEEDBACK_LINES = 12
MESSAGE_WIDTH = 160


def _load_stop_state(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / STOP_STATE).read_text())
    except (OSError, ValueError):
        return {"rounds": {}, "consequences": []}


def _save_stop_state(run_dir: Path, state: dict[str, Any]) -> None:
    atomic_write(run_dir / STOP_STATE, json.dumps(state))


def apply_consequences(log: StepLog, view: RunView, report: dict[str, Any], state: dict[str, Any],
                       main_stop: bool = True) -> None:
    """Each graded finding (docs/LEVELS.md) touches exactly what its level says, once per run."""
    run = report["run"]
    for item in report["findings"]:
        if item["id"] in state["consequences"]:
            continue
        level = item["final_level"] if item["level"] == levels.LINEAGE_INTERNAL else item["level"]
        if level == levels.PROVABLE and item["actor"]:
            reputation.record_review(item["actor"], 0, 1.0, run, item["id"])
            log.emit("review", cell=item["actor"], score=0, weight=1.0, finding=item["id"])
        elif level == levels.LINEAGE_EXACT and item["origin_source"]:
            reputation.count_source(item["origin_source"], item["origin_source"].split(":", 1)[0], run, item["id"])
        elif level == levels.GAP:
            platform = next((r["platform"] for r in view.of_type("run_start")), "unknown")
            reputation.count_gap(platform, run, item["id"])
            log.emit("gap", finding=item["id"], platform=platform)
        else:
            continue
        state["consequences"].append(item["id"])
    if main_stop and not report["findings"] and not report["nothing_to_verify"]:
        for cell in _cells(view):
            reputation.record_review(cell, 1, 1.0, run, None)
            log.emit("review", cell=cell, score=1, weight=1.0, finding=None)


def _cells(view: RunView) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = []
    for step in view.ordered():
        if step.actor and step.actor not in cells:
            cells.append(step.actor)
    return cells


def _trim(text: str, width: int = MESSAGE_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def feedback_text(blocking: list[dict[str, Any]], round_number: int, rounds: int) -> str:
    """At most 12 lines; stable ids and locations; never who the actor is."""
    lines = [f"vacant: {len(blocking)} finding(s) must be fixed before you stop (round {round_number} of {rounds})."]
    room = FEEDBACK_LINES - 2
    shown = blocking if len(blocking) <= room else blocking[: room - 1]
    for item in shown:
        where = f"{item['path']}:{item['line']}" if item["path"] and item["line"] else (item["path"] or "(no location)")
        what = f"flag: {item['message']}" if item["source"] == "flag" else f"check {item['name']} says: {item['message']}"
        if item["level"] == levels.INCOMPLETE:
            origin = "never passed: the work is not done yet"
        elif item["flip_step"] is not None:
            origin = f"introduced at step {item['flip_step']} ({item['tool']})" if item["step"] == item["flip_step"] \
                else f"introduced at step {item['flip_step']}, value from step {item['step']} ({item['tool']})"
        else:
            origin = "origin not reproducible"
        lines.append(_trim(f"- [{item['id']}] {where} ({origin}) {what}"))
    if len(shown) < len(blocking):
        lines.append(f"- … and {len(blocking) - len(shown)} more (same checks)")
    lines.append("Fix each at its location, re-run the failing check yourself, then finish; vacant re-checks at stop.")
    return "\n".join(lines)


def summary_for_person(report: dict[str, Any], why: str) -> str:
    counts: dict[str, int] = {}
    for item in report["findings"]:
        counts[item["level"]] = counts.get(item["level"], 0) + 1
    parts = ", ".join(f"{n} {level}" for level, n in counts.items())
    return f"vacant: {len(report['findings'])} finding(s) left ({parts}); {why}. See `vacant report {report['run']}`."


def save_report(run_dir: Path, report: dict[str, Any]) -> None:
    """Each Stop's report is kept (`reports/0001.json`, …); `report.json` is the latest."""
    history = run_dir / "reports"
    history.mkdir(exist_ok=True)
    number = len(list(history.glob("*.json"))) + 1
    report["stop"] = number
    text = json.dumps(report, indent=1)
    (history / f"{number:04d}.json").write_text(text)
    (run_dir / "report.json").write_text(text)


def stop(root: Path, run_dir: Path, agent_id: str | None = None, budget_s: float | None = None,
         rounds: int | None = None) -> Outcome:
    """The whole Stop: replay and grade, consequences, report, and whether the agent may stop.
    `rounds` overrides the contract's round budget (`vacant do --rounds`)."""
    contract = load_contract(root)
    log = StepLog(run_dir)
    pipeline = Pipeline(root, run_dir, contract, budget_s)
    if agent_id is not None and not any(s.changes for s in pipeline.view.ordered() if s.agent_id == agent_id):
        return Outcome({}, [], None, None)  # a sub-agent that changed nothing cannot have introduced a finding
    report = pipeline.run()
    state = _load_stop_state(run_dir)
    apply_consequences(log, pipeline.view, report, state, main_stop=agent_id is None)
    if rounds is None:
        rounds = contract.stop.rounds if contract else 3
    mine = [f for f in report["findings"] if agent_id is None or f["agent_id"] == agent_id]
    blocking = [f for f in mine if f["blocking"]]
    round_key = agent_id or "main"
    used = state["rounds"].get(round_key, 0)
    feedback = system_message = None
    if blocking and used < rounds:
        used += 1
        state["rounds"][round_key] = used
        feedback = feedback_text(blocking, used, rounds)
        log.emit("feedback", text=feedback, round=used, rounds=rounds, agent_id=agent_id)
    elif blocking:
        system_message = summary_for_person(report, f"the round budget ({rounds}) is spent")
    elif mine:
        system_message = summary_for_person(report, "none of them can be fixed by editing code (env/gap)")
    report.update(round=used, rounds=rounds, decision="block" if feedback else "stop", agent_id=agent_id)
    for item in report["findings"]:
        log.emit("attribution", finding=item["id"], level=item["level"], step=item["step"],
                 lineage_source=item["lineage_source"])
    _save_stop_state(run_dir, state)
    save_report(run_dir, report)
    return Outcome(report, blocking, feedback, system_message)
