"""The planted-error suite on the real `claude` binary: each scenario has a known ground truth
(finding, level, step) and is asserted end to end: the report, the feedback the model received in
its next request, no identity in it, the reputation rows, and a green Stop after the fix."""

from __future__ import annotations

import json
import os

import pytest

from claude_harness import FakeUpstream, run_claude_p
from scenarios import NAMES, Outcome, load, seed
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


def identities(log: list[dict]) -> set[str]:
    """Every string that would tell the agent who it is (or who another actor is)."""
    found = {"claude-code", "claude code", "anthropic", "opus", "haiku", "sonnet"}
    for record in log:
        if record["type"] == "run_start":
            found |= {record["platform"], record["session"]}
        if record["type"] == "step_start" and record["actor"]:
            found.add(record["actor"]["model"] or "")
            if record["actor"]["agent_definition"] != "main":
                found.add(record["actor"]["agent_definition"])
        if record["type"] in ("subagent", "actor"):
            found |= {record["agent_id"], record.get("agent_type") or "", record.get("model") or ""}
    return {value.lower() for value in found if value}


@pytest.mark.parametrize("name", NAMES)
def test_planted_error(tmp_path, monkeypatch, name):
    scenario, outcome = run_scenario(tmp_path, name, monkeypatch)
    expect = scenario["expect"]
    main_stops = [r for r in outcome.reports if r["agent_id"] is None]
    first = main_stops[-1] if not expect["blocks"] else next(r for r in main_stops if r["findings"])
    assert len(first["findings"]) == 1, first["findings"]
    finding = first["findings"][0]
    assert finding["level"] == expect["level"], finding
    assert finding["step"] == expect.get("step"), finding
    if "tool" in expect and expect["level"] != "env":
        assert finding["tool"] == expect["tool"]
    assert finding["source"] == expect.get("finding_source", "check")
    if "source" in expect:
        assert finding["lineage_source"] == expect["source"]
    if "source_prefix" in expect:
        assert finding["lineage_source"].startswith(expect["source_prefix"])
    if "final_level" in expect:
        assert finding["final_level"] == expect["final_level"]
    if expect.get("flaky"):
        assert finding["evidence"]["flaky"] is True
    assert first["read_coverage"]["state"] in ("complete", "partial", "none")

    feedback = [r for r in outcome.log if r["type"] == "feedback"]
    if expect["blocks"]:
        assert first["decision"] == "block"
        sent = outcome.feedback_requests(FEEDBACK_MARKER)
        assert sent and finding["id"] in sent[0], "the next request must carry the located feedback"
        assert len(feedback) == 1 and len(feedback[0]["text"].splitlines()) <= 12
        leaked = [value for value in identities(outcome.log) if value in feedback[0]["text"].lower()]
        assert leaked == [], f"feedback names an actor: {leaked}"
        last = main_stops[-1]
        assert last["findings"] == [] and last["decision"] == "stop", "the fix round must turn the Stop green"
    else:
        assert feedback == [] and outcome.feedback_requests(FEEDBACK_MARKER) == []

    assert_reputation(expect, finding, outcome)


def assert_reputation(expect: dict, finding: dict, outcome: Outcome) -> None:
    level = finding["final_level"] if finding["level"] == "lineage_internal" else finding["level"]
    cells = outcome.reputation["cells"]
    if level == "provable":
        blamed = outcome.cell(agent_definition=expect["agent_definition"])
        assert blamed is not None, cells
        fixed_green = 1 if expect["agent_definition"] == "main" else 0
        assert blamed["n"] == 1 + fixed_green and blamed["mean"] == pytest.approx(fixed_green / (1 + fixed_green))
    else:  # nobody is scored down
        assert all(cell["mean"] == 1.0 for cell in cells), cells
    sources = {row["source"]: row["count"] for row in outcome.reputation["sources"]}
    assert sources == ({finding["origin_source"]: 1} if level == "lineage_exact" else {})
    if level == "lineage_exact":
        assert finding["origin_source"] == expect["source"]
    gaps = {row["platform"]: row["count"] for row in outcome.reputation["integration_coverage"]}
    assert gaps == ({"claude-code": 1} if level == "gap" else {})
    if expect["blocks"]:  # the green Stop after the fix reviewed the main cell positively
        main = outcome.cell(agent_definition="main")
        assert main is not None and round(main["mean"] * main["n"]) >= 1, cells
