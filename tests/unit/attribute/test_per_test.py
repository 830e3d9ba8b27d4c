"""One finding per failing test, through the real pytest and node runners and the real Stop
pipeline: keyed by test id, located at the assert line, re-checked alone during replay, and the
feedback names the change that broke it (its file and diff), never only the test file."""

from __future__ import annotations

import sys
import textwrap

import pytest
from step_histories import record_steps

from vacant.attribute import report_shape
from vacant.attribute.stop import stop
from vacant.show import markdown

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]

LIB = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = textwrap.dedent('''\
    import sys, os
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import lib


    def test_add():
        assert lib.add(2, 3) == 5


    def test_mul():
        assert lib.mul(2, 3) == 6


    def test_other():
        assert True
    ''')
# the test venv's own python; no third-party plugins (the suite's own ones cost seconds per run)
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"
PYTEST_TOML = f'[[check]]\nname = "suite"\ncommand = "{PYTEST} tests"\n'


@pytest.fixture
def ws_files():
    return {"lib.py": LIB, "tests/test_lib.py": TESTS, "vacant.toml": PYTEST_TOML, "README.md": "a library\n"}


def test_a_broken_test_is_its_own_finding_at_its_assert_line_blamed_on_the_source_change(ws):
    run_dir = record_steps(ws, [{"README.md": "a library, documented\n"},
                                {"lib.py": LIB.replace("a + b", "a - b")},
                                {"NOTES.md": "done\n"}])
    outcome = stop(ws, run_dir)
    [finding] = outcome.report["findings"]
    assert finding["test"] == "pytest::tests.test_lib::test_add"
    assert (finding["path"], finding["line"], finding["text"].strip()) == ("tests/test_lib.py", 7,
                                                                          "assert lib.add(2, 3) == 5")
    assert (finding["level"], finding["flip_step"], finding["step"]) == ("provable", 2, 2)
    assert finding["changed"] == ["lib.py"]
    assert "-    return a + b" in finding["diff"] and "+    return a - b" in finding["diff"]
    assert "test pytest::tests.test_lib::test_add fails at tests/test_lib.py:7" in outcome.feedback
    assert "which changed lib.py" in outcome.feedback and "not a test file" in outcome.feedback
    assert report_shape.problems(outcome.report) == []
    shown = markdown.render(outcome.report)
    assert markdown.cell("test pytest::tests.test_lib::test_add (the change touched lib.py) fails") in shown
    assert "+    return a - b" in shown


def test_two_tests_broken_by_two_steps_are_two_findings_each_on_its_step(ws):
    run_dir = record_steps(ws, [{"lib.py": LIB.replace("a + b", "a - b")},
                                {"README.md": "x\n"},
                                {"lib.py": LIB.replace("a + b", "a - b").replace("a * b", "a ** b")}])
    report = stop(ws, run_dir).report
    by_test = {f["test"]: f for f in report["findings"]}
    assert set(by_test) == {"pytest::tests.test_lib::test_add", "pytest::tests.test_lib::test_mul"}
    assert by_test["pytest::tests.test_lib::test_add"]["flip_step"] == 1
    assert by_test["pytest::tests.test_lib::test_mul"]["flip_step"] == 3
    assert all(f["level"] == "provable" for f in report["findings"])


def test_replay_runs_only_the_failing_test(ws, monkeypatch):
    """Every replay run after the final state selects the one failing test (pytest reports only it)."""
    from vacant.attribute import statechecks

    seen = []
    real = statechecks.run_check

    def spy(check, directory, select=(), **walled):
        result = real(check, directory, select=select, **walled)
        seen.append((select, sorted(result.tests)))
        return result
    monkeypatch.setattr(statechecks, "run_check", spy)
    steps = [{"README.md": f"v{n}\n"} for n in range(6)] + [{"lib.py": LIB.replace("a * b", "a + b")}] \
        + [{"README.md": f"w{n}\n"} for n in range(3)]
    report = stop(ws, record_steps(ws, steps)).report
    [finding] = report["findings"]
    assert finding["flip_step"] == 7
    whole, *replay = seen
    assert whole[0] == () and len(whole[1]) == 3
    assert replay and all(select == (finding["test"],) and tests == [finding["test"]] for select, tests in replay)


NODE_TEST = textwrap.dedent('''\
    const test = require('node:test');
    const assert = require('node:assert');
    const lib = require('../lib.js');
    test('adds', () => { assert.strictEqual(lib.add(2, 3), 5); });
    test.describe('group', () => {
      test.it('muls', () => { assert.strictEqual(lib.mul(2, 3), 6); });
    });
    ''')
NODE_LIB = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n"


def test_node_runner_junit_named_in_the_contract(ws):
    (ws / "vacant.toml").write_text(
        '[[check]]\nname = "node"\njunit = "out/junit.xml"\n'
        'command = "mkdir -p out && node --test --test-reporter=junit --test-reporter-destination=out/junit.xml test/"\n')
    (ws / "test").mkdir()
    (ws / "test" / "lib.test.js").write_text(NODE_TEST)
    (ws / "lib.js").write_text(NODE_LIB)
    run_dir = record_steps(ws, [{"README.md": "b\n"}, {"lib.js": NODE_LIB.replace("a * b", "a - b")}, {"README.md": "c\n"}])
    outcome = stop(ws, run_dir)
    [finding] = outcome.report["findings"]
    assert finding["test"] == "group::test::muls"
    assert (finding["path"], finding["line"]) == ("test/lib.test.js", 6)
    assert (finding["level"], finding["flip_step"], finding["changed"]) == ("provable", 2, ["lib.js"])


def test_a_symlinked_file_is_reported_by_the_name_the_check_printed(ws):
    (ws / "real.txt").write_text("ok\n")
    (ws / "link.txt").symlink_to("real.txt")
    (ws / "vacant.toml").write_text(
        '[[check]]\nname = "grep"\ncommand = "! grep -Hn bad link.txt"\n')
    run_dir = record_steps(ws, [{"real.txt": "bad\n"}])
    [finding] = stop(ws, run_dir).report["findings"]
    assert finding["path"] == "link.txt"
