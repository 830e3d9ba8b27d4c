"""Planted-error scenarios (fixtures/scenarios/*.json): load one, run it on a real agent binary,
and read back what vacant concluded. Shared by every platform's scenario tests."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vacant_run import vacant

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"
NAMES = sorted(path.stem for path in SCENARIOS.glob("*.json"))


def load(name: str, workspace: Path, memory: Path) -> dict[str, Any]:
    text = (SCENARIOS / f"{name}.json").read_text()
    text = text.replace("{ws}", str(workspace)).replace("{mem}", str(memory))
    return json.loads(text)


def seed(workspace: Path, files: dict[str, str]) -> None:
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

    @classmethod
    def read(cls, workspace: Path, requests: list[dict[str, Any]], env: dict) -> "Outcome":
        outcome = cls(workspace, requests)
        outcome.log = [json.loads(line) for line in vacant(["log", "--json"], workspace).stdout.splitlines()]
        stops = max((json.loads(vacant(["report", "--json"], workspace).stdout).get("stop", 0),), default=0)
        for number in range(1, stops + 1):
            outcome.reports.append(json.loads(vacant(["report", "--json", "--stop", str(number)], workspace).stdout))
        outcome.reputation = json.loads(vacant(["reputation", "--json"], workspace, env=env).stdout)
        return outcome

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
