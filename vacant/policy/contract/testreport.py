"""A test runner's machine-readable report (JUnit XML), read safely into one record per test.

JUnit XML is what pytest (`--junitxml`), node's test runner (`--test-reporter=junit`), and most
other runners write. The reader is stdlib expat with every way XML can make work refused: a
document type declaration (and with it every entity definition: no billion laughs, no external
entity), more than MAX_DEPTH nested elements, more than MAX_BYTES of input, more than MAX_TESTS
test cases. Whatever it refuses raises `ReportError` with one sentence; the caller then falls
back to the check's text output, so nothing the check said is lost. A failure's text is kept up
to MAX_TEXT characters (its head: where the traceback starts).

A test's id is stable across states: its enclosing suites, its class name and its name, joined by
`::` (e.g. `pytest::tests.test_text.TestWrap::test_wrap[2]`, `test::adds`). Its location is the
line its failure points at: the innermost frame of the failure's traceback inside the workspace,
in the test's own file when the traceback passes through it (the assert line), else the innermost
one (a collection error's import line, a helper's raise).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from vacant.core.safeio import read_capped

MAX_BYTES = 64 << 20
MAX_DEPTH = 64
MAX_TESTS = 200_000
MAX_TEXT = 64 * 1024
CHUNK = 1 << 16

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
BROKEN = (FAILED, ERROR)


class ReportError(ValueError):
    """The report cannot be read (refused, malformed, too large): one sentence saying why."""


@dataclass(frozen=True)
class TestResult:
    suites: tuple[str, ...]  # enclosing <testsuite> names, outermost first
    classname: str
    name: str
    outcome: str  # passed | failed | error | skipped
    message: str = ""  # the failure's `message` attribute (or its first line)
    details: str = ""  # the failure's text (a traceback), at most MAX_TEXT characters
    file: str | None = None  # the testcase's `file` attribute, as written
    line: int | None = None  # the testcase's `line` attribute (where the test is defined)
    dirs: tuple[str, ...] = ()  # where the relative paths its failure names may be (a Go package's directory)

    @property
    def id(self) -> str:
        return "::".join(part for part in (*self.suites, self.classname, self.name) if part)

    @property
    def broken(self) -> bool:
        return self.outcome in BROKEN


@dataclass
class _Case:
    suites: tuple[str, ...]
    attrs: dict[str, str]
    outcome: str = PASSED
    message: str = ""
    text: list[str] = field(default_factory=list)
    kept: int = 0


class _Reader:
    """Expat callbacks: a stack of open elements, the test case being read, the results so far."""

    def __init__(self) -> None:
        self.depth = 0
        self.suites: list[str] = []
        self.case: _Case | None = None
        self.in_outcome = False
        self.results: list[TestResult] = []
        self.saw_root = False

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ReportError(f"nested deeper than {MAX_DEPTH} elements")
        if self.depth == 1:
            if tag not in ("testsuites", "testsuite"):
                raise ReportError(f"not a JUnit report: its root element is <{tag[:40]}>")
            self.saw_root = True
        if tag == "testsuite":
            self.suites.append(attrs.get("name", ""))
        elif tag == "testcase":
            if self.case is not None:
                raise ReportError("a <testcase> inside another <testcase>")
            self.case = _Case(tuple(self.suites), dict(attrs))
        elif self.case is not None and tag in ("failure", "error", "skipped"):
            self._outcome(tag, attrs)

    def _outcome(self, tag: str, attrs: dict[str, str]) -> None:
        case = self.case
        assert case is not None
        rank = {PASSED: 0, SKIPPED: 1, FAILED: 2, ERROR: 3}
        outcome = {"failure": FAILED, "error": ERROR, "skipped": SKIPPED}[tag]
        if rank[outcome] > rank[case.outcome]:
            case.outcome = outcome
            case.message = attrs.get("message", "")
            case.text, case.kept = [], 0
            self.in_outcome = outcome in BROKEN
        else:
            self.in_outcome = False

    def text(self, data: str) -> None:
        case = self.case
        if case is None or not self.in_outcome or case.kept >= MAX_TEXT:
            return
        piece = data[: MAX_TEXT - case.kept]
        case.text.append(piece)
        case.kept += len(piece)

    def end(self, tag: str) -> None:
        self.depth -= 1
        if tag == "testsuite" and self.suites:
            self.suites.pop()
        elif tag == "testcase" and self.case is not None:
            self._close_case()
        elif tag in ("failure", "error"):
            self.in_outcome = False

    def _close_case(self) -> None:
        case, self.case = self.case, None
        assert case is not None
        if len(self.results) >= MAX_TESTS:
            raise ReportError(f"more than {MAX_TESTS} test cases")
        details = "".join(case.text)
        message = case.message or next((line.strip() for line in details.splitlines() if line.strip()), "")
        self.results.append(TestResult(
            suites=case.suites, classname=case.attrs.get("classname", ""), name=case.attrs.get("name", ""),
            outcome=case.outcome, message=message, details=details, file=case.attrs.get("file") or None,
            line=_int(case.attrs.get("line")),
        ))


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _refuse(what: str) -> Callable[..., None]:
    def handler(*_args: object) -> None:
        raise ReportError(f"refused: the report has {what} (a JUnit report needs none)")
    return handler


def parse_junit(data: bytes) -> list[TestResult]:
    """Every test case in a JUnit XML document, in document order (ReportError when refused)."""
    if len(data) > MAX_BYTES:
        raise ReportError(f"{len(data)} bytes, above the {MAX_BYTES}-byte cap")
    reader = _Reader()
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse("a document type declaration")
    parser.EntityDeclHandler = _refuse("an entity declaration")
    parser.ExternalEntityRefHandler = _refuse("an external entity")
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    try:
        for at in range(0, len(data), CHUNK):
            parser.Parse(data[at: at + CHUNK], False)
        parser.Parse(b"", True)
    except expat.ExpatError as error:
        raise ReportError(f"not well-formed XML ({expat.errors.messages.get(error.code, error)} at line "
                          f"{error.lineno})") from None
    if not reader.saw_root:
        raise ReportError("empty: no root element")
    return reader.results


def read_bytes(path: Path) -> bytes:
    """A report's bytes, at most MAX_BYTES + 1 of them (ReportError when it cannot be read)."""
    try:
        return read_capped(path, MAX_BYTES)
    except OSError as error:
        raise ReportError(f"cannot read {path}: {error.strerror or error}") from None


def read_junit(path: Path) -> list[TestResult]:
    """The report at `path`, read within MAX_BYTES (ReportError when it cannot be read)."""
    return parse_junit(read_bytes(path))


# -- where a failure points ------------------------------------------------------------------------

# pytest: `tests/test_x.py:12: AssertionError`
_PY_LINE = re.compile(r"^(?P<path>[^\s:][^:\n]*?):(?P<line>\d+):(?:\s|$)")
_PY_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')  # a Python traceback
_JS_FRAME = re.compile(r"^\s*at (?:.*\()?(?:file://)?(?P<path>[^\s()]+?):(?P<line>\d+):\d+\)?\s*$")  # node
# Go: `    lib_test.go:7: got 1` (t.Errorf), `./lib.go:3:9: syntax error` (the compiler)
_GO_LINE = re.compile(r"^\s*(?P<path>[^\s:]+\.go):(?P<line>\d+)(?::\d+)?: ")
# Rust: a panic's `thread 'x' panicked at src/lib.rs:14:9:`, the compiler's `  --> src/lib.rs:6:40`
_RS_LINE = re.compile(r"^(?:thread '.*' (?:\(\d+\) )?panicked at |\s*--> )(?P<path>[^\s:]+\.rs):(?P<line>\d+):\d+:?\s*$")
_GO_FRAME = re.compile(r"^\t(?P<path>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?\s*$")  # a panic's stack


def frames(details: str) -> list[tuple[str, int]]:
    """The (path as written, line) frames a failure's traceback names, outermost first. A JS stack
    lists the innermost first, so its frames are reversed; node's own (`node:…`) are left out.
    Go's lines are in order; a panic's stack lists the innermost first, like a JS one (and a Rust
    backtrace's `at ./src/lib.rs:14:9` lines, read as JS frames); a Rust panic's place and the
    compiler's `-->` are in order."""
    python, js = [], []
    for raw in details.splitlines():
        match = _PY_LINE.match(raw) or _PY_FRAME.match(raw) or _GO_LINE.match(raw) or _RS_LINE.match(raw)
        if match:
            python.append((match.group("path"), int(match.group("line"))))
            continue
        match = _JS_FRAME.match(raw) or _GO_FRAME.match(raw)
        if match and not match.group("path").startswith("node:"):
            js.append((match.group("path"), int(match.group("line"))))
    return python + js[::-1]


def assert_frame(located: list[tuple[str, int]], test_file: str | None) -> tuple[str, int] | None:
    """The assert line: the innermost frame (workspace-relative path, line) in the test's own file,
    else the innermost frame at all; None when the traceback names no workspace file."""
    own = [frame for frame in located if test_file is not None and frame[0] == test_file]
    if own:
        return own[-1]
    return located[-1] if located else None


def module_candidates(result: TestResult) -> list[str]:
    """Where the test's own file may be: its `file` attribute, else the files its dotted class
    name (or, for a collection error, its name) could name, longest first."""
    if result.file:
        return [result.file]
    dotted = result.classname or result.name
    parts = [part for part in re.split(r"[.]", dotted.split("[")[0]) if part]
    return ["/".join(parts[:end]) + ".py" for end in range(len(parts), 0, -1)]
