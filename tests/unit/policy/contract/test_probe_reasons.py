"""Red (or green) for the wrong reason, read from real runs of pytest, unittest, node --test and go test.

Every case runs the real runner on real files; nothing here is a captured string. The generated
test writes a unittest module with random names and probes it by its exact id (an ordinary red:
no reason) or by a misspelling of one part of it (unknown_test): the oracle is whether the id the
command names is the one that was written.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runner_tools import go_env

from vacant.policy.contract.checks import run_command
from vacant.policy.contract.probe_reasons import (
    LOAD_ERROR,
    MISSING_CODE,
    MISSING_PROGRAM,
    NO_TESTS,
    PROGRAM_NOT_FOUND,
    REASONS,
    UNKNOWN_TEST,
    USAGE_ERROR,
    classify,
    misspelling_of,
)

PY = sys.executable
NODE = shutil.which("node")

UNIT = {"tests/__init__.py": "",
        "tests/test_q.py": "import unittest\n\nclass QuantifyTests(unittest.TestCase):\n"
                           "    def test_one(self):\n        self.assertEqual(1, 2)\n"}
UNIT_CODE_MISSING = {"tests/__init__.py": "",
                     "tests/test_r.py": "import unittest\nfrom report import total\n\nclass T(unittest.TestCase):\n"
                                        "    def test_t(self):\n        self.assertEqual(total(), 3)\n"}
UNIT_ATTR = {"report.py": "RATE = 1\n", "tests/__init__.py": "",
             "tests/test_a.py": "import unittest\nimport report\n\nclass T(unittest.TestCase):\n"
                                "    def test_t(self):\n        self.assertEqual(report.total(), 3)\n"}
SYNTAX = {"tests/__init__.py": "", "tests/test_s.py": "def (\n"}
PYT = {"test_p.py": "def test_a():\n    assert 1 == 2\n"}
PYT_CODE_MISSING = {"test_m.py": "from report import total\n\ndef test_a():\n    assert total() == 3\n"}
NODE_FAIL = {"a.test.js": "const test = require('node:test'); const assert = require('node:assert');\n"
                          "test('adds', () => { assert.strictEqual(1, 2); });\n"}
NODE_MISSING = {"m.test.js": "const lib = require('./lib/total'); const test = require('node:test');\n"
                             "test('t', () => {});\n"}

CASES = [
    # unittest
    ("unit-class-misspelt", UNIT, f"{PY} -m unittest tests.test_q.QuantifyTest", UNKNOWN_TEST),
    ("unit-method-misspelt", UNIT, f"{PY} -m unittest tests.test_q.QuantifyTests.test_on", UNKNOWN_TEST),
    ("unit-module-misspelt", UNIT, f"{PY} -m unittest tests.test_qq", UNKNOWN_TEST),
    ("unit-package-misspelt", UNIT, f"{PY} -m unittest test.test_q", UNKNOWN_TEST),
    ("unit-start-dir-missing", UNIT, f"{PY} -m unittest discover -s nothere", UNKNOWN_TEST),
    ("unit-discovers-nothing", UNIT, f"{PY} -m unittest discover -p 'zz*.py'", NO_TESTS),
    ("unit-k-matches-nothing", UNIT, f"{PY} -m unittest -k nomatch tests.test_q", NO_TESTS),
    ("unit-syntax-error", SYNTAX, f"{PY} -m unittest tests.test_s", LOAD_ERROR),
    ("unit-bad-option", UNIT, f"{PY} -m unittest --bogus", USAGE_ERROR),
    ("unit-code-not-written", UNIT_CODE_MISSING, f"{PY} -m unittest tests.test_r", MISSING_CODE),
    ("unit-assertion", UNIT, f"{PY} -m unittest tests.test_q", None),
    ("unit-code-lacks-attribute", UNIT_ATTR, f"{PY} -m unittest tests.test_a", None),
    ("unit-discover-assertion", UNIT, f"{PY} -m unittest discover -s tests -t .", None),
    # pytest
    ("pytest-file-missing", PYT, f"{PY} -m pytest -q -p no:cacheprovider test_nope.py", UNKNOWN_TEST),
    ("pytest-id-missing", PYT, f"{PY} -m pytest -q -p no:cacheprovider test_p.py::test_b", UNKNOWN_TEST),
    ("pytest-k-matches-nothing", PYT, f"{PY} -m pytest -q -p no:cacheprovider test_p.py -k zzz", NO_TESTS),
    ("pytest-syntax-error", {"test_s.py": "def (\n"}, f"{PY} -m pytest -q -p no:cacheprovider test_s.py", LOAD_ERROR),
    ("pytest-code-not-written", PYT_CODE_MISSING, f"{PY} -m pytest -q -p no:cacheprovider test_m.py", MISSING_CODE),
    ("pytest-bad-option", PYT, f"{PY} -m pytest -q -p no:cacheprovider --bogus", USAGE_ERROR),
    ("pytest-assertion", PYT, f"{PY} -m pytest -q -p no:cacheprovider test_p.py", None),
    # node's test runner
    ("node-file-missing", NODE_FAIL, "node --test nope.test.js", UNKNOWN_TEST),
    ("node-dir-empty", {"empty/.keep": ""}, "node --test empty/", NO_TESTS),
    ("node-pattern-matches-nothing", NODE_FAIL, "node --test --test-name-pattern=zzz a.test.js", NO_TESTS),
    ("node-code-not-written", NODE_MISSING, "node --test m.test.js", MISSING_CODE),
    ("node-assertion", NODE_FAIL, "node --test a.test.js", None),
    ("node-bad-option", NODE_FAIL, "node --test --no-such-option a.test.js", USAGE_ERROR),
    # programs
    ("program-misspelt", {}, "pytset -q", PROGRAM_NOT_FOUND),
    ("program-not-installed", {}, "vacant-no-such-linter check .", MISSING_PROGRAM),
    ("program-not-executable", {".local/bin/lint": "#!/bin/sh\n"}, "lint src", MISSING_PROGRAM),
    ("python-runner-missing", {}, f"{PY} -m nose2 -q", PROGRAM_NOT_FOUND),
    ("python-runner-misspelt", {}, f"{PY} -m pytset -q", PROGRAM_NOT_FOUND),
    ("python-module-not-written", {}, f"{PY} -m report --total", MISSING_CODE),
    ("script-not-written-yet", {}, "./run.sh", None),
    ("plain-red", {}, "test -f report.md", None),
    ("cli-flag-not-written-yet", {"tool.py": "import argparse\nargparse.ArgumentParser().parse_args()\n"},
     f"{PY} tool.py --summary", None),
    ("plain-green", {}, "true", None),
]


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def probe(root: Path, command: str):
    result = run_command(command, root, 60, root)
    return result, classify(result.exit_code, result.output, root, result.timed_out)


# a Go module with a failing test in one package and a passing one in another
GO_MODULE = {"go.mod": "module example.com/calc\n\ngo 1.19\n",
             "calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
             "calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n"
                             "\tif Add(1, 2) != 3 {\n\t\tt.Fatalf(\"Add(1, 2) = %d\", Add(1, 2))\n\t}\n}\n",
             "sub/sub.go": "package sub\n\nfunc One() int { return 1 }\n",
             "sub/sub_test.go": "package sub\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n"
                                "\tif One() != 1 {\n\t\tt.Fatal(\"not one\")\n\t}\n}\n",
             "tools/tools.go": "package tools\n\nconst Name = \"tools\"\n"}
GO_CASES = [
    ("go-run-misspelt", "go test -run TestTypo ./...", 0, NO_TESTS),
    ("go-run-misspelt-verbose", "go test -v -run TestTypo ./...", 0, NO_TESTS),
    ("go-run-misspelt-json", "go test -json -run TestTypo ./...", 0, NO_TESTS),
    ("go-run-misspelt-one-package", "go test -count=1 -run TestTypo ./sub", 0, NO_TESTS),
    ("go-no-test-files", "go test ./tools", 0, NO_TESTS),
    ("go-assertion", "go test ./...", 1, None),
    ("go-run-selects-the-failing-test", "go test -run TestAdd ./...", 1, None),
    ("go-run-matches-in-one-package", "go test -run TestOne ./...", 0, None),  # green, and it ran a test
]


@pytest.mark.slow
@pytest.mark.parametrize("command, exit_code, expected", [case[1:] for case in GO_CASES],
                         ids=[case[0] for case in GO_CASES])
def test_real_go_test_output_gives_the_reason(tmp_path, monkeypatch, command, exit_code, expected):
    go_env(monkeypatch)
    make(tmp_path, GO_MODULE)
    result, verdict = probe(tmp_path, command)
    assert result.exit_code == exit_code, result.output[-1500:]
    assert (verdict.reason if verdict else None) == expected, result.output[-1500:]
    if expected == NO_TESTS:
        assert verdict.detail.startswith("go test ran no test: ")


@pytest.mark.parametrize("name, meant", [
    ("pytset", "pytest"), ("pyest", "pytest"), ("rufff", "ruff"), ("jset", "jest"), ("mpyy", "mypy"),
    ("ruff", None), ("jest", None), ("golangci-lint", None),  # well-known, not installed: to provision
    ("python3.12", None), ("eslint_d", None),  # another version or variant of a known one
    ("vacant-no-such-linter", None), ("gp", None),  # near nothing known; too short to call a misspelling
])
def test_a_misspelt_program_is_one_edit_off_a_well_known_one(name, meant):
    assert misspelling_of(name) == meant


def test_node_is_there():
    assert NODE, "node is a required part of the test environment (the agent CLIs run on it)"


@pytest.mark.slow
@pytest.mark.parametrize("files, command, expected", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_real_runner_output_gives_the_reason(tmp_path, files, command, expected):
    make(tmp_path, files)
    result, verdict = probe(tmp_path, command)
    assert (verdict.reason if verdict else None) == expected, result.output[-1500:]
    if verdict is not None:
        assert verdict.reason in REASONS and verdict.detail


def test_every_broken_reason_has_a_real_case():
    covered = {case[3] for case in CASES}
    assert set(REASONS) <= covered


IDENT = st.from_regex(r"[a-z][a-z0-9]{2,8}", fullmatch=True)


def misspell(name: str, how: int) -> str:
    return name[:-1] if how == 0 else name + "x" if how == 1 else name[0] + name


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(module=IDENT, cls=IDENT, method=IDENT, part=st.sampled_from([None, "module", "class", "method"]),
       how=st.integers(0, 2))
def test_generated_unittest_ids(module, cls, method, part, how):
    module, cls, method = f"test_{module}", cls.capitalize() + "Tests", f"test_{method}"
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        make(root, {"suite/__init__.py": "",
                    f"suite/{module}.py": f"import unittest\n\nclass {cls}(unittest.TestCase):\n"
                                          f"    def {method}(self):\n        self.assertEqual(1, 2)\n"})
        named = {"module": module, "class": cls, "method": method}
        if part is not None:
            named[part] = misspell(named[part], how)
        command = f"{PY} -m unittest suite.{named['module']}.{named['class']}.{named['method']}"
        result, verdict = probe(root, command)
        wrong = (named["module"], named["class"], named["method"]) != (module, cls, method)
        assert result.exit_code == 1
        assert (verdict.reason if verdict else None) == (UNKNOWN_TEST if wrong else None), result.output[-800:]
