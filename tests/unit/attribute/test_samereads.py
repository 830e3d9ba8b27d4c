"""A selected test run reused on states whose files it read are the same (issue 21's Stop cost),
through the real pytest and the real Stop pipeline, over generated step histories.

The workspace's one test reads `lib.py` by import, `data.txt` by `open()`, a file whose name
it finds by listing `cfg/` (so an added file matters), and `src/extra/value.py` by import when it
is there (a namespace package: the import system finds it by listing `src/`, which pytest's
collection never walks); `README.md`
and a directory of notes are noise it never reads (a directory the import system and pytest's
collection list, but holding nothing either can use). Each step sets one of them. The oracle is a
model of the test on values, evaluated on every state: it fails iff
`lib.VALUE + data + len(cfg) + extra == 3`. From it: whether the final state fails, the last
absent->present flip, and whether undoing the flip step's change on the final state clears it
(else `heuristic`, docs/LEVELS.md). A reused result that should not have been -- a read the trace
missed -- gives a wrong flip here."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from step_histories import record_steps

from vacant.attribute.stop import Pipeline
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract

pytestmark = pytest.mark.slow

TEST = textwrap.dedent('''\
    import os, sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import lib
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
    try:
        import extra.value
        EXTRA = extra.value.VALUE
    except ImportError:
        EXTRA = 0

    def test_sum():
        data = int(open("data.txt").read())
        cfg = sorted(os.listdir("cfg"))
        assert lib.VALUE + data + len(cfg) + EXTRA != 3
    ''')
SPAWNING = TEST.replace('int(open("data.txt").read())', 'int(__import__("subprocess").check_output(["cat", "data.txt"]))')
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider tests"
TOML = f'[[check]]\nname = "suite"\ncommand = "{PYTEST}"\n'
TEST_ID = "pytest::tests.test_sum::test_sum"
VARS = ("lib", "data", "cfg", "readme", "extra", "notes")


def files(values: dict[str, int]) -> dict[str, str | None]:
    out: dict[str, str | None] = {"lib.py": f"VALUE = {values['lib']}\n", "data.txt": f"{values['data']}\n",
                                  "README.md": f"v{values['readme']}\n"}
    for n in range(3):
        out[f"cfg/c{n}.ini"] = "x\n" if n < values["cfg"] else None
    out["src/extra/value.py"] = f"VALUE = {values['extra']}\n" if values["extra"] else None
    out["src/keep.py"] = "KEEP = 1\n"  # src/ holds Python without the package: pytest's walk sees no change
    out["notes/n.md"] = f"n{values['notes']}\n" if values["notes"] else None
    return out


def step_files(before: dict[str, int], after: dict[str, int]) -> dict[str, str | None]:
    old, new = files(before), files(after)
    return {path: text for path, text in new.items() if old.get(path) != text}


def fails(values: dict[str, int]) -> bool:
    return values["lib"] + values["data"] + values["cfg"] + values["extra"] == 3


def expected(states: list[dict[str, int]], changed: list[str]) -> tuple[int, str] | None:
    """(flip step, level) the evidence supports, or None when the final state passes."""
    if not fails(states[-1]):
        return None
    flip = next(k for k in range(len(states) - 1, 0, -1) if not fails(states[k - 1])) \
        if not all(fails(s) for s in states) else None
    if flip is None:
        return None  # failing at the baseline already: not generated (see `histories`)
    undone = {**states[-1], changed[flip]: states[flip - 1][changed[flip]]}
    return flip, "heuristic" if fails(undone) else "provable"


@st.composite
def histories(draw):
    initial = {"lib": draw(st.integers(0, 2)), "data": draw(st.integers(0, 2)), "cfg": draw(st.integers(0, 2)),
               "readme": 0, "extra": 0, "notes": 0}
    if fails(initial):
        initial["data"] = (initial["data"] + 1) % 3
    steps = draw(st.lists(st.tuples(st.sampled_from(VARS), st.integers(0, 3)), min_size=3, max_size=10))
    return initial, steps


def play(root: Path, test: str, initial: dict[str, int], steps: list[tuple[str, int]]):
    mark_installed(root)
    for rel, text in files(initial).items():
        if text is not None:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
    (root / "cfg").mkdir(exist_ok=True)
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "test_sum.py").write_text(test)
    (root / "vacant.toml").write_text(TOML)
    states, changed, recorded = [dict(initial)], [""], []
    for name, value in steps:
        value = min(value, 2) if name in ("cfg", "extra") else value
        after = {**states[-1], name: value}
        delta = step_files(states[-1], after)
        if not delta:
            continue  # no change: no recorded state
        recorded.append(delta)
        states.append(after)
        changed.append(name)
    run_dir = record_steps(root, recorded)
    pipeline = Pipeline(root, run_dir, load_contract(root), budget_s=600)
    return pipeline, pipeline.run(), states, changed


def check(root: Path, test: str, initial: dict[str, int], steps: list[tuple[str, int]]):
    pipeline, report, states, changed = play(root, test, initial, steps)
    want = expected(states, changed)
    found = [(f["test"], f["flip_step"], f["level"]) for f in report["findings"]]
    assert found == ([] if want is None else [(TEST_ID, *want)]), (states, changed, report["findings"])
    return pipeline, report


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(histories())
@example(history=({"lib": 1, "data": 1, "cfg": 0, "readme": 0, "extra": 0, "notes": 0},  # the namespace package appears
                  [("readme", 1), ("notes", 1), ("extra", 1), ("readme", 2), ("readme", 3)]))
def test_generated_histories_match_the_model(tmp_path_factory, isolated_home, history):
    check(tmp_path_factory.mktemp("ws"), TEST, *history)


def test_noise_is_never_rerun_and_a_test_that_spawns_is_never_reused(tmp_path, isolated_home):
    steps = ([("readme", n) for n in range(1, 6)] + [("notes", 1)] + [("data", 2)] + [("readme", n) for n in range(6, 9)]
             + [("notes", 0), ("notes", 2)] + [("readme", n) for n in range(9, 12)])
    initial = {"lib": 1, "data": 0, "cfg": 0, "readme": 0, "extra": 0, "notes": 0}
    pipeline, report = check(tmp_path / "a", TEST, initial, steps)
    assert pipeline.checks.same_reads.reused > 0
    assert pipeline.checks.runs <= 6, pipeline.checks.runs  # the final run, bisection's two sides, the re-runs
    spawning, _ = check(tmp_path / "b", SPAWNING, initial, steps)  # `cat` reads data.txt out of sight
    assert spawning.checks.same_reads.reused == 0 and spawning.checks.runs > pipeline.checks.runs
