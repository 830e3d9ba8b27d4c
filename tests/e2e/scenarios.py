"""Planted-error scenarios (fixtures/scenarios/*.json, one sub-directory per platform whose tools
differ, e.g. fixtures/scenarios/codex/): load one, run it on a real agent binary, read back what
vacant concluded, and assert it against the scenario's `expect`. Shared by every platform's
scenario tests; only running the agent differs between them."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from vacant_run import vacant

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"

# Names that would tell an agent which platform or model it is, whatever the run's log says.
IDENTITY_WORDS = frozenset({"claude-code", "claude code", "anthropic", "opus", "haiku", "sonnet",
                            "codex", "openai", "gpt-"})


def names(subdir: str | None = None) -> list[str]:
    """The scenarios in `fixtures/scenarios/` (or in its `subdir`, named `subdir/stem`)."""
    directory = SCENARIOS / subdir if subdir else SCENARIOS
    prefix = f"{subdir}/" if subdir else ""
    return sorted(prefix + path.stem for path in directory.glob("*.json"))


NAMES = names()


def load(name: str, workspace: Path, memory: Path) -> dict[str, Any]:
    text = (SCENARIOS / f"{name}.json").read_text()
    text = text.replace("{ws}", str(workspace)).replace("{mem}", str(memory))
    return json.loads(text)


def seed(workspace: Path, files: dict[str, str]) -> None:
    """Write the scenario's files; `@NAME` copies fixtures/scenarios/NAME (shared helpers)."""
    for rel, content in files.items():
        target = workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if content.startswith("@"):
            shutil.copyfile(SCENARIOS / content[1:], target)
        else:
            target.write_text(content)


@dataclass
class Outcome:
    workspace: Path
    requests: list[dict[str, Any]]
    reports: list[dict[str, Any]] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    reputation: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)  # the person's (their signing key verifies flags)

    @classmethod
    def read(cls, workspace: Path, requests: list[dict[str, Any]], env: dict) -> "Outcome":
        outcome = cls(workspace, requests, env=dict(env))
        outcome.log = [json.loads(line) for line in vacant(["log", "--json"], workspace).stdout.splitlines()]
        stops = max((json.loads(vacant(["report", "--json"], workspace).stdout).get("stop", 0),), default=0)
        for number in range(1, stops + 1):
            outcome.reports.append(json.loads(vacant(["report", "--json", "--stop", str(number)], workspace).stdout))
        outcome.reputation = json.loads(vacant(["reputation", "--json"], workspace, env=env).stdout)
        return outcome

    @property
    def platform(self) -> str:
        """The platform the run was recorded under (the cell platform of `run_start`)."""
        return next(r["platform"] for r in self.log if r["type"] == "run_start")

    def feedback_requests(self, marker: str) -> list[str]:
        """Texts of the user messages in requests the agent sent after a Stop block."""
        found = []
        for request in self.requests:
            body = json.dumps(request.get("body"))
            if marker in body:
                found.append(body)
        return found

    def cell(self, **match) -> dict[str, Any] | None:
        for cell in self.reputation["cells"]:
            if all(cell.get(k) == v for k, v in match.items()):
                return cell
        return None


def identities(log: list[dict]) -> set[str]:
    """Every string that would tell the agent who it is (or who another actor is)."""
    found = set(IDENTITY_WORDS)
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


def assert_planted(expect: dict, outcome: Outcome, marker: str) -> dict[str, Any]:
    """The scenario's ground truth against the reports, the feedback the upstream received (its
    requests carrying `marker`), identities, reputation, and the green Stop after the fix.
    Returns the graded finding."""
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
    if "file_read" in expect:  # the platform reported the file read: recorded as the whole file, not the output
        rel, size = expect["file_read"]
        reads = [r for r in outcome.log if r["type"] == "read" and r["origin"] == "file" and r["ref"] == rel]
        assert [(r["step"], r["size"]) for r in reads] == [(expect["step"], size)], reads
    assert first["read_coverage"]["state"] in ("complete", "partial", "none")
    assert_reproduces(finding, outcome)

    feedback = [r for r in outcome.log if r["type"] == "feedback"]
    if expect["blocks"]:
        assert first["decision"] == "block"
        sent = outcome.feedback_requests(marker)
        assert sent and finding["id"] in sent[0], "the next request must carry the located feedback"
        assert len(feedback) == 1 and len(feedback[0]["text"].splitlines()) <= 12
        leaked = [value for value in identities(outcome.log) if value in feedback[0]["text"].lower()]
        assert leaked == [], f"feedback names an actor: {leaked}"
        last = main_stops[-1]
        assert last["findings"] == [] and last["decision"] == "stop", "the fix round must turn the Stop green"
    else:
        assert feedback == [] and outcome.feedback_requests(marker) == []

    assert_reputation(expect, finding, outcome)
    return finding


def assert_reproduces(finding: dict, outcome: Outcome) -> None:
    """Issue 12: the evidence's rerun command, run on the recorded run afterwards (the fix round
    has moved it on), gives back the same finding, level and step. A flaky check's finding is the
    exception its evidence states: the check does not answer the same way twice."""
    if finding["evidence"].get("flaky"):
        return
    command = finding["evidence"]["rerun"].split()
    assert command[:2] == ["vacant", "replay"] and "--stop" in command, command
    again = json.loads(vacant([*command[1:], "--json"], outcome.workspace, env=outcome.env or None, check=False).stdout)
    assert [(f["id"], f["level"], f["step"]) for f in again["findings"]] == \
           [(finding["id"], finding["level"], finding["step"])], again["findings"]


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
    assert gaps == ({outcome.platform: 1} if level == "gap" else {})
    if expect["blocks"]:  # the green Stop after the fix reviewed the main cell positively
        main = outcome.cell(agent_definition="main")
        assert main is not None and round(main["mean"] * main["n"]) >= 1, cells
