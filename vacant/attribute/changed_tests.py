"""The guard as the person set it: tests the agent changed so that they pass.

A guard is its command and the tests it ran at the baseline. When the run changed a guard's test
inputs (a test file deleted or edited, a skip or xfail marker, a fixture or conftest, the runner's
configuration such as pytest's `addopts`, the guard's command in vacant.toml), the Stop also runs
the baseline's guard on a constructed state: the final state with those inputs as they were at
the baseline. A test that fails there but passes (or is gone, or skipped) on the final state was
changed so that it passes. Changing a test can be the task, so it is a question for the person
(level `changed_test`: never blocking, never anyone's reputation), shown with the step that
changed the test and the diff; a test changed together with the code it tests whose old version
still passes is nothing.

What counts as a test input is decided by name (TEST_FILE, TEST_CONFIG): test files of the runners
vacant reads, fixtures, conftest, the runners' configuration files at the top.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from vacant.attribute.at_change import Attribution
from vacant.attribute.replay import Timeline
from vacant.attribute.statechecks import WHOLE, StateChecks
from vacant.core import levels
from vacant.core.findings import Finding
from vacant.policy.contract.checks import CheckResult
from vacant.policy.contract.contract import CONTRACT_FILE, Check, ContractError, parse_contract
from vacant.store.objects import ObjectStore
from vacant.store.run import RunView
from vacant.store.states import Manifest

TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*\.py|[^/]*_test\.py|conftest\.py|[^/]*_test\.go|"
                       r"[^/]*\.(?:test|spec)\.[cm]?[jt]sx?|fixtures?/[^/]+)$|(?:^|/)(?:tests?|__tests__|spec)/")
TEST_CONFIG = frozenset({"pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", "package.json", "jest.config.js",
                         "jest.config.ts", "vitest.config.ts", "vitest.config.js", CONTRACT_FILE})
FAILED = ("failed", "error")
DIFF_LINES = 20


def test_inputs_changed(baseline: Manifest, final: Manifest) -> list[str]:
    """The test inputs whose content differs between the baseline and the final state."""
    paths = set(baseline) | set(final)
    return sorted(path for path in paths if is_test_input(path) and _content(baseline, path) != _content(final, path))


def is_test_input(path: str) -> bool:
    return path in TEST_CONFIG or bool(TEST_FILE.search(path))


def _content(manifest: Manifest, path: str) -> object:
    entry = manifest.get(path)
    return None if entry is None else (entry[0], entry[3], entry[4])


def with_baseline_tests(baseline: Manifest, final: Manifest, changed: list[str]) -> Manifest:
    """The final state with each changed test input as it was at the baseline (absent there: absent)."""
    out = dict(final)
    for path in changed:
        if path in baseline:
            out[path] = baseline[path]
        else:
            out.pop(path, None)
    return _with_parents(out)


def _with_parents(manifest: Manifest) -> Manifest:
    """A restored file's directories, where the final state had removed them too."""
    out = dict(manifest)
    for path in list(manifest):
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            out.setdefault("/".join(parts[:depth]), ["d", 0, 0, None, 0o755])
    return out


def baseline_guards(timeline: Timeline, store: ObjectStore) -> list[Check]:
    """The guards of the contract as it stood at the baseline (none when it did not read)."""
    text = timeline.content(store, 0, CONTRACT_FILE)
    if text is None:
        return []
    try:
        return list(parse_contract(text.decode("utf-8", errors="replace"), CONTRACT_FILE).guards)
    except ContractError:
        return []


def changed_test_findings(checks: StateChecks, view: RunView, timeline: Timeline, store: ObjectStore,
                          final_results: dict[str, CheckResult],
                          accepted: dict[str, Check | None] | None = None) -> list[tuple[Finding, Attribution]]:
    """One `changed_test` finding per test of a baseline guard that fails in its baseline version on
    the final code but passes on the final state (`final_results`: each check's final-state run
    by name; a guard no longer in the contract counts as passing: nothing runs it any more).
    `accepted`: guards whose change the person accepted (vacant.attribute.proposals): as the
    person set them now (None: the person accepted its removal)."""
    baseline, final = timeline.states[0], timeline.states[timeline.last]
    changed = test_inputs_changed(baseline, final)
    found: list[tuple[Finding, Attribution]] = []
    for guard in baseline_guards(timeline, store):
        if accepted and guard.name in accepted:
            person_set = accepted[guard.name]
            if person_set is None:
                continue
            guard = person_set
        now = final_results.get(guard.name)
        command_changed = now is None or now.command != guard.command
        if not changed and not command_changed:
            continue
        as_set = checks.run(guard, None, WHOLE, with_baseline_tests(baseline, final, changed))
        for test, finding in _weakened(guard, as_set, now):
            found.append((finding, _attribution(view, timeline, store, changed, finding, test, command_changed)))
    return found


def _weakened(guard: Check, as_set: CheckResult, now: CheckResult | None) -> list[tuple[str | None, Finding]]:
    """(test id, finding) of each test red as the person set it and green (or gone) as the agent left it."""
    if as_set.passed:
        return []
    outcome_now = (lambda test: "passed") if now is None else (lambda test: now.tests.get(test))
    failing_now = set() if now is None or now.passed else {finding.id for finding in now.findings}
    out = []
    for finding in as_set.findings:
        if finding.test is not None and as_set.tests:
            if outcome_now(finding.test) in FAILED:
                continue
        elif finding.id in failing_now:
            continue
        out.append((finding.test, finding))
    return out


def _attribution(view: RunView, timeline: Timeline, store: ObjectStore, changed: list[str], finding: Finding,
                 test: str | None, command_changed: bool) -> Attribution:
    own = [path for path in changed if finding.path == path] or changed
    index = _last_change(timeline, own)
    step = view.steps.get(timeline.change(index)["step"]) if index is not None else None
    what = f"test {test}" if test else f"the guard {finding.name}"
    why = (f"{what} fails as the person set it (the baseline's version of {', '.join(own[:3])}"
           f"{' and the guard command' if command_changed else ''}) but passes as the run left it: "
           "changed so that it passes? A question for the person (changing a test can be the task)")
    return Attribution(levels.CHANGED_TEST, step=step, flip_step=step.number if step else None,
                       evidence={"why": why}, diff=_diff(timeline, store, own), changed=own)


def _last_change(timeline: Timeline, paths: list[str]) -> int | None:
    for index in range(timeline.last, 0, -1):
        change = timeline.change(index)
        if any(path in change["added"] or path in change["changed"] or path in change["removed"] for path in paths):
            return index
    return None


def _diff(timeline: Timeline, store: ObjectStore, paths: list[str]) -> str | None:
    """Baseline to final, for each changed test input, within DIFF_LINES lines."""
    lines: list[str] = []
    for path in paths:
        before = _text(timeline, store, 0, path)
        after = _text(timeline, store, timeline.last, path)
        lines += list(difflib.unified_diff(before, after, f"a/{path}", f"b/{path}", n=1, lineterm=""))
    return "\n".join(lines[:DIFF_LINES]) or None


def _text(timeline: Timeline, store: ObjectStore, index: int, path: str) -> list[str]:
    data = timeline.content(store, index, path)
    return [] if data is None else data.decode("utf-8", errors="replace").splitlines()


def question_facts(finding: Finding, attribution: Attribution, timeline: Timeline) -> list[Any]:
    """What the person's answer about a changed test is about: the guard, the test, and each changed
    test input as it was at the baseline and as the run left it (another change: another question)."""
    baseline, final = timeline.states[0], timeline.states[timeline.last]
    inputs = [[path, _content(baseline, path), _content(final, path)] for path in sorted(attribution.changed)]
    return [finding.name, finding.test or finding.id, inputs]


def summary(findings: list[dict[str, Any]]) -> str | None:
    """The agent's line about the tests waiting on the person, if any (never counted as green)."""
    waiting = [item.get("test") or item["name"] for item in findings if item["level"] == levels.CHANGED_TEST]
    if not waiting:
        return None
    return (f"{len(waiting)} test(s) you changed wait on the person (as they were at the start they fail on your "
            f"code; not counted as passing): {', '.join(waiting[:4])}")
