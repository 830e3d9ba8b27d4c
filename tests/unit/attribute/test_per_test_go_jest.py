"""One finding per failing test from the runners' own JSON, through the real Go toolchain and the
real (pinned) jest and the real Stop pipeline: keyed by the runner's test id, located at the
failure's line, blamed on the step that broke it, and re-checked alone during replay (the
selected run's arguments and what it reported are looked at, not assumed)."""

from __future__ import annotations

import textwrap

import pytest
from runner_tools import cargo_env, go_env, jest_modules
from step_histories import record_steps

from vacant.attribute import statechecks
from vacant.attribute.stop import stop
from vacant.policy.contract import runners

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]

GO_LIB = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Mul(a, b int) int { return a * b }\n"
GO_TEST = textwrap.dedent('''\
    package calc

    import "testing"

    func TestAdd(t *testing.T) {
    \tif got := Add(2, 3); got != 5 {
    \t\tt.Errorf("Add(2, 3) = %d, want 5", got)
    \t}
    }

    func TestMul(t *testing.T) {
    \tfor _, c := range []struct{ name string; a, b, want int }{{"two by three", 2, 3, 6}, {"x|y (1)", 1, 1, 1}} {
    \t\tt.Run(c.name, func(t *testing.T) {
    \t\t\tif got := Mul(c.a, c.b); got != c.want {
    \t\t\t\tt.Fatalf("Mul = %d, want %d", got, c.want)
    \t\t\t}
    \t\t})
    \t}
    }
    ''')


def _spy(monkeypatch):
    """Every replay run: what it selected, the command and environment it ran with, what it reported."""
    seen = []
    real_plan, real_run = runners.plan_run, statechecks.run_check

    def plan(command, cwd, junit, select=(), base_env=None, **more):
        made = real_plan(command, cwd, junit, select, base_env, **more)
        seen.append({"select": select, "command": made.command, "run": made.env.get("VACANT_GO_RUN"),
                     "exact": made.env.get("VACANT_CARGO_SELECT")})
        return made

    def run(check, directory, select=(), **walled):
        result = real_run(check, directory, select=select, **walled)
        seen[-1]["tests"] = sorted(result.tests)
        return result
    monkeypatch.setattr("vacant.policy.contract.checks.plan_run", plan)
    monkeypatch.setattr(statechecks, "run_check", run)
    return seen


@pytest.fixture
def go_ws(ws, monkeypatch):
    go_env(monkeypatch)
    files = {"go.mod": "module example.com/calc\n\ngo 1.19\n", "calc.go": GO_LIB, "calc_test.go": GO_TEST,
             "vacant.toml": '[[check]]\nname = "gotest"\ncommand = "go test ./..."\ntimeout = 120\n'}
    for rel, text in files.items():
        (ws / rel).write_text(text)
    return ws


def test_go_each_failing_test_is_a_finding_on_its_step_rechecked_together(go_ws, monkeypatch):
    seen = _spy(monkeypatch)
    steps = [{"README.md": "calc\n"}, {"calc.go": GO_LIB.replace("a + b", "a - b")}, {"NOTES.md": "n\n"},
             {"calc.go": GO_LIB.replace("a + b", "a - b").replace("a * b", "a * b * b")}, {"README.md": "c\n"}]
    outcome = stop(go_ws, record_steps(go_ws, steps))
    report = outcome.report
    by_test = {finding["test"]: finding for finding in report["findings"]}
    add, mul = "go::example.com/calc::TestAdd", "go::example.com/calc::TestMul/two_by_three"
    assert set(by_test) == {add, mul}  # TestMul failed only through its subtest: not a finding of its own
    assert (by_test[add]["path"], by_test[add]["line"]) == ("calc_test.go", 7)
    assert (by_test[mul]["path"], by_test[mul]["line"]) == ("calc_test.go", 15)
    assert (by_test[add]["flip_step"], by_test[add]["level"], by_test[add]["changed"]) == (2, "provable", ["calc.go"])
    assert (by_test[mul]["flip_step"], by_test[mul]["level"]) == (4, "provable")
    assert "+func Add(a, b int) int { return a - b }" in by_test[add]["diff"]
    assert f"test {add} fails at calc_test.go:7" in outcome.feedback and "which changed calc.go" in outcome.feedback
    whole, *replay = seen
    assert whole["select"] == () and whole["run"] is None
    # the two failing tests are bisected together: one run per state selects both (by their top-level names)
    assert replay and all(run["select"] == (add, mul) for run in replay)
    assert {run["run"] for run in replay} == {"^(?:TestAdd|TestMul)$"}
    assert all({add, mul} <= set(run["tests"]) for run in replay)


def test_go_a_build_failure_is_the_package_finding_at_the_compiler_line(go_ws):
    broken = GO_LIB.replace("return a + b", "return a +")
    report = stop(go_ws, record_steps(go_ws, [{"README.md": "x\n"}, {"calc.go": broken}])).report
    [finding] = report["findings"]
    assert finding["test"] == "go::example.com/calc"
    assert (finding["path"], finding["line"], finding["flip_step"]) == ("calc.go", 3, 2)
    assert "build failed" in finding["message"]


JEST_LIB = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n"
JEST_TEST = textwrap.dedent('''\
    const lib = require('../lib.js');
    test('adds', () => { expect(lib.add(2, 3)).toBe(5); });
    describe('group (x|y)', () => {
      it('muls [a]', () => {
        expect(lib.mul(2, 3)).toBe(6);
      });
      it('muls again', () => { expect(lib.mul(1, 1)).toBe(1); });
    });
    ''')


def test_jest_each_failing_test_is_a_finding_on_its_step_rechecked_together(ws, monkeypatch):
    jest = jest_modules() / ".bin" / "jest"
    (ws / "test").mkdir()
    (ws / "test" / "lib.test.js").write_text(JEST_TEST)
    (ws / "test" / "other.test.js").write_text("test('adds', () => { expect(1).toBe(1); });\n")
    (ws / "lib.js").write_text(JEST_LIB)
    (ws / "package.json").write_text('{"name": "w", "private": true}\n')
    (ws / "vacant.toml").write_text(
        f'[[check]]\nname = "jest"\ncommand = "{jest} --ci --watchman=false -i test/"\n'
        'timeout = 120\n')
    seen = _spy(monkeypatch)
    steps = [{"README.md": "r\n"}, {"lib.js": JEST_LIB.replace("a * b", "a * b + 1")}, {"NOTES.md": "n\n"}]
    report = stop(ws, record_steps(ws, steps)).report
    by_test = {finding["test"]: finding for finding in report["findings"]}
    first, second = "jest::test/lib.test.js::group (x|y) muls [a]", "jest::test/lib.test.js::group (x|y) muls again"
    assert set(by_test) == {first, second}
    assert (by_test[first]["path"], by_test[first]["line"]) == ("test/lib.test.js", 5)
    assert (by_test[second]["path"], by_test[second]["line"]) == ("test/lib.test.js", 7)
    assert all((f["flip_step"], f["level"], f["changed"]) == (2, "provable", ["lib.js"]) for f in by_test.values())
    whole, *replay = seen
    assert whole["select"] == () and "--json" in whole["command"] and "--testNamePattern" not in whole["command"]
    # both failing tests bisected together: each replay run selects the two, and runs no other file's test
    assert replay and all(run["select"] == (first, second) and "--testNamePattern=" in run["command"] for run in replay)
    for run in replay:
        assert {first, second} <= set(run["tests"]) and not any(test.endswith("other.test.js::adds") for test in run["tests"])


VITEST_LIB = "export const add = (a, b) => a + b;\nexport const mul = (a, b) => a * b;\n"
VITEST_TEST = "import { test, it, describe, expect } from 'vitest';\nimport * as lib from '../lib.js';\n" + \
    JEST_TEST.split("\n", 1)[1]


def test_vitest_each_failing_test_is_a_finding_on_its_step_rechecked_together(ws, monkeypatch):
    """Under an agent's environment vitest would print only failures (its `agent` reporter): the
    JSON report is forced, so every test is read, passing ones too."""
    vitest = jest_modules() / ".bin" / "vitest"
    monkeypatch.setenv("CLAUDECODE", "1")
    (ws / "test").mkdir()
    (ws / "test" / "lib.test.js").write_text(VITEST_TEST)
    (ws / "test" / "other.test.js").write_text("import { test, expect } from 'vitest';\ntest('adds', () => { expect(1).toBe(1); });\n")
    (ws / "lib.js").write_text(VITEST_LIB)
    (ws / "package.json").write_text('{"name": "w", "private": true, "type": "module"}\n')
    (ws / "vacant.toml").write_text(f'[[check]]\nname = "vitest"\ncommand = "{vitest} run"\ntimeout = 120\n')
    seen = _spy(monkeypatch)
    steps = [{"README.md": "r\n"}, {"lib.js": VITEST_LIB.replace("a * b", "a * b + 1")}, {"NOTES.md": "n\n"}]
    report = stop(ws, record_steps(ws, steps)).report
    by_test = {finding["test"]: finding for finding in report["findings"]}
    first, second = "vitest::test/lib.test.js::group (x|y) muls [a]", "vitest::test/lib.test.js::group (x|y) muls again"
    assert set(by_test) == {first, second}
    assert (by_test[first]["path"], by_test[first]["line"]) == ("test/lib.test.js", 6)
    assert (by_test[second]["path"], by_test[second]["line"]) == ("test/lib.test.js", 8)
    assert all((f["flip_step"], f["level"], f["changed"]) == (2, "provable", ["lib.js"]) for f in by_test.values())
    whole, *replay = seen
    assert whole["select"] == () and "--reporter=json" in whole["command"] and "--testNamePattern" not in whole["command"]
    assert "vitest::test/lib.test.js::adds" in whole["tests"]  # a passing test: the agent reporter was overridden
    assert replay and all(run["select"] == (first, second) and "--testNamePattern=" in run["command"] for run in replay)
    for run in replay:  # the two selected ran, and no other file's test
        assert {first, second} <= set(run["tests"]) and not any("other.test.js" in test for test in run["tests"])


RS_LIB = textwrap.dedent('''\
    pub fn add(a: i32, b: i32) -> i32 { a + b }
    pub fn mul(a: i32, b: i32) -> i32 { a * b }

    #[cfg(test)]
    mod tests {
        use super::*;
        #[test]
        fn adds() {
            assert_eq!(add(2, 3), 5);
        }
        #[test]
        fn muls() { assert_eq!(mul(2, 3), 6); }
    }
    ''')
RS_IT = "#[test]\nfn adds_too() {\n    assert_eq!(calc::add(1, 2), 3, \"one and two\");\n}\n"


@pytest.fixture
def cargo_ws(ws, monkeypatch):
    cargo_env(monkeypatch)
    files = {"Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
             "src/lib.rs": RS_LIB, "tests/it.rs": RS_IT,
             "vacant.toml": '[[check]]\nname = "cargo"\ncommand = "cargo test"\ntimeout = 300\n'}
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


def test_cargo_each_failing_test_is_a_finding_at_its_panic_on_its_step_rechecked_by_name(cargo_ws, monkeypatch):
    seen = _spy(monkeypatch)
    broken = RS_LIB.replace("a + b }", "a - b }")
    steps = [{"README.md": "calc\n"}, {"src/lib.rs": broken}, {"NOTES.md": "n\n"}]
    outcome = stop(cargo_ws, record_steps(cargo_ws, steps))
    by_test = {finding["test"]: finding for finding in outcome.report["findings"]}
    unit, it = "cargo::calc::src/lib.rs::tests::adds", "cargo::it::tests/it.rs::adds_too"
    assert set(by_test) == {unit, it}  # both binaries ran (--no-fail-fast), the passing test is no finding
    assert (by_test[unit]["path"], by_test[unit]["line"]) == ("src/lib.rs", 9)
    assert (by_test[it]["path"], by_test[it]["line"]) == ("tests/it.rs", 3)
    assert "one and two" in by_test[it]["message"]
    assert all((f["flip_step"], f["level"], f["changed"]) == (2, "provable", ["src/lib.rs"]) for f in by_test.values())
    whole, *replay = seen
    assert whole["select"] == () and whole["exact"] is None
    assert "cargo::calc::src/lib.rs::tests::muls" in whole["tests"]
    assert replay and all(run["select"] == (unit, it) for run in replay)
    assert {run["exact"] for run in replay} == {'["adds_too", "tests::adds"]'}
    for run in replay:  # the two by their exact names, no other test
        assert set(run["tests"]) == {unit, it}


def test_cargo_a_build_failure_is_the_crates_finding_at_the_compiler_line(cargo_ws):
    broken = RS_LIB.replace("a + b }", "a + }")
    report = stop(cargo_ws, record_steps(cargo_ws, [{"README.md": "x\n"}, {"src/lib.rs": broken}])).report
    [finding] = report["findings"]
    assert finding["test"] == "cargo::calc"
    assert (finding["path"], finding["line"], finding["flip_step"]) == ("src/lib.rs", 1, 2)
    assert "build failed" in finding["message"]
