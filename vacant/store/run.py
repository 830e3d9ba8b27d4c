"""A recorded run read back as steps: the one view every reporting command builds on.

Actors are resolved here: a step's cell may lack its model when it starts (Claude writes the
transcript after the hooks), and a later `actor` event supplies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vacant.core import events


@dataclass
class Step:
    number: int
    key: str
    tool: str
    input: Any
    actor: dict[str, Any] | None
    agent_id: str | None
    scope: list[str] | None
    open_at_start: list[int]
    outcome: str | None = None
    exit_code: int | None = None
    detail: str | None = None
    changes: list[dict[str, Any]] = field(default_factory=list)
    reads: list[dict[str, Any]] = field(default_factory=list)
    kind: str | None = None  # the tool's kind (core/calls.py TOOL_KINDS), when recorded
    intent: dict[str, Any] | None = None  # the platform's canonical input, for a kind the Stop verifies
    cwd: str | None = None  # where it ran: relative to the workspace (`.`: its root), or absolute outside
    seq: int = 0  # its step_start record's seq
    started: float | None = None  # its step_start's and step_end's times (epoch s)
    ended: float | None = None

    @property
    def seconds(self) -> float | None:
        """How long it ran, when both its start and its end were recorded."""
        if self.started is None or self.ended is None:
            return None
        return max(0.0, self.ended - self.started)

    @property
    def out_of_band(self) -> bool:
        return self.tool == "oob"

    def changed_paths(self) -> list[str]:
        paths: list[str] = []
        for change in self.changes:
            paths += [*change["added"], *change["changed"], *change["removed"]]
        return paths


@dataclass
class RunView:
    records: list[dict[str, Any]]
    steps: dict[int, Step]
    group_changes: list[dict[str, Any]]  # changes seen while several steps were open, owner unknown

    @classmethod
    def load(cls, run_dir: Path) -> "RunView":
        return cls.build(events.load(Path(run_dir) / "events.jsonl"))

    @classmethod
    def build(cls, records: list[dict[str, Any]]) -> "RunView":
        steps: dict[int, Step] = {}
        group: list[dict[str, Any]] = []
        models: dict[str, str] = {}
        for record in records:
            kind = record["type"]
            if kind == "step_start":
                steps[record["step"]] = Step(
                    number=record["step"], key=record["key"], tool=record["tool"], input=record["input"],
                    actor=record["actor"], agent_id=record.get("agent_id"), scope=record.get("scope"),
                    open_at_start=record["open_steps"], kind=record.get("kind"), intent=record.get("intent"),
                    cwd=record.get("cwd"), seq=record.get("seq", 0), started=record.get("ts"),
                )
            elif kind == "step_end" and record["step"] in steps:
                step = steps[record["step"]]
                step.outcome, step.exit_code, step.detail = record["outcome"], record.get("exit_code"), record.get("detail")
                step.ended = record.get("ts")
            elif kind == "change":
                target = steps.get(record["step"]) if record["step"] is not None else None
                (target.changes if target else group).append(record)
            elif kind == "read" and record["step"] in steps:
                steps[record["step"]].reads.append(record)
            elif kind == "actor":
                models[record["agent_id"]] = record["model"]
        for step in steps.values():  # fill models that became known after the step started
            if step.actor is not None and not step.actor.get("model"):
                model = models.get(step.agent_id or "main")
                if model:
                    step.actor = {**step.actor, "model": model}
        return cls(records, steps, group)

    def ordered(self) -> list[Step]:
        return [self.steps[number] for number in sorted(self.steps)]

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        return [record for record in self.records if record["type"] == event_type]
