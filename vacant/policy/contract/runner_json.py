"""A test runner's own JSON report, read into the same per-test records as JUnit XML
(vacant.policy.contract.testreport.TestResult): `go test -json` and jest's `--json`.

- `go test -json` is a stream of events, one JSON object a line (`Action` run/output/pass/fail/
  skip, `Package`, `Test`, `Output`), with the go command's own text between them (a build
  failure's `FAIL\tPKG [build failed]`, the compiler's `# PKG` block on stderr). A test's id is
  `go::PKG::TestName/subtest`; its failure text is its own output, whose `file_test.go:N:` lines
  are relative to the package's directory (`dirs`: where that directory may be, most specific
  first). A test that failed only because a subtest did is not a finding of its own (its
  subtests are); a package that failed with no failing test (it did not build, `TestMain`
  exited, a test never finished) is one record `go::PKG`, an error that answers for its tests.
- jest's `--json` report is one document: `testResults[]` (one per test file, `name` its absolute
  path) with `assertionResults[]` (`fullName`, `status`, `failureMessages`, `location` with
  `--testLocationInResults`). A test's id is `jest::FILE::full name`, FILE relative to the check's
  directory (so it is the same on every reconstructed state); a file that failed to run is one
  record `jest::FILE`, an error.
- vitest's `--reporter=json` report has jest's shape (`testResults[]`, `assertionResults[]` with
  `fullName`, `status`, `failureMessages`, `location` with `--includeTaskLocation`), read by the
  same reader into ids `vitest::FILE::full name`.
- `cargo test` has no stable machine format (libtest's `--format json` needs nightly's
  `-Z unstable-options`), so its own text is read, stdout and stderr in the order cargo wrote them:
  `Running unittests src/lib.rs (target/debug/deps/calc-HASH)` (or `Running tests/it.rs (...)`,
  `Doc-tests calc`) opens a test binary's section, `test PATH ... ok|FAILED|ignored` is a result,
  `---- PATH stdout ----` opens a failure's text (its `panicked at FILE:LINE:COL:` line and the
  message after it). A test's id is `cargo::CRATE::SOURCE::path::to::test` (`doc` for SOURCE of a
  doc-test); a binary that did not build is one record `cargo::CRATE` (`error: could not compile`,
  with the compiler's `--> FILE:LINE:COL`), an error that answers for its tests, and a binary that
  started tests but never said `test result:` (it crashed) is one record for its SOURCE.

The same contract as the JUnit reader: at most testreport.MAX_BYTES of input, MAX_TESTS tests and
MAX_TEXT characters of failure text each; whatever cannot be read (not UTF-8, not JSON where JSON
must be, the wrong shape, nested too deep) raises ReportError with one sentence, and the caller
reads the check's text output instead.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from vacant.policy.contract import testreport
from vacant.policy.contract.testreport import ERROR, FAILED, PASSED, SKIPPED, ReportError, TestResult

GO, JEST, VITEST, CARGO = "go", "jest", "vitest", "cargo"
MAX_DEPTH = 16  # a go event is flat; a jest report nests five deep
_FRAMING = re.compile(r"^\s*(?:=== (?:RUN|PAUSE|CONT|NAME)\b|--- (?:FAIL|PASS|SKIP):|(?:FAIL|PASS|ok)\s*$)")
_BUILD_FAILED = re.compile(r"^FAIL\s+(?P<package>\S+)\s+\[(?:build|setup) failed\]\s*$")
_BUILD_HEADER = re.compile(r"^# (?P<package>\S+)")
_GO_PLACE = re.compile(r"^[^\s:]+\.go:\d+(?::\d+)?: ")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_PAIR = re.compile(r"\[[^\[\]{}]*\]|\{[^\[\]{}]*\}")
_BRACKET = re.compile(r"[\[\]{}]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_RANK = {PASSED: 0, SKIPPED: 1, FAILED: 2, ERROR: 3}


def _text(data: bytes) -> str:
    if len(data) > testreport.MAX_BYTES:
        raise ReportError(f"{len(data)} bytes, above the {testreport.MAX_BYTES}-byte cap")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReportError(f"not UTF-8 (byte {error.start})") from None


def _json(text: str, where: str) -> object:
    if _too_deep(text):
        raise ReportError(f"{where}: nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ReportError(f"{where}: not JSON ({str(error).split(':')[0][:80]})") from None


def _too_deep(text: str) -> bool:
    """Whether brackets nest deeper than MAX_DEPTH outside strings, found before json.loads (so
    a deep document costs no recursion) by regular expressions only: strings emptied, then the
    innermost pairs removed MAX_DEPTH times; a bracket left over is deeper (or unbalanced)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    bare = _STRING.sub('""', text)
    for _ in range(MAX_DEPTH):
        bare, removed = _PAIR.subn("", bare)
        if not removed:
            break
    return _BRACKET.search(bare) is not None


def _capped(parts: Iterable[str]) -> str:
    kept: list[str] = []
    size = 0
    for part in parts:
        if size >= testreport.MAX_TEXT:
            break
        piece = part[: testreport.MAX_TEXT - size]
        kept.append(piece)
        size += len(piece)
    return "".join(kept)


def _first_words(details: str, framing: bool = True) -> str:
    """The first line that says something (with `framing`, go's `=== RUN` / `--- FAIL` are not)."""
    return next((line.strip() for line in details.splitlines()
                 if line.strip() and not (framing and _FRAMING.match(line))), "")


# -- go test -json ---------------------------------------------------------------------------------


@dataclass
class _GoTest:
    outcome: str | None = None  # None while it runs
    output: list[str] = field(default_factory=list)
    size: int = 0

    def add(self, text: str) -> None:
        if self.size < testreport.MAX_TEXT:
            self.output.append(text)
            self.size += len(text)


@dataclass
class _GoPackage:
    tests: dict[str, _GoTest] = field(default_factory=dict)
    outcome: str | None = None
    output: list[str] = field(default_factory=list)
    build_failed: bool = False


def package_dirs(package: str, module: str | None) -> tuple[str, ...]:
    """Where a Go package's directory may be, relative to the check's directory: exact when the
    module there names it, else every tail of its import path, longest first."""
    if module and (package == module or package.startswith(module + "/")):
        return (package[len(module) + 1:],) if package != module else ("",)
    parts = package.split("/")
    return tuple("/".join(parts[at:]) for at in range(len(parts))) + ("",)


class _GoStream:
    """The packages and tests a `go test -json` stream has told of so far."""

    def __init__(self) -> None:
        self.packages: dict[str, _GoPackage] = {}
        self.build: dict[str, list[str]] = {}  # the compiler's output, by the package it names
        self.header: str | None = None  # the package whose `# PKG` block the text lines are in
        self.count = 0

    def text(self, line: str) -> None:
        """A line of the go command's own between the events (Go before 1.24 prints its build
        output so)."""
        failed = _BUILD_FAILED.match(line)
        if failed:
            self.packages.setdefault(failed.group("package"), _GoPackage()).build_failed = True
            return
        started = _BUILD_HEADER.match(line)
        self.header = started.group("package") if started else self.header
        if self.header is not None:
            self._build_output(self.header, line + "\n")

    def _build_output(self, package: str, text: str) -> None:
        lines = self.build.setdefault(package, [])
        if sum(map(len, lines)) < testreport.MAX_TEXT:
            lines.append(text)

    def event(self, event: object, number: int) -> None:
        self.header = None
        action, package, test, output = _event(event, number)
        if action in ("build-output", "build-fail"):  # Go 1.24 on: the build output is events too
            package = package.split(" ")[0]
            if action == "build-output":
                self._build_output(package, output)
            return
        state = self.packages.setdefault(package, _GoPackage())
        if test is None:
            self._package_event(state, action, output, event)
            return
        if test not in state.tests:
            self.count += 1
            if self.count > testreport.MAX_TESTS:
                raise ReportError(f"more than {testreport.MAX_TESTS} tests")
        record = state.tests.setdefault(test, _GoTest())
        if action == "output":
            record.add(output)
        elif action in ("pass", "fail", "skip"):
            outcome = {"pass": PASSED, "fail": FAILED, "skip": SKIPPED}[action]
            if record.outcome is None or _RANK[outcome] > _RANK[record.outcome]:
                record.outcome = outcome

    @staticmethod
    def _package_event(state: _GoPackage, action: str, output: str, event: object) -> None:
        if action == "output":
            if _BUILD_FAILED.match(output):
                state.build_failed = True
            if sum(map(len, state.output)) < testreport.MAX_TEXT:
                state.output.append(output)
        elif action in ("pass", "fail", "skip"):
            state.outcome = action
            state.build_failed |= isinstance(event, dict) and bool(event.get("FailedBuild"))


def parse_go_json(data: bytes, module: str | None = None) -> list[TestResult]:
    """Every test in a `go test -json` stream (with the go command's own lines between events)."""
    stream = _GoStream()
    for number, line in enumerate(_text(data).splitlines(), 1):
        if line.lstrip().startswith("{"):
            stream.event(_json(line, f"line {number}"), number)
        else:
            stream.text(line)
    return [result for package, state in stream.packages.items()
            for result in _go_results(package, state, stream.build, module)]


def _event(event: object, number: int) -> tuple[str, str, str | None, str]:
    if not isinstance(event, dict):
        raise ReportError(f"line {number}: an event is a JSON object")
    action, test, output = (event.get(key) for key in ("Action", "Test", "Output"))
    package = event.get("Package", event.get("ImportPath"))
    if not isinstance(action, str) or not isinstance(package, str) or not isinstance(test, (str, type(None))):
        raise ReportError(f"line {number}: an event needs a string Action and Package")
    if action in ("output", "build-output") and not isinstance(output, str):
        raise ReportError(f"line {number}: an output event needs a string Output")
    return action, package, test, output if isinstance(output, str) else ""


def _go_results(package: str, state: _GoPackage, build: dict[str, list[str]],
                module: str | None) -> list[TestResult]:
    dirs = package_dirs(package, module)
    results: list[TestResult] = []
    broken_parents = {name.rsplit("/", 1)[0] for name, test in state.tests.items()
                      if "/" in name and test.outcome in (FAILED, ERROR, None)}
    unfinished = False
    for name, test in state.tests.items():
        details = _capped(test.output)
        outcome = test.outcome
        if outcome is None:  # it never ended: the binary died, timed out or exited under it
            unfinished = True
            if state.outcome != "fail" and not state.build_failed:
                continue
            outcome = ERROR
        if outcome == FAILED and name in broken_parents and not _first_words(details):
            continue  # failed only because a subtest did: the subtest is the finding
        message = ("did not finish: " if test.outcome is None else "") + _GO_PLACE.sub("", _first_words(details))
        results.append(TestResult(("go",), package, name, outcome, message, details, dirs=dirs))
    failed_tests = any(result.broken for result in results)
    if state.build_failed or (state.outcome == "fail" and not failed_tests and not unfinished):
        own = build.get(package) or [line for lines in build.values() for line in lines]
        details = _capped([*own, *state.output])
        words = next((line.strip() for line in own if line.strip() and not _BUILD_HEADER.match(line)), "")
        first = (f"build failed: {words}" if words else "build failed") if state.build_failed else _first_words(details) or "FAIL"
        results.append(TestResult(("go",), package, "", ERROR, first, details))
    return results


def go_module(directory: Path) -> str | None:
    """The module path `go.mod` in `directory` declares, if any."""
    try:
        with open(Path(directory) / "go.mod", "rb") as handle:
            head = handle.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return None
    match = re.search(r"^\s*module\s+\"?([^\s\"]+)", head, re.MULTILINE)
    return match.group(1) if match else None


# -- jest --json ------------------------------------------------------------------------------------

_JEST_OUTCOME = {"passed": PASSED, "failed": FAILED}


def _relative(name: str, root: Path) -> str:
    for base in (Path(root).absolute(), Path(root).resolve()):
        try:
            return Path(os.path.normpath(name)).relative_to(base).as_posix()
        except ValueError:
            continue
    return name


def parse_jest_json(data: bytes, root: Path, runner: str = JEST) -> list[TestResult]:
    """Every test in a jest `--json` report (or vitest's, the same shape: `runner` names which);
    files relative to `root` (the check's directory)."""
    report = _json(_text(data), "the report")
    files = report.get("testResults") if isinstance(report, dict) else None
    if not isinstance(files, list):
        raise ReportError(f"not a {runner} report: no testResults list")
    results: list[TestResult] = []
    for number, entry in enumerate(files, 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) \
                or not isinstance(entry.get("assertionResults", []), list):
            raise ReportError(f"testResults[{number}]: needs a name and an assertionResults list")
        path = _relative(entry["name"], root)
        cases = [_jest_case(case, path, number, runner) for case in entry.get("assertionResults", [])]
        if len(results) + len(cases) > testreport.MAX_TESTS:
            raise ReportError(f"more than {testreport.MAX_TESTS} tests")
        results.extend(cases)
        message = entry.get("message")
        message = message if isinstance(message, str) else ""
        if entry.get("status") == "failed" and not any(case.broken for case in cases):
            details = _capped([_ANSI.sub("", message)])  # the file did not run (a syntax or import error)
            results.append(TestResult((runner,), path, "", ERROR, _first_words(details, False) or "the test file failed",
                                      details, file=path))
    return results


def _jest_case(case: object, path: str, number: int, runner: str) -> TestResult:
    if not isinstance(case, dict):
        raise ReportError(f"testResults[{number}]: an assertion result is an object")
    full, status, messages = case.get("fullName"), case.get("status"), case.get("failureMessages", [])
    if not isinstance(full, str) or not isinstance(status, str) or not isinstance(messages, list) \
            or not all(isinstance(message, str) for message in messages):
        raise ReportError(f"testResults[{number}]: an assertion result needs fullName, status and failureMessages")
    location = case.get("location")
    line = location.get("line") if isinstance(location, dict) else None
    details = _capped(_ANSI.sub("", message) + "\n" for message in messages)
    return TestResult((runner,), path, full, _JEST_OUTCOME.get(status, SKIPPED), _first_words(details, False), details,
                      file=path, line=line if isinstance(line, int) and not isinstance(line, bool) else None)


# -- cargo test (libtest's text) ---------------------------------------------------------------

_CARGO_RUNNING = re.compile(r"^\s*Running (?:unittests )?(?P<source>\S+) \((?:\S*/)?(?P<binary>[^/\s]+?)(?:-[0-9a-f]{16})?(?:\.exe)?\)\s*$")
_CARGO_DOC = re.compile(r"^\s*Doc-tests (?P<crate>\S+)\s*$")
_CARGO_RESULT = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<outcome>ok|FAILED|ignored(?:, .*)?)$")
_CARGO_FAILURE = re.compile(r"^---- (?P<name>.+?) std(?:out|err) ----$")
_CARGO_SUMMARY = re.compile(r"^test result: ")
_CARGO_PANIC = re.compile(r"^thread '.*' (?:\(\d+\) )?panicked at (?P<place>[^\s]+?):?$")
_CARGO_COMPILE = re.compile(r"^error: could not compile `(?P<crate>[^`]+)`")
_CARGO_OUTCOME = {"ok": PASSED, "FAILED": FAILED}


@dataclass
class _CargoBinary:
    crate: str
    source: str
    outcomes: dict[str, str] = field(default_factory=dict)
    failures: dict[str, list[str]] = field(default_factory=dict)
    running: bool = False
    finished: bool = False


class _CargoText:
    """The test binaries and results of `cargo test`'s text so far."""

    def __init__(self) -> None:
        self.binaries: list[_CargoBinary] = []
        self.failure: list[str] | None = None  # the failure text being read
        self.compiler: list[str] = []  # the compiler's lines before the current binary
        self.broken: list[TestResult] = []
        self.count = 0

    def line(self, line: str) -> None:
        running, doc = _CARGO_RUNNING.match(line), _CARGO_DOC.match(line)
        if running:
            self._start(running.group("binary").replace("-", "_"), running.group("source"))
            return
        if doc:
            self._start(doc.group("crate"), "doc")
            return
        compile_error = _CARGO_COMPILE.match(line)
        if compile_error:
            self._did_not_build(compile_error.group("crate"), line)
            return
        binary = self.binaries[-1] if self.binaries else None
        if binary is None:
            if sum(map(len, self.compiler)) < testreport.MAX_TEXT:
                self.compiler.append(line + "\n")
            return
        self._in_binary(binary, line)

    def _start(self, crate: str, source: str) -> None:
        self.binaries.append(_CargoBinary(crate, source))
        self.failure, self.compiler = None, []

    def _in_binary(self, binary: _CargoBinary, line: str) -> None:
        result, failure = _CARGO_RESULT.match(line), _CARGO_FAILURE.match(line)
        if line.startswith("running "):
            binary.running = True
        elif result and self.failure is None:
            if result.group("name") not in binary.outcomes:
                self.count += 1
                if self.count > testreport.MAX_TESTS:
                    raise ReportError(f"more than {testreport.MAX_TESTS} tests")
            binary.outcomes[result.group("name")] = _CARGO_OUTCOME.get(result.group("outcome"), SKIPPED)
        elif failure:
            self.failure = binary.failures.setdefault(failure.group("name"), [])
        elif _CARGO_SUMMARY.match(line) or line == "failures:":
            self.failure = None
            binary.finished |= bool(_CARGO_SUMMARY.match(line))
        elif self.failure is not None and sum(map(len, self.failure)) < testreport.MAX_TEXT:
            self.failure.append(line + "\n")

    def _did_not_build(self, crate: str, line: str) -> None:
        """`could not compile CRATE`: one record for the crate (its lib and its test build may each
        say so; the first, which follows the compiler's errors, is kept)."""
        crate = crate.replace("-", "_")
        if not any(result.classname == crate for result in self.broken):
            details = _capped([*self.compiler, line + "\n"])
            words = next((text.strip().removeprefix("error: ") for text in self.compiler if text.startswith("error")), "")
            self.broken.append(TestResult(("cargo",), crate, "", ERROR,
                                          f"build failed: {words}" if words else "build failed", details))
        self.compiler = []

    def results(self) -> list[TestResult]:
        out = list(self.broken)
        for binary in self.binaries:
            for name, outcome in binary.outcomes.items():
                details = _capped(binary.failures.get(name, []))
                out.append(TestResult(("cargo", binary.crate), binary.source, name, outcome, _panic_message(details),
                                      details, file=None if binary.source == "doc" else binary.source))
            if binary.running and not binary.finished:
                out.append(TestResult(("cargo", binary.crate), binary.source, "", ERROR,
                                      "the test binary did not finish (it crashed or was killed)", ""))
        return out


def _panic_message(details: str) -> str:
    """The panic's message: the line after `panicked at FILE:LINE:COL:` (else the first line)."""
    lines = details.splitlines()
    for at, line in enumerate(lines):
        if _CARGO_PANIC.match(line.strip()):
            rest = [text.strip() for text in lines[at + 1:] if text.strip()]
            return rest[0] if rest else line.strip()
    return _first_words(details, False)


def parse_cargo_text(data: bytes) -> list[TestResult]:
    """Every test `cargo test`'s text (stdout and stderr in order) tells of."""
    text = _CargoText()
    for line in _ANSI.sub("", _text(data)).splitlines():
        text.line(line.rstrip("\r"))
    return text.results()


def read_json_report(path: Path, kind: str, root: Path) -> list[TestResult]:
    """The report of runner `kind` at `path`, read within MAX_BYTES (ReportError when it cannot)."""
    data = testreport.read_bytes(path)
    if kind == CARGO:
        return parse_cargo_text(data)
    return parse_go_json(data, go_module(root)) if kind == GO else parse_jest_json(data, root, kind)
