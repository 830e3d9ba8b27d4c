"""`python -m unittest` without pytest (issue 21): vacant's reporter makes it write JUnit XML, so each
failing test is its own finding, keyed `unittest::MODULE.CLASS::METHOD` and located at its assert
line; replay re-runs that test alone (unittest's own output says how many ran), and a module that
fails to load is one error finding. Through the real unittest and the real Stop pipeline."""

from __future__ import annotations

import sys
import textwrap

import pytest
from step_histories import record_steps

from vacant.attribute.stop import stop
from vacant.policy.contract.checks import run_check

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]

LIB = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = textwrap.dedent('''\
    import unittest

    import lib


    class LibTests(unittest.TestCase):
        def test_add(self):
            self.assertEqual(lib.add(2, 3), 5)

        def test_mul(self):
            for n in range(3):
                with self.subTest(n=n):
                    self.assertEqual(lib.mul(n, 1), n)


    class OtherTests(unittest.TestCase):
        def test_other(self):
            self.assertTrue(True)
    ''')
COMMAND = f"{sys.executable} -m unittest tests.test_lib"


@pytest.fixture
def ws_files():
    return {"lib.py": LIB, "tests/__init__.py": "", "tests/test_lib.py": TESTS, "README.md": "a library\n",
            "vacant.toml": f'[[guard]]\nname = "suite"\ncommand = "{COMMAND}"\n'}


class Check:
    name, command, timeout, junit = "suite", COMMAND, 60, None


def test_each_failing_test_is_its_own_finding_on_the_step_that_broke_it(ws):
    steps = [{"README.md": f"v{n}\n"} for n in range(4)] + [{"lib.py": LIB.replace("a + b", "a - b")}] \
        + [{"README.md": f"w{n}\n"} for n in range(3)] + [{"lib.py": LIB.replace("a + b", "a - b").replace("a * b", "a + b")}]
    outcome = stop(ws, record_steps(ws, steps))
    by_test = {f["test"]: f for f in outcome.report["findings"]}
    assert sorted(by_test) == ["unittest::tests.test_lib.LibTests::test_add", "unittest::tests.test_lib.LibTests::test_mul"]
    add, mul = by_test["unittest::tests.test_lib.LibTests::test_add"], by_test["unittest::tests.test_lib.LibTests::test_mul"]
    assert (add["path"], add["line"], add["text"].strip()) == ("tests/test_lib.py", 8, "self.assertEqual(lib.add(2, 3), 5)")
    assert (add["level"], add["flip_step"], add["changed"]) == ("provable", 5, ["lib.py"])
    assert (mul["level"], mul["flip_step"], mul["path"], mul["line"]) == ("provable", 9, "tests/test_lib.py", 13)
    assert "test unittest::tests.test_lib.LibTests::test_add fails at tests/test_lib.py:8" in outcome.feedback


def test_a_selected_run_runs_only_that_test(ws):
    (ws / "lib.py").write_text(LIB.replace("a + b", "a - b"))
    result = run_check(Check(), ws, select=("unittest::tests.test_lib.LibTests::test_add",))
    assert result.tests == {"unittest::tests.test_lib.LibTests::test_add": "failed"}
    assert "Ran 1 test" in result.output and result.reads is not None and "lib.py" in result.reads.files
    whole = run_check(Check(), ws)
    assert "Ran 3 tests" in whole.output and whole.tests["unittest::tests.test_lib.OtherTests::test_other"] == "passed"
    assert not list(ws.rglob("sitecustomize.py")), "the reporter never lands in the workspace"


def test_a_module_that_does_not_load_is_one_error_finding(ws):
    (ws / "tests" / "test_lib.py").write_text(TESTS + "\ndef broken(:\n")

    class Discover(Check):
        command = f"{sys.executable} -m unittest discover -s tests -t ."
    result = run_check(Discover(), ws)
    [finding] = result.findings
    assert finding.test == "unittest::tests.test_lib" and finding.message.startswith("error:")
    named = run_check(Check(), ws)  # a named module that does not load stops unittest before any test:
    [finding] = named.findings  # no test ran, so the traceback's location answers
    assert (finding.test, finding.path, finding.line) == (None, "tests/test_lib.py", 20)


def test_a_sitecustomize_the_reporter_shadows_still_runs(ws, tmp_path, monkeypatch):
    own = tmp_path / "site"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import os\nopen(os.environ['MARK_FILE'], 'w').write('ran')\n")
    mark = tmp_path / "mark"
    monkeypatch.setenv("PYTHONPATH", str(own))
    monkeypatch.setenv("MARK_FILE", str(mark))
    result = run_check(Check(), ws)
    assert result.passed and len(result.tests) == 3  # the reporter ran
    assert mark.read_text() == "ran"  # and so did the project's own
