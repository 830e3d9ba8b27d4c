"""Why a probe came out the colour it did, when the reason is the check itself: one closed
vocabulary (`REASONS`), read from what the runners really print.

`vacant contract add` runs a check once before adding it (vacant/policy/contract/red_first.py). Red is what
an acceptance check must be, but not every red measures the work: a misspelt test id, a test file
that is not there, a runner that collected nothing or a misspelt program can never turn green,
whatever the agent does. `classify` names that cause; a reason whose `broken` is true refuses the
check (unless added with `--allow-broken`). Two reds are accepted, and said: `missing_code`, the
red test-first work expects (a test imports a module or name nobody wrote yet), and
`missing_program`, a program that is not installed: the agent may provision it (checks see
`<workspace>/.local/bin` first on PATH), and at Stop such a check is an `env/NAME` finding.

Signatures are from real runs of pytest, unittest (`python -m unittest`), node's built-in test
runner (`node --test`) and `go test`; tests/unit/policy/contract/test_probe_reasons.py runs them for real.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from vacant.core.docgen import GeneratedDoc
from vacant.policy.contract.checks import missing_tool


class Reason(NamedTuple):
    broken: bool  # the check cannot pass whatever the work does: refused without --allow-broken
    meaning: str


PROGRAM_NOT_FOUND = "program_not_found"
MISSING_PROGRAM = "missing_program"
NO_TESTS = "no_tests"
UNKNOWN_TEST = "unknown_test"
LOAD_ERROR = "load_error"
USAGE_ERROR = "usage_error"
MISSING_CODE = "missing_code"

REASONS: dict[str, Reason] = {
    PROGRAM_NOT_FOUND: Reason(True, "the command's program is misspelt: not found, and one edit off a well-known "
                                    "tool's name (`pytset` for `pytest`), or `python -m pytest` and the like for a "
                                    "runner that is not there or is misspelt; if added anyway, a program not found "
                                    "stays `env/NAME` at Stop"),
    MISSING_PROGRAM: Reason(False, "the command's program is not installed (exit 127, or 126 with a not-found message, "
                                   "for a program outside the workspace): red for a reason the agent may fix by "
                                   "provisioning it (on PATH, or in `<workspace>/.local/bin`, which checks see first); "
                                   "an acceptance check is accepted with the `env/NAME` warning, and at Stop it is an "
                                   "`env/NAME` finding, blamed on no one; a guard must hold now, so it is refused "
                                   "until the program is there"),
    NO_TESTS: Reason(True, "the runner ran no test: none collected, all deselected or skipped (pytest exit 5, "
                           "unittest `Ran 0 tests` / `NO TESTS RAN`, node `# tests 0`, `go test` whose packages all "
                           "say `[no tests to run]` (`-run` matched none: exit 0) or `[no test files]`)"),
    UNKNOWN_TEST: Reason(True, "a test file, module, class or test id the command names does not exist (pytest "
                               "`ERROR: not found` / `file or directory not found`, unittest `_FailedTest` with "
                               "`has no attribute` or `No module named` for the named module, node `Could not find`)"),
    LOAD_ERROR: Reason(True, "a test file could not be loaded: a syntax or other error while collecting it "
                             "(pytest `error during collection`, unittest `Failed to import test module`)"),
    USAGE_ERROR: Reason(True, "the test runner itself rejected its arguments (pytest `ERROR: usage`, unittest "
                              "`error: unrecognized arguments`, `node: bad option`); another program's usage error is "
                              "an ordinary red"),
    MISSING_CODE: Reason(False, "a test imports a module or name that does not exist yet: the red test-first work "
                                "expects, accepted (the probe says which)"),
}


# tools run as `python -m NAME`: missing (or misspelt), the check cannot run; any other missing
# module run that way may be the one the work is to write
RUNNER_MODULES = ("pytest", "unittest", "nose2", "coverage", "mypy", "ruff", "black", "flake8", "pylint", "tox",
                  "nox", "doctest", "pyflakes", "isort", "behave", "django", "hypothesis", "pip")
# programs checks commonly run: a missing name one letter off one of these is a misspelling (refused),
# where a name that is one of them, or near none, is a program to provision (accepted, env/NAME)
WELL_KNOWN_PROGRAMS = frozenset(RUNNER_MODULES) | {
    "python", "python3", "py.test", "node", "npm", "npx", "yarn", "pnpm", "bun", "deno", "jest", "vitest", "mocha",
    "tsc", "eslint", "prettier", "go", "gofmt", "golangci-lint", "cargo", "rustc", "make", "cmake", "uv", "pyright",
    "bandit", "shellcheck", "bash", "sh", "grep", "test", "diff", "jq", "git", "java", "mvn", "gradle", "dotnet",
    "ruby", "rake", "rspec", "bundle", "php", "phpunit", "composer", "swift", "perl", "docker", "curl"}


@dataclass(frozen=True)
class Verdict:
    reason: str  # a key of REASONS
    detail: str  # what exactly, in a few words

    @property
    def broken(self) -> bool:
        return REASONS[self.reason].broken

    def sentence(self) -> str:
        return f"{self.reason}: {self.detail}"


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_PY_NO_MODULE_RUNNER = re.compile(r"^\S*python[\d.]*: No module named (?P<name>[\w.]+)\s*$", re.MULTILINE)
_PYTEST_NOT_FOUND = re.compile(r"^ERROR: (?:file or directory not found|not found): (?P<what>.+)$", re.MULTILINE)
# only a test runner's own usage errors: a CLI the work is to change may well reject a flag it lacks yet
_USAGE = re.compile(r"^(?:ERROR: usage: .*\bpytest\b.*|.*\b(?:pytest|unittest)\S*: error: (?:unrecognized arguments|"
                    r"the following arguments|argument ).*|node: bad option: .*)$", re.MULTILINE)
_PYTEST_COLLECTION = re.compile(r"errors? during collection|^_+ ERROR collecting (?P<path>\S+) _+$", re.MULTILINE)
_FAILED_IMPORT = re.compile(r"Failed to import test module: (?P<module>[\w.]+)")
_NO_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '(?P<name>[\w.]+)'")
_CANNOT_IMPORT = re.compile(r"ImportError: cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'")
_FAILED_TEST = re.compile(r"^ERROR: (?P<name>\S+) \(unittest\.loader\._FailedTest(?:\.\S+)?\)$", re.MULTILINE)
_NO_ATTRIBUTE = re.compile(r"AttributeError: (?:module|type object) '(?P<owner>[\w.]+)' has no attribute "
                           r"'(?P<name>\w+)'")
_NOT_IMPORTABLE = re.compile(r"ImportError: Start directory is not importable: (?P<dir>.+)$", re.MULTILINE)
_UNITTEST_NONE = re.compile(r"^Ran 0 tests in |^NO TESTS RAN$", re.MULTILINE)
_PYTEST_NONE = re.compile(r"^(?:no tests ran|\d+ deselected)(?: in [\d.]+s)?", re.MULTILINE)
_NODE_NOT_FOUND = re.compile(r"^Could not find '(?P<path>[^']+)'", re.MULTILINE)
_NODE_COUNT = re.compile(r"^# (?P<key>tests|pass|fail|skipped|todo|cancelled) (?P<n>\d+)$", re.MULTILINE)
_NODE_NO_MODULE = re.compile(r"Error: Cannot find module '(?P<name>[^']+)'")
# `go test`'s line per package: `ok  PKG  0.01s [no tests to run]`, `?  PKG  [no test files]`, `FAIL  PKG ...`
_GO_PACKAGE = re.compile(r"^(?P<kind>ok|\?|FAIL)[ \t]+(?P<package>[^\s\[]+)(?P<rest>.*)$", re.MULTILINE)
_UNITTEST_CRASH = re.compile(r'unittest[/\\]main\.py", line \d+, in (?:parseArgs|createTests|__init__)')


def classify(exit_code: int | None, output: str, root: Path, timed_out: bool = False) -> Verdict | None:
    """Why the probe is the colour it is, when that says the check itself is broken (or is the red
    of code not written yet); None when nothing here explains it (an ordinary pass or failure)."""
    if timed_out:
        return None
    text = _ANSI.sub("", output)
    for rule in (_program, _usage, _unknown_test, _load, _no_tests):
        verdict = rule(exit_code, text, Path(root))
        if verdict is not None:
            return verdict
    return None


def _program(exit_code: int | None, text: str, root: Path) -> Verdict | None:
    tool = missing_tool(exit_code, text, root)
    if tool is not None:
        meant = misspelling_of(tool)
        if meant is not None:
            return Verdict(PROGRAM_NOT_FOUND, f"`{tool}` was not found (exit {exit_code}): a misspelling of `{meant}`?")
        return Verdict(MISSING_PROGRAM, f"`{tool}` is not installed or not executable (exit {exit_code})")
    runner = _PY_NO_MODULE_RUNNER.search(text)
    if runner and exit_code not in (0, None):
        name = runner.group("name")
        if name.split(".")[0] in RUNNER_MODULES or difflib.get_close_matches(name, RUNNER_MODULES, n=1, cutoff=0.75):
            return Verdict(PROGRAM_NOT_FOUND, f"python has no module `{name}` to run with -m")
        return Verdict(MISSING_CODE, f"python has no module `{name}` to run with -m yet")  # the work's own module
    return None


def misspelling_of(name: str) -> str | None:
    """The well-known program `name` is one edit (a letter added, dropped, changed, or two swapped)
    away from, if any. Version digits do not count (`python3.12` is `python`, to provision), nor do
    short names (`go` and `gp` are too near everything)."""
    bare = _unversioned(name)
    if len(bare) < 4 or bare in {_unversioned(known) for known in WELL_KNOWN_PROGRAMS}:
        return None
    near = [known for known in sorted(WELL_KNOWN_PROGRAMS) if len(known) >= 4 and _one_edit(bare, _unversioned(known))]
    return near[0] if near else None


def _unversioned(name: str) -> str:
    return re.sub(r"[\d.]+$", "", name.lower()) or name.lower()


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` differ by exactly one insertion, deletion, substitution or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diffs) == 1 or (len(diffs) == 2 and diffs[1] == diffs[0] + 1
                                   and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def _usage(exit_code: int | None, text: str, root: Path) -> Verdict | None:
    match = _USAGE.search(text)
    if match and exit_code not in (0, None):
        return Verdict(USAGE_ERROR, match.group(0).strip()[:160])
    return None


def _unknown_test(exit_code: int | None, text: str, root: Path) -> Verdict | None:
    if exit_code in (0, None):
        return None
    pytest_missing = _PYTEST_NOT_FOUND.search(text)
    if pytest_missing:
        return Verdict(UNKNOWN_TEST, f"pytest found no {pytest_missing.group('what').strip()[:120]}")
    node_missing = _NODE_NOT_FOUND.search(text)
    if node_missing:
        return Verdict(UNKNOWN_TEST, f"node found no test file {node_missing.group('path')}")
    not_importable = _NOT_IMPORTABLE.search(text)
    if not_importable:
        return Verdict(UNKNOWN_TEST, f"unittest cannot start in {not_importable.group('dir').strip()}")
    if _FAILED_TEST.search(text):
        attribute = _NO_ATTRIBUTE.search(text)
        if attribute:
            return Verdict(UNKNOWN_TEST, f"unittest found no `{attribute.group('name')}` in `{attribute.group('owner')}`")
        failed = _FAILED_IMPORT.search(text)
        missing = _NO_MODULE.search(text)
        if failed and missing and _same_module(missing.group("name"), failed.group("module")):
            return Verdict(UNKNOWN_TEST, f"unittest found no test module `{missing.group('name')}`")
    return None


def _same_module(missing: str, test_module: str) -> bool:
    """unittest names the module it failed to import by its last part (`test_qq` for `tests.test_qq`)."""
    return missing == test_module or missing.endswith("." + test_module) or test_module.endswith("." + missing)


def _load(exit_code: int | None, text: str, root: Path) -> Verdict | None:
    if exit_code in (0, None):
        return None
    failed = _FAILED_IMPORT.search(text)
    collecting = _PYTEST_COLLECTION.search(text)
    if not failed and not collecting and _UNITTEST_CRASH.search(text):
        last = [line.strip() for line in text.splitlines() if line.strip()][-1]
        missing = _NO_MODULE.search(last)
        if missing:
            return Verdict(MISSING_CODE, f"a test module imports `{missing.group('name')}`, which does not exist yet")
        return Verdict(LOAD_ERROR, f"unittest could not load the tests ({last[:100]})")
    if not failed and not collecting:
        if _NODE_NO_MODULE.search(text) and _NODE_COUNT.search(text):
            return Verdict(MISSING_CODE, f"a test requires `{_NODE_NO_MODULE.search(text).group('name')}`, "
                                         "which does not exist yet")
        return None
    where = failed.group("module") if failed else _collected_path(text)
    missing = _NO_MODULE.search(text)
    if missing:
        return Verdict(MISSING_CODE, f"{where} imports `{missing.group('name')}`, which does not exist yet")
    cannot = _CANNOT_IMPORT.search(text)
    if cannot:
        return Verdict(MISSING_CODE, f"{where} imports `{cannot.group('name')}` from `{cannot.group('module')}`, "
                                     "which does not exist yet")
    error = re.search(r"^(?:E\s+)?(?P<error>[A-Z]\w*(?:Error|Exception)\b.*)$", text, re.MULTILINE)
    said = f" ({error.group('error').strip()[:100]})" if error else ""
    return Verdict(LOAD_ERROR, f"{where} could not be loaded{said}")


def _collected_path(text: str) -> str:
    for match in _PYTEST_COLLECTION.finditer(text):
        if match.group("path"):
            return match.group("path")
    return "a test file"


def _no_tests(exit_code: int | None, text: str, root: Path) -> Verdict | None:
    if _UNITTEST_NONE.search(text):
        return Verdict(NO_TESTS, "unittest ran 0 tests")
    if exit_code == 5 and _PYTEST_NONE.search(text):
        return Verdict(NO_TESTS, "pytest collected no test to run (exit 5)")
    counts = {m.group("key"): int(m.group("n")) for m in _NODE_COUNT.finditer(text)}
    if "tests" in counts and (counts["tests"] == 0 or (counts.get("pass", 0) == 0 and counts.get("fail", 0) == 0)):
        return Verdict(NO_TESTS, f"node ran {counts['tests']} test(s), none passed or failed")
    return _go_no_tests(_go_text(text))


def _go_text(text: str) -> str:
    """`go test -json`'s events as the text they carry (each `Output`), other lines as they are."""
    if '"Action"' not in text:
        return text
    lines = []
    for line in text.splitlines():
        event = _json_event(line)
        lines.append(line if event is None else str(event.get("Output") or "").rstrip("\n"))
    return "\n".join(lines)


def _json_event(line: str) -> dict | None:
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) and "Action" in event else None


def _go_no_tests(text: str) -> Verdict | None:
    """`go test` that ran no test: every package it reports says `[no tests to run]` (its `-run`
    matched no test, exit 0: a misspelt test name passes) or `[no test files]`."""
    unmatched, untested = [], []
    for line in _GO_PACKAGE.finditer(text):
        kind, rest = line.group("kind"), line.group("rest")
        if kind == "FAIL" or (kind == "ok" and "[no tests to run]" not in rest):
            return None  # a package failed, or ran a test
        if kind == "ok":
            unmatched.append(line.group("package"))
        elif "[no test files]" in rest:
            untested.append(line.group("package"))
    if not unmatched and not untested:
        return None
    said = []
    if unmatched:
        said.append(f"no test to run in {_some(unmatched)} (a -run pattern that matches none?)")
    if untested:
        said.append(f"no test files in {_some(untested)}")
    return Verdict(NO_TESTS, "go test ran no test: " + "; ".join(said))


def _some(names: list[str], shown: int = 2) -> str:
    more = f" and {len(names) - shown} more package(s)" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def render_reasons() -> str:
    lines = ["| reason | refused | meaning |", "|---|---|---|"]
    lines += [f"| `{name}` | {'yes' if reason.broken else 'no'} | {reason.meaning} |" for name, reason in REASONS.items()]
    return "\n".join(lines) + "\n"


DOC = GeneratedDoc("CONTRACT.md", render_reasons, ("vacant/policy/contract/probe_reasons.py",), region=True)
