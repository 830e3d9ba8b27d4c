"""Issue 12, one class of attribution error at a time, each on a planted run played through the
real hooks and Stop pipeline (tests/unit/attribution_runs.py) and checked against its ground truth."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from attribution_runs import Plan, fast_home, recorded  # noqa: F401 - fast_home is a fixture

from vacant.core.locations import state_dir
from vacant.attribute.lineage import introduced_value
from vacant.attribute.replay import Timeline
from vacant.commands.report import render_report
from vacant.commands.runs import describe
from vacant.core import cells
from vacant.store import reputation
from vacant.store.objects import ObjectStore

pytestmark = pytest.mark.usefixtures("fast_home")
VACANT = Path(sys.executable).parent / "vacant"


def plan(**fields) -> Plan:
    base = {"family": "rate", "origin": "fresh", "mode": "edit", "prior": "none", "before": [], "after": [],
            "rebreak": False, "parallel": False, "flag": False, "rerun": False, "seed": 4321}
    return Plan(**{**base, **fields})


def report_of(root: Path, session: str, stop: int | None = None) -> dict:
    run_dir = state_dir(root) / "runs" / session
    path = run_dir / "report.json" if stop is None else run_dir / "reports" / f"{stop:04d}.json"
    return json.loads(path.read_text())


def log_of(root: Path, session: str) -> list[dict]:
    text = (state_dir(root) / "runs" / session / "events.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def the_check(report: dict) -> dict:
    [finding] = [f for f in report["findings"] if f["source"] == "check"]
    return finding


# -- 1. the value is the finding's line, not the hunk --------------------------------------------


def test_a_multi_line_write_copies_one_value_the_line_decides():
    """The Write creates COUNT/RATE/DATE; RATE was read from an external note, COUNT and DATE from
    two other files. No source holds all three: the hunk would call it provable."""
    p = plan(origin="read", mode="write")
    with recorded(p) as (driver, root):
        finding = the_check(report_of(root, driver.session))
    assert (finding["level"], finding["lineage_source"]) == ("lineage_exact", "file:notes/ext.txt")
    assert finding["evidence"]["value"] == [p.w] and finding["evidence"]["value_lines"] == [2]
    assert finding["actor"] is not None  # lineage_exact: the actor is named, never scored


def test_a_line_with_nothing_salient_widens_to_its_block(tmp_path):
    store = ObjectStore(tmp_path / "objects")
    old = store.put_bytes(b"def f(a, b):\n    return a + b\n")
    new = store.put_bytes(b"def f(a, b):\n    x = 0.731\n    return a - b\n")
    states = [{"m.py": ["f", 0, 0, old, 0o644]}, {"m.py": ["f", 0, 0, new, 0o644]}]
    timeline = Timeline(states, [{"step": 1, "added": {}, "changed": {"m.py": states[1]["m.py"]}, "removed": []}])
    found = introduced_value(timeline, store, 1, "m.py", 3, "    return a - b")
    assert (found.tokens, found.lines) == ({"0.731"}, [2, 3])
    own = introduced_value(timeline, store, 1, "m.py", 2, "    x = 0.731")
    assert (own.tokens, own.lines) == ({"0.731"}, [2])


# -- 2. a command's output is not the file's content -----------------------------------------------


def test_a_command_that_read_a_file_and_printed_a_value_is_the_source():
    """Codex reports `cat notes/legacy.txt` as a read; the same command printed W. The file never
    held W: the value came from the command (lineage_internal at that shell step)."""
    with recorded(plan(origin="command_probe")) as (driver, root):
        finding = the_check(report_of(root, driver.session))
        log = log_of(root, driver.session)
    shell = next(r for r in log if r["type"] == "step_start" and "legacy" in json.dumps(r["input"]))
    assert (finding["level"], finding["final_level"], finding["step"]) == ("lineage_internal", "provable", shell["step"])
    assert finding["lineage_source"].startswith("command:cat notes/legacy.txt")


def test_a_file_read_by_a_command_holds_the_file_before_the_step():
    """`sed -n 2,3p` shows two lines: the file read is the whole file as recorded before the step,
    the command read is the two lines."""
    with recorded(plan(origin="shell_sed")) as (driver, root):
        log = log_of(root, driver.session)
        store = ObjectStore(state_dir(root) / "objects")
        reads = {r["origin"]: store.get(r["object"]).decode() for r in log if r["type"] == "read"
                 and r["step"] is not None and "ext.txt" in r["ref"]}
        finding = the_check(report_of(root, driver.session))
    assert reads["file"] == driver.world.files["notes/ext.txt"]
    assert reads["command"] == "".join(driver.world.files["notes/ext.txt"].splitlines(True)[1:3])
    assert finding["lineage_source"] == "file:notes/ext.txt"


# -- 3. what was there before the run is nobody's doing ---------------------------------------------


def test_a_flag_and_a_wrong_value_already_at_baseline_accuse_nobody():
    with recorded(plan(origin="baseline", flag=True, after=["shift", "read_target"])) as (driver, root):
        report = report_of(root, driver.session)
        log = log_of(root, driver.session)
    assert len(report["findings"]) == 2
    for finding in report["findings"]:
        assert (finding["level"], finding["step"], finding["actor"]) == ("heuristic", None, None), finding
        assert finding["evidence"]["why"].startswith("present at baseline")
    assert [r for r in log if r["type"] == "review"] == []
    assert "actor nobody" in render_report(report)


# -- 4. evidence reproduces -----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_rerun_command_gives_back_the_finding_after_the_run_moved_on():
    """Stop 1 blocks on a planted value; the agent fixes it; Stop 2 is green. The evidence's rerun
    command reproduces Stop 1's finding, level and step; a plain replay now sees the fixed run."""
    with recorded(plan(origin="read")) as (driver, root):
        first = report_of(root, driver.session)
        driver.tool_edit("conf.txt", f"RATE = {driver.plan.w}", "RATE = 0.08")
        driver.claude("Stop", stop_hook_active=True)
        assert report_of(root, driver.session)["findings"] == []
        [finding] = first["findings"]
        rerun = finding["evidence"]["rerun"]
        assert rerun == f"vacant replay {driver.session} --stop 1"
        proc = subprocess.run([str(VACANT), *rerun.split()[1:], "--json"], cwd=root, capture_output=True, text=True,
                              check=False)
        again = json.loads(proc.stdout)
        plain = json.loads(subprocess.run([str(VACANT), "replay", driver.session, "--json"], cwd=root,
                                          capture_output=True, text=True, check=False).stdout)
    assert [(f["id"], f["level"], f["step"], f["evidence"]["rerun"]) for f in again["findings"]] == \
           [(finding["id"], finding["level"], finding["step"], rerun)]
    assert plain["findings"] == []


# -- 5. a regression without a location is still bisected ---------------------------------------------


def test_an_unlocated_check_that_passed_once_is_bisected_to_the_break():
    with recorded(plan(family="done", rebreak=True)) as (driver, root):
        finding = the_check(report_of(root, driver.session))
        log = log_of(root, driver.session)
    breaking = [r for r in log if r["type"] == "step_start" and r["tool"] == "Edit"][-1]
    assert finding["path"] is None
    assert (finding["level"], finding["step"]) == ("provable", breaking["step"])


def test_incomplete_only_when_every_state_evaluated_failed_and_it_says_which():
    with recorded(plan(family="done", prior="other", before=["other_write"])) as (driver, root):
        report = report_of(root, driver.session)
    finding = the_check(report)
    evaluated = finding["evidence"]["states_evaluated"]
    assert finding["level"] == "incomplete" and evaluated == list(range(report["states"]))
    assert finding["evidence"]["why"].endswith("(states " + ", ".join(map(str, evaluated)) + ")")


# -- 6. one spelling for an unknown model ---------------------------------------------------------------


def test_an_unknown_model_is_spelled_the_same_in_report_log_and_reputation():
    actor = {"platform": "claude-code", "agent_definition": "main", "model": None, "task_family": "general"}
    finding = {"id": "x", "path": "a", "line": 1, "actor": actor, "step": 1, "tool": "Edit", "level": "provable",
               "source": "check", "name": "c", "message": "m", "lineage_source": None, "evidence": {}}
    report = {"run": "r", "findings": [finding], "check_runs": 1, "states": 2, "seconds": 0,
              "read_coverage": {"state": "complete", "why": ""}, "checks": []}
    step = {"type": "step_start", "seq": 1, "step": 1, "tool": "Edit", "input": {}, "actor": actor}
    assert f"claude-code/main/{cells.UNKNOWN}" in render_report(report)
    assert f"main/{cells.UNKNOWN}" in describe(step)
    assert reputation.cell_key(actor)[2] == cells.UNKNOWN
    assert reputation.cell_key({**actor, "model": ""})[2] == cells.UNKNOWN
