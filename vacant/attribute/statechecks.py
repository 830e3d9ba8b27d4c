"""Checks run on reconstructed states, cached, and what one finding's status is on a state.

A failing test is re-checked alone where its runner can select it (vacant.policy.contract.runners); when
the selected run did not report the test at all (a runner that cannot select, a plugin refused),
the whole command answers. A whole run's result answers for every finding of its check, so it is
used first when it is cached.

A selected run is not repeated on a state whose files it read are the same as where it ran
(vacant.attribute.samereads), except when a flaky check is being caught (an uncached re-run).

The final state's whole run of a check leaves out the recorded tests whose inputs are unchanged
since the baseline, where they passed (vacant.attribute.testinputs: `selections`); its result
reports them as passed. A plain jest or vitest check's final run is its runner's related-tests run
instead (vacant.attribute.relatedtests): which recorded tests it reused is known once it ran (each
of a test file it did not reach), and the selection is completed then (`settle`). That run is traced like a selected one: it answers for its failing tests
(each group, each test alone) on every state that agrees with what it read.

Answers known without a run: on the baseline (state 0), tests the baseline probe's whole run
there recorded as passed (`baseline`, from the same record; the same environment and host files). The re-check
that catches a flaky test takes a second run on the same inputs where one exists (a traced run
this state agrees with, other than the one that gave the first answer): two runs that read the
same bytes agree or not exactly as two runs of this state would.

A finding's status on a state is PRESENT, CLEAN (the check passed there, or its runner reported
the finding's test as passed) or UNKNOWN (the check failed for something else and never said
anything about this finding): vacant.attribute.verify tells a masked flip by it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vacant.attribute.replay import Scratch
from vacant.attribute.relatedtests import settle
from vacant.attribute.samereads import SameReads
from vacant.attribute.testinputs import Selection
from vacant.attribute.verify import CLEAN, PRESENT, UNKNOWN
from vacant.core.findings import Finding
from vacant.policy.contract.checks import CheckResult, Site, run_check
from vacant.policy.contract.runners import Skip
from vacant.store.states import Manifest

WHOLE = ()
NO_TESTS_RAN = 5  # pytest's exit code when every test was left out


def status_in(result: CheckResult, finding: Finding) -> str:
    if any(item.id == finding.id for item in result.findings):
        return PRESENT
    if result.passed or (finding.test is not None and result.tests.get(finding.test) == "passed"):
        return CLEAN
    return UNKNOWN


def reports_on(result: CheckResult, finding: Finding) -> bool:
    """Whether a run said anything about the finding (a selected run that never ran the test did
    not; one whose runner could not collect the test's module did: no run can reach the test)."""
    test = finding.test
    return test is None or test in result.tests or any(
        outcome == "error" and (test.startswith(case + ".") or test.startswith(case + "::"))
        for case, outcome in result.tests.items())


@dataclass
class StateChecks:
    scratch: Scratch
    results: dict[tuple[str, int, tuple[str, ...]], CheckResult] = field(default_factory=dict)
    runs: int = 0
    selected_runs: int = 0
    same_reads: SameReads = field(default_factory=SameReads)
    site: Site | None = None  # behind the wall, the scratch shown at the workspace's path (None: unwalled)
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)  # check -> its failing tests, run together
    rerun: dict[tuple[str, int, tuple[str, ...]], CheckResult] = field(default_factory=dict)  # uncached, shared
    constructed: dict[tuple[str, tuple[str, ...], int], CheckResult] = field(default_factory=dict)
    selections: dict[str, Selection] = field(default_factory=dict)  # check -> what its final run leaves out
    baseline: dict[str, dict[str, str]] = field(default_factory=dict)  # check -> test -> outcome on state 0
    final: dict[str, CheckResult] = field(default_factory=dict)  # check -> its final run as run (none reused)
    recorded: dict[str, dict[str, str]] = field(default_factory=dict)  # check -> its related-tests record's tests

    def run(self, check: Any, index: int | None, select: tuple[str, ...] = WHOLE,
            manifest: Manifest | None = None) -> CheckResult:
        directory = self.scratch.at(index) if manifest is None else self.scratch.holding(manifest)
        chosen = self.selections.get(check.name) if index == self.scratch.timeline.last and not select else None
        skip = chosen.skip if chosen is not None and (chosen.skip.tests or chosen.skip.related) else None
        if skip is not None and chosen is not None and skip.tests and not skip.related:
            result, stood = final_run(check, directory, chosen, self.site)
            self.runs += 1 if stood is chosen else 2
            self.selections[check.name] = stood
            self.final[check.name] = result
            return with_reused(result, stood.skip)
        recorded = self.selections.get(check.name)
        ran = recorded.with_setters(select) if select and recorded is not None else select
        result = run_check(check, directory, select=ran, site=self.site, skip=skip)
        if ran != select:
            result = only(result, select)
        self.runs += 1
        self.selected_runs += 1 if select else 0
        if skip is None or chosen is None:
            return result
        if skip.related:  # jest/vitest: what it reused is known once it ran (vacant.attribute.relatedtests)
            if result.timed_out:
                return result
            skip = settle(chosen, self.recorded.get(check.name, {}), result.tests)
        self.final[check.name] = result
        return with_reused(result, skip)

    def note_final(self, check_name: str) -> None:
        """The final state's selected run answers, on every state that agrees with what it read,
        for each selection its failing tests are checked with (it ran each of them)."""
        result = self.final.get(check_name)
        if result is None:
            return
        last = self.scratch.timeline.states[self.scratch.timeline.last]
        asked = {self.groups.get(check_name, ())} | {(test,) for test in result.tests}
        for select in asked:
            if select and all(result.tests.get(test) in ("failed", "error") for test in select):
                self.same_reads.note(check_name, select, last, result, selected=False)

    def at(self, check: Any, index: int, cached: bool = True, select: tuple[str, ...] = WHOLE) -> CheckResult:
        """The check's run on recorded state `index`; `cached=False` re-runs it (to catch a flaky
        check) once per state and selection, that re-run answering every finding that asks."""
        key = (check.name, index, select)
        if cached and key in self.results:
            return self.results[key]
        if not cached and key in self.rerun:
            return self.rerun[key]
        manifest = self.scratch.timeline.states[index]
        known = self._known(check, index, select, manifest) if cached else self._second(key, manifest)
        if known is not None:
            (self.results if cached else self.rerun)[key] = known
            return known
        result = self.run(check, index, select)
        self.same_reads.note(check.name, select, manifest, result)
        if cached or key not in self.results:
            self.results[key] = result
        if not cached:
            self.rerun[key] = result
        return result

    def _known(self, check: Any, index: int, select: tuple[str, ...], manifest: Manifest) -> CheckResult | None:
        """An answer without a run: on the baseline, the selected tests all passed in the probe's
        whole run there; elsewhere, a traced run whose reads this state agrees with."""
        outcomes = self.baseline.get(check.name, {})
        if index == 0 and select and all(outcomes.get(test) == "passed" for test in select):
            return CheckResult(check.name, True, 0, "", 0.0, False, False, tests={test: "passed" for test in select})
        return self.same_reads.find(check.name, select, manifest)

    def _second(self, key: tuple[str, int, tuple[str, ...]], manifest: Manifest) -> CheckResult | None:
        """A re-check answered by another run on the same inputs (a traced run this state agrees
        with, not the one that gave the first answer): two runs agree or not as two runs here would."""
        first = self.results.get(key)
        if first is None or not key[2]:
            return None
        return self.same_reads.other(key[0], key[2], manifest, first)

    def selection(self, check: Any, finding: Finding) -> tuple[str, ...]:
        """What a failing test is checked with: every failing test of its check at once (one run
        per state answers them all, so a group splits only where its tests' answers differ), or
        the test alone when it is not in the group."""
        group = self.groups.get(check.name, ())
        return group if finding.test in group else (finding.test,) if finding.test is not None else WHOLE

    def status(self, check: Any, finding: Finding, index: int, cached: bool = True) -> str:
        whole = self.results.get((check.name, index, WHOLE)) if cached else None
        if whole is not None:
            return status_in(whole, finding)
        if finding.test is not None:
            for select in dict.fromkeys((self.selection(check, finding), (finding.test,))):
                alone = self.at(check, index, cached, select)
                if reports_on(alone, finding):  # the group's run may not reach it (another module broken)
                    return status_in(alone, finding)
        return status_in(self.at(check, index, cached), finding)

    def status_of(self, check: Any, finding: Finding, manifest: Manifest) -> str:
        """On a constructed state (one run per check, selection and state: the findings of a group
        that ask about the same constructed state share it)."""
        if finding.test is not None:
            for select in dict.fromkeys((self.selection(check, finding), (finding.test,))):
                alone = self._on(check, select, manifest)
                if reports_on(alone, finding):
                    return status_in(alone, finding)
        return status_in(self._on(check, WHOLE, manifest), finding)

    def _on(self, check: Any, select: tuple[str, ...], manifest: Manifest) -> CheckResult:
        key = (check.name, select, _fingerprint(manifest))
        known = self.constructed.get(key) or (self.same_reads.find(check.name, select, manifest) if select else None)
        if known is None:
            known = self.run(check, None, select, manifest)
            if select:
                self.same_reads.note(check.name, select, manifest, known)
        self.constructed[key] = known
        return known


def final_run(check: Any, directory: Path, chosen: Selection, site: Site | None) -> tuple[CheckResult, Selection]:
    """The final state's run leaving out the tests `chosen` reuses, recording what its own tests
    and test files did to the process: where one whose inputs changed changed it (Selection.
    overturned), the reused answers do not stand and the check runs whole. The run as run, and the
    selection that stood."""
    result = run_check(check, directory, site=site, skip=chosen.skip, inputs=True)
    why = None if result.timed_out else chosen.overturned(result.inputs)
    if why is None:
        return result, chosen
    return run_check(check, directory, site=site), chosen.all_run(why)


def only(result: CheckResult, select: tuple[str, ...]) -> CheckResult:
    """A run of `select` with the tests that set the process before them, as a run of `select`:
    what the setters did is not asked here (the final run answers for them)."""
    wanted = set(select)
    tests = {test: outcome for test, outcome in result.tests.items() if test in wanted}
    findings = [finding for finding in result.findings if finding.test is None or finding.test in wanted]
    passed = result.passed or (len(tests) == len(wanted) and all(outcome in ("passed", "skipped")
                                                                 for outcome in tests.values()))
    return replace(result, tests=tests, findings=findings, passed=passed)


def with_reused(result: CheckResult, skip: Skip) -> CheckResult:
    """A run that left tests out, answering for them: each reused test passed (its inputs are
    those it passed on); a run where nothing was left to run passed."""
    tests = {**{test: "passed" for test in skip.tests}, **result.tests}
    nothing_ran = result.exit_code == NO_TESTS_RAN and not any(
        outcome in ("failed", "error") for outcome in result.tests.values())
    if nothing_ran:
        return replace(result, passed=True, findings=[], tests=tests)
    return replace(result, tests=tests)


def _fingerprint(manifest: Manifest) -> int:
    """A constructed state's identity (its paths and contents)."""
    return hash(tuple(sorted((path, entry[0], entry[3], entry[4]) for path, entry in manifest.items())))
