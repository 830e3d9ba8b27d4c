"""Test runners behind a check: where their JUnit report goes, how one test is run alone, and one
finding per failing test.

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
  (vacant.policy.runner_sources) that, in that process only, records each test's outcome and
  writes JUnit XML to a scratch file, and with a selection runs only the named tests (ids
  `unittest::MODULE.CLASS::METHOD`); a sitecustomize it shadows still runs.
- A selected pytest or unittest run also says what it read: the plugin's audit hook (`sys.addaudithook`) notes
  every file the process opened and every directory it listed under the check's directory, and
  whether it started another process (whose reads it cannot see). Same inputs, same answer: a
  replay reuses a selected run's result on another state whose files that run read are the same
  (vacant.attribute.statechecks). It collects only the test files that can hold the selected tests
  (their dotted path is a prefix of a selected id's class name), so it reads no other.
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
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from vacant.policy.runner_sources import (
    PLUGIN_SOURCE,
    READS_ENV,
    SELECT_ENV,
    UNITTEST_REPORT_ENV,
    UNITTEST_SITE_SOURCE,
)
from vacant.policy.testreport import ReportError, TestResult, read_junit

PYTEST_REPORT = "pytest.xml"
PLUGIN = "_vacant_select"
READS = "reads.json"
UNITTEST_REPORT = "unittest.xml"
_NODE_TEST = re.compile(r"(?<![\w-])--test(?![\w-])")
_UNITTEST = re.compile(r"(?<![\w.-])-m\s+unittest(?![\w.])")



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

    def plain(self) -> RunPlan:
        """The same run without the pytest options (a pytest that refused them)."""
        env = {k: v for k, v in self.env.items() if k not in ("PYTEST_ADDOPTS", SELECT_ENV, READS_ENV)}
        return RunPlan(self.command, env, self.scratch, self.reports[:-1], dict(self.before), self.selected)

    def cleanup(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def plan_run(command: str, cwd: Path, junit: str | None, select: tuple[str, ...] = (),
             base_env: dict[str, str] | None = None) -> RunPlan:
    """The run of one check's command in `cwd`, with its report routed (module docstring)."""
    scratch = Path(tempfile.mkdtemp(prefix="vacant-tests-"))
    env_in = base_env if base_env is not None else os.environ
    env = {"PYTHONDONTWRITEBYTECODE": "1"}
    own = [Path(cwd) / junit] if junit else []
    pytest_report = scratch / PYTEST_REPORT
    options = [f"--junitxml={pytest_report}", "-o", "junit_family=xunit1"]
    paths: list[str] = []
    reports = own + [pytest_report]
    if junit is None and _UNITTEST.search(command):  # unittest writes no report of its own: a reporter does
        paths.append(_source_dir(scratch / "site", "sitecustomize", UNITTEST_SITE_SOURCE))
        env[UNITTEST_REPORT_ENV] = str(scratch / UNITTEST_REPORT)
        reports.append(scratch / UNITTEST_REPORT)
    if select:
        paths.append(_source_dir(scratch / "plugin", PLUGIN, PLUGIN_SOURCE))
        options += ["-p", PLUGIN]
        env[SELECT_ENV] = json.dumps(list(select))
        env[READS_ENV] = str(scratch / READS)
        command = _node_selected(command, select) if junit else command
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths + ([env_in["PYTHONPATH"]] if env_in.get("PYTHONPATH") else []))
    env["PYTEST_ADDOPTS"] = " ".join(shlex.quote(o) for o in options) + (
        " " + env_in["PYTEST_ADDOPTS"] if env_in.get("PYTEST_ADDOPTS") else "")
    return RunPlan(command, env, scratch, reports, {path: _stamp(path) for path in own}, tuple(select))


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


def refused_options(exit_code: int | None, output: str) -> bool:
    """pytest stopped on the options vacant added (its junitxml plugin is off, `-p` failed)."""
    return exit_code == 4 and ("--junitxml" in output or "junit_family" in output or PLUGIN in output)


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
            return Reported(read_junit(path), None, str(path))
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

    @property
    def complete(self) -> bool:
        return not self.child


def read_reads(plan: RunPlan) -> Reads | None:
    """The reads the plugin noted for this run, if it wrote them (None: not traced)."""
    if READS_ENV not in plan.env:
        return None
    try:
        data = json.loads((plan.scratch / READS).read_text())
        return Reads(frozenset(map(str, data["files"])), frozenset(map(str, data["dirs"])), bool(data["child"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
