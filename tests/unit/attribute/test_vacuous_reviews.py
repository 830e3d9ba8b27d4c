"""Reputation only from runs that could prove something: a green Stop whose every check already
passed on the run's baseline (vacuous) reviews nobody and its report says why; a check that was
red at the baseline makes the same green Stop a review. Whether the baseline probe has landed
before the Stop or not (the pipeline then asks the baseline itself)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.attribute import baseline_probe
from vacant.store import reputation

_SHOW = str(Path(__file__).resolve().parents[1] / "show")
if _SHOW not in sys.path:  # the show tests' in-process recorder (tests/unit/show/recording.py)
    sys.path.insert(0, _SHOW)
from recording import Recording, cli  # noqa: E402

pytestmark = pytest.mark.usefixtures("isolated_home")

BASELINE_FILE = "present.txt"  # in the workspace before the run
WRITTEN_FILE = "made.txt"  # written by the run's one step
SESSIONS = itertools.count()


def run_with_checks(ws: Path, session: str, checks: list[str], probe_first: bool) -> dict:
    """One run writing WRITTEN_FILE, under checks `test -f NAME`; its Stop report."""
    (ws / "vacant.toml").write_text("".join(f'[[check]]\nname = "c{n}"\ncommand = "test -f {name}"\n\n'
                                            for n, name in enumerate(checks)))
    recording = Recording(ws, session)
    if probe_first:  # the detached probe may land before the Stop, or not: both paths are tested
        baseline_probe.probe(ws, recording.run_dir)
    else:
        (recording.run_dir / baseline_probe.RESULT).unlink(missing_ok=True)
    recording.write(WRITTEN_FILE, "x\n")
    recording.stop()
    recording.end()
    return json.loads((recording.run_dir / "report.json").read_text())


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(checks=st.lists(st.sampled_from([BASELINE_FILE, WRITTEN_FILE]), min_size=1, max_size=3),
       probe_first=st.booleans())
def test_a_green_stop_reviews_only_when_some_check_was_red_at_the_baseline(ws, checks, probe_first):
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / BASELINE_FILE).write_text("here\n")
    (ws / WRITTEN_FILE).unlink(missing_ok=True)
    session = f"run-{next(SESSIONS)}"
    report = run_with_checks(ws, session, checks, probe_first)
    assert report["findings"] == [] and all(check["passed"] for check in report["checks"])
    could_prove = WRITTEN_FILE in checks  # the oracle: some check was red before the work
    reviews = [row for row in reputation.review_rows() if row.run == session]
    assert len(reviews) == (1 if could_prove else 0)
    assert (report["no_review"] is None) == could_prove
    assert sorted(report["vacuous"]) == sorted(f"c{n}" for n, name in enumerate(checks) if name == BASELINE_FILE)


@pytest.mark.slow
def test_the_report_says_why_nobody_was_reviewed(ws):
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / BASELINE_FILE).write_text("here\n")
    run_with_checks(ws, "vacuous-run", [BASELINE_FILE], probe_first=False)
    shown = cli(["report"], ws).stdout
    assert "reputation: every check already passed at the run's baseline" in shown
