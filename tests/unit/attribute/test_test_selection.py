"""Only the tests a change can affect (issue 43), and never a missed failure: over generated suites
and generated change histories, the final state's run that leaves out the tests whose recorded
inputs are unchanged (vacant.attribute.testinputs) fails exactly the tests a whole run fails.

The suite is real pytest on real files: modules in a package (`pkg/mN.py`, each `VALUE = n`), a
shared module that re-exports some of them and caches a data file once per process
(`functools.cache`, so only the first test to call it reads it), data files read by `open()`, a
conftest whose session fixture reads a data file, test files whose tests each assert on one of
those, tests that read a data file through a child process (unknown inputs), a test file whose
import sets a flag in the shared module and tests that are strict about their data only under it
(a file whose tests are all reused still matters to the process), tests whose own run sets what a
later test reads (a flag, a list and a dict two levels down in the shared module, a class
attribute, decimal's precision, an environment variable, a dict of a standard library module, a
submodule imported first, a file written in the workspace) each with its reader, and tests that import a module only if it is
there. A change sets a
module's, a data file's, the conftest's or a test's value, or adds a test file. The oracle is the
whole run on the final state, unplugged: no model to get wrong.

Each differential draws 8 generated cases besides its explicit examples; VACANT_SELECTION_RUNS
draws more (300 each passed on 2026-12-07). The whole run, the oracle, runs on the final state as
written, not as the selected run left it (a Stop restores a state between runs too).

The same suites run under `python -m unittest discover` too: each test a TestCase of its own, the
conftest's fixture a helper module read by the class's setUpClass, and kinds of unittest's own:
a setUpModule that reads a data file, and a setUpClass that sets the shared module's flag (what a
fixture does to the process, for the tests after it)."""

from __future__ import annotations

import shutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vacant.attribute import testinputs
from vacant.attribute.statechecks import final_run, with_reused
from vacant.policy.contract.checks import run_check
from vacant.store.states import read_manifest_of

COMMAND = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider tests"
UNITTEST = f"{sys.executable} -m unittest discover -s tests -t ."
COMMANDS = {"pytest": COMMAND, "unittest": UNITTEST}
MODULES, DATA = 4, 3
KINDS = ("module", "shared", "data", "cached", "fixture", "spawn", "optional", "setter", "strict", "register",
         "registered", "loader", "nested", "nested_strict", "precision", "precise")
# tests whose own run sets what a later test reads (each setter's reader after it), and the readers
RUN_SETTERS = {"run_setter": "strict", "run_register": "registered", "run_nested": "nested_strict",
               "run_precision": "precise", "run_env": "env_strict", "run_class": "class_strict",
               "run_library": "library_strict", "run_import": "lazy", "run_writer": "file_strict"}
KINDS += tuple(RUN_SETTERS) + ("env_strict", "class_strict", "library_strict", "lazy", "file_strict")
UNITTEST_KINDS = ("module_fixture", "class_setter")  # read by setUpModule; a setUpClass that sets shared.STRICT


@dataclass(frozen=True)
class Case:
    kind: str  # what it asserts on (KINDS)
    target: int  # which module or data file


def conftest(fixture_data: int) -> str:
    return textwrap.dedent(f'''\
        import pytest

        @pytest.fixture(scope="session")
        def shared_text():
            return open("data/d{fixture_data}.txt").read().strip()
        ''')


SHARED = textwrap.dedent('''\
    import functools
    from pkg.m0 import VALUE as FIRST

    SEEN = []
    OPTIONS = {"mode": {"strict": False}}

    class Mode:
        strict = False

    @functools.cache
    def cached(n):
        return open(f"data/d{n}.txt").read().strip()
    ''')


def support(fixture_data: int) -> str:
    """unittest's stand-in for the conftest: what the fixture of a "fixture" test's class reads."""
    return f"def shared_text():\n    return open('data/d{fixture_data}.txt').read().strip()\n"


def module_source(tests: list[Case], runner: str = "pytest") -> str:
    lines = ["import subprocess, sys", "import pkg.shared as shared"]
    if runner == "unittest":
        lines += ["import unittest", "from tests import support"]
        modules = sorted({test.target % DATA for test in tests if test.kind == "module_fixture"})
        if modules:  # setUpModule reads its data files
            lines += ["def setUpModule():"] + [
                f"    globals()['MODULE{n}'] = open('data/d{n}.txt').read().strip()" for n in modules]
    lines += [f"import pkg.m{n}" for n in range(MODULES)]
    if any(test.kind == "setter" for test in tests):  # what importing this module does to the process
        lines.append("shared.STRICT = True")
    if any(test.kind == "register" for test in tests):  # the same, in place
        lines.append("shared.SEEN.append(__name__)")
    if any(test.kind == "nested" for test in tests):  # the same, two levels down
        lines.append("shared.OPTIONS['mode']['strict'] = True")
    if any(test.kind == "precision" for test in tests):  # the same, in the interpreter's C state
        lines.append("__import__('decimal').getcontext().prec = 3")
    for test in tests:  # a module whose import reads a data file, keeping its text to itself
        if test.kind == "loader":
            lines.append(f"LOADED{test.target % DATA} = open('data/d{test.target % DATA}.txt').read().strip()")
    for number, test in enumerate(tests):
        data = test.target % DATA
        indent = "    "
        if runner == "unittest":
            indent = "        "
            lines.append(f"class T{number}(unittest.TestCase):")
            if test.kind in ("fixture", "class_setter"):
                lines += ["    @classmethod", "    def setUpClass(cls):", "        cls.shared_text = support.shared_text()"
                          if test.kind == "fixture" else "        shared.STRICT = True"]
            lines.append("    def test_it(self):")
            if test.kind == "fixture":
                lines.append("        shared_text = self.shared_text")
        else:
            lines.append(f"def test_{number}({'shared_text' if test.kind == 'fixture' else ''}):")
        lines.append(indent + {
            "module": f"assert pkg.m{test.target}.VALUE == {test.target}",
            "shared": "assert shared.FIRST == 0",
            "data": f"assert open('data/d{data}.txt').read().strip() == 'ok'",
            "cached": f"assert shared.cached({data}) == 'ok'",
            "fixture": "assert shared_text == 'ok'",
            "setter": "assert True",
            "module_fixture": f"assert MODULE{data} == 'ok'",
            "class_setter": "assert True",
            "register": "assert True",
            "registered": f"assert not shared.SEEN or open('data/d{data}.txt').read().strip() == 'ok'",
            "loader": f"assert LOADED{data} == 'ok'",
            "nested": "assert True",
            "nested_strict": f"assert not shared.OPTIONS['mode']['strict'] or open('data/d{data}.txt').read().strip() == 'ok'",
            "precision": "assert True",
            "precise": f"assert __import__('decimal').getcontext().prec != 3 or open('data/d{data}.txt').read().strip() == 'ok'",
            "run_setter": "shared.STRICT = True",
            "run_register": "shared.SEEN.append('run')",
            "run_nested": "shared.OPTIONS['mode']['strict'] = True",
            "run_precision": "__import__('decimal').getcontext().prec = 3",
            "run_env": "__import__('os').environ['STRICT_MODE'] = '1'",
            "run_class": "shared.Mode.strict = True",
            "run_library": "__import__('email.charset').charset.ALIASES['strict'] = 'utf-8'",
            "run_import": "import pkg.lazy",
            "run_writer": "__import__('os').makedirs('state', exist_ok=True); open('state/strict', 'w').close()",
            "file_strict": f"assert not __import__('os').path.exists('state/strict') or open('data/d{data}.txt').read().strip() == 'ok'",
            "env_strict": f"assert __import__('os').environ.get('STRICT_MODE') != '1' or open('data/d{data}.txt').read().strip() == 'ok'",
            "class_strict": f"assert not shared.Mode.strict or open('data/d{data}.txt').read().strip() == 'ok'",
            "library_strict": "assert 'strict' not in __import__('email.charset').charset.ALIASES or "
                              f"open('data/d{data}.txt').read().strip() == 'ok'",
            "lazy": f"assert not hasattr(pkg, 'lazy') or open('data/d{data}.txt').read().strip() == 'ok'",
            "strict": f"assert not getattr(shared, 'STRICT', False) or open('data/d{data}.txt').read().strip() == 'ok'",
            "optional": f"assert getattr(__import__('importlib').util.find_spec('extra{data}') and "
                        f"__import__('extra{data}'), 'OK', True)",
            "spawn": "assert subprocess.run([sys.executable, '-c', "
                     f"\"print(open('data/d{data}.txt').read().strip())\"], capture_output=True, "
                     "text=True).stdout.strip() == 'ok'",
        }[test.kind])
    return "\n".join(lines) + "\n"


tests_st = st.lists(st.builds(Case, st.sampled_from(KINDS), st.integers(0, MODULES - 1)), min_size=1, max_size=4)
suites = st.lists(tests_st, min_size=1, max_size=4)
unittest_tests_st = st.lists(st.builds(Case, st.sampled_from(KINDS + UNITTEST_KINDS), st.integers(0, MODULES - 1)),
                             min_size=1, max_size=4)
# a change: (what, which, broken?) -- a module's value, a data file, the conftest's data file, a test file's tests
def changes_of(tests: st.SearchStrategy[list[Case]]) -> st.SearchStrategy[list]:
    return st.lists(st.tuples(st.sampled_from(("module", "data", "conftest", "tests", "new test file", "optional",
                                               "notes")),
                              st.integers(0, MODULES - 1), st.booleans(), tests), min_size=1, max_size=4)


changes = changes_of(tests_st)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def baseline(suite: list[list[Case]], runner: str = "pytest") -> dict[str, str]:
    files = {"pkg/__init__.py": "", "pkg/shared.py": SHARED, "pkg/lazy.py": "VALUE = 1\n"}
    if runner == "unittest":
        files |= {"tests/__init__.py": "", "tests/support.py": support(0)}
    else:
        files |= {"pytest.ini": "[pytest]\n", "tests/conftest.py": conftest(0)}
    files |= {f"pkg/m{n}.py": f"VALUE = {n}\n" for n in range(MODULES)}
    files |= {f"data/d{n % DATA}.txt": "ok\n" for n in range(MODULES)}
    files |= {f"tests/test_f{number}.py": module_source(tests, runner) for number, tests in enumerate(suite)}
    return files


def apply(files: dict[str, str], change: tuple[str, int, bool, list[Case]], count: list[int],
          runner: str = "pytest") -> None:
    what, which, broken, tests = change
    if what == "module":
        files[f"pkg/m{which}.py"] = f"VALUE = {which + 100 if broken else which}\n"
    elif what == "data":
        files[f"data/d{which % DATA}.txt"] = "bad\n" if broken else "ok\n"
    elif what == "optional":  # a module an import looked for and did not find, now there
        files[f"extra{which % DATA}/__init__.py"] = f"OK = {not broken}\n"
    elif what == "notes":  # a directory of no module's name: no import can find it
        files[f"notes/n{which}.md"] = "n\n"
    elif what == "conftest" and runner == "unittest":
        files["tests/support.py"] = support(which % DATA)
    elif what == "conftest":
        files["tests/conftest.py"] = conftest(which % DATA)
    elif what == "tests":
        existing = sorted(path for path in files if path.startswith("tests/test_f"))
        files[existing[which % len(existing)]] = module_source(tests, runner)
    else:
        count[0] += 1
        files[f"tests/test_new{count[0]}.py"] = module_source(tests, runner)


def failures(result) -> set[str]:
    return {test for test, outcome in result.tests.items() if outcome in ("failed", "error")} | (
        set() if result.passed or result.tests else {"<the run failed without a report>"})


def selected_against_whole(tmp: Path, suite: list[list[Case]], history: list,
                           runner: str = "pytest") -> tuple[set[str], set[str], testinputs.Selection]:
    """The failures of the selected run and of the whole run on the final state."""
    command = COMMANDS[runner]
    check = SimpleNamespace(name="suite", command=command, timeout=120)
    base_dir, final_dir = tmp / "base", tmp / "final"
    for directory in (base_dir, final_dir):
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
    files = baseline(suite, runner)
    write(base_dir, files)
    base_manifest = read_manifest_of(base_dir)
    recorded = run_check(check, base_dir, inputs=True)
    assert recorded.passed, recorded.output[-2000:]
    record = testinputs.record_of("suite", command, "base", {}, recorded.inputs, recorded.tests, base_dir, ())
    count = [0]
    for change in history:
        apply(files, change, count, runner)
    write(final_dir, files)
    # the final state is the baseline's directory changed in place (a record names paths, not places)
    shutil.rmtree(base_dir)
    final_dir.rename(base_dir)
    chosen = testinputs.select(record, base_manifest, read_manifest_of(base_dir), {}, base_dir, ())
    ran, stood = final_run(check, base_dir, chosen, None)
    selected = with_reused(ran, stood.skip)
    shutil.rmtree(base_dir)  # the whole run on the final state as it was, not as the selected run left it
    write(base_dir, files)
    whole = run_check(check, base_dir)
    return failures(selected), failures(whole), chosen


def setting_examples(test):
    """The examples both differentials keep, of tests that set the process for a later one: every
    setter before its reader; a test file changed to set it at import; a test changed to set it
    in its run."""
    cases = [([list(map(Case, RUN_SETTERS, [0] * len(RUN_SETTERS))), list(map(Case, RUN_SETTERS.values(), [1] * len(RUN_SETTERS)))],
              [("data", 1, True, [Case("module", 0)])]),
             ([[Case("module", 0)], [Case("precise", 0)]],
              [("data", 0, True, [Case("module", 0)]), ("tests", 0, False, [Case("precision", 0)])]),
             ([[Case("module", 0)], [Case("strict", 1)]],
              [("data", 1, True, [Case("module", 0)]), ("tests", 0, False, [Case("run_setter", 0)])])]
    for suite, history in reversed(cases):
        test = example(suite=suite, history=history)(test)
    return test


@pytest.mark.slow
@settings(max_examples=int(__import__("os").environ.get("VACANT_SELECTION_RUNS", "8")), deadline=None, suppress_health_check=list(HealthCheck))
@given(suite=suites, history=changes)
@example(suite=[[Case("cached", 1)], [Case("cached", 1), Case("module", 2)]],
         history=[("data", 1, True, [Case("module", 0)])])  # only the first test to call it reads it
@example(suite=[[Case("fixture", 0)], [Case("fixture", 0)]], history=[("data", 0, True, [Case("module", 0)])])
@example(suite=[[Case("spawn", 2)]], history=[("data", 2, True, [Case("module", 0)])])
@example(suite=[[Case("shared", 0)], [Case("module", 0)]], history=[("module", 0, True, [Case("module", 0)])])
@example(suite=[[Case("setter", 0)], [Case("strict", 1)]], history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("register", 0)], [Case("registered", 1)]], history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("loader", 1)], [Case("module", 1)]], history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("nested", 0)], [Case("nested_strict", 1)]], history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("precision", 0)], [Case("precise", 1)]], history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("optional", 1)], [Case("module", 1)]], history=[("optional", 1, True, [Case("module", 0)]),
                                                                    ("notes", 0, True, [Case("module", 0)])])
@setting_examples
def test_the_selected_run_fails_what_the_whole_run_fails(tmp_path_factory, suite, history):
    tmp = tmp_path_factory.mktemp("selection")
    selected, whole, _ = selected_against_whole(tmp, suite, history)
    assert selected == whole


@pytest.mark.slow
@settings(max_examples=int(__import__("os").environ.get("VACANT_SELECTION_RUNS", "8")), deadline=None, suppress_health_check=list(HealthCheck))
@given(suite=st.lists(unittest_tests_st, min_size=1, max_size=4), history=changes_of(unittest_tests_st))
@example(suite=[[Case("module_fixture", 1)], [Case("module", 1)]], history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("fixture", 0), Case("module", 2)]], history=[("conftest", 1, True, [Case("module", 0)]),
                                                                   ("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("class_setter", 0)], [Case("strict", 1)]], history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("class_setter", 0), Case("strict", 1)]], history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("setter", 0)], [Case("strict", 1)]], history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("cached", 1)], [Case("cached", 1), Case("module", 2)]],
         history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("spawn", 2)], [Case("data", 1)]], history=[("data", 1, True, [Case("module", 0)])])
@example(suite=[[Case("strict", 1)]], history=[("new test file", 0, True, [Case("setter", 0)]),
                                               ("data", 1, True, [Case("module", 0)])])
@setting_examples
def test_the_selected_unittest_run_fails_what_the_whole_run_fails(tmp_path_factory, suite, history):
    """The same under `python -m unittest`, with setUpModule and setUpClass (module docstring)."""
    tmp = tmp_path_factory.mktemp("selection")
    selected, whole, _ = selected_against_whole(tmp, suite, history, "unittest")
    assert selected == whole


@pytest.mark.slow
def test_a_change_to_one_module_leaves_the_tests_that_never_read_it_out(tmp_path):
    """Not everything runs: a change to pkg/m3 reruns the tests whose module imports it (all,
    here: every test file imports every module) -- so this suite imports it from one file only."""
    suite = [[Case("module", 1), Case("data", 1)], [Case("module", 2)]]
    files = baseline(suite)
    files["tests/test_f1.py"] = files["tests/test_f1.py"].replace("import pkg.m3\n", "")
    files["tests/test_f1.py"] = files["tests/test_f1.py"].replace("import pkg.shared as shared\n", "")
    base = tmp_path / "base"
    write(base, files)
    check = SimpleNamespace(name="suite", command=COMMAND, timeout=120)
    before = read_manifest_of(base)
    recorded = run_check(check, base, inputs=True)
    record = testinputs.record_of("suite", COMMAND, "base", {}, recorded.inputs, recorded.tests, base, ())
    write(base, {"pkg/m3.py": "VALUE = 103\n"})
    chosen = testinputs.select(record, before, read_manifest_of(base), {}, base, ())
    assert chosen.summary()["reused"] == 1 and chosen.summary()["ran"] == 2, chosen.summary()
    assert chosen.skip.tests == ("pytest::tests.test_f1::test_0",)
    assert chosen.example == {testinputs.CHANGED: "pkg/m3.py"}


def test_a_command_that_is_not_one_plain_pytest_run_is_not_selectable():
    assert testinputs.selectable("pytest -q tests")
    assert testinputs.selectable(COMMAND)
    for command in ("pytest && ./deploy.sh", "make test", "pytest --lf", "pytest -k 'a or b'", "tox"):
        assert not testinputs.selectable(command), command
    for command in (UNITTEST, "python -m unittest", "python3 -m unittest -v tests.test_a tests.test_b.B.test_c"):
        assert testinputs.selectable(command), command
    for command in ("python -m unittest discover -p test_*.py", "python -m unittest; ./deploy.sh",
                    "python -W error -m unittest", "python -m unittestx", "python -m unittest -k 'a b'"):
        assert not testinputs.selectable(command), command


STOP_SUITE = {
    "pytest.ini": "[pytest]\n",
    "pkg/__init__.py": "",
    "pkg/m0.py": "VALUE = 0\n",
    "pkg/m1.py": "VALUE = 1\n",
    "tests/test_zero.py": "from pkg.m0 import VALUE\n" + "".join(
        f"def test_z{n}():\n    assert VALUE == 0\n" for n in range(4)),
    "tests/test_one.py": "from pkg.m1 import VALUE\n" + "".join(
        f"def test_o{n}():\n    assert VALUE == 1\n" for n in range(6)),
}


@pytest.mark.slow
def test_a_stop_runs_only_the_tests_the_change_reaches_and_grades_the_same(tmp_path, isolated_home):
    """Through the real recorder, the baseline probe (which records the inputs) and the Stop: a
    step breaks pkg/m0, which only tests/test_zero.py imports; a step writes notes. The Stop runs
    test_zero's 4 tests and reuses test_one's 6 without collecting test_one.py (its import changed
    nothing the other tests see), says so in its report (`selection`, and its own part of the
    split), and its findings and levels are those of the same Stop without a record. Its bisection
    runs only the two re-checks of the flip's sides: the probe's whole run answers on the baseline,
    and the final run, which read the same files as the state of the flip, answers there."""
    from vacant.attribute.stop import Pipeline, save_report
    from vacant.commands.report import render_report
    from vacant.show.model import build
    from vacant.policy.contract.contract import load_contract

    root, run_dir, report = _stop_after_breaking_m0(tmp_path, STOP_SUITE, COMMAND)
    zero = [f"pytest::tests.test_zero::test_z{n}" for n in range(4)]
    assert report["selection"]["suite"] == _zero_ran(zero, uncollected=1), report["selection"]
    assert report["split"]["selection"]["check_runs"] == 0
    rendered = render_report({**report, "round": 1, "rounds": 3})
    assert "selection: suite: 6 of 10 recorded test(s) reused" in rendered
    assert "1 test file(s) not even collected" in rendered
    save_report(run_dir, dict(report))  # the view shows the same split and selection
    (shown,) = build(root, run_dir)["stops"]
    assert [line for line in rendered.splitlines() if line.startswith(("  time:", "  selection:"))] == [
        "  " + line for line in shown["time"]] and len(shown["time"]) == 2, shown
    graded = sorted((f["test"], f["level"], f["flip_step"]) for f in report["findings"])
    assert [test for test, _, _ in graded] == zero
    assert {(level, step) for _, level, step in graded} == {("provable", 1)}
    assert report["split"]["bisection"]["check_runs"] == 2, report["split"]

    shutil.rmtree(run_dir / testinputs.RECORDS)
    whole = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    assert whole["selection"] == {}
    assert whole["split"]["bisection"]["check_runs"] > 2, whole["split"]
    assert sorted((f["test"], f["level"], f["flip_step"]) for f in whole["findings"]) == graded
    assert {check["name"]: check["passed"] for check in whole["checks"]} == {
        check["name"]: check["passed"] for check in report["checks"]}


SETTER_SUITE = {
    "pytest.ini": "[pytest]\n",
    "pkg/__init__.py": "",
    "pkg/flags.py": "STRICT = False\n",
    "pkg/m0.py": "VALUE = 0\n",
    "tests/test_a_set.py": "import pkg.flags as flags\n\ndef test_set():\n    flags.STRICT = True\n",
    "tests/test_b_read.py": "import pkg.flags as flags\nfrom pkg.m0 import VALUE\n\n"
                            "def test_read():\n    assert not flags.STRICT or VALUE == 0\n",
    "tests/test_c_other.py": "def test_other():\n    assert True\n",
}
UNITTEST_SETTER_SUITE = {  # the same as unittest TestCases
    "pkg/__init__.py": "", "pkg/flags.py": "STRICT = False\n", "pkg/m0.py": "VALUE = 0\n", "tests/__init__.py": "",
    "tests/test_a_set.py": "import unittest\nimport pkg.flags as flags\n\nclass A(unittest.TestCase):\n"
                           "    def test_set(self):\n        flags.STRICT = True\n",
    "tests/test_b_read.py": "import unittest\nimport pkg.flags as flags\nfrom pkg.m0 import VALUE\n\n"
                            "class B(unittest.TestCase):\n    def test_read(self):\n"
                            "        self.assertTrue(not flags.STRICT or VALUE == 0)\n",
    "tests/test_c_other.py": "import unittest\n\nclass C(unittest.TestCase):\n    def test_other(self):\n        pass\n",
}
SETTERS = {"pytest": (SETTER_SUITE, "pytest::tests.test_b_read::test_read"),
           "unittest": (UNITTEST_SETTER_SUITE, "unittest::tests.test_b_read.B::test_read")}


@pytest.mark.slow
@pytest.mark.parametrize("runner", sorted(SETTERS))
def test_a_test_that_fails_only_after_another_sets_the_process_is_bisected_with_it(tmp_path, isolated_home, runner):
    """test_read fails only in a process where test_set ran first (it sets a flag), once step 1
    breaks pkg/m0. The Stop runs test_set (its run changed the process) with test_read, reuses
    test_other, and its bisection runs test_set before test_read at each state: the finding is
    `provable` on step 1. Without the record the Stop cannot know the setter, and test_read run
    alone passes at every state, so it can say only that the test is not reproducible alone."""
    from vacant.attribute.stop import Pipeline
    from vacant.policy.contract.contract import load_contract

    suite, reader = SETTERS[runner]
    root, run_dir, report = _stop_after_breaking_m0(tmp_path, suite, COMMANDS[runner])
    assert report["selection"]["suite"]["why"] == {testinputs.CHANGED: 1, testinputs.SETS_STATE: 1}
    graded = [(f["test"], f["level"], f["flip_step"]) for f in report["findings"]]
    assert graded == [(reader, "provable", 1)], graded

    shutil.rmtree(run_dir / testinputs.RECORDS)
    whole = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    assert [(f["test"], f["level"], f["flip_step"]) for f in whole["findings"]] == [(reader, "flaky", None)]


def _stop_after_breaking_m0(tmp_path: Path, files: dict[str, str], command: str) -> tuple[Path, Path, dict]:
    """The workspace, run and Stop report of a run whose step 1 breaks pkg/m0 and step 2 writes
    notes, with `files` as the baseline and `command` as the guard, the baseline probe's record made."""
    from step_histories import record_steps

    from vacant.attribute import baseline_probe
    from vacant.attribute.stop import Pipeline
    from vacant.core.locations import mark_installed
    from vacant.policy.contract.contract import load_contract

    root = tmp_path / "ws"
    root.mkdir()
    mark_installed(root)
    write(root, files)
    (root / "vacant.toml").write_text(f'[[guard]]\nname = "suite"\ncommand = "{command}"\n')
    run_dir = record_steps(root, [{"pkg/m0.py": "VALUE = 5\n"}, {"notes.md": "done\n"}])
    baseline_probe.probe(root, run_dir)
    assert testinputs.load(run_dir, "suite", command, _baseline_key(run_dir)) is not None
    return root, run_dir, Pipeline(root, run_dir, load_contract(root), budget_s=600).run()


def _zero_ran(zero: list[str], uncollected: int) -> dict:
    """The Stop's selection when test_zero's 4 tests ran for pkg/m0's change and test_one's 6 were reused."""
    return {"recorded": 10, "reused": 6, "ran": 4, "uncollected": uncollected, "why": {testinputs.CHANGED: 4},
            "example": {testinputs.CHANGED: "pkg/m0.py"}, "tests": {testinputs.CHANGED: zero}}


def _baseline_key(run_dir: Path) -> str:

    from vacant.store.run import RunView

    return next(r for r in RunView.load(run_dir).records if r["type"] == "run_start")["baseline"]


def test_a_record_that_does_not_hold_together_runs_the_check_whole(tmp_path):
    """A missing, garbled or stale record is no record (the check runs whole); one that names a
    test as not passed on the baseline leaves it in, whatever it says the test read."""
    empty = testinputs.Reads()
    record = testinputs.Record("suite", COMMAND, "base", testinputs.env_key({}), empty, {"t.py": empty},
                               [testinputs.TestRead("a", "t.py", empty, "passed"),
                                testinputs.TestRead("b", "t.py", empty, "failed"),
                                testinputs.TestRead("c", "t.py", empty, None)])
    chosen = testinputs.select(record, {}, {}, {}, tmp_path, ())
    assert chosen.skip.tests == ("a",) and chosen.why == {"b": testinputs.NOT_PASSED, "c": testinputs.NOT_PASSED}
    assert testinputs.select(record, {}, {}, {"PATH": "/elsewhere"}, tmp_path, ()).skip.tests == ()
    testinputs.save(tmp_path, record)
    assert testinputs.load(tmp_path, "suite", COMMAND, "base") is not None
    assert testinputs.load(tmp_path, "suite", COMMAND, "another baseline") is None
    assert testinputs.load(tmp_path, "suite", "pytest -x", "base") is None
    path = testinputs.record_path(tmp_path, "suite")
    for garbage in ("", "[]", "{", '{"version": 1}', '{"version": 1, "check": "suite", "command": 1, "baseline": '
                    '"base", "env": "", "session": {"files": [1]}, "modules": {}, "tests": []}', "\x00" * 10):
        path.write_text(garbage)
        assert testinputs.load(tmp_path, "suite", COMMAND, "base") is None, garbage


def test_the_baselines_answers_stand_only_while_the_host_files_it_read_are_unchanged(tmp_path):
    """The probe's whole run answers on the baseline at Stop only while every host file it read
    (an installed package, a live path) is as it was: a package upgraded since is another process."""
    installed = tmp_path / "site" / "lib.py"
    installed.parent.mkdir()
    installed.write_text("VALUE = 1\n")
    empty = testinputs.Reads()
    record = testinputs.Record("suite", COMMAND, "base", testinputs.env_key({}), empty, {}, [],
                               stats={str(installed): testinputs.host_stat(str(installed))})
    assert testinputs.host_unchanged(record)
    installed.write_text("VALUE = 22\n")
    assert not testinputs.host_unchanged(record)
    record.stats = {str(tmp_path / "gone.py"): [1, 2]}
    assert not testinputs.host_unchanged(record)


UNITTEST_SUITE = {  # discovered in this order: Zero's tests, then A1's, then B1's
    "pkg/__init__.py": "",
    "pkg/m0.py": "VALUE = 0\n",
    "pkg/m1.py": "VALUE = 1\n",
    "pkg/common.py": "import pkg.m0\nBASE = 10\n",
    "data/a.txt": "ok\n",
    "data/b.txt": "ok\n",
    "tests/__init__.py": "",
    "tests/test_a_zero.py": textwrap.dedent('''\
        import unittest
        import pkg.common
        from pkg.m0 import VALUE

        class Zero(unittest.TestCase):
            def test_value(self):
                self.assertEqual(VALUE, 0)

            def test_base(self):
                self.assertEqual(pkg.common.BASE, 10)
        '''),
    "tests/test_b_one.py": textwrap.dedent('''\
        import unittest
        import pkg.common
        from pkg.m1 import VALUE

        def setUpModule():
            global B
            B = open("data/b.txt").read()

        class A1(unittest.TestCase):
            def test_b(self):
                self.assertEqual(B, "ok\\n")

        class B1(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                cls.a = open("data/a.txt").read()

            def test_value(self):
                self.assertEqual(VALUE, 1)

            def test_a(self):
                self.assertEqual(self.a, "ok\\n")
        '''),
}
ONE = {"A1::test_b", "B1::test_value", "B1::test_a"}


@pytest.mark.slow
@pytest.mark.parametrize(("change", "ran"), [
    ({"pkg/m1.py": "VALUE = 101\n"}, ONE),
    ({"pkg/m0.py": "VALUE = 100\n"}, {"Zero::test_value", "Zero::test_base", *ONE}),  # pkg.common imports it too
    ({"data/a.txt": "bad\n"}, {"B1::test_value", "B1::test_a"}),  # B1's setUpClass read it
    ({"data/b.txt": "bad\n"}, ONE),  # the module's setUpModule
    ({"notes.md": "n\n"}, set()),
])
def test_a_unittest_change_reruns_only_the_tests_whose_module_or_fixture_read_it(tmp_path, change, ran):
    """A module's import is its own tests' (whichever test module imported a shared one first),
    setUpClass's reads its class's tests', setUpModule's its module's: an edit reruns only those;
    and what the rerun fails is what the whole run fails."""
    base = tmp_path / "base"
    write(base, UNITTEST_SUITE)
    check = SimpleNamespace(name="suite", command=UNITTEST, timeout=120)
    before = read_manifest_of(base)
    recorded = run_check(check, base, inputs=True)
    assert recorded.passed, recorded.output[-2000:]
    record = testinputs.record_of("suite", UNITTEST, "base", {}, recorded.inputs, recorded.tests, base, ())
    assert not {path for path in record.session.files if path.startswith(("pkg/", "tests/", "data/"))}, record.session
    write(base, change)
    chosen = testinputs.select(record, before, read_manifest_of(base), {}, base, ())
    assert {test.split(".", 2)[2] for test in chosen.why} == ran, chosen.why  # unittest::tests.MODULE.CLASS::NAME
    assert set(chosen.why.values()) <= {testinputs.CHANGED}
    assert failures(with_reused(run_check(check, base, skip=chosen.skip), chosen.skip)) == failures(
        run_check(check, base))


def _cases(name: str, module: str, value: int, count: int) -> str:
    return f"import unittest\nfrom pkg.{module} import VALUE\n\nclass {name}(unittest.TestCase):\n" + "".join(
        f"    def test_{n}(self):\n        self.assertEqual(VALUE, {value})\n" for n in range(count))


@pytest.mark.slow
def test_a_unittest_stop_runs_only_the_tests_the_change_reaches_and_grades_the_same(tmp_path, isolated_home):
    """The Stop of test_a_stop_runs_only_the_tests_the_change_reaches_and_grades_the_same, under
    `python -m unittest discover`: the probe records, the Stop runs test_zero's 4 tests and reuses
    test_one's 6, and its findings and levels are those of the same Stop without a record."""
    from vacant.attribute.stop import Pipeline
    from vacant.policy.contract.contract import load_contract

    files = {"pkg/__init__.py": "", "pkg/m0.py": "VALUE = 0\n", "pkg/m1.py": "VALUE = 1\n", "tests/__init__.py": "",
             "tests/test_zero.py": _cases("Zero", "m0", 0, 4), "tests/test_one.py": _cases("One", "m1", 1, 6)}
    root, run_dir, report = _stop_after_breaking_m0(tmp_path, files, UNITTEST)
    zero = [f"unittest::tests.test_zero.Zero::test_{n}" for n in range(4)]
    assert report["selection"]["suite"] == _zero_ran(zero, uncollected=0), report["selection"]
    graded = sorted((f["test"], f["level"], f["flip_step"]) for f in report["findings"])
    assert graded == [(test, "provable", 1) for test in zero]

    shutil.rmtree(run_dir / testinputs.RECORDS)
    whole = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    assert whole["selection"] == {}
    assert sorted((f["test"], f["level"], f["flip_step"]) for f in whole["findings"]) == graded
