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
from vacant.core.locations import state_dir

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
    errors = state_dir(workspace) / "errors.log"
    assert not errors.exists(), errors.read_text()
    return scenario, Outcome.read(workspace, requests, dict(os.environ, HOME=str(home)))


@pytest.mark.parametrize("name", NAMES)
def test_planted_error(tmp_path, monkeypatch, name):
    scenario, outcome = run_scenario(tmp_path, name, monkeypatch)
    assert_planted(scenario["expect"], outcome, FEEDBACK_MARKER)


def test_subagent_stop_blocks_the_subagent_on_its_own_finding(tmp_path, monkeypatch):
    """A SubagentStop with a finding inside that sub-agent's steps: the sub-agent is blocked, its
    next request carries the feedback, it fixes its own file; the main agent is never told."""
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "vacant-data"))
    workspace, home = make_workspace(tmp_path)
    seed(workspace, load("bash_writes", workspace, tmp_path / "memory")["files"])  # the rate check
    config = str(workspace / "config.py")
    turns = [
        {"content": [{"type": "tool_use", "name": "Agent", "input": {
            "description": "write config", "prompt": "SUBTASK-CFG: write config.py", "subagent_type": "general-purpose"}}]},
        {"match": "SUBTASK-CFG", "content": [{"type": "tool_use", "name": "Write",
                                              "input": {"file_path": config, "content": "RATE = 0.5\n"}}]},
        {"match": "SUBTASK-CFG", "content": [{"type": "text", "text": "sub done"}]},
        {"match": FEEDBACK_MARKER, "content": [{"type": "tool_use", "name": "Edit", "input": {
            "file_path": config, "old_string": "RATE = 0.5", "new_string": "RATE = 0.08"}}]},
        {"match": "SUBTASK-CFG", "content": [{"type": "text", "text": "sub fixed"}]},
        {"content": [{"type": "text", "text": "All done."}]},
    ]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        proc = run_claude_p(workspace, home, upstream, "have a helper write config.py")
        requests = upstream.requests()
    assert proc.returncode == 0, proc.stderr
    outcome = Outcome.read(workspace, requests, dict(os.environ))
    sub_stops = [r for r in outcome.reports if r["agent_id"] is not None]
    blocked = next(r for r in sub_stops if r["decision"] == "block")
    [finding] = blocked["findings"]
    write = next(r for r in outcome.log if r["type"] == "step_start" and r["tool"] == "Write")
    assert (finding["level"], finding["step"], finding["tool"]) == ("provable", write["step"], "Write")
    assert finding["actor"]["agent_definition"] == "general-purpose" and finding["agent_id"] == blocked["agent_id"]
    carried = [body for body in outcome.feedback_requests(FEEDBACK_MARKER) if "SUBTASK-CFG" in body]
    assert carried and finding["id"] in carried[0], "the sub-agent's next request must carry its feedback"
    main_stops = [r for r in outcome.reports if r["agent_id"] is None]
    assert main_stops and main_stops[-1]["findings"] == [] and main_stops[-1]["decision"] == "stop"
    assert (workspace / "config.py").read_text() == "RATE = 0.08\n"
    helper = outcome.cell(agent_definition="general-purpose")
    assert helper["n"] == 2 and helper["mean"] == 0.5  # scored down once, then the green Stop
