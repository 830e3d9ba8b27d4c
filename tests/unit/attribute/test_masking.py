"""Never a false accusation for failing tests (issue 21): masked flips (a guard joined by `&&`, a
runner stopping at the first failure, a collection error), presence that is not monotone (broken,
repaired elsewhere, broken again) and flaky tests, over generated step histories.

The workspace holds a tiny runner that writes JUnit XML (the generic `junit = PATH` form) from a
few switch files; the check is `test -s NOTES.txt && runner`. The oracle is a model of that
runner evaluated by brute force on every recorded state and every counterfactual state
(docs/LEVELS.md's rules), never the pipeline's own runs: it says where the last flip is, whether
it was masked, which earlier change the failure needs, and the level that evidence supports.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from step_histories import record_steps

from vacant.attribute.stop import Pipeline
from vacant.attribute.verify import MAX_EARLIER
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract

pytestmark = pytest.mark.slow

RUNNER = textwrap.dedent('''\
    import sys
    from xml.sax.saxutils import quoteattr

    def val(name, default):
        try:
            return open(name).read().strip()
        except OSError:
            return default

    cases = []
    if val("c.txt", "ok") == "bad":
        cases.append(("", "test_t", "error", "test_t.py:1: SyntaxError"))
    else:
        a_bad = val("a.txt", "ok") == "bad" and val("g.txt", "on") == "on"
        cases.append(("test_t", "test_a", "failure" if a_bad else "", "test_t.py:2: AssertionError"))
        if not (a_bad and val("x.txt", "off") == "on"):  # x on: stop at the first failure
            b_bad = val("b.txt", "ok") == "bad"
            cases.append(("test_t", "test_b", "failure" if b_bad else "", "test_t.py:4: AssertionError"))
    out = ['<testsuites><testsuite name="t">']
    for classname, name, kind, where in cases:
        body = f"<{kind} message={quoteattr(kind)}>{where}</{kind}>" if kind else ""
        out.append(f'<testcase classname="{classname}" name="{name}" file="test_t.py">{body}</testcase>')
    out.append("</testsuite></testsuites>")
    open("out.xml", "w").write("".join(out))
    sys.exit(1 if any(kind for _, _, kind, _ in cases) else 0)
    ''')
TEST_FILE = "def test_a():\n    assert a_ok\ndef test_b():\n    assert b_ok\n"
TOML = f'[[check]]\nname = "suite"\njunit = "out.xml"\ncommand = "test -s NOTES.txt && {sys.executable} runner.py"\n'
SWITCHES = {"NOTES.txt": (None, "done"), "a.txt": ("ok", "bad"), "b.txt": ("ok", "bad"), "c.txt": ("ok", "bad"),
            "g.txt": ("on", "off"), "x.txt": ("off", "on"), "README.md": ("one", "two")}
TESTS = {"t::test_t::test_a": "test_a", "t::test_t::test_b": "test_b", "t::test_t": "test_t"}


# -- the oracle: the runner's model, on values ---------------------------------------------------

def outcomes(v: dict[str, str | None]) -> dict[str, str] | None:
    """What the check reports on a state (None: the guard stopped it before the runner)."""
    if v["NOTES.txt"] is None:
        return None
    if v["c.txt"] == "bad":
        return {"test_t": "error"}
    a_bad = v["a.txt"] == "bad" and v["g.txt"] == "on"
    out = {"test_a": "failed" if a_bad else "passed"}
    if not (a_bad and v["x.txt"] == "on"):
        out["test_b"] = "failed" if v["b.txt"] == "bad" else "passed"
    return out


def status(v: dict[str, str | None], test: str) -> str:
    got = outcomes(v)
    if got is None:
        return "unknown"
    if got.get(test) in ("failed", "error"):
        return "present"
    return "clean" if got.get(test) == "passed" or all(o == "passed" for o in got.values()) else "unknown"


def with_files(base: dict, source: dict, files: set[str]) -> dict:
    return {**base, **{f: source[f] for f in files}}


def expected(states: list[dict], changed: list[set[str]], test: str) -> dict:
    """Level, flip state, blamed state for one test failing on the final state (docs/LEVELS.md)."""
    last = len(states) - 1
    present = [status(s, test) == "present" for s in states]
    flip = next((i for i in range(last, 0, -1) if not present[i - 1]), None)
    if flip is None:
        return {"level": "heuristic", "flip": None, "blamed": None}
    own = changed[flip]
    base_clean = status(states[0], test) == "clean"
    alone_present = status(with_files(states[0], states[flip], own), test) == "present"
    masked = status(states[flip - 1], test) != "clean" and not (base_clean and alone_present)
    broken_by, tried = None, 0
    if masked:
        for j in range(flip - 1, 0, -1):
            if tried >= MAX_EARLIER:
                break
            if not changed[j] - own:
                continue
            tried += 1
            if status(with_files(states[flip], states[j - 1], changed[j] - own), test) == "clean":
                broken_by = j
                break
    undone = with_files(states[last], states[flip - 1], own)
    needed = undone == states[flip - 1] or status(undone, test) != "present"
    level = "heuristic" if masked or not needed else "provable"
    return {"level": level, "flip": flip, "blamed": broken_by if masked and broken_by else flip,
            "broken_by": broken_by if masked else None}


# -- the histories ---------------------------------------------------------------------------------

@st.composite
def histories(draw):
    """Initial switch values, and per step the switches it flips (so every step is one change)."""
    initial = {name: draw(st.sampled_from(options)) for name, options in SWITCHES.items()}
    steps = draw(st.lists(st.lists(st.sampled_from(sorted(SWITCHES)), min_size=1, max_size=2, unique=True),
                          min_size=1, max_size=7))
    return initial, steps


def flips(initial: dict, steps: list[list[str]]) -> list[dict]:
    current, out = dict(initial), []
    for names in steps:
        step = {}
        for name in names:
            low, high = SWITCHES[name]
            step[name] = high if current[name] == low else low
        current.update(step)
        out.append(step)
    return out


def play(root: Path, initial: dict, steps: list[dict]) -> tuple[dict, list[dict], list[set[str]]]:
    mark_installed(root)
    for name, value in initial.items():
        if value is not None:
            (root / name).write_text(value + "\n")
    (root / "runner.py").write_text(RUNNER)
    (root / "test_t.py").write_text(TEST_FILE)
    (root / "vacant.toml").write_text(TOML)
    run_dir = record_steps(root, [{n: (v + "\n" if v is not None else None) for n, v in s.items()} for s in steps])
    states, changed, values = [dict(initial)], [set()], dict(initial)
    for step in steps:
        values = {**values, **step}
        states.append(values)
        changed.append(set(step))
    report = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    return report, states, changed


def check_against_oracle(root: Path, initial: dict, steps: list[dict]) -> None:
    check_against_oracle_on(*play(root, initial, steps))


def check_against_oracle_on(report: dict, states: list[dict], changed: list[set[str]]) -> None:
    assert report["states"] == len(states), "every step is one recorded change"
    failing = {t for t, o in (outcomes(states[-1]) or {}).items() if o in ("failed", "error")}
    found = {TESTS[f["test"]]: f for f in report["findings"] if f["test"]}
    assert set(found) == failing
    for test, finding in found.items():
        want = expected(states, changed, test)
        assert (finding["level"], finding["flip_step"]) == (want["level"], want["flip"]), (test, want, finding["evidence"])
        assert finding["step"] == want["blamed"], (test, want, finding["evidence"])
        if want["level"] == "heuristic" and want["flip"] is not None:
            assert finding["evidence"].get("broken_by") == want.get("broken_by")
        if finding["level"] == "provable":  # the spec itself: a clean state, or a sufficient change, before it
            flip = want["flip"]
            assert status(states[flip - 1], test) == "clean" or status(states[0], test) == "clean"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(histories())
def test_generated_histories_match_the_brute_force_oracle(tmp_path_factory, isolated_home, history):
    initial, steps = history
    check_against_oracle(tmp_path_factory.mktemp("ws"), initial, flips(initial, steps))


BASE = {"NOTES.txt": None, "a.txt": "ok", "b.txt": "ok", "c.txt": "ok", "g.txt": "on", "x.txt": "off",
        "README.md": "one"}


@pytest.mark.parametrize("name, initial, steps, level, blamed", [
    # the guard joined by `&&`: step 1 breaks a, step 2 writes NOTES.txt: step 2 only unmasks it
    ("guard", BASE, [{"a.txt": "bad"}, {"NOTES.txt": "done"}], "heuristic", 1),
    # an earlier failure hides a later one: a fails and the runner stops (x on); step 2 breaks b,
    # step 3 repairs a: b shows at step 3, which only let it show
    ("exitfirst", {**BASE, "NOTES.txt": "done", "x.txt": "on", "a.txt": "bad"},
     [{"README.md": "two"}, {"b.txt": "bad"}, {"a.txt": "ok"}], "heuristic", 2),
    # a collection error hides an assertion: step 1 breaks collection, step 2 breaks b, step 3 repairs collection
    ("collection", {**BASE, "NOTES.txt": "done"}, [{"c.txt": "bad"}, {"b.txt": "bad"}, {"c.txt": "ok"}], "heuristic", 2),
    # broken, repaired by another file (g off), broken again (g on): the last flip, step 4's
    ("non-monotone", {**BASE, "NOTES.txt": "done"},
     [{"a.txt": "bad"}, {"README.md": "two"}, {"g.txt": "off"}, {"g.txt": "on"}, {"README.md": "one"}], "provable", 4),
    # the plain case: the test ran cleanly before the step that broke it
    ("plain", {**BASE, "NOTES.txt": "done"}, [{"README.md": "two"}, {"b.txt": "bad"}], "provable", 2),
])
def test_the_named_classes(tmp_path, isolated_home, name, initial, steps, level, blamed):
    root = tmp_path / "ws"
    root.mkdir()
    report, states, changed = play(root, initial, steps)
    check_against_oracle_on(report, states, changed)
    [finding] = [f for f in report["findings"] if f["test"]]
    assert (finding["level"], finding["step"]) == (level, blamed), finding["evidence"]
    if level == "heuristic":
        assert finding["evidence"]["broken_by"] == blamed and finding["evidence"]["unmasked_by"] == finding["flip_step"]


FLAKY_RUNNER = textwrap.dedent('''\
    import os, sys
    seen = os.path.exists(COUNTER)
    open(COUNTER, "a").write("x")
    kind = "" if seen else "failure"  # fails on its first run only: a blip
    body = f"<{kind} message='blip'>test_t.py:2: AssertionError</{kind}>" if kind else ""
    open("out.xml", "w").write(f'<testsuite name="t"><testcase classname="test_t" name="test_f">{body}</testcase></testsuite>')
    sys.exit(1 if kind else 0)
    ''')


def test_a_test_that_flips_on_re_run_is_flaky_and_never_attributed(tmp_path, isolated_home):
    root = tmp_path / "ws"
    root.mkdir()
    mark_installed(root)
    # in the checks' own cache ($XDG_CACHE_HOME, kept between a workspace's check runs): a Stop puts
    # back what a run left where it ran before the next run, so a memory kept there is gone by the re-run
    (root / "runner.py").write_text(
        "import os\nCOUNTER = os.path.join(os.environ.get('XDG_CACHE_HOME') or '.', '.flaky-counter')\n" + FLAKY_RUNNER)
    (root / "test_t.py").write_text(TEST_FILE)
    (root / "vacant.toml").write_text(f'[[check]]\nname = "suite"\njunit = "out.xml"\ncommand = "{sys.executable} runner.py"\n')
    run_dir = record_steps(root, [{"a.txt": "x\n"}, {"b.txt": "y\n"}])
    report = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    [finding] = report["findings"]
    assert finding["test"] == "t::test_t::test_f"
    assert (finding["level"], finding["step"], finding["actor"], finding["blocking"]) == ("flaky", None, None, False)
