"""The guard as the person set it (vacant/attribute/changed_tests.py), on a real pytest suite: the run
breaks the code, then weakens the guard's tests so that it passes; each way of weakening is a
`changed_test` finding for the person, naming the step that changed the test. A test changed with
the code it tests whose old version still passes is nothing, and so is a run that left the tests
alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from step_histories import record_steps

from vacant.attribute.stop import Pipeline, feedback_text
from vacant.attribute import changed_tests
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract

pytestmark = [pytest.mark.slow, pytest.mark.disk_tmp]

LIB = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = ("from lib import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
         "def test_mul():\n    assert mul(2, 3) == 6\n")
GUARD = f'[[guard]]\nname = "suite"\ncommand = "{sys.executable} -m pytest -q -p no:cacheprovider tests"\n'
BROKEN = LIB.replace("a + b", "a - b")

WEAKENINGS = {
    "assertion rewritten": {"tests/test_lib.py": TESTS.replace("add(2, 3) == 5", "add(2, 3) == -1")},
    "test deleted": {"tests/test_lib.py": TESTS.split("def test_add")[0] + "def test_mul" + TESTS.split("def test_mul")[1]},
    "skip marker": {"tests/test_lib.py": "import pytest\n" + TESTS.replace("def test_add", "@pytest.mark.skip\ndef test_add")},
    "-k in addopts": {"pytest.ini": "[pytest]\naddopts = -k 'not test_add'\n"},
    "renamed out of collection": {"tests/test_lib.py": TESTS.replace("def test_add", "def check_add")},
    "guard command narrowed": {"vacant.toml": GUARD.replace(' tests"', ' tests -k test_mul"')},
}


def project(base: Path) -> Path:
    root = base / "ws"
    (root / "tests").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / "lib.py").write_text(LIB)
    (root / "tests" / "test_lib.py").write_text(TESTS)
    (root / "vacant.toml").write_text(GUARD)
    return root


@pytest.mark.parametrize("weakening", sorted(WEAKENINGS))
def test_each_weakened_guard_is_a_question_for_the_person_with_its_step(tmp_path, weakening):
    root = project(tmp_path)
    steps = [{"NOTES.md": "n\n"}, {"lib.py": BROKEN}, WEAKENINGS[weakening]]
    report = Pipeline(root, record_steps(root, steps), load_contract(root), budget_s=600).run()
    assert [check["passed"] for check in report["checks"]] == [True]  # the guard as the run left it: green
    questions = [f for f in report["findings"] if f["level"] == "changed_test"]
    assert len(questions) == 1, report["findings"]
    (question,) = questions
    assert question["step"] == 3 and not question["blocking"]
    assert "test_add" in (question["test"] or "") or weakening == "guard command narrowed"
    assert question["diff"] and question["changed"]
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
