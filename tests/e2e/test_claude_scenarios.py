"""The planted-error suite on the real `claude` binary: each scenario has a known ground truth
(finding, level, step) and is asserted end to end: the report, the feedback the model received in
its next request, no identity in it, the reputation rows, and a green Stop after the fix."""

from __future__ import annotations

import json
import os

import pytest

from claude_harness import FakeUpstream, run_claude_p
from scenarios import NAMES, Outcome, assert_planted, load, seed
from vacant_run import make_workspace, vacant

pytestmark = pytest.mark.e2e
FEEDBACK_MARKER = "Stop hook feedback:"


def run_scenario(tmp_path, name: str, monkeypatch) -> tuple[dict, Outcome]:
    data_home = tmp_path / "vacant-data"
    monkeypatch.setenv("VACANT_HOME", str(data_home))
    workspace, home = make_workspace(tmp_path)
    scenario = load(name, workspace, tmp_path / "memory")
    seed(workspace, scenario["files"])
    session = None
    with FakeUpstream({"turns": scenario["turns"]}, tmp_path / "upstream") as upstream:
        for round_ in scenario["rounds"]:
            if "flag" in round_:  # the person, with the same HOME (and signing key) as their agent
                vacant(["flag", *round_["flag"]], workspace, env=dict(os.environ, HOME=str(home)))
            extra = ("--resume", session) if round_.get("resume") else ()
            proc = run_claude_p(workspace, home, upstream, round_["prompt"], extra_args=extra)
            assert proc.returncode == 0, proc.stderr
            session = json.loads(proc.stdout)["session_id"]
        requests = upstream.requests()
    errors = workspace / ".vacant" / "errors.log"
    assert not errors.exists(), errors.read_text()
    return scenario, Outcome.read(workspace, requests, dict(os.environ))


@pytest.mark.parametrize("name", NAMES)
def test_planted_error(tmp_path, monkeypatch, name):
    scenario, outcome = run_scenario(tmp_path, name, monkeypatch)
    assert_planted(scenario["expect"], outcome, FEEDBACK_MARKER)
