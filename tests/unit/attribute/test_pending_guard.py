"""A guard counts from when its probe finished, and a Stop says what its budget left out (issue 43).

A run that starts while a guard is still being probed in the background (or before its probe
finished) has no probe of that guard to stand on: its Stops do not run it and cannot block on it,
and the report says it was pending; a run that starts after uses it. A Stop whose time budget cut a
check's run, or left findings ungraded, names them, says they run at the next Stop, reviews no
one, and is never reused by the next Stop. Real pytest and shell checks behind the wall; a test
that must outlast a Stop blocks on a gate file the test opens, never on a sleep."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from waiting import stop_probes, wait_for
from step_histories import record_steps

from vacant.attribute.stop import Pipeline, stop
from vacant.commands.report import render_report
from vacant.core.locations import mark_installed
from vacant.policy.contract import background
from vacant.policy.contract.contract import load_contract
from vacant.policy.contract.red_first import start_guard
from vacant.store.run import RunView

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("isolated_home")]

GOOD, BAD = "def value():\n    return 1\n", "def value():\n    return 2\n"


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "calc.py").write_text(GOOD)
    (root / "tests" / "test_a_value.py").write_text("import calc\n\ndef test_value():\n    assert calc.value() == 1\n")
    (root / "tests" / "test_b_gated.py").write_text(
        f"import os, time\n\ndef test_gated():\n    while not os.path.exists({str(root / 'gate')!r}):\n"
        "        time.sleep(0.02)\n")
    (root / "gate").write_text("")  # open unless a test closes it
    return root


def started_at(run_dir: Path) -> float:
    return next(record["ts"] for record in RunView.load(run_dir).records if record["type"] == "run_start")




@pytest.fixture(autouse=True)
def no_probe_left(tmp_path, isolated_home):
    """A failed test leaves no detached probe blocked on its gate."""
    yield
    stop_probes(tmp_path / "ws")

def test_a_guard_still_being_probed_is_pending_and_counts_from_when_its_probe_finished(tmp_path):
    root = workspace(tmp_path)
    (root / "gate").unlink()
    start_guard(root, "suite", f"{sys.executable} -m pytest -q -p no:cacheprovider tests")
    assert wait_for(lambda: (background.load(root, "suite").progress().get("done") or 0) >= 1)
    # a run starts while the guard is being probed, and breaks what the guard tests
    run_dir = record_steps(root, [{"calc.py": BAD}, {"notes.txt": "n\n"}])
    report = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    [pending] = report["pending_guards"]
    assert pending["name"] == "suite" and pending["why"].startswith("it was still being probed (probing: 1/2 tests, ")
    assert report["checks"] == [] and report["findings"] == []  # it cannot block on a probe it does not have
    assert "  guard suite was not run at this Stop: it was still being probed (probing: 1/2" in render_report(report)
    (root / "gate").write_text("")
    assert wait_for(lambda: background.load(root, "suite").state == background.ADDED), background.load(root, "suite")
    guard = load_contract(root).guards[0]
    assert guard.probe.background and guard.probe.exit_code == 0
    report = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    [pending] = report["pending_guards"]
    assert pending["why"] == (f"its probe finished at {guard.probe.at}, after this run started: it counts from the "
                              "next run")
    assert report["findings"] == []
    # a run that starts after the probe finished uses the guard: the break is found at its step
    (root / "calc.py").write_text(GOOD)
    finished = datetime.fromisoformat(guard.probe.at).timestamp()
    assert wait_for(lambda: time.time() > finished + 1.5, 5)  # the clock past the probe's second
    later = record_steps(root, [{"notes.txt": "m\n"}, {"calc.py": BAD}], session="later")
    assert started_at(later) > finished + 1
    report = Pipeline(root, later, load_contract(root), budget_s=600).run()
    assert report["pending_guards"] == []
    [finding] = report["findings"]
    assert (finding["name"], finding["flip_step"], finding["level"]) == ("suite", 2, "provable"), finding


def test_what_the_budget_left_out_is_named_and_runs_at_the_next_stop(tmp_path):
    """A guard broken at step 1 (its finding needs a replay) and an acceptance check that runs past
    the budget on the final state: the check is cut, not failed; the finding is left ungraded; the
    agent is told both and that they run at the next Stop; nobody is reviewed; no reuse."""
    root = workspace(tmp_path)
    check = f"{sys.executable} -c 'import calc, sys; sys.exit(calc.value() != 1)'"
    slow = "while test -e slow.txt; do sleep 0.05; done; false"  # runs until cut while the step's slow.txt is there
    (root / "vacant.toml").write_text(f'[[guard]]\nname = "value"\ncommand = "{check}"\n\n'
                                      f'[[check]]\nname = "slow"\ncommand = "{slow}"\n\n[stop]\nbudget_s = 20\n')
    run_dir = record_steps(root, [{"calc.py": BAD}, {"slow.txt": "1\n"}])
    outcome = stop(root, run_dir)
    report = outcome.report
    left = report["left_out"]
    assert [(item["name"], item["kind"], item["tests"]) for item in left["checks"]] == [("slow", "check", None)]
    assert left["checks"][0]["why"].startswith("was cut at ")
    assert left["ungraded"] == 1
    assert [check["name"] for check in report["checks"]] == ["value"]  # the cut check is not a failure
    [finding] = report["findings"]
    assert finding["name"] == "value" and finding["level"] == "not_replayed"
    assert report["no_review"].startswith("the Stop's time budget left checks out")
    assert outcome.feedback is not None
    assert ("- the Stop's time budget of 20 s ran out: check slow (its whole run) was cut at " in outcome.feedback)
    assert "1 finding(s) not traced to a step (ungraded)" in outcome.feedback
    assert "they run at the next Stop" in outcome.feedback
    assert f"  left out: {left['sentence']}" in render_report(report)
    assert Pipeline(root, run_dir, load_contract(root))._reusable() is None  # the next Stop runs them


def test_a_stop_within_its_budget_leaves_nothing_out(tmp_path):
    root = workspace(tmp_path)
    check = f"{sys.executable} -c 'import calc, sys; sys.exit(calc.value() != 1)'"
    (root / "vacant.toml").write_text(f'[[guard]]\nname = "value"\ncommand = "{check}"\n')
    report = Pipeline(root, record_steps(root, [{"calc.py": BAD}]), load_contract(root), budget_s=600).run()
    assert report["left_out"] is None and report["pending_guards"] == []
    assert [(f["flip_step"], f["level"]) for f in report["findings"]] == [(1, "provable")]


def test_a_probe_finished_before_the_run_started_counts():
    from vacant.attribute.leftout import pending_guards
    from vacant.policy.contract.contract import Check, Contract, Probe

    at = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    guard = Check(name="suite", command="true", probe=Probe(exit_code=0, seconds=900.0, at=at.isoformat(),
                                                            background=True))
    contract = Contract(guard=[guard])
    assert pending_guards(contract, at.timestamp() + 1.5, None) == []
    assert [item.name for item in pending_guards(contract, at.timestamp() + 0.5, None)] == ["suite"]
    foreground = guard.model_copy(update={"probe": guard.probe.model_copy(update={"background": False})})
    assert pending_guards(Contract(guard=[foreground]), at.timestamp() - 10, None) == []


def test_a_run_far_past_its_probe_is_a_hang_not_a_cut(tmp_path):
    """A guard whose probe took a fraction of a second and that now runs until the budget cuts it
    hangs because of the work: a timed-out finding at the step that made it hang, not left out."""
    root = workspace(tmp_path)
    hang = "while test -e hang.txt; do sleep 0.05; done; true"
    (root / "vacant.toml").write_text(f'[[guard]]\nname = "hang"\ncommand = "{hang}"\n'
                                      'probe = { exit_code = 0, seconds = 0.1, at = "2026-01-01T00:00:00+00:00" }\n')
    report = Pipeline(root, record_steps(root, [{"hang.txt": "1\n"}]), load_contract(root), budget_s=15).run()
    assert report["left_out"] is None or not report["left_out"]["checks"]
    [finding] = report["findings"]
    assert finding["name"] == "hang" and "timed out after " in finding["message"]
