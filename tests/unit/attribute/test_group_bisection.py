"""One bisection for many failing tests: the failing tests of a check are checked together on each
state (one run per state answers them all), so check runs grow with the distinct flip steps, not
with the number of failing tests.

Generated histories: K steps each break a different group of tests (1 to 8 tests a group) among
noise steps. The workspace holds a tiny runner that writes JUnit XML; test `tNN` fails when the
file `tNN.txt` says "bad". The oracle (by construction): each test's flip is the step that wrote
its file. The same history with one test a group is the reference count of check runs."""

from __future__ import annotations

import math
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from step_histories import record_steps

from vacant.attribute.stop import Pipeline
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract

pytestmark = pytest.mark.slow

RUNNER = textwrap.dedent('''\
    import glob, sys
    cases = []
    for path in sorted(glob.glob("t*.txt")):
        name = path[:-4]
        bad = open(path).read().strip() == "bad"
        body = f"<failure message='bad'>{path}:1: bad</failure>" if bad else ""
        cases.append((name, body))
    out = "".join(f'<testcase classname="t" name="{n}" file="{n}.txt">{b}</testcase>' for n, b in cases)
    open("out.xml", "w").write(f'<testsuites><testsuite name="t">{out}</testsuite></testsuites>')
    sys.exit(1 if any(b for _, b in cases) else 0)
    ''')


def play(root: Path, groups: list[int], noise: int) -> tuple[dict, dict[str, int]]:
    """Steps: `noise` harmless writes, then each group's break, then noise again; the oracle."""
    root.mkdir()
    mark_installed(root)
    total = sum(groups)
    for number in range(total):
        (root / f"t{number:02d}.txt").write_text("ok\n")
    (root / "runner.py").write_text(RUNNER)
    (root / "vacant.toml").write_text(f'[[check]]\nname = "suite"\njunit = "out.xml"\ncommand = "{sys.executable} runner.py"\n')
    steps: list[dict[str, str]] = [{f"notes/{n}.md": "n\n"} for n in range(noise)]
    flips, first = {}, 0
    for size in groups:
        steps.append({f"t{number:02d}.txt": "bad\n" for number in range(first, first + size)})
        for number in range(first, first + size):
            flips[f"t::t::t{number:02d}"] = len(steps)
        first += size
        steps.append({f"notes/after{first}.md": "n\n"})
    report = Pipeline(root, record_steps(root, steps), load_contract(root), budget_s=600).run()
    return report, flips


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(groups=st.lists(st.integers(min_value=1, max_value=8), min_size=1, max_size=3), noise=st.integers(0, 6))
def test_check_runs_grow_with_the_flip_steps_not_the_failing_tests(tmp_path_factory, groups, noise):
    report, flips = play(tmp_path_factory.mktemp("many") / "ws", groups, noise)
    found = {f["test"]: f for f in report["findings"]}
    assert set(found) == set(flips)
    assert all(found[test]["flip_step"] == step and found[test]["level"] == "provable" for test, step in flips.items())
    reference, _ = play(tmp_path_factory.mktemp("one") / "ws", [1] * len(groups), noise)
    assert report["check_runs"] <= reference["check_runs"] + len(groups), (report["check_runs"], reference["check_runs"])
    states = report["states"]
    assert report["check_runs"] <= 1 + len(groups) * (math.ceil(math.log2(states)) + 6)


def test_tests_that_broke_at_one_step_are_one_feedback_line(tmp_path):
    """Many findings, short feedback: the tests one change broke are one line naming their ids and
    how many; a test broken by another change keeps its own line."""
    from vacant.attribute.stop import FEEDBACK_LINES, feedback_text

    report, flips = play(tmp_path / "ws", [20, 1], 2)
    blocking = [f for f in report["findings"] if f["blocking"]]
    text = feedback_text(blocking, 1, 3)
    lines = text.splitlines()
    assert len(lines) <= FEEDBACK_LINES
    (grouped,) = [line for line in lines if "20 tests of check suite fail" in line]
    assert "and 16 more" in grouped and f"step {flips['t::t::t00']}" in grouped
    (single,) = [line for line in lines if "t::t::t20" in line]
    assert "20 tests" not in single
    assert text.startswith("vacant: 21 finding(s)")


def test_the_report_splits_the_stops_time_and_runs_by_part(tmp_path):
    """Every check run is counted in exactly one part of the split, and the parts' seconds add up to
    no more than the Stop's."""
    report, _ = play(tmp_path / "ws", [3, 1], 1)
    split = report["split"]
    assert {"final state", "bisection", "verification"} <= set(split)
    assert sum(part["check_runs"] for part in split.values()) == report["check_runs"]
    assert sum(part["seconds"] for part in split.values()) <= report["seconds"] + 0.01
    assert split["final state"]["check_runs"] == 1
