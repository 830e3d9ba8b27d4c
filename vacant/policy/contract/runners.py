"""Test runners behind a check: where their report goes (JUnit XML, or the runner's own JSON), how
one test is run alone, and one finding per failing test.

A check's command stays as the contract wrote it. Around it:

- pytest is told to write JUnit XML to a scratch file through `PYTEST_ADDOPTS` (`--junitxml`, with
  `junit_family=xunit1` so each case names its file); a command that never runs pytest ignores it.
  A pytest that refuses the option (its junitxml plugin turned off) gets the command again, plain.
- A check may name the report its command writes itself: `junit = "PATH"` (node's
  `--test-reporter=junit --test-reporter-destination=PATH`, any runner that writes JUnit XML). It is
  read only when this run wrote it (a file left from before is not a result).
- To re-check one test alone (replay), pytest loads a small plugin (a scratch directory on
  `PYTHONPATH`, `-p`) that keeps only the named tests, matched by the same id the report gives;
  node's runner gets `--test-name-pattern` after its `--test`. Another runner runs whole; the
  caller learns whether the test was reported at all, and falls back to the whole command when not.
- `python -m unittest` writes no report: vacant puts a `sitecustomize` on its `PYTHONPATH`
  (vacant.policy.contract.runner_sources) that, in that process only, records each test's outcome and
  writes JUnit XML to a scratch file, and with a selection runs only the named tests (ids
  `unittest::MODULE.CLASS::METHOD`), with tests to leave out all others; a sitecustomize it
  shadows still runs. On the baseline it also records each test's inputs, as pytest's plugin does
  (vacant.attribute.testinputs).
- A selected pytest or unittest run also says what it read: the plugin's audit hook (`sys.addaudithook`) notes
  every file the process opened and every directory it listed under the check's directory, and
  whether it started another process (whose reads it cannot see); a directory listed by the
  import system or by pytest's collection is noted apart (it counts only by what either can use
  there), with every module name an import looked for. Same inputs, same answer: a
  replay reuses a selected run's result on another state whose files that run read are the same
  (vacant.attribute.statechecks). It collects only the test files that can hold the selected tests
  (their dotted path is a prefix of a selected id's class name), so it reads no other.
- `go test` writes its own JSON (vacant.policy.contract.runner_json): when the command names `go`, a `go`
  of vacant's (vacant.policy.contract.runner_sources) comes first on its PATH and runs the real one's
  `go test` as `go test -json`, writing the events to a scratch report and printing the text they
  carry, so the check's output reads as `go test -v`'s; any other go command runs untouched. A
  selection adds `-run '^TestName$/^subtest$'` (each level anchored and escaped).
- jest writes its own JSON: a jest the command runs (`jest`, `npx jest`, `node_modules/.bin/jest`,
  `yarn jest`, `pnpm jest`, at a command's start) gets `--json --outputFile=SCRATCH
  --testLocationInResults` right after its name (its printed output is the same); `npm test` gets
  them after `--` when package.json's `test` script ends in a jest run. A selection adds
  `--testNamePattern '^full name$'` (escaped), and every other test file ignored.
- vitest writes jest's JSON shape: a vitest the command runs (`vitest`, `vitest run`, `npx vitest`,
  `node_modules/.bin/vitest`, `pnpm vitest`, ... at a command's start; `npm test` when
  package.json's `test` script ends in a vitest run) gets `--reporter=default --reporter=json
  --outputFile.json=SCRATCH --includeTaskLocation` after its name (and `run`). Reporters named on
  the command line replace the configured ones, so this also overrides the failures-only `agent`
  reporter vitest picks when it sees an agent's environment (`CLAUDECODE`, `AI_AGENT`, ...: the
  check runs in the agent's environment), and the printed output stays the full default one. A
  selection adds `--testNamePattern='^(?:full name|...)$'` (escaped) and the tests' files as
  filters (vitest runs every file whose path holds one of its filters: with none of the command's
  own, only those files run; with some, what they ran, since they held those files).
- At Stop, a plain jest or vitest run may be limited to the tests related to what changed
  (vacant.attribute.relatedtests, `Skip.related`): `--passWithNoTests --findRelatedTests FILES` at
  jest's end, `vitest related ... --run --passWithNoTests FILES` in place of `vitest run`.
- `cargo test` has no stable machine report: when the command names cargo (or its wrapper runs
  it), a `cargo` of vacant's (vacant.policy.contract.runner_sources) comes first on its PATH and
  runs the real one's `cargo test` with `--no-fail-fast`, keeping its text (stdout and stderr in
  order) as the report vacant.policy.contract.runner_json reads; a selection adds `--exact NAME...`
  after the command's `--` (libtest takes several names; each runs in every test binary that has
  it). Each run builds in a target directory of its own (`CARGO_TARGET_DIR`, removed after it):
  cargo takes a local crate for fresh by its files' modification times, and a file rebuilt for
  one state can be older than the build of another, whose binary would answer for it. Any other
  cargo command runs untouched.
- Python writes no bytecode in a check (`PYTHONDONTWRITEBYTECODE`): a reconstructed file can have
  the size and second of the one before it, and a `.pyc` written on one state would answer for
  it on the next.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from vacant.policy.contract import testreport
from vacant.policy.contract.runner_json import CARGO, GO, JEST, VITEST, read_json_report
from vacant.policy.contract.runner_sources import (
    CARGO_REPORT_ENV,
    CARGO_SELECT_ENV,
    CARGO_WRAPPER_SOURCE,
    GO_REPORT_ENV,
    GO_RUN_ENV,
    GO_WRAPPER_SOURCE,
    INPUTS_ENV,
    INPUTS_SOURCE,
    PLUGIN_SOURCE,
    READS_ENV,
    SELECT_ENV,
    SKIP_ENV,
    SKIP_FILES_ENV,
    UNITTEST_INPUTS_MODULE,
    UNITTEST_INPUTS_SOURCE,
    UNITTEST_REPORT_ENV,
    UNITTEST_SITE_SOURCE,
)
from vacant.policy.contract.testreport import ReportError, TestResult, read_junit
from vacant.policy.contract.wrappers import unwrap

PYTEST_REPORT = "pytest.xml"
PLUGIN = "_vacant_select"
INPUTS_PLUGIN = "_vacant_inputs"
READS = "reads.json"
INPUTS = "inputs.json"
INPUTS_CAP = 64 << 20  # a record past this is not read: the suite runs whole
UNITTEST_REPORT = "unittest.xml"
GO_REPORT = "go.jsonl"
JEST_REPORT = "jest.json"
VITEST_REPORT = "vitest.json"
CARGO_REPORT = "cargo.txt"
_NODE_TEST = re.compile(r"(?<![\w-])--test(?![\w-])")
_UNITTEST = re.compile(r"(?<![\w.-])-m\s+unittest(?![\w.])")
_GO = re.compile(r"(?<![\w./-])go(?![\w.-])")
_CARGO = re.compile(r"(?<![\w./-])cargo(?![\w.-])")
# where a command starts (a line, `;`, `&&`, `||`, `|`, `(`, `$(`), then env assignments and a launcher
_COMMAND_START = r"(?:^|(?<=[;&|(\n`]))\s*(?:(?:then|do|else|exec|time|command|env|cross-env)\s+)*(?:[A-Za-z_]\w*=\S*\s+)*"
_LAUNCHER = r"(?:(?:npx|bunx|yarn|pnpm)(?:\s+(?:exec|-\S+))*\s+|node\s+)?"
_JEST = re.compile(_COMMAND_START + _LAUNCHER + r"(?:\S*/)?jest(?:\.js)?(?=\s|$|[;&|)])", re.MULTILINE)
# vitest at a command's start, with its `run` subcommand if any (options go after it); not its
# other subcommands (watch, bench, list, ...), which are no test run to read
_VITEST = re.compile(_COMMAND_START + _LAUNCHER + r"(?:\S*/)?vitest(?:\.mjs)?(?:\s+run)?(?=\s|$|[;&|)])"
                     r"(?!\s+(?:watch|dev|bench|init|list|related)(?:\s|$))", re.MULTILINE)
_NPM_TEST = re.compile(_COMMAND_START + r"npm\s+(?:(?:run|run-script)\s+test|test|t)(?=\s|$|[;&|)])"
                       r"(?P<dashes>\s+--(?=\s|$))?", re.MULTILINE)
PACKAGE_JSON_CAP = 1 << 20
_REGEX_SPECIAL = re.compile(r"[\\.+*?()|\[\]{}^$/]")



@dataclass
class RunPlan:
    """What a check's run needs around its command: the command to run, extra environment, and
    where its report will be."""

    command: str
    env: dict[str, str]
    scratch: Path
    reports: list[Path]  # where to look, in order (the contract's own first)
    before: dict[Path, tuple[int, int, int] | None] = field(default_factory=dict)
    selected: tuple[str, ...] = ()
    path_first: list[str] = field(default_factory=list)  # directories to put before the check's PATH
    kinds: dict[Path, str] = field(default_factory=dict)  # a report that is a runner's own JSON, not JUnit
    cwd: Path = Path(".")

    def plain(self) -> RunPlan:
        """The same run without the pytest options (a pytest that refused them)."""
        env = {k: v for k, v in self.env.items()
               if k not in ("PYTEST_ADDOPTS", SELECT_ENV, READS_ENV, SKIP_ENV, SKIP_FILES_ENV, INPUTS_ENV)}
        reports = [path for path in self.reports if path.name != PYTEST_REPORT]
        return RunPlan(self.command, env, self.scratch, reports, dict(self.before), self.selected,
                       list(self.path_first), dict(self.kinds), self.cwd)

    def environment(self, path: str) -> dict[str, str]:
        """The extra environment, with `path` (the check's own PATH) after vacant's directories."""
        if not self.path_first:
            return dict(self.env)
        return {**self.env, "PATH": os.pathsep.join([*self.path_first, path] if path else self.path_first)}

    def cleanup(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


@dataclass(frozen=True)
class Skip:
    """Tests a whole pytest run leaves out (their answer is reused: vacant.attribute.testinputs),
    and the test files it does not even collect (`files`, relative to the check's directory): only
    files none of whose tests run and whose collection on the baseline changed nothing the other
    tests' process sees (a setting, a registration, a patched module: the record's `inert`)."""

    tests: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    # jest/vitest (vacant.attribute.relatedtests): the files whose related tests the run is limited
    # to (`tests` are then the recorded tests that may be reused, known only once it ran)
    related: tuple[str, ...] = ()


def plan_run(command: str, cwd: Path, junit: str | None, select: tuple[str, ...] = (),
             base_env: dict[str, str] | None = None, inputs: bool = False, skip: Skip | None = None) -> RunPlan:
    """The run of one check's command in `cwd`, with its report routed (module docstring); with
    `inputs`, pytest records each test's inputs; with `skip`, it leaves those tests out."""
    scratch = Path(tempfile.mkdtemp(prefix="vacant-tests-"))
    env_in = base_env if base_env is not None else os.environ
    env = {"PYTHONDONTWRITEBYTECODE": "1"}
    own = [Path(cwd) / junit] if junit else []
    pytest_report = scratch / PYTEST_REPORT
    options = [f"--junitxml={pytest_report}", "-o", "junit_family=xunit1"]
    paths: list[str] = []
    reports = list(own)
    plan = RunPlan(command, env, scratch, reports, {path: _stamp(path) for path in own}, tuple(select), cwd=Path(cwd))
    runs = command  # what the command runs, wrappers read (vacant.policy.contract.wrappers)
    if junit is None:
        runs, in_place = _unwrapped(plan)
        _plan_go(plan, select, runs)
        _plan_cargo(plan, select, runs)
        _plan_jest(plan, select)
        _plan_vitest(plan, select)
        if skip is not None and skip.related and not select:
            plan.command = related_command(plan.command, skip.related)
        if in_place:  # as make runs its recipe's line
            plan.command = shlex.join(["/bin/sh", "-c", plan.command])
    reports.append(pytest_report)
    if junit is None and _UNITTEST.search(runs):  # unittest writes no report of its own: a reporter does
        paths.append(_source_dir(scratch / "site", "sitecustomize", UNITTEST_SITE_SOURCE))
        if inputs and not select:  # its reporter records each test's inputs (vacant.attribute.testinputs)
            (scratch / "site" / f"{UNITTEST_INPUTS_MODULE}.py").write_text(UNITTEST_INPUTS_SOURCE)
        env[UNITTEST_REPORT_ENV] = str(scratch / UNITTEST_REPORT)
        reports.append(scratch / UNITTEST_REPORT)
    if select:
        paths.append(_source_dir(scratch / "plugin", PLUGIN, PLUGIN_SOURCE))
        options += ["-p", PLUGIN]
        if len(select) > 1:  # a module that does not collect must not keep the others' tests from running
            options.append("--continue-on-collection-errors")
        env[SELECT_ENV] = json.dumps(list(select))
        env[READS_ENV] = str(scratch / READS)
        plan.command = _node_selected(plan.command, select) if junit else plan.command
    elif skip is not None and skip.tests and not skip.related:
        paths.append(_source_dir(scratch / "plugin", PLUGIN, PLUGIN_SOURCE))
        options += ["-p", PLUGIN]
        env[SKIP_ENV] = json.dumps(list(skip.tests))
        env[SKIP_FILES_ENV] = json.dumps(list(skip.files))
        env[READS_ENV] = str(scratch / READS)  # what it read: its answers serve the states that agree
    if inputs and not select:
        paths.append(_source_dir(scratch / "inputs", INPUTS_PLUGIN, INPUTS_SOURCE))
        options += ["-p", INPUTS_PLUGIN]
        env[INPUTS_ENV] = str(scratch / INPUTS)
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths + ([env_in["PYTHONPATH"]] if env_in.get("PYTHONPATH") else []))
    env["PYTEST_ADDOPTS"] = " ".join(shlex.quote(o) for o in options) + (
        " " + env_in["PYTEST_ADDOPTS"] if env_in.get("PYTEST_ADDOPTS") else "")
    return plan


_VITEST_NAME = re.compile(r"(?<![\w-])(vitest(?:\.mjs)?)(?:\s+run)?(?=\s|$)")


def related_command(command: str, files: tuple[str, ...]) -> str:
    """One plain jest or vitest run (vacant.attribute.relatedtests.selectable) limited to the test
    files whose module graph holds one of `files`: `--findRelatedTests FILES` at jest's end,
    `vitest related ... FILES` for vitest; passing when that is no test at all."""
    named = " ".join(shlex.quote(path if not path.startswith("-") else "./" + path) for path in files)
    if not _JEST.search(command):
        return _VITEST_NAME.sub(lambda m: m.group(1) + " related", command, count=1) + \
            " --run --passWithNoTests " + named
    return command + " --passWithNoTests --findRelatedTests " + named


def _unwrapped(plan: RunPlan) -> tuple[str, bool]:
    """The command with what its wrapper runs (`make test`'s recipe, ...) after it, and whether
    the recipe now runs in make's place: a one-line recipe does when its runner takes its report
    options as arguments (jest, vitest), which make cannot pass on (the caller runs it as make
    would, `/bin/sh -c LINE`, once the options are in)."""
    found = unwrap(plan.command, plan.cwd)
    if found is None or found.command is None:
        return plan.command, False
    runs = plan.command + "\n" + found.command
    if found.in_place and (_JEST.search(found.command) or _VITEST.search(found.command)):
        plan.command = found.command
        return runs, True
    return runs, False


def _source_dir(directory: Path, module: str, source: str) -> str:
    """A scratch directory holding `module`.py with `source`, for the check's PYTHONPATH."""
    directory.mkdir()
    (directory / f"{module}.py").write_text(source)
    return str(directory)


def _node_selected(command: str, select: tuple[str, ...]) -> str:
    """node's runner: `--test-name-pattern` for the tests' own names, right after `--test`."""
    if "node" not in command or not _NODE_TEST.search(command):
        return command
    names = "|".join(re.escape(test_id.rsplit("::", 1)[-1]) for test_id in select)
    pattern = shlex.quote(f"^(?:{names})$")
    return _NODE_TEST.sub(lambda m: f"--test --test-name-pattern={pattern}", command, count=1)


def regex_literal(text: str) -> str:
    """`text` matched literally by a Go (RE2) or JavaScript regular expression."""
    return _REGEX_SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def _shim(plan: RunPlan, program: str, source: str) -> None:
    """vacant's `program` (a Python `source` that runs the real one) first on the check's PATH."""
    directory = plan.scratch / f"{program}-bin"
    directory.mkdir()
    script = directory / f"{program}_shim.py"
    script.write_text(source)
    wrapper = directory / program
    wrapper.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -I -S {shlex.quote(str(script))} "
                       f"{testreport.MAX_BYTES} \"$@\"\n")
    wrapper.chmod(0o755)
    plan.path_first.append(str(directory))


def _plan_go(plan: RunPlan, select: tuple[str, ...], runs: str) -> None:
    """vacant's `go` first on the PATH of a command that names go, or runs it (module docstring)."""
    if not _GO.search(runs) or _noexec(plan.scratch):
        return  # on a noexec mount it could not run: go's text is read instead
    _shim(plan, "go", GO_WRAPPER_SOURCE)
    report = plan.scratch / GO_REPORT
    plan.env[GO_REPORT_ENV] = str(report)
    plan.reports.append(report)
    plan.kinds[report] = GO
    pattern = go_run_pattern(select)
    if pattern:
        plan.env[GO_RUN_ENV] = pattern


def _plan_cargo(plan: RunPlan, select: tuple[str, ...], runs: str) -> None:
    """vacant's `cargo` first on the PATH of a command that names cargo, or runs it (module docstring)."""
    if not _CARGO.search(runs) or _noexec(plan.scratch):
        return
    _shim(plan, "cargo", CARGO_WRAPPER_SOURCE)
    report = plan.scratch / CARGO_REPORT
    plan.env[CARGO_REPORT_ENV] = str(report)
    plan.reports.append(report)
    plan.kinds[report] = CARGO
    # cargo decides a local crate is fresh by its files' mtimes, and a reconstructed state's file
    # can be older than a build of another state's: each run builds in its own target directory
    plan.env["CARGO_TARGET_DIR"] = str(plan.scratch / "cargo-target")
    names = cargo_names(select)
    if names:
        plan.env[CARGO_SELECT_ENV] = json.dumps(names)


def cargo_names(select: tuple[str, ...]) -> list[str] | None:
    """libtest's exact names for the selected cargo tests (`cargo::CRATE::SOURCE::path::name`);
    None when one of them names no single test (a binary's record: run them all)."""
    names = [test_id.split("::", 3)[3] for test_id in select
             if test_id.startswith("cargo::") and test_id.count("::") >= 3]
    return sorted(set(names)) if names and len(names) == len(select) and all(names) else None


def _noexec(directory: Path) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_NOEXEC)
    except (OSError, AttributeError):
        return False


def go_run_pattern(select: tuple[str, ...]) -> str | None:
    """`go test -run`'s pattern for the selected tests: each level of one test anchored, or
    several tests by their top-level names (a subtest runs with all its siblings: more than was
    asked, each still read on its own); None when it cannot say (run them all)."""
    names = [test_id.split("::", 2)[2] for test_id in select
             if test_id.startswith("go::") and test_id.count("::") >= 2 and test_id.split("::", 2)[2]]
    if not names or len(names) != len(select):
        return None
    if len(names) == 1:
        return "/".join(f"^{regex_literal(level)}$" for level in names[0].split("/"))
    tops = sorted({name.split("/", 1)[0] for name in names})
    return "^(?:" + "|".join(regex_literal(name) for name in tops) + ")$"


def _plan_jest(plan: RunPlan, select: tuple[str, ...]) -> None:
    """jest's JSON report to scratch, and a selection, right after jest's name (module docstring)."""
    if "--json" in plan.command or ("jest" not in plan.command and "npm" not in plan.command):
        return
    report = plan.scratch / JEST_REPORT
    extra = f" --json --outputFile={shlex.quote(str(report))} --testLocationInResults" + _jest_selection(select)
    command = _JEST.sub(lambda m: m.group(0) + extra, plan.command, count=1)
    if command == plan.command and _script_ends_in(plan.cwd, _JEST):
        command = _after_npm_test(plan.command, extra)
    if command != plan.command:
        plan.command = command
        plan.reports.append(report)
        plan.kinds[report] = JEST


def _after_npm_test(command: str, extra: str) -> str:
    """`extra` passed through `npm test` to the script's last command (after `--`)."""
    return _NPM_TEST.sub(lambda m: m.group(0) + ("" if m.group("dashes") else " --") + extra, command, count=1)


def _plan_vitest(plan: RunPlan, select: tuple[str, ...]) -> None:
    """vitest's JSON report to scratch and its default reporter forced, a selection by full name
    (module docstring)."""
    if "vitest" not in plan.command and "npm" not in plan.command:
        return
    if re.search(r"--(?:outputFile|json)\b|--reporter[= ]json\b", plan.command):
        return  # the command routes its own JSON: two outputFile options would clash
    report = plan.scratch / VITEST_REPORT
    extra = (f" --reporter=default --reporter=json --outputFile.json={shlex.quote(str(report))} --includeTaskLocation"
             + _vitest_selection(select))
    command = _VITEST.sub(lambda m: m.group(0) + extra, plan.command, count=1)
    if command == plan.command and _script_ends_in(plan.cwd, _VITEST):
        command = _after_npm_test(plan.command, extra)
    if command != plan.command:
        plan.command = command
        plan.reports.append(report)
        plan.kinds[report] = VITEST


def _vitest_selection(select: tuple[str, ...]) -> str:
    """`--testNamePattern='^(?:full name|...)$'` (escaped) for vitest ids naming a test, and their
    files as filters: vitest runs the files whose path holds one of its filters, so with the
    command's own filters (which hold these files, or the whole run would not have reported them)
    it runs what those did, and without, only these files (and any whose path holds theirs)."""
    parts = [test_id.split("::", 2) for test_id in select]
    if not parts or any(len(part) != 3 or part[0] != VITEST or not part[2] for part in parts):
        return ""
    names = "|".join(regex_literal(part[2]) for part in parts)
    files = " ".join(shlex.quote(path) for path in sorted({part[1] for part in parts}))
    return " --testNamePattern=" + shlex.quote(f"^(?:{names})$") + " " + files


def _script_ends_in(cwd: Path, runner: re.Pattern[str]) -> bool:
    """Whether package.json's `test` script ends in a run of `runner` (so `npm test -- ARGS` reaches it)."""
    try:
        with open(Path(cwd) / "package.json", "rb") as handle:
            manifest = json.loads(handle.read(PACKAGE_JSON_CAP + 1))
    except (OSError, ValueError, RecursionError):
        return False
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    script = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(script, str):
        return False
    last = None
    for last in runner.finditer(script):
        pass
    return last is not None and not re.search(r"[;&|]", script[last.end():])


def _jest_selection(select: tuple[str, ...]) -> str:
    """`--testNamePattern '^full name$'` (escaped) for jest ids, and every file but theirs ignored
    (`--testPathIgnorePatterns`: a test file path the command names as well would still run)."""
    parts = [test_id.split("::", 2) for test_id in select]
    if not parts or any(len(part) < 2 or part[0] != "jest" for part in parts):
        return ""
    files = "|".join(regex_literal(path) for path in sorted({part[1] for part in parts}))
    words = ["--testPathIgnorePatterns=" + shlex.quote(f"^(?!.*/(?:{files})$)")]
    names = [part[2] for part in parts if len(part) == 3 and part[2]]
    if names and len(names) == len(parts):
        names_pattern = "|".join(regex_literal(name) for name in names)
        words.insert(0, "--testNamePattern=" + shlex.quote(f"^(?:{names_pattern})$"))
    return " " + " ".join(words)


def refused_options(exit_code: int | None, output: str, plugin: str = PLUGIN) -> bool:
    """pytest stopped on the options vacant added (its junitxml plugin is off, `-p plugin` failed)."""
    return exit_code == 4 and ("--junitxml" in output or "junit_family" in output or plugin in output)


@dataclass
class Reported:
    """What the runner's report said: every test case, or why none could be read."""

    results: list[TestResult]
    problem: str | None = None  # the report was there but refused (the text reading was used)
    source: str | None = None  # which file

    def outcomes(self) -> dict[str, str]:
        return {result.id: result.outcome for result in self.results}


def read_reports(plan: RunPlan) -> Reported | None:
    """The report this run wrote, if any (None: no runner reported)."""
    for path in plan.reports:
        stamp = _stamp(path)
        if stamp is None or (path in plan.before and plan.before[path] == stamp):
            continue  # not written, or left from before this run
        try:
            kind = plan.kinds.get(path)
            results = read_json_report(path, kind, plan.cwd) if kind else read_junit(path)
            return Reported(results, None, str(path))
        except ReportError as error:
            return Reported([], str(error), str(path))
    return None


@dataclass(frozen=True)
class Reads:
    """What a selected pytest run read under its directory: the files it opened, the directories
    it listed (relative paths), and whether it started a process whose reads nobody saw."""

    files: frozenset[str]
    dirs: frozenset[str]
    child: bool
    pathdirs: frozenset[str] = frozenset()  # listed by the import system: only importable names count
    names: frozenset[str] = frozenset()  # every module name (each dotted part) an import looked for
    walked: frozenset[str] = frozenset()  # listed by pytest's collection: only what holds Python or settings counts

    @property
    def complete(self) -> bool:
        return not self.child


def read_reads(plan: RunPlan) -> Reads | None:
    """The reads the plugin noted for this run, if it wrote them (None: not traced)."""
    if READS_ENV not in plan.env:
        return None
    try:
        data = json.loads((plan.scratch / READS).read_text())
        return Reads(frozenset(map(str, data["files"])), frozenset(map(str, data["dirs"])), bool(data["child"]),
                     frozenset(map(str, data.get("pathdirs", []))), frozenset(map(str, data.get("names", []))),
                     frozenset(map(str, data.get("walked", []))))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_inputs(plan: RunPlan) -> dict | None:
    """The per-test inputs the recording plugin wrote for this run, raw (None: not recorded);
    vacant.attribute.testinputs reads them."""
    if INPUTS_ENV not in plan.env:
        return None
    path = plan.scratch / INPUTS
    try:
        if path.stat().st_size > INPUTS_CAP:
            return None
        data = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None
