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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from vacant.attribute import baseline_probe as probe
from vacant.attribute import (
    at_change,
    authorship,
    changed_tests,
    leftout,
    others,
    proposals,
    recordaudit,
    relatedtests,
    testinputs,
    verify,
)
from vacant.attribute.at_change import Attribution
from vacant.attribute.attribution import attribute_finding
from vacant.attribute.replay import (
    BudgetExceeded,
    Flip,
    Presence,
    Scratch,
    Timeline,
    find_flip,
)
from vacant.attribute.statechecks import StateChecks
from vacant.attribute.verify import CLEAN, PRESENT
from vacant.core import children, levels
from vacant.core.atomic import atomic_write
from vacant.core.cells import UNKNOWN
from vacant.core.findings import Finding
from vacant.core.locations import state_dir
from vacant.core import sandbox
from vacant.core.sandbox import unrecorded_paths
from vacant.store.hasher import Index, leaves_out
from vacant.policy.contract.checks import Site, run_check, site_for
from vacant.policy.contract.contract import CONTRACT_FILE, Contract, ContractError, load_contract, rounds_hint
from vacant.policy.contract.flags import list_flags, standing_flags
from vacant.policy.gate.asks import questions
from vacant.policy.gate.asks.book import AskBook
from vacant.store import reputation
from vacant.store.objects import ObjectStore
from vacant.store.run import RunView, Step
from vacant.store.states import Manifest
from vacant.store.steplog import StepLog

HOOK_TIMEOUT_MARGIN_S = 60


@dataclass
class Outcome:
    report: dict[str, Any]
    blocking: list[dict[str, Any]]
    feedback: str | None  # the block reason, when the agent must go on
    system_message: str | None  # for the person, when the agent may stop with findings left


@dataclass(frozen=True)
class AsOf:
    """A past Stop to reproduce: the run's log up to `seq`, the flags filed by `at` (epoch s)."""

    stop: int
    seq: int
    at: float

    @classmethod
    def of_report(cls, report: dict[str, Any]) -> AsOf:
        if "upto" not in report:
            raise ValueError(f"the report of Stop {report.get('stop')} predates replay by Stop (no `upto`)")
        return cls(int(report["stop"]), int(report["upto"]), float(report["at"]))


class ReadOnlyLog(StepLog):
    """A run's log that a replay reads and never appends to (its records are dropped)."""

    def emit(self, event_type: str, **fields: object) -> dict[str, object]:
        return {"type": event_type, **fields}


class Pipeline:
    def __init__(self, root: Path, run_dir: Path, contract: Contract | None, budget_s: float | None = None,
                 as_of: AsOf | None = None, stop_number: int | None = None, readonly: bool = False) -> None:
        self.root = Path(root)
        self.log = StepLog(run_dir) if not readonly else ReadOnlyLog(run_dir)  # `vacant replay` writes nothing
        self.contract = contract
        self.store = ObjectStore(state_dir(self.root) / "objects")
        self.view = RunView.load(run_dir)
        self.as_of = as_of
        if as_of is not None:  # the run as it stood at that Stop
            self.view = RunView.build([r for r in self.view.records if r["seq"] <= as_of.seq])
        self.upto = max((r["seq"] for r in self.view.records), default=0)
        number = as_of.stop if as_of is not None else stop_number
        self.rerun = f"vacant replay {self.log.run_id}" + (f" --stop {number}" if number is not None else "")
        self.timeline = Timeline.of(self.view, self.store)
        budget = budget_s if budget_s is not None else (contract.stop.budget_s if contract else 300.0)
        self.budget_s = float(budget)
        self.deadline = time.monotonic() + self.budget_s
        self.checks: StateChecks | None = None
        self.unfaithful: str | None = None  # why a replay may not see what the check in the workspace saw
        self.unwalled_why: str | None = None  # why the checks ran unwalled (None: they ran behind the wall)
        self.split: dict[str, dict[str, float]] = {}  # part of the Stop -> its seconds and check runs
        self._other_runs: list[others.OtherRun] | None = None
        self.questions: list[dict[str, Any]] = []  # what this Stop asks the person (report `questions`)
        self.accepted: dict[str, Any] = {}  # contract items whose agent change the person accepted
        self._settle_contract()
        live = as_of is None and not readonly
        started = min((record["ts"] for record in self.view.of_type("run_start")), default=time.time())
        self.pending = leftout.pending_guards(self.contract, started, self.root if live else None)
        self.contract = leftout.without(self.contract, self.pending)  # it cannot block on a probe it does not have
        self.left_out = leftout.LeftOut(self.budget_s)

    @property
    def check_runs(self) -> int:
        return self.checks.runs if self.checks else 0

    # -- checks on states --------------------------------------------------------------------

    def check_at(self, check, index: int, cached: bool = True):
        return self.checks.at(check, index, cached)

    def presence(self, finding: Finding, flag_text: str | None) -> Presence:
        if finding.source == "flag":
            def evaluate(index: int, cached: bool) -> bool:
                content = self.timeline.content(self.store, index, finding.path or "")
                return content is not None and (flag_text or finding.text).encode() in content
        else:
            check = self._check_named(finding.name)

            def evaluate(index: int, cached: bool) -> bool:
                return self.checks.status(check, finding, index, cached) == PRESENT
        return Presence(evaluate)

    def later_states(self, finding: Finding, after: int) -> list[int]:
        """The states just before each later change that could have repaired the finding: every
        later change for a failing test or a finding on a file no step changes (what the check
        reads is not known); else each later change to its own file or to the flip's files."""
        if finding.source == "flag":
            return self.timeline.touching(finding.path, after=after)
        if finding.test is not None or not self.timeline.changes_path(finding.path):
            return list(range(after, self.timeline.last))
        own = set(self.timeline.touching(finding.path, after=after))
        for path in verify.paths(self.timeline, after) if after >= 1 else ():
            own.update(self.timeline.touching(path, after=after))
        return sorted(own)

    def _check_named(self, name: str):
        return next(check for check, _guard in self.contract.all_checks() if check.name == name)

    # -- the whole run -----------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        started = time.monotonic()
        reused = self._reusable()
        if reused is not None:
            return self._reused_report(reused, started)
        scratch_dir = Path(tempfile.mkdtemp(prefix="vacant-replay-"))
        rerun_dir = Path(tempfile.mkdtemp(prefix="vacant-rerun-"))
        self.scratch = Scratch(self.timeline, self.store, scratch_dir, self.root)
        self.checks = StateChecks(self.scratch, site=self._site(scratch_dir))
        self.authors = authorship.Authors(self.view, self.timeline, self.store, self.root, self.checks.site,
                                          rerun_dir, self.deadline)
        try:
            with self._part("selection"):
                self.checks.selections = self._selections()
            with self._part("final state"):
                checks, findings = self._final_findings()
            graded = [self._grade_one(finding, flag_text) for finding, flag_text in findings]
            with self._part("faithfulness"):
                graded = self._faithful(findings, graded)
            with self._part("changed tests"):
                asked = self._changed_tests()
            with self._part("baseline"):
                vacuous = self._vacuous(bool(checks) and not findings)
            with self._part("workspace"):
                workspace = self._workspace()
        finally:
            shutil.rmtree(scratch_dir, ignore_errors=True)
            shutil.rmtree(rerun_dir, ignore_errors=True)
        record_problems = recordaudit.problems(self.root, self.log.run_dir)
        for problem in record_problems:
            self.log.emit("record_problem", kind=problem["kind"], detail=problem["detail"])
        report = {
            "run": self.log.run_id,
            "at": time.time() if self.as_of is None else self.as_of.at,
            "upto": self.upto,  # the last step-log record this Stop saw (`vacant replay --stop` reads it)
            "read_coverage": read_coverage(self.view),
            "checks": checks,
            "findings": [self._finding_json(finding, attribution) for (finding, _), attribution in zip(findings, graded)]
            + [self._finding_json(finding, attribution) for finding, attribution in asked]
            + [self._finding_json(finding, Attribution(levels.RECORD, evidence={"why": "vacant's own record"}))
               for finding in recordaudit.as_findings(record_problems)],
            "record_problems": record_problems,
            "check_runs": self.check_runs,
            "reruns": {"runs": self.authors.runs, "seconds": round(self.authors.seconds, 3)},  # shell steps re-run
            "walled": {"walled": self.checks.site is not None, "why": self.unwalled_why},
            "faithful": {"faithful": self.unfaithful is None, "why": self.unfaithful},
            "states": self.timeline.last + 1,
            "budget_s": self.budget_s,
            "seconds": round(time.monotonic() - started, 3),
            # a resolved flag still counts as something verified (the person's objection now holds)
            # guards alone verify nothing about the work: only acceptance checks and flags do
            "nothing_to_verify": not [c for c in checks if c["kind"] == "check"] and not findings
            and not list_flags(self.root),
            "vacuous": vacuous,  # checks already green at the baseline
            "no_review": no_review_reason(checks, vacuous, findings),
            "reused": None,
            "split": self.split,
            "questions": self.questions,
            "selection": {name: chosen.summary() for name, chosen in self.checks.selections.items()},
            "workspace": workspace,
            "pending_guards": [item.to_json() for item in self.pending],
        }
        self.left_out.ungraded = sum(1 for item in report["findings"] if item["level"] == levels.NOT_REPLAYED)
        report["left_out"] = self.left_out.to_json()
        if self.left_out.checks and report["no_review"] is None:
            report["no_review"] = ("the Stop's time budget left checks out, so a green end proves nothing about the "
                                   "work: no agent cell was reviewed")
        return report

    @contextmanager
    def _part(self, name: str) -> Iterator[None]:
        """Time and check runs spent in one part of the Stop (the report's `split`)."""
        runs, started = self.check_runs, time.monotonic()
        try:
            yield
        finally:
            part = self.split.setdefault(name, {"seconds": 0.0, "check_runs": 0})
            part["seconds"] = round(part["seconds"] + time.monotonic() - started, 3)
            part["check_runs"] += self.check_runs - runs

    # -- a round where nothing changed --------------------------------------------------------

    def answers_key(self) -> str:
        """What this Stop's answers stand on: the recorded changes (so every state), the contract,
        the standing flags and whether the checks run walled. The same key, the same answers."""
        import hashlib

        start = next(record for record in self.view.records if record["type"] == "run_start")
        flags = sorted(flag.id for flag, _ in standing_flags(self.root)) if self.as_of is None else []
        contract = self.contract.model_dump_json() if self.contract else ""
        answers = sorted((card["id"], (card.get("decision") or {}).get("signature"))
                         for card in AskBook(self.root).cards() if questions.is_question(card))
        facts = [start["baseline"], self.timeline.changes, contract, flags, sandbox.usable() is None, answers]
        return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()

    def _reusable(self) -> dict[str, Any] | None:
        """The last Stop's report when nothing its answers stand on changed since (a live Stop only)."""
        if self.as_of is not None or isinstance(self.log, ReadOnlyLog):
            return None
        kept = _load_stop_state(self.log.run_dir).get("answers") or {}
        try:
            last = json.loads((self.log.run_dir / "report.json").read_text())
        except (OSError, ValueError):
            return None
        if kept.get("key") != self.answers_key() or last.get("stop") != kept.get("stop"):
            return None
        if last.get("left_out"):
            return None  # what the budget left out runs now, as the last Stop said it would
        return last

    def _reused_report(self, last: dict[str, Any], started: float) -> dict[str, Any]:
        """The last Stop's checks and findings again (nothing ran), with the record audited afresh."""
        record_problems = recordaudit.problems(self.root, self.log.run_dir)
        for problem in record_problems:
            self.log.emit("record_problem", kind=problem["kind"], detail=problem["detail"])
        findings = [item for item in last["findings"] if item["source"] != "record"]
        findings += [self._finding_json(finding, Attribution(levels.RECORD, evidence={"why": "vacant's own record"}))
                     for finding in recordaudit.as_findings(record_problems)]
        keep = ("read_coverage", "checks", "walled", "faithful", "states", "nothing_to_verify", "vacuous", "no_review",
                "questions")
        return {"run": self.log.run_id, "at": time.time(), "upto": self.upto, **{name: last[name] for name in keep},
                "findings": findings, "record_problems": record_problems, "check_runs": 0,
                "budget_s": self.budget_s, "seconds": round(time.monotonic() - started, 3), "reused": last["stop"],
                "split": {}, "selection": {}, "workspace": self._workspace(run_checks=False),
                "pending_guards": [item.to_json() for item in self.pending], "left_out": None}

    def _faithful(self, findings: list[tuple[Finding, str | None]], graded: list[Attribution]) -> list[Attribution]:
        """A finding the replay found already present at the baseline is believed only if the replay
        is faithful: the rebuilt baseline must answer as the probe did (the person's at `contract
        add`, or the run's baseline probe), and the check on the live workspace (walled, as `vacant
        check` runs it) as on the rebuilt final state. Where either differs, the replay read
        something outside the state: nothing is graded on it, and nobody is told the failure
        predates the work."""
        suspects = {finding.name for (finding, _), attribution in zip(findings, graded)
                    if finding.source == "check" and attribution.evidence.get("method") == "baseline"}
        for name in sorted(suspects):
            if time.monotonic() > self.deadline:
                self.left_out.part("the faithfulness check")
                break
            why = self._probe_disagrees(name) or self._live_disagrees(name)
            if why is None:
                continue
            self.unfaithful = why
            graded = [self._unfaithful(attribution) if finding.name == name else attribution
                      for (finding, _), attribution in zip(findings, graded)]
        return graded

    def _probe_disagrees(self, name: str) -> str | None:
        """Why the rebuilt baseline (where the check failed) cannot be what the probe saw pass: the
        run's baseline probe passed it, or the person's probe at `contract add` did (exit 0, the same
        command) and no recorded file changed since (each file's time at the baseline is older)."""
        if name in (probe.result(self.log.run_dir) or []):
            return (f"check {name} passed in the run's baseline probe but fails on its rebuilt baseline: the replay "
                    "reads something outside the recorded state")
        table_item = (proposals.items_of(self.timeline.content(self.store, 0, CONTRACT_FILE)) or {}).get(name)
        seen = (table_item[1].get("probe") if table_item else None) or {}
        if seen.get("exit_code") != 0 or seen.get("broken") or seen.get("timed_out") or not isinstance(seen.get("at"), str):
            return None
        if table_item[1].get("command") != self._check_named(name).command:
            return None
        probed = _epoch(seen["at"]) + 1  # the probe's time is written to the second, after it ran
        newest = max((entry[2] / 1e9 for path, entry in self.timeline.states[0].items()
                      if entry[0] in ("f", "l") and path != CONTRACT_FILE), default=0.0)
        if newest >= probed:
            return None  # the workspace changed after the probe: the baseline may really have failed
        return (f"check {name} passed when the person added it (probe at {seen['at']}, exit 0) and no recorded file "
                "changed since, but it fails on its rebuilt baseline: it reads something outside the recorded "
                "state (outside the workspace, or left out of the record)")

    def _live_disagrees(self, name: str) -> str | None:
        check = self._check_named(name)
        rebuilt = self.checks.results.get((name, self.timeline.last, ()))
        live = run_check(check, self.root, site=site_for(self.root))
        if rebuilt is None or _answer(live) == _answer(rebuilt):
            return None
        return (f"check {name} answers differently on the workspace ({_said(live)}) than on its rebuilt final state "
                f"({_said(rebuilt)}): the replay reads something outside the recorded state")

    def _unfaithful(self, attribution: Attribution) -> Attribution:
        return Attribution(levels.HEURISTIC, evidence={"why": f"not graded: {self.unfaithful}", "method": "unfaithful",
                                                       "rerun": self.rerun})

    def _others(self) -> list[others.OtherRun]:
        """The other runs recorded in this workspace (read once a Stop, when asked)."""
        if self._other_runs is None:
            self._other_runs = others.other_runs(self.log.run_dir.parent, self.log.run_dir)
        return self._other_runs

    def _workspace(self, run_checks: bool = True) -> dict[str, Any] | None:
        """What the live workspace holds that this run's record does not (another session's
        changes, or the person's that another session saw), who is known to have written it, and
        which checks answer otherwise on the workspace than on this run's final state
        (vacant.attribute.others). A live Stop only: a replay of a past Stop has no live workspace.
        `run_checks` False (a Stop that reused the last one's answers): the changes only."""
        if self.as_of is not None or isinstance(self.log, ReadOnlyLog):
            return None
        live = Index.load(state_dir(self.root) / "index").entries()
        changes = others.workspace_changes(self.timeline.states[self.timeline.last], live, self._others())
        if not changes:
            return None
        workspace: dict[str, Any] = {"changes": changes, "checks": [], "checks_why": None}
        if not run_checks:  # the other sessions may have moved on since: what differs is looked at afresh
            workspace["checks_why"] = "this Stop reused the last one's answers and ran no check"
            return workspace
        if self.contract is None:
            return workspace
        final, there, kinds = {}, {}, {}
        states = self.checks
        assert states is not None  # run() made them before any part
        for check, guard in self.contract.all_checks():
            if time.monotonic() > self.deadline:
                workspace["checks_why"] = "the Stop's time budget ran out before the checks ran on the workspace"
                self.left_out.part("the checks on the live workspace")
                break
            final[check.name] = states.at(check, self.timeline.last)
            there[check.name] = run_check(check, self.root, site=site_for(self.root))
            states.runs += 1
            kinds[check.name] = "guard" if guard else "check"
        workspace["checks"] = others.differing_checks(final, there, kinds)
        return workspace

    def _changed_tests(self) -> list[tuple[Finding, Attribution]]:
        """The guard as the person set it (vacant.attribute.changed_tests), within the budget; each
        changed test a question for the person, answered once."""
        if time.monotonic() > self.deadline:
            self.left_out.part("the guards as the person set them (changed tests)")
            return []
        last = self.timeline.last
        final = {name: result for (name, index, select), result in self.checks.results.items()
                 if index == last and select == ()}
        found = changed_tests.changed_test_findings(self.checks, self.view, self.timeline, self.store, final,
                                                    self.accepted)
        out = []
        for finding, attribution in found:
            about = finding.test or finding.name
            what = (f"test {about} of guard {finding.name} was changed at step {attribution.flip_step} so that it "
                    "passes: it fails as you set it")
            answer = self._ask(questions.CHANGED_TEST, changed_tests.question_facts(finding, attribution, self.timeline),
                               what, attribution.flip_step, about, attribution.diff, None)
            if answer.accepted:
                continue  # changing the test was the task: the test as changed stands
            attribution.evidence["ask"] = answer.ask
            out.append((finding, _rejected(attribution, answer, about) if answer.rejected else attribution))
        return out

    # -- questions for the person (the ask book) ---------------------------------------------

    def _settle_contract(self) -> None:
        """The contract as the person set it: each check or guard an agent's step added, edited or
        removed is a question (vacant.attribute.proposals); until accepted, it runs as it was."""
        if self.contract is None:
            return
        pending = []
        for proposal in proposals.of_run(self.view, self.timeline, self.store):
            what = f"the agent {proposal.describe()}: run it as your contract?"
            answer = self._ask(questions.CONTRACT, proposal.facts(), what, proposal.step, proposal.name, None,
                               proposals.toml_of(proposal.table, proposal.item),
                               proposals.toml_of(proposal.baseline_table, proposal.baseline))
            if answer.accepted:
                self.accepted[proposal.name] = next((item for item, _ in self.contract.all_checks()
                                                     if item.name == proposal.name), None)
            else:
                pending.append(proposal)
        self.contract = proposals.as_person_set(self.contract, pending)

    def _ask(self, kind: str, facts: Any, what: str, step: int | None, about: str, diff: str | None,
             proposed: str | None, as_set: str | None = None) -> questions.Answer:
        """The person's answer to one question: asked at a live Stop (a card, once per exact change),
        only looked up when a past Stop is replayed (nothing is written then)."""
        fingerprint = questions.fingerprint_of(kind, facts)
        receipts = {"question": what, "step": step, "run": self.log.run_id, "diff": diff, "proposed": proposed,
                    "as the person had it": as_set}
        if self.as_of is None and not isinstance(self.log, ReadOnlyLog):
            answer = questions.ask(self.root, self.log.run_id, kind, fingerprint, what, receipts, topic=about)
        else:
            answer = questions.answer_for(self.root, fingerprint) or questions.Answer("", questions.AWAITING, "")
        self.questions.append({"ask": answer.ask or None, "kind": kind, "fate": answer.fate, "step": step,
                               "about": about, "what": what, "diff": diff, "proposed": proposed})
        return answer

    def _selections(self) -> dict[str, testinputs.Selection]:
        """For each check whose inputs the baseline probe recorded, the tests its final run leaves
        out (vacant.attribute.testinputs); a check without a usable record runs whole."""
        if self.contract is None or self.timeline.last == 0:
            return {}
        import os

        start = next(record for record in self.view.records if record["type"] == "run_start")
        site = self.checks.site
        live = site.unrecorded if site is not None else ()
        chosen = {}
        for check, _guard in self.contract.all_checks():
            record = testinputs.load(self.log.run_dir, check.name, check.command, start["baseline"])
            if record is None:
                self._related(check, start["baseline"], live, chosen)
                continue
            try:
                chosen[check.name] = testinputs.select(record, self.timeline.states[0],
                                                       self.timeline.states[self.timeline.last], os.environ,
                                                       self.root, live)
            except (ValueError, TypeError, OSError):
                continue  # a record that does not hold together: the check runs whole
            if testinputs.env_key(os.environ) == record.env and testinputs.host_unchanged(record):
                # the probe's whole run answers on state 0 (the same environment, the same host files)
                self.checks.baseline[check.name] = {test.id: test.outcome or "" for test in record.tests}
        return chosen

    def _related(self, check: Any, baseline: str, live: tuple[str, ...],
                 chosen: dict[str, testinputs.Selection]) -> None:
        """A jest or vitest check's selection by its runner's related tests (vacant.attribute.relatedtests)."""
        import os

        record = relatedtests.load(self.log.run_dir, check.name, check.command, baseline)
        if record is None:
            return
        read = relatedtests.reader(self.checks.scratch.at(self.timeline.last))
        try:
            chosen[check.name] = relatedtests.select(record, self.timeline.states[0],
                                                     self.timeline.states[self.timeline.last], os.environ,
                                                     self.root, live, read)
        except (ValueError, TypeError, OSError):
            return
        self.checks.recorded[check.name] = record.tests
        if testinputs.env_key(os.environ) == record.env and record.stamps_hold(self.root, os.environ, live):
            self.checks.baseline[check.name] = dict(record.tests)

    def _site(self, scratch_dir: Path) -> Site | None:
        """Each state checked as if it were the workspace: the scratch at the workspace's own path,
        behind the wall, with the live paths no state records (ignored, excluded) over it."""
        unrecorded = unrecorded_paths(self.root, leaves_out(self.root))
        if unrecorded is None:
            self.unfaithful = "the workspace holds too many paths its record leaves out to show them over a state"
            unrecorded = ()
        site = site_for(self.root, scratch_dir, unrecorded)
        self.unwalled_why = None if site is not None else sandbox.usable()
        return site

    def _vacuous(self, needed_now: bool) -> list[str]:
        """The baseline probe's verdict; when it has not landed yet and a green end hangs on it,
        the checks run on the baseline here (the replay's state 0)."""
        known = probe.result(self.log.run_dir)
        if known is not None or not needed_now or self.contract is None:
            return known or []
        return [check.name for check in self.contract.check if self.check_at(check, 0).passed]

    def _final_findings(self) -> tuple[list[dict[str, Any]], list[tuple[Finding, str | None]]]:
        checks, findings = [], []
        for check, guard in (self.contract.all_checks() if self.contract else []):  # guards first, then checks
            result = self._final_run(check, guard)
            if result is None:
                continue
            self.log.emit("check", name=check.name, passed=result.passed, exit_code=result.exit_code,
                          seconds=round(result.seconds, 3), state=self.timeline.last)
            checks.append({"name": check.name, "kind": "guard" if guard else "check", "passed": result.passed,
                           "exit_code": result.exit_code, "seconds": round(result.seconds, 3),
                           "timed_out": result.timed_out})
            findings += [(finding, None) for finding in result.findings]
        for flag, finding in self._flags():
            findings.append((finding, getattr(flag, "text", None)))
        for finding, _ in findings:
            self.log.emit("finding", id=finding.id, source=finding.source, name=finding.name, path=finding.path,
                          line=finding.line)
        self._group_failing_tests([finding for finding, _ in findings])
        return checks, findings

    def _final_run(self, check: Any, guard: bool) -> Any:
        """The check on the final state within what is left of the budget (never more than its own
        timeout); None when the budget left it no time or cut it: left out, not a failure."""
        kind = "guard" if guard else "check"
        chosen = self.checks.selections.get(check.name)
        # the tests this run was to run, when known (a related-tests run knows them once it ran)
        tests = list(chosen.why) if chosen is not None and not chosen.skip.related else None
        left = leftout.remaining(self.deadline)
        if left <= 0:
            self.left_out.check(check.name, kind, "was not run (no time was left)", tests)
            return None
        if left >= check.timeout:
            return self.check_at(check, self.timeline.last)
        result = self.check_at(check.model_copy(update={"timeout": left}), self.timeline.last)
        if not result.timed_out or _hung(check, left):
            return result
        self.checks.results.pop((check.name, self.timeline.last, ()), None)  # a cut run answers nothing
        self.left_out.check(check.name, kind, f"was cut at {left:.0f} s, before it finished", tests)
        return None

    def _group_failing_tests(self, findings: list[Finding]) -> None:
        """The failing tests of each check are bisected together (statechecks.StateChecks.selection)."""
        by_check: dict[str, set[str]] = {}
        for finding in findings:
            if finding.source == "check" and finding.test is not None:
                by_check.setdefault(finding.name, set()).add(finding.test)
        self.checks.groups = {name: tuple(sorted(tests)) for name, tests in by_check.items() if len(tests) > 1}
        for name in by_check:
            self.checks.note_final(name)

    def _flags(self) -> list[tuple[Any, Finding]]:
        """Standing flags: on the live workspace at a Stop; on the recorded final state (and only
        those filed by then) when a past Stop is reproduced."""
        if self.as_of is None:
            return standing_flags(self.root)
        state = self.scratch.at(self.timeline.last)
        return [(flag, finding) for flag, finding in standing_flags(state, state_root=self.root)
                if _epoch(flag.at) <= self.as_of.at]

    def _grade_one(self, finding: Finding, flag_text: str | None) -> Attribution:
        if finding.env:
            return Attribution(levels.ENV, evidence={"why": "the check's tool is missing; editing code cannot fix it",
                                                     "rerun": self.rerun})
        try:
            presence = self.presence(finding, flag_text)
            with self._part("bisection"):
                flip = find_flip(presence, self.timeline.last, self.deadline, lambda k: self.later_states(finding, k))
            with self._part("verification"):
                verdict = self._verify(finding, flip)
        except BudgetExceeded:
            return Attribution(levels.NOT_REPLAYED, evidence={"why": f"time budget of {self.budget_s:.0f} s ran out",
                                                              "rerun": self.rerun})
        attribution = attribute_finding(self.view, self.timeline, self.store, finding, flip, self.contract)
        attribution.evidence.update(
            method=flip.method, flaky=flip.flaky, states_evaluated=sorted(flip.evaluated),
            rerun=self.rerun,
        )
        shown = flip.index
        if verdict is not None:
            attribution, shown = at_change.demote(self.view, self.timeline, attribution, flip.index, verdict)
        attribution = self._authored(finding, flag_text, flip, attribution)
        attribution.diff, attribution.changed = at_change.change_diff(self.timeline, self.store, shown,
                                                                      finding.path, finding.line)
        if flip.index is not None:
            self.log.emit("flip", finding=finding.id, step=attribution.flip_step, state=flip.index, method=flip.method)
        return attribution

    def _authored(self, finding: Finding, flag_text: str | None, flip: Flip, attribution: Attribution) -> Attribution:
        """A level that carries consequences stands only on evidence that the flip's step wrote
        the change (vacant.attribute.authorship): else `gap` (someone else's, during the step)
        or `heuristic` (not known), with why."""
        if flip.index is None or attribution.level not in at_change.STRONG:
            return attribution
        found = self.authors.of(flip.index, finding, lambda state: self._status_on(finding, flag_text, state))
        settled = attribution if found is None else authorship.settle(attribution, found)
        if found is not None and found.verdict == authorship.NOT_OWN:  # who else wrote while it ran, as far as known
            settled.evidence["written_by"] = others.written_by(found.step, authorship.not_reproduced(found),
                                                               self.view, self._others())
        if found is not None and found.verdict == authorship.OWN and found.step.kind == "write":
            settled = self._unseen(settled, found.step)
        return self._produced(settled)

    def _unseen(self, attribution: Attribution, step: Step) -> Attribution:
        """A Write's input is the whole file as the agent made it from what it found; where another
        session changed that file after this run last recorded it (its hooks recorded it, this
        run's did not), the input carries the other session's lines as if the Write wrote them:
        `heuristic`, saying so. (A re-run or an Edit's replacements act on this run's own state,
        without those lines, so what they show is the step's own.)"""
        found = others.unseen_before(step, step.changed_paths(), self.view, self._others())
        if found is None:
            return attribution
        why = (f"{found['path']} was changed by {others.describe(found, with_agent=False)} before step "
               f"{step.number} ran, which this run's record does not hold: what the step found there, and so "
               "what it wrote itself, is not known")
        return replace(attribution, level=levels.HEURISTIC, source=None, first_hop=None, final_level=None,
                       evidence={**attribution.evidence, "why": why, "unseen": found})

    def _produced(self, attribution: Attribution) -> Attribution:
        """lineage_internal moved the grade to the step that put the value into a file the flip
        step read: that step's own write must hold the value too (vacant.attribute.authorship
        `wrote_value`), else the value came from someone else's write (`lineage_exact` at the
        flip step) or it is not known (`heuristic`)."""
        hops = attribution.evidence.get("hops") or []
        if attribution.level != levels.LINEAGE_INTERNAL or not hops or not hops[-1].startswith("file:"):
            return attribution
        path = hops[-1].split(":", 1)[1]
        producer = attribution.step
        flip = self.view.steps.get(attribution.flip_step) if attribution.flip_step is not None else None
        if producer is None or flip is None:
            return attribution
        found = self.authors.wrote_value(producer.number, path, set(attribution.evidence.get("value") or ()))
        return attribution if found is None else authorship.settle_producer(attribution, found, path, flip)

    def _status_on(self, finding: Finding, flag_text: str | None, state: Manifest) -> str:
        """The finding's status on a constructed state (a flag: its text in its file there)."""
        if finding.source != "flag":
            return self.checks.status_of(self._check_named(finding.name), finding, state)
        entry = state.get(finding.path or "")
        content = self.store.get(entry[3]) if entry and entry[0] == "f" and self.store.has(entry[3]) else None
        return PRESENT if content is not None and (flag_text or finding.text).encode() in content else CLEAN

    def _verify(self, finding: Finding, flip: Flip) -> verify.Verdict | None:
        """The counterfactuals (vacant.attribute.verify) for a check finding's flip."""
        if finding.source != "check" or flip.index is None or flip.flaky:
            return None
        check = self._check_named(finding.name)
        own_line = finding.test is None and finding.path in verify.paths(self.timeline, flip.index)
        return verify.verify_flip(self.timeline, flip.index,
                                  lambda index: self.checks.status(check, finding, index),
                                  lambda manifest: self.checks.status_of(check, finding, manifest), own_line)

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
            "test": finding.test,
            "diff": attribution.diff,
            "changed": attribution.changed,
            "blocking": attribution.level not in levels.NON_BLOCKING_LEVELS,
        }


def _rejected(attribution: Attribution, answer: questions.Answer, about: str) -> Attribution:
    """A changed test the person rejected: the test as they set it stands, and its failure on the
    final code goes back to the agent (blocking; nobody's reputation: which step broke the code
    was not replayed)."""
    why = (f"the person rejected the change to test {about} ({answer.ask}): it stands as they set it, and it fails "
           "on the final code")
    return Attribution(levels.HEURISTIC, step=attribution.step, flip_step=attribution.flip_step,
                       evidence={"why": why, "method": "rejected_test", "ask": answer.ask},
                       diff=attribution.diff, changed=attribution.changed)


def _answer(result) -> tuple[bool, frozenset[str]]:
    """What a check run said, to compare two runs: passed, and which findings."""
    return result.passed, frozenset(finding.id for finding in result.findings)


def _said(result) -> str:
    return "pass" if result.passed else f"fail, {len(result.findings)} finding(s)"


def _hung(check: Any, ran_s: float) -> bool:
    """Whether a run cut after `ran_s` seconds ran far past the check's whole run at its probe (twice
    it and 10 s more): then it hangs (the work's doing), a timed-out finding, not a budget's cut."""
    probe = getattr(check, "probe", None)
    return probe is not None and not probe.timed_out and ran_s > 2 * probe.seconds + 10


def _epoch(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return float("inf")  # an unreadable time: not known to predate the Stop


def read_coverage(view: RunView) -> dict[str, str]:
    reads = view.of_type("read")
    steps = [s for s in view.ordered() if not s.out_of_band]
    if not reads and steps:
        return {"state": "none", "why": "no reads were recorded (no hooks saw this run's inputs)"}
    unhooked = [e for e in view.of_type("step_end") if e.get("reconciled")]
    if unhooked:
        return {"state": "partial",
                "why": f"{len(unhooked)} step(s) reached no hook (first: step {unhooked[0]['step']}; the daemon was down?): "
                       "found in the transcript at Stop, their reads were not recorded"}
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
TEST_LINE_WIDTH = 260  # a test's id, its assert line and the change's files come before its words


def no_review_reason(checks: list[dict[str, Any]], vacuous: list[str], findings: list[Any]) -> str | None:
    """Why a green Stop scores nobody: every check it ran already passed before any work."""
    if findings or not checks or not all(check["name"] in vacuous for check in checks):
        return None
    return ("every check already passed at the run's baseline (vacuous), so a green end proves nothing about "
            "the work: no agent cell was reviewed")


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
        elif level == levels.GAP and item["evidence"].get("during_step") is None:  # during a step: not the platform's miss
            platform = next((r["platform"] for r in view.of_type("run_start")), UNKNOWN)
            reputation.count_gap(platform, run, item["id"])
            log.emit("gap", finding=item["id"], platform=platform)
        else:
            continue
        state["consequences"].append(item["id"])
    if main_stop and not report["findings"] and not report["nothing_to_verify"] and not report.get("no_review"):
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


def _origin(item: dict[str, Any], guard: bool = False) -> str:
    """Where the finding came from, for the agent: the step and, when known, the files it changed.
    `guard`: the finding is a guard's (a check that must stay green)."""
    evidence = item.get("evidence") or {}
    files = ", ".join(item.get("changed") or [])
    changed = f", which changed {files}" if files else ""
    if evidence.get("method") == "rejected_test":
        return (f"the person rejected your change to this test at step {item['flip_step']} ({evidence['ask']}): it "
                "stands as they set it; put it back and fix the code")
    if item["level"] == levels.NOT_REPLAYED or evidence.get("method") == "baseline-partial":
        # never "already failing": the replay did not get as far as the baseline (the time budget)
        return "not traced to a step yet (the Stop's time budget ran out before its replay); it must pass before you stop"
    if item["flip_step"] is None and guard and evidence.get("unmasked_by") is None and evidence.get("method") == "baseline":
        return "already failing when the work began; it must pass before you stop"
    if item["level"] == levels.INCOMPLETE:
        return "never passed: the work is not done yet"
    if evidence.get("unmasked_by") is not None:
        culprit = evidence.get("broken_by")
        if culprit is not None:
            return f"broken by step {culprit}{changed}; it showed once step {evidence['unmasked_by']} let the check reach it"
        return f"showed at step {evidence['unmasked_by']}; an earlier change broke it"
    if item["flip_step"] is None:
        return "origin not reproducible"
    if (evidence.get("authorship") or {}).get("verdict") == "unknown":
        return f"appeared during step {item['flip_step']} ({item['tool']}){changed}; not shown to be that step's own write"
    broke = "broke this guard" if guard else "introduced"
    if item["step"] == item["flip_step"]:
        return f"{broke} at step {item['flip_step']} ({item['tool']}){changed}"
    return f"{broke} at step {item['flip_step']}, value from step {item['step']} ({item['tool']})"


def feedback_text(blocking: list[dict[str, Any]], round_number: int, rounds: int,
                  guards: frozenset[str] = frozenset(), contract_error: dict[str, Any] | None = None,
                  waiting: str | list[str] | None = None, not_yours: str | None = None) -> str:
    """At most 12 lines; stable ids and locations; never who the actor is. `guards`: the names of
    the checks that must stay green (a guard that fails was broken by the work, or already was).
    A failing test names the test, its assert line and the change that broke it: the fix belongs
    at that change. `not_yours`: what the workspace holds that this run did not make (another
    session's, the person's), said so the agent neither fixes nor undoes it."""
    waiting = [waiting] if isinstance(waiting, str) else list(waiting or [])
    count = len(blocking) + (1 if contract_error else 0)
    lines = [f"vacant: {count} finding(s) must be fixed before you stop (round {round_number} of {rounds})."]
    if contract_error:
        lines.append(" ".join(f"- {contract_sentence(contract_error)}".split()))  # whole: it names file and line
    room = FEEDBACK_LINES - len(lines) - 1 - len(waiting) - (1 if not_yours else 0)
    blocking, together = _grouped(blocking, guards)
    lines += together
    room -= len(together)
    shown = blocking if len(blocking) <= room else blocking[: room - 1]
    for item in shown:
        where = f"{item['path']}:{item['line']}" if item["path"] and item["line"] else (item["path"] or "(no location)")
        guard = item["source"] == "check" and item["name"] in guards
        kind = "guard" if guard else "check"
        what = f"flag: {item['message']}" if item["source"] == "flag" else f"{kind} {item['name']} says: {item['message']}"
        if item.get("test"):
            lines.append(_trim(f"- [{item['id']}] test {item['test']} fails at {where} ({_origin(item, guard)}) {what}",
                               TEST_LINE_WIDTH))
        else:
            lines.append(_trim(f"- [{item['id']}] {where} ({_origin(item, guard)}) {what}"))
    if len(shown) < len(blocking):
        lines.append(f"- … and {len(blocking) - len(shown)} more (same checks)")
    lines += [_trim(f"- {line}", TEST_LINE_WIDTH * 2) for line in waiting]
    if not_yours:  # another session's or the person's: never the agent's to fix or undo
        lines.append(_trim(f"- Not yours, leave them as they are (the person is told): {not_yours}.", TEST_LINE_WIDTH * 2))
    if together or any(item.get("test") for item in shown):
        lines.append("Fix the change that broke each test (not a test file it did not touch), re-run the failing "
                     "check yourself, then finish; vacant re-checks at stop.")
    else:
        lines.append("Fix each at its location, re-run the failing check yourself, then finish; vacant re-checks at stop.")
    return "\n".join(lines)


GROUP_IDS = 4  # test ids named on a grouped line (the count says how many in all)


def _grouped(blocking: list[dict[str, Any]], guards: frozenset[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Failing tests of one check that broke at the same step by the same change are one line
    naming their ids and how many (the rest stay one line each): many findings, short feedback."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for item in blocking:
        if item.get("test") and item["flip_step"] is not None:
            groups.setdefault((item["name"], item["flip_step"], tuple(item.get("changed") or ())), []).append(item)
    together = [members for members in groups.values() if len(members) > 1]
    grouped_ids = {item["id"] for members in together for item in members}
    lines = []
    for members in together:
        first = members[0]
        guard = first["name"] in guards
        ids = ", ".join(item["test"] for item in members[:GROUP_IDS])
        more = f" and {len(members) - GROUP_IDS} more" if len(members) > GROUP_IDS else ""
        lines.append(_trim(f"- {len(members)} tests of {'guard' if guard else 'check'} {first['name']} fail: "
                           f"{ids}{more} ({_origin(first, guard)}); first: {first['message']}", TEST_LINE_WIDTH))
    return [item for item in blocking if item["id"] not in grouped_ids], lines


def contract_problem(error: ContractError) -> dict[str, Any]:
    """The report's `contract_error`: where vacant.toml could not be read, and why."""
    return {"path": error.path, "line": error.line, "key": error.key, "message": str(error)}


def contract_sentence(problem: dict[str, Any]) -> str:
    return (f"{problem['message']} (the contract cannot be read, so nothing was verified: fix it there without "
            "removing any check or guard, or tell the person)")


def waiting_on_person(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The questions of this Stop nobody has answered yet."""
    return [item for item in report.get("questions") or [] if item["fate"] == questions.AWAITING]


def waiting_lines(report: dict[str, Any], mine: list[dict[str, Any]]) -> list[str]:
    """The agent's lines about its changes the person decides on: changed tests waiting (never
    counted as passing), contract changes waiting or rejected (the contract runs as the person set it)."""
    lines = [line for line in [changed_tests.summary(mine)] if line]
    contract = [item for item in report.get("questions") or [] if item["kind"] == questions.CONTRACT]
    pending = [item for item in contract if item["fate"] == questions.AWAITING]
    rejected = [item for item in contract if item["fate"] == questions.REJECTED]
    if pending:
        lines.append(f"your change to the contract waits on the person ({_asked(pending)}); until they accept it, "
                     "vacant.toml runs as they set it")
    if rejected:
        lines.append(f"the person rejected your change to the contract ({_asked(rejected)}): theirs stands")
    return lines


def budget_lines(report: dict[str, Any]) -> list[str]:
    """The agent's line about what the time budget left out (it runs at the next Stop)."""
    left = report.get("left_out")
    return [left["sentence"]] if left else []


def with_left_out(message: str | None, report: dict[str, Any]) -> str | None:
    """The person's message, with the guards still being probed and what the budget left out."""
    said = [text for text in (leftout.pending_sentence(report.get("pending_guards") or []),
                              (report.get("left_out") or {}).get("sentence")) if text]
    if not said:
        return message
    extra = "; ".join(said)
    if message:
        return f"{message} Also: {extra}."
    return f"vacant: {extra}. See `vacant report {report['run']}`."


def _asked(items: list[dict[str, Any]]) -> str:
    return ", ".join(f"{item['about']}" + (f" at step {item['step']}" if item["step"] is not None else "")
                     + (f", {item['ask']}" if item["ask"] else "") for item in items[:3])


def summary_for_person(report: dict[str, Any], why: str) -> str:
    if report.get("contract_error"):
        return (f"vacant: {report['contract_error']['message']}; nothing was verified at this Stop ({why}). "
                f"See `vacant report {report['run']}`.")
    counts: dict[str, int] = {}
    for item in report["findings"]:
        counts[item["level"]] = counts.get(item["level"], 0) + 1
    parts = ", ".join(f"{n} {level}" for level, n in counts.items())
    during = [item for item in report["findings"] if item["evidence"].get("during_step") is not None]
    if during:
        steps = ", ".join(sorted({str(item["evidence"]["during_step"]) for item in during}))
        writers = sorted({others.describe(item["evidence"].get("written_by") or {}) for item in during})
        parts += (f"; {len(during)} from changes someone other than the agent made during step(s) {steps} "
                  f"(by {'; '.join(writers)}), not sent to the agent")
    waiting = waiting_on_person(report)
    if waiting:
        ids = ", ".join(item["ask"] for item in waiting[:4] if item["ask"])
        parts += f"; {len(waiting)} question(s) wait on you ({ids}: `vacant asks`, then `vacant approve` or `vacant decline`)"
    elsewhere = f"; {others.sentence(report['workspace'])}" if report.get("workspace") else ""
    return (f"vacant: {len(report['findings'])} finding(s) left ({parts}); {why}{elsewhere}. "
            f"See `vacant report {report['run']}`.")


def _next_stop(run_dir: Path) -> int:
    return len(list((run_dir / "reports").glob("*.json"))) + 1


def save_report(run_dir: Path, report: dict[str, Any]) -> None:
    """Each Stop's report is kept (`reports/0001.json`, …); `report.json` is the latest."""
    history = run_dir / "reports"
    history.mkdir(exist_ok=True)
    number = _next_stop(run_dir)
    report["stop"] = number
    text = json.dumps(report, indent=1)
    (history / f"{number:04d}.json").write_text(text)
    (run_dir / "report.json").write_text(text)
    import hashlib

    StepLog(run_dir).emit("report_saved", stop=number, sha256=hashlib.sha256(text.encode()).hexdigest())


def stop(root: Path, run_dir: Path, agent_id: str | None = None, budget_s: float | None = None,
         rounds: int | None = None) -> Outcome:
    """The whole Stop: replay and grade, consequences, report, and whether the agent may stop.
    `rounds` overrides the contract's round budget (`vacant do --rounds`)."""
    try:
        contract, problem = load_contract(root), None
    except ContractError as error:  # never a green Stop: it blocks (or reports) naming the file and line
        contract, problem = None, contract_problem(error)
    log = StepLog(run_dir)
    pipeline = Pipeline(root, run_dir, contract, budget_s, stop_number=_next_stop(run_dir))
    if agent_id is not None and not any(s.changes for s in pipeline.view.ordered() if s.agent_id == agent_id):
        return Outcome({}, [], None, None)  # a sub-agent that changed nothing cannot have introduced a finding
    report = pipeline.run()
    report["contract_error"] = problem
    if problem:
        report["nothing_to_verify"] = False
        log.emit("contract_error", path=problem["path"], line=problem["line"], key=problem["key"],
                 message=problem["message"])
    with children.deferred():  # reviews, round count and report land together, or an interrupt comes first
        return _conclude(root, run_dir, log, pipeline, report, contract, problem, agent_id, rounds)


def _conclude(root: Path, run_dir: Path, log: StepLog, pipeline: Pipeline, report: dict[str, Any],
              contract: Contract | None, problem: dict[str, Any] | None, agent_id: str | None,
              rounds: int | None) -> Outcome:
    state = _load_stop_state(run_dir)
    apply_consequences(log, pipeline.view, report, state, main_stop=agent_id is None and problem is None)
    if rounds is None:
        rounds = contract.stop.rounds if contract else (rounds_hint(root) if problem else 3)
    mine = [f for f in report["findings"] if agent_id is None or f["agent_id"] == agent_id]
    blocking = [f for f in mine if f["blocking"]]
    guards = frozenset(c["name"] for c in report["checks"] if c["kind"] == "guard")
    if agent_id is not None:
        problem = None  # the main agent's Stop blocks on the contract; a sub-agent's rounds stay its own
    round_key = agent_id or "main"
    used = state["rounds"].get(round_key, 0)
    feedback = system_message = None
    workspace = report.get("workspace")
    elsewhere = others.sentence(workspace) if workspace else None
    if (blocking or problem) and used < rounds:
        used += 1
        state["rounds"][round_key] = used
        feedback = feedback_text(blocking, used, rounds, guards, problem, waiting_lines(report, mine) + budget_lines(report),
                                 not_yours=others.sentence(workspace, for_agent=True) if workspace else None)
        log.emit("feedback", text=feedback, round=used, rounds=rounds, agent_id=agent_id)
    elif blocking or problem:
        spent = "report only: no feedback rounds (`[stop] rounds = 0`)" if rounds == 0 \
            else f"the round budget ({rounds}) is spent"
        system_message = summary_for_person(report, spent)
    elif mine or waiting_on_person(report):
        system_message = summary_for_person(report, "none of them can be fixed by editing code "
                                                    "(env/gap/record, or changes waiting on the person)")
    elif elsewhere:
        system_message = f"vacant: this run's checks pass on its own work, but {elsewhere}. See `vacant report {report['run']}`."
    if feedback is None:
        system_message = with_left_out(system_message, report)
    report.update(round=used, rounds=rounds, decision="block" if feedback else "stop", agent_id=agent_id)
    for item in report["findings"]:
        log.emit("attribution", finding=item["id"], level=item["level"], step=item["step"],
                 lineage_source=item["lineage_source"], rerun=item["evidence"].get("rerun"))
    save_report(run_dir, report)
    state["answers"] = {"key": pipeline.answers_key(), "stop": report["stop"]}
    _save_stop_state(run_dir, state)
    return Outcome(report, blocking, feedback, system_message)
