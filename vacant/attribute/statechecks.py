"""Checks run on reconstructed states, cached, and what one finding's status is on a state.

A failing test is re-checked alone where its runner can select it (vacant.policy.runners); when
the selected run did not report the test at all (a runner that cannot select, a plugin refused),
the whole command answers. A whole run's result answers for every finding of its check, so it is
used first when it is cached.

A finding's status on a state is PRESENT, CLEAN (the check passed there, or its runner reported
the finding's test as passed) or UNKNOWN (the check failed for something else and never said
anything about this finding): vacant.attribute.verify tells a masked flip by it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vacant.attribute.replay import Scratch
from vacant.attribute.verify import CLEAN, PRESENT, UNKNOWN
from vacant.core.findings import Finding
from vacant.policy.checks import CheckResult, run_check
from vacant.store.states import Manifest

WHOLE = ()


def status_in(result: CheckResult, finding: Finding) -> str:
    if any(item.id == finding.id for item in result.findings):
        return PRESENT
    if result.passed or (finding.test is not None and result.tests.get(finding.test) == "passed"):
        return CLEAN
    return UNKNOWN


def reports_on(result: CheckResult, finding: Finding) -> bool:
    """Whether a run said anything about the finding (a selected run that never ran the test did not)."""
    return finding.test is None or finding.test in result.tests


@dataclass
class StateChecks:
    scratch: Scratch
    results: dict[tuple[str, int, tuple[str, ...]], CheckResult] = field(default_factory=dict)
    runs: int = 0
    selected_runs: int = 0

    def run(self, check: Any, index: int | None, select: tuple[str, ...] = WHOLE,
            manifest: Manifest | None = None) -> CheckResult:
        directory = self.scratch.at(index) if manifest is None else self.scratch.holding(manifest)
        result = run_check(check, directory, select=select)
        self.runs += 1
        self.selected_runs += 1 if select else 0
        return result

    def at(self, check: Any, index: int, cached: bool = True, select: tuple[str, ...] = WHOLE) -> CheckResult:
        key = (check.name, index, select)
        if cached and key in self.results:
            return self.results[key]
        result = self.run(check, index, select)
        if cached or key not in self.results:
            self.results[key] = result
        return result

    def status(self, check: Any, finding: Finding, index: int, cached: bool = True) -> str:
        whole = self.results.get((check.name, index, WHOLE)) if cached else None
        if whole is not None:
            return status_in(whole, finding)
        if finding.test is not None:
            alone = self.at(check, index, cached, (finding.test,))
            if reports_on(alone, finding):
                return status_in(alone, finding)
        return status_in(self.at(check, index, cached), finding)

    def status_of(self, check: Any, finding: Finding, manifest: Manifest) -> str:
        """On a constructed state (never cached)."""
        if finding.test is not None:
            alone = self.run(check, None, (finding.test,), manifest)
            if reports_on(alone, finding):
                return status_in(alone, finding)
        return status_in(self.run(check, None, WHOLE, manifest), finding)
