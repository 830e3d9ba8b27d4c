"""How a check's command is set up for go and jest (vacant/policy/contract/runners.py): which commands get
vacant's `go` or jest's JSON options, what a selection adds, and that the selection patterns select
exactly the named test in the real Go toolchain; a report that cannot be read falls back to the
text reading."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest
from runner_tools import go_env, run_planned

from vacant.attribute.statechecks import reports_on
from vacant.core.findings import Finding
from vacant.policy.contract import checks, runners, testreport
from vacant.policy.contract.checks import CheckResult, findings_from, run_command
from vacant.policy.contract.runners import Reported, go_run_pattern, plan_run, read_reports


def _plan(command, select=(), junit=None, tmp_path=None):
    plan = plan_run(command, tmp_path, junit, select)
    try:
        return plan.command, plan.env, list(plan.path_first), dict(plan.kinds)
    finally:
        plan.cleanup()


@pytest.mark.parametrize("command", [
    "jest", "npx jest --ci", "npx --no-install jest test/", "CI=1 node_modules/.bin/jest -i",
    "cd web && ./node_modules/.bin/jest", "yarn jest", "pnpm exec jest", "make build; jest --coverage",
    "node node_modules/jest/bin/jest.js", "(jest)",
])
def test_a_jest_at_a_command_start_gets_its_json_report_after_its_name(command, tmp_path):
    made, _env, _path, kinds = _plan(command, tmp_path=tmp_path)
    assert list(kinds.values()) == ["jest"]
    [report] = kinds
    options = f" --json --outputFile={report} --testLocationInResults"
    assert made.replace(options, "", 1) == command and made.count("--json") == 1


@pytest.mark.parametrize("command", [
    "echo jest", "cat jest.config.js", "grep -r jest .", "jest --json", "npm test", "myjest", "ls jest-results",
])
def test_other_commands_naming_jest_are_left_as_written(command, tmp_path):
    made, _env, _path, kinds = _plan(command, tmp_path=tmp_path)
    assert made == command and "jest" not in kinds.values()


def test_a_contract_junit_report_wins_over_the_runners_own_json(tmp_path):
    made, env, path, kinds = _plan("go test ./... && jest", junit="out.xml", tmp_path=tmp_path)
    assert made == "go test ./... && jest" and path == [] and kinds == {} and "VACANT_GO_REPORT" not in env


@pytest.mark.parametrize("command, wrapped", [
    ("go test ./...", True), ("cd x && go vet ./... && go test .", True), ("make test", False),
    ("cargo test", False), ("echo gopher", False), ("./go.sh", False),
])
def test_vacants_go_comes_first_only_for_a_command_that_names_go(command, wrapped, tmp_path):
    made, env, path, kinds = _plan(command, tmp_path=tmp_path)
    assert made == command
    assert any(p.endswith("/go-bin") for p in path) == wrapped
    assert ("go" in kinds.values()) == wrapped and ("VACANT_GO_REPORT" in env) == wrapped


def test_go_and_jest_selections():
    assert go_run_pattern(("go::example.com/m::TestAdd",)) == "^TestAdd$"
    assert go_run_pattern(("go::m::TestA/x|y_(1)",)) == r"^TestA$/^x\|y_\(1\)$"
    assert go_run_pattern(("go::m::TestA", "go::m::TestB")) == "^(?:TestA|TestB)$"
    # several tests with a subtest among them: their top-level tests (the subtest's siblings run too)
    assert go_run_pattern(("go::m::TestA/x", "go::m::TestB", "go::m::TestA/y")) == "^(?:TestA|TestB)$"
    assert go_run_pattern(("go::m",)) is None and go_run_pattern(("pytest::a::b",)) is None


def test_jest_selection_names_the_test_and_ignores_every_other_file(tmp_path):
    made, *_ = _plan("npx jest", ("jest::test/a.test.js::group (x) adds [1]",), tmp_path=tmp_path)
    assert "--testNamePattern='^(?:group \\(x\\) adds \\[1\\])$'" in made
    assert "--testPathIgnorePatterns='^(?!.*/(?:test\\/a\\.test\\.js)$)'" in made
    whole_file, *_ = _plan("npx jest", ("jest::test/a.test.js",), tmp_path=tmp_path)
    assert "--testNamePattern" not in whole_file and "--testPathIgnorePatterns" in whole_file


def test_an_unreadable_report_falls_back_to_the_text_reading(tmp_path):
    (tmp_path / "lib.go").write_text("package m\n")
    plan = plan_run("go test ./...", tmp_path, None)
    try:
        [report] = plan.kinds
        report.write_bytes(b'{"Action": "output", "Package": \n')
        reported = read_reports(plan)
    finally:
        plan.cleanup()
    assert reported is not None and reported.results == [] and "not JSON" in reported.problem
    result = run_command("echo 'lib.go:1: broken' && exit 1", tmp_path, 10, tmp_path)
    [finding] = findings_from("go", result, tmp_path, 10, reported)[0]
    assert (finding.path, finding.line, finding.test) == ("lib.go", 1, None)


def test_vacants_go_without_a_real_go_is_a_missing_tool(tmp_path):
    plan = plan_run("go test ./...", tmp_path, None)
    try:
        wrapper = os.path.join(plan.path_first[0], "go")
        done = subprocess.run([wrapper, "test"], env={**plan.env, "PATH": f"{plan.path_first[0]}:{tmp_path}"},
                              capture_output=True, text=True, timeout=30)
    finally:
        plan.cleanup()
    assert done.returncode == 127 and done.stderr == "go: command not found\n"


GO_NAMES = ["x|y (1)", "c[d]", "e+f*", "^g$", "h\\i"]


@pytest.mark.slow
def test_each_go_selection_runs_exactly_its_test_in_the_real_toolchain(tmp_path, monkeypatch):
    go_env(monkeypatch)
    cases = ", ".join(json.dumps(name) for name in GO_NAMES)
    (tmp_path / "go.mod").write_text("module example.com/sel\n\ngo 1.19\n")
    (tmp_path / "sel_test.go").write_text(textwrap.dedent(f'''\
        package sel

        import "testing"

        func TestNames(t *testing.T) {{
        \tfor _, name := range []string{{{cases}}} {{
        \t\tt.Run(name, func(t *testing.T) {{ t.Log("ran") }})
        \t}}
        }}

        func TestNamesToo(t *testing.T) {{}}
        '''))
    whole = runners.plan_run("go test ./...", tmp_path, None)
    try:
        run_command(whole.command, tmp_path, 120, tmp_path, extra_env=whole.environment(os.environ["PATH"]))
        every = [r.id for r in read_reports(whole).results]
    finally:
        whole.cleanup()
    subtests = [test for test in every if test.startswith("go::example.com/sel::TestNames/")]
    assert len(subtests) == len(GO_NAMES)
    for test in subtests + ["go::example.com/sel::TestNames"]:
        plan = runners.plan_run("go test ./...", tmp_path, None, (test,))
        try:
            result = run_command(plan.command, tmp_path, 120, tmp_path, extra_env=plan.environment(os.environ["PATH"]))
            ran = {r.id for r in read_reports(plan).results}
        finally:
            plan.cleanup()
        assert result.exit_code == 0
        parent = "go::example.com/sel::TestNames"
        assert ran == ({test, parent} if test != parent else set(subtests) | {parent}), test
    gone = Finding("f", "check", "go", None, None, None, "", "", test="go::example.com/sel::TestGone")
    plan = runners.plan_run("go test ./...", tmp_path, None, (gone.test,))
    try:
        run_command(plan.command, tmp_path, 120, tmp_path, extra_env=plan.environment(os.environ["PATH"]))
        reported = read_reports(plan)
    finally:
        plan.cleanup()
    assert reported is not None and reported.results == []  # a test not there: the whole command answers
    assert not reports_on(CheckResult("go", True, 0, "", 0.1, False, False, tests=reported.outcomes()), gone)


def test_a_go_failure_line_is_found_in_its_packages_directory(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "s_test.go").write_text("package decoy\n\n\n")
    (tmp_path / "sub" / "s_test.go").write_text("package sub\n\nfunc TestS(t *testing.T) { t.Error(1) }\n")
    result = testreport.TestResult(("go",), "example.com/m/sub", "TestS", "failed", "1", "    s_test.go:3: 1\n", dirs=("sub",))
    [finding] = checks.test_findings("go", Reported([result]), tmp_path)
    assert (finding.path, finding.line, finding.test) == ("sub/s_test.go", 3, "go::example.com/m/sub::TestS")


@pytest.mark.parametrize("script, command, reached", [
    ("jest --ci", "npm test", True), ("eslint . && jest", "npm run test", True),
    ("cross-env CI=1 jest", "npm test -- --coverage", True), ("jest && eslint .", "npm test", False),
    ("mocha", "npm test", False), ("jest", "npm run build", False),
])
def test_npm_test_reaches_jest_after_dashes_when_the_script_ends_in_jest(script, command, reached, tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": script}}))
    made, _env, _path, kinds = _plan(command, tmp_path=tmp_path)
    assert ("jest" in kinds.values()) == reached
    if reached:
        [report] = kinds
        options = f" --json --outputFile={report} --testLocationInResults"
        assert made == (command.replace(" --", " --" + options, 1) if " -- " in command else command + " --" + options)


@pytest.mark.slow
def test_npm_test_running_jest_reports_per_test(tmp_path):
    from runner_tools import jest_modules

    jest = jest_modules() / ".bin" / "jest"
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": f"{jest} --ci -i --watchman=false"}}))
    (tmp_path / "a.test.js").write_text("test('one', () => { expect(1).toBe(2); });\ntest('two', () => {});\n")
    result, reported, _ = run_planned("npm test", tmp_path, ("jest::a.test.js::one",))
    assert result.exit_code == 1 and reported is not None
    assert reported.outcomes() == {"jest::a.test.js::one": "failed", "jest::a.test.js::two": "skipped"}


def _vitest_options(report):
    return f" --reporter=default --reporter=json --outputFile.json={report} --includeTaskLocation"


@pytest.mark.parametrize("command, after", [
    ("vitest", "vitest"), ("vitest run", "vitest run"), ("npx vitest run test/", "npx vitest run"),
    ("CI=1 node_modules/.bin/vitest --run", "node_modules/.bin/vitest"), ("pnpm exec vitest run -t x", "vitest run"),
    ("make build && vitest run", "vitest run"), ("node node_modules/vitest/vitest.mjs run", "vitest.mjs run"),
])
def test_a_vitest_run_gets_its_json_report_and_the_default_reporter_after_its_name(command, after, tmp_path):
    made, _env, _path, kinds = _plan(command, tmp_path=tmp_path)
    assert list(kinds.values()) == ["vitest"]
    [report] = kinds
    assert made == command.replace(after, after + _vitest_options(report), 1)


@pytest.mark.parametrize("command", [
    "vitest watch", "vitest list", "vitest bench", "echo vitest", "cat vitest.config.ts", "myvitest",
    "vitest run --reporter=json --outputFile=out.json", "vitest run --outputFile.junit=j.xml",
])
def test_other_vitest_commands_are_left_as_written(command, tmp_path):
    made, _env, _path, kinds = _plan(command, tmp_path=tmp_path)
    assert made == command and "vitest" not in kinds.values()


def test_vitest_selection_names_each_test_by_its_full_name(tmp_path):
    made, *_ = _plan("vitest run", ("vitest::test/a.test.ts::group (x) adds [1]", "vitest::b.test.ts::t|u"),
                     tmp_path=tmp_path)
    assert made.endswith(" --testNamePattern='^(?:group \\(x\\) adds \\[1\\]|t\\|u)$' b.test.ts test/a.test.ts")
    for unselectable in [("vitest::test/a.test.ts",), ("jest::a.test.js::x",), ("vitest::a.ts::x", "pytest::a::b")]:
        made, *_ = _plan("vitest run", unselectable, tmp_path=tmp_path)
        assert "--testNamePattern" not in made, unselectable


@pytest.mark.slow
def test_npm_test_running_vitest_in_an_agents_environment_reports_per_test(tmp_path, monkeypatch):
    """CLAUDECODE makes vitest pick its failures-only `agent` reporter: forced back to the default
    one, the check's output still names the passing test, and the JSON report has every test."""
    from runner_tools import jest_modules

    vitest = jest_modules() / ".bin" / "vitest"
    monkeypatch.setenv("CLAUDECODE", "1")
    (tmp_path / "package.json").write_text(json.dumps({"type": "module", "scripts": {"test": f"{vitest} run"}}))
    (tmp_path / "a.test.js").write_text("import { test, expect } from 'vitest';\n"
                                        "test('one', () => { expect(1).toBe(2); });\ntest('two', () => {});\n"
                                        "test('three', () => {});\n")
    result, reported, _ = run_planned("npm test", tmp_path, ("vitest::a.test.js::one", "vitest::a.test.js::two"))
    assert result.exit_code == 1 and reported is not None
    assert reported.outcomes() == {"vitest::a.test.js::one": "failed", "vitest::a.test.js::two": "passed",
                                   "vitest::a.test.js::three": "skipped"}
    assert "✓ two" in result.output  # the default reporter's line for a passing test
    [finding] = checks.test_findings("vitest", reported, tmp_path)
    assert (finding.path, finding.line, finding.test) == ("a.test.js", 2, "vitest::a.test.js::one")


@pytest.mark.parametrize("command, wrapped", [
    ("cargo test", True), ("cargo test --release -- --test-threads=1", True), ("cd crate && cargo t", True),
    ("make test", True), ("cargo-nextest run", False), ("echo cargos", False), ("go test ./...", False),
])
def test_vacants_cargo_comes_first_for_a_command_that_runs_cargo(command, wrapped, tmp_path):
    (tmp_path / "Makefile").write_text(".PHONY: test\ntest:\n\tcargo test --all\n")
    made, env, path, kinds = _plan(command, tmp_path=tmp_path)
    assert made == command
    assert ("cargo" in kinds.values()) == wrapped and ("VACANT_CARGO_REPORT" in env) == wrapped
    assert any(p.endswith("/cargo-bin") for p in path) == wrapped


def test_cargo_selection_is_each_tests_exact_path():
    assert runners.cargo_names(("cargo::calc::src/lib.rs::tests::adds", "cargo::it::tests/it.rs::adds")) \
        == ["adds", "tests::adds"]
    assert runners.cargo_names(("cargo::calc::doc::src/lib.rs - add (line 3)",)) == ["src/lib.rs - add (line 3)"]
    for whole in [("cargo::calc",), ("cargo::calc::src/lib.rs",), ("cargo::c::s::t", "go::m::TestA")]:
        assert runners.cargo_names(whole) is None, whole


@pytest.mark.parametrize("args, select, passed", [
    ("test", (), "test --no-fail-fast"),
    ("test --release", ("cargo::c::src/lib.rs::tests::a", "cargo::c::src/lib.rs::b"),
     "test --release --no-fail-fast -- --exact b tests::a"),
    ("test --no-fail-fast -- --test-threads=1", ("cargo::c::src/lib.rs::a",),
     "test --no-fail-fast -- --test-threads=1 --exact a"),
    ("+stable test --", (), "+stable test --no-fail-fast --"),
    ("build --release", ("cargo::c::src/lib.rs::a",), "build --release"),
])
def test_vacants_cargo_passes_the_real_one_its_arguments(args, select, passed, tmp_path):
    real = tmp_path / "bin"
    real.mkdir()
    (real / "cargo").write_text("#!/bin/sh\necho \"$@\"\necho 'a line on stderr' >&2\n")
    (real / "cargo").chmod(0o755)
    plan = plan_run("cargo " + args, tmp_path, None, select)
    try:
        done = subprocess.run(plan.command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=30,
                              env={**os.environ, **plan.environment(str(real))})
        [report] = plan.kinds
        kept = report.read_text() if report.exists() else None
    finally:
        plan.cleanup()
    assert done.stdout.splitlines()[0] == passed
    if args.startswith("build"):
        assert kept is None and done.stderr == "a line on stderr\n"  # not a test run: untouched
    else:  # both streams, in order, to the check's output and the report
        assert done.stdout == kept == passed + "\na line on stderr\n"
