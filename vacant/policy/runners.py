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
- A selected pytest run also says what it read: the plugin's audit hook (`sys.addaudithook`) notes
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

from vacant.policy.testreport import ReportError, TestResult, read_junit

PYTEST_REPORT = "pytest.xml"
PLUGIN = "_vacant_select"
SELECT_ENV = "VACANT_SELECT_TESTS"
READS_ENV = "VACANT_READS_FILE"
READS = "reads.json"
_NODE_TEST = re.compile(r"(?<![\w-])--test(?![\w-])")
_UNITTEST = re.compile(r"(?<![\w.-])-m\s+unittest(?![\w.])")

# the plugin pytest loads to run only the named tests; it computes each item's report id the way
# pytest's junitxml does (suite name, class name from the node id's path, name)
PLUGIN_SOURCE = r'''
import json, os, re, sys

_ROOT = os.path.realpath(os.getcwd())
_FILES, _DIRS, _CHILD = set(), set(), []
_SPAWN = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty")

def _inside(path):
    try:
        if isinstance(path, int):
            return None
        real = os.path.realpath(os.path.join(os.getcwd(), os.fsdecode(path)))
    except (TypeError, ValueError, OSError):
        return None
    if real == _ROOT:
        return "."
    if real.startswith(_ROOT + os.sep):
        return real[len(_ROOT) + 1:]
    return None

def _audit(event, args):
    if event == "open" and args:
        rel = _inside(args[0])
        if rel is not None:
            _FILES.add(rel)
    elif event in ("os.listdir", "os.scandir"):
        rel = _inside(args[0] if args and args[0] is not None else ".")
        if rel is not None:
            _DIRS.add(rel)
    elif event in _SPAWN:
        _CHILD.append(event)

sys.addaudithook(_audit)

def pytest_unconfigure(config):
    target = os.environ.get("''' + READS_ENV + r'''")
    if target:
        with open(target, "w") as out:
            json.dump({"files": sorted(_FILES), "dirs": sorted(_DIRS), "child": bool(_CHILD)}, out)

def _wanted_classes(config):
    classes = []
    prefix = getattr(config.option, "junitprefix", None)
    for test_id in json.loads(os.environ.get("''' + SELECT_ENV + r'''", "[]")):
        parts = test_id.split("[", 1)[0].split("::")
        if len(parts) < 2:
            return None
        name = parts[-2]
        if prefix and name.startswith(prefix + "."):
            name = name[len(prefix) + 1:]
        classes.append(name)
    return classes

def pytest_ignore_collect(collection_path, config):
    if collection_path.suffix != ".py" or collection_path.name in ("conftest.py", "__init__.py"):
        return None
    classes = _wanted_classes(config)
    try:
        rel = collection_path.relative_to(config.rootpath)
    except ValueError:
        return None
    if classes is None:
        return None
    dotted = ".".join(rel.with_suffix("").parts)
    if any(name == dotted or name.startswith(dotted + ".") for name in classes):
        return None
    return True

def _report_id(nodeid, suite, prefix):
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    classname = ".".join(names[:-1])
    if prefix:
        classname = prefix + "." + classname
    return "::".join(part for part in (suite, classname, names[-1]) if part)

def pytest_collection_modifyitems(session, config, items):
    wanted = set(json.loads(os.environ.get("''' + SELECT_ENV + r'''", "[]")))
    try:
        suite = config.getini("junit_suite_name")
    except ValueError:
        suite = "pytest"
    prefix = getattr(config.option, "junitprefix", None)
    keep = [item for item in items if _report_id(item.nodeid, suite, prefix) in wanted]
    dropped = [item for item in items if _report_id(item.nodeid, suite, prefix) not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
'''


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
    if select:
        plugin_dir = scratch / "plugin"
        plugin_dir.mkdir()
        (plugin_dir / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE)
        options += ["-p", PLUGIN]
        env["PYTHONPATH"] = str(plugin_dir) + (os.pathsep + env_in["PYTHONPATH"] if env_in.get("PYTHONPATH") else "")
        env[SELECT_ENV] = json.dumps(list(select))
        env[READS_ENV] = str(scratch / READS)
        command = _node_selected(command, select) if junit else command
    env["PYTEST_ADDOPTS"] = " ".join(shlex.quote(o) for o in options) + (
        " " + env_in["PYTEST_ADDOPTS"] if env_in.get("PYTEST_ADDOPTS") else "")
    reports = own + [pytest_report]
    return RunPlan(command, env, scratch, reports, {path: _stamp(path) for path in own}, tuple(select))


def _node_selected(command: str, select: tuple[str, ...]) -> str:
    """node's runner: `--test-name-pattern` for the tests' own names, right after `--test`."""
    if "node" not in command or not _NODE_TEST.search(command):
        return command
    names = "|".join(re.escape(test_id.rsplit("::", 1)[-1]) for test_id in select)
    pattern = shlex.quote(f"^(?:{names})$")
    return _NODE_TEST.sub(lambda m: f"--test --test-name-pattern={pattern}", command, count=1)


def per_test_advice(command: str, junit: str | None) -> str | None:
    """What to say when a command runs a test runner that reports no test ids (docs/CONTRACT.md,
    "Test suites"): `python -m unittest` writes no report, pytest runs the same suite with one."""
    if junit is None and _UNITTEST.search(command):
        return ("`python -m unittest` writes no per-test report, so its failures are read from its text and the "
                "Stop re-runs the whole suite; `python -m pytest` runs the same unittest suite with one finding per "
                "failing test, each re-run alone (or name a JUnit file the command writes with `junit = PATH`)")
    return None


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
