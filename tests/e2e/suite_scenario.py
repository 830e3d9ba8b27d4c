"""One agent run that breaks a real project's own test suite in every way issue 21 names, the same
on each agent binary: a regression by the agent's file tool, one by a shell `sed`, so two tests
broken by two steps; then a test broken while a collection error hid its module and shown only
when a later step repaired that module (a masked break); then, after the Stop's feedback, the fix
in round 2. The suite is more-itertools' (tests/plugins/sdist.py) and it is the run's `[[guard]]`.

The oracle is the script itself: which step did what, to which file, and which single test of the
suite each break fails (found by running the sdist's suite on each break alone, outside vacant).
This module holds no tests."""

from __future__ import annotations

from dataclasses import dataclass

from sdist import SUITE

RECIPES, MORE, TEST_MORE = "more_itertools/recipes.py", "more_itertools/more.py", "tests/test_more.py"
CONTRACT = (f'[stop]\nbudget_s = 900\n\n[[guard]]\nname = "suite"\ncommand = "{SUITE}"\ntimeout = 600\n')


@dataclass(frozen=True)
class Break:
    path: str
    good: str
    bad: str
    test: str  # the one test of the suite this break fails
    test_file: str


QUANTIFY = Break(RECIPES, "def quantify(iterable, pred=bool):", "def quantify(iterable, pred=lambda x: 1):",
                 "pytest::tests.test_recipes.QuantifyTests::test_happy_path", "tests/test_recipes.py")
FIRST_TRUE = Break(RECIPES, "return next(filter(pred, iterable), default)", "return next(filter(pred, iterable), None)",
                   "pytest::tests.test_recipes.FirstTrueTests::test_default", "tests/test_recipes.py")
REVERSIBLE = Break(MORE, "return reversed(list(iterable))", "return iter(list(iterable))",
                   "pytest::tests.test_more.AlwaysReversibleTests::test_nonseq_reversed", TEST_MORE)
MASK = "def helper(:"  # a line that stops tests/test_more.py from being collected


def sed(path: str, old: str, new: str) -> str:
    """A shell `sed -i` replacing `old` by `new` in `path` (neither holds `|` or a regex character
    that matters here but `(`, `)` and `.`, which basic regular expressions take literally or
    escaped)."""
    escaped = old.replace(".", r"\.").replace("[", r"\[").replace("*", r"\*")
    return f"sed -i 's|{escaped}|{new}|' {path}"


MASK_ON = f"printf '%s\\n' '{MASK}' >> {TEST_MORE}"
MASK_OFF = f"sed -i '$d' {TEST_MORE}"
FIX_ALL = " && ".join(sed(b.path, b.bad, b.good) for b in (QUANTIFY, FIRST_TRUE, REVERSIBLE))


@dataclass(frozen=True)
class Expected:
    """What the first Stop must say about one break: the step the script made it in, its tool."""

    brk: Break
    step: int
    tool: str
    level: str
    flip_step: int  # where the test first showed as failing
    unmasked_by: int | None = None


def assert_findings(report: dict, expected: list[Expected]) -> None:
    by_test = {f["test"]: f for f in report["findings"]}
    assert sorted(by_test) == sorted(e.brk.test for e in expected), report["findings"]
    for e in expected:
        f = by_test[e.brk.test]
        got = (f["level"], f["step"], f["tool"], f["flip_step"], f["path"], f["changed"], f["blocking"])
        assert got == (e.level, e.step, e.tool, e.flip_step, e.brk.test_file, [e.brk.path], True), f
        added = [line[1:].strip() for line in f["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")]
        assert e.brk.bad in added, f["diff"]
        assert f["evidence"].get("unmasked_by") == e.unmasked_by, f["evidence"]
        if e.unmasked_by is not None:
            assert f["evidence"]["broken_by"] == e.step, f["evidence"]


def assert_feedback(feedback: str, expected: list[Expected]) -> None:
    """Every test is named with the source file its breaking step changed; the masked one names the
    step that broke it and the one that let it show; never a bare 'fix the test file'."""
    lines = {e.brk.test: next(line for line in feedback.splitlines() if e.brk.test in line) for e in expected}
    for e in expected:
        line = lines[e.brk.test]
        assert f"fails at {e.brk.test_file}:" in line, line
        assert f"step {e.step}" in line and f"which changed {e.brk.path}" in line, line
        if e.unmasked_by is not None:
            assert f"once step {e.unmasked_by} let the check reach it" in line, line
    assert "Fix the change that broke each test" in feedback
