"""A small generated pytest project with one guard (its suite), the code broken and the guard's
tests weakened in each way issue 45 names: shared by the changed-test and question tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from vacant.core.locations import mark_installed

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


def the_question(report: dict, step: int) -> dict:
    """The one `changed_test` finding a weakened guard makes: the guard as the run left it green,
    the question for the person (never blocking) naming the step that changed the test, its diff."""
    assert [check["passed"] for check in report["checks"]] == [True], report["checks"]  # as the run left it
    questions = [f for f in report["findings"] if f["level"] == "changed_test"]
    assert len(questions) == 1, report["findings"]
    (question,) = questions
    assert question["step"] == step and not question["blocking"], question
    assert question["diff"] and question["changed"], question
    return question
