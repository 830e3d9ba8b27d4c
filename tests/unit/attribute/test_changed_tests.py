"""The guard as the person set it (vacant/attribute/changed_tests.py), on a real pytest suite: the run
breaks the code, then weakens the guard's tests so that it passes; each way of weakening is a
`changed_test` finding for the person, naming the step that changed the test. A test changed with
the code it tests whose old version still passes is nothing, and so is a run that left the tests
alone."""

from __future__ import annotations

import pytest
from step_histories import record_steps
from weakened_suite import BROKEN, LIB, TESTS, WEAKENINGS, project, the_question

from vacant.attribute.stop import Pipeline, feedback_text
from vacant.attribute import changed_tests
from vacant.policy.contract.contract import load_contract

pytestmark = [pytest.mark.slow, pytest.mark.disk_tmp]


@pytest.mark.parametrize("weakening", sorted(WEAKENINGS))
def test_each_weakened_guard_is_a_question_for_the_person_with_its_step(tmp_path, weakening):
    root = project(tmp_path)
    steps = [{"NOTES.md": "n\n"}, {"lib.py": BROKEN}, WEAKENINGS[weakening]]
    report = Pipeline(root, record_steps(root, steps), load_contract(root), budget_s=600).run()
    question = the_question(report, step=3)
    assert "test_add" in (question["test"] or "")
    line = changed_tests.summary(report["findings"])
    assert line and "wait on the person" in line
    assert "wait on the person" in feedback_text([], 1, 3, waiting=line)


def test_a_test_changed_with_its_code_whose_old_version_still_passes_is_nothing(tmp_path):
    root = project(tmp_path)
    extra = TESTS + "\n\ndef test_add_more():\n    assert add(1, 1) == 2\n"
    steps = [{"lib.py": LIB + "\n\ndef sub(a, b):\n    return a - b\n"}, {"tests/test_lib.py": extra}]
    report = Pipeline(root, record_steps(root, steps), load_contract(root), budget_s=600).run()
    assert report["findings"] == []


def test_a_run_that_left_the_tests_alone_runs_nothing_more(tmp_path):
    root = project(tmp_path)
    report = Pipeline(root, record_steps(root, [{"NOTES.md": "n\n"}]), load_contract(root), budget_s=600).run()
    assert report["findings"] == [] and report["check_runs"] == 1  # the final state only


def test_a_broken_guard_that_stays_broken_is_not_a_question(tmp_path):
    """The agent broke the code and touched the test without hiding the failure: the guard's own
    finding stands, blocking; nothing is asked of the person."""
    root = project(tmp_path)
    steps = [{"lib.py": BROKEN}, {"tests/test_lib.py": TESTS + "\n# reviewed\n"}]
    report = Pipeline(root, record_steps(root, steps), load_contract(root), budget_s=600).run()
    assert [f["level"] for f in report["findings"] if f["level"] == "changed_test"] == []
    assert [f["blocking"] for f in report["findings"]] == [True]
