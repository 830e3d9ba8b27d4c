"""A recorded run as a typed model for the exporters: agents, their tool calls, reads, changes
and graded findings, with the step log's timestamps.

Contract: every value here comes from the step log (redacted when it was written). File and read
contents are never loaded; a tool call keeps only the arguments in `SAFE_ARGUMENTS` (a command, a
path, a pattern), never a Write's content or an Edit's strings. Findings come from the log's
`finding`, `flip` and `attribution` events; the check's message and the offending line (which
live only in the report) are not part of the model.

Limits: a sub-agent is tied to the Agent/Task call of its parent that was open when it started;
with several open it takes the latest, with none it hangs under the main agent.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vacant.core import platform_facts
from vacant.store.run import RunView

MAIN = "main"
# The platform's model provider, in the GenAI conventions' and models.dev's naming, is registered
# by the platform registry (vacant/core/platform_facts.py `provider`).
# Tool-input keys that name what a call did without carrying file contents.
SAFE_ARGUMENTS = ("command", "cmd", "description", "file_path", "filePath", "path", "notebook_path", "pattern",
                  "glob", "url", "query", "subagent_type", "workdir", "cwd", "timeout")
ARGUMENT_WIDTH = 2000
AGENT_TOOLS = ("Agent", "Task")


class ExportError(RuntimeError):
    """A run that cannot be exported, or an export that failed (one sentence, what to do)."""


@dataclass(frozen=True)
class Read:
    seq: int
    ts: float
    origin: str  # file | url | prompt | command | subagent | search
    ref: str
    size: int | None
    object: str  # the object-store key of the content (the content itself is never exported)


@dataclass(frozen=True)
class Change:
    seq: int
    ts: float
    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    entries: dict[str, tuple[Any, ...]] = field(default_factory=dict, compare=False)  # added/changed path -> manifest entry


@dataclass
class ToolCall:
    step: int
    call_id: str  # the platform's tool-use id (the step key without its agent prefix)
    tool: str
    agent: str | None  # agent key (MAIN or a sub-agent id); None for an out-of-band change set
    start: float
    end: float
    outcome: str | None
    exit_code: int | None
    arguments: dict[str, Any]
    reads: list[Read] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)

    @property
    def out_of_band(self) -> bool:
        return self.agent is None


@dataclass
class Agent:
    key: str
    definition: str  # "main" or the sub-agent's type
    model: str | None
    start: float
    end: float
    parent_step: int | None  # the Agent/Task call that started it (sub-agents only)
    steps: list[int] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)  # reads outside any step (prompts, replies)


@dataclass(frozen=True)
class GradedFinding:
    id: str
    source: str  # check | flag
    name: str
    path: str | None
    line: int | None
    level: str | None  # None: found, never graded by a Stop
    step: int | None  # the step blamed
    flip_step: int | None  # the step where it appeared on replay
    lineage_source: str | None
    rerun: str
    ts: float
    standing: bool  # reported by the run's last Stop pipeline (False: fixed, or gone since)


@dataclass
class RunModel:
    run: str
    platform: str
    session: str | None
    workspace: str
    baseline: str  # object key of the baseline manifest
    start: float
    end: float
    agents: dict[str, Agent]
    calls: dict[int, ToolCall]
    group_changes: list[Change]  # changes seen while several steps were open (owner unknown)
    findings: list[GradedFinding]

    @property
    def provider(self) -> str:
        return platform_facts.provider(self.platform)

    def model_id(self, model: str | None) -> str | None:
        """`provider/model` (models.dev convention) unless the model already names its provider."""
        if not model:
            return None
        return model if "/" in model else f"{self.provider}/{model}"


def load(run_dir: Path) -> RunModel:
    path = Path(run_dir) / "events.jsonl"
    if not path.exists():
        raise ExportError(f"{run_dir} holds no step log")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a torn line is skipped; `vacant verify` reports it
        return build(RunView.load(run_dir), Path(run_dir).name)


def build(view: RunView, run: str) -> RunModel:
    start = next((r for r in view.records if r["type"] == "run_start"), None)
    if start is None:
        raise ExportError(f"run {run} has no run_start record: nothing to export")
    last_ts = max(float(r["ts"]) for r in view.records)
    calls = _calls(view, last_ts)
    agents = _agents(view, calls, float(start["ts"]), last_ts)
    group = [_change(r) for r in view.group_changes]
    return RunModel(
        run=run, platform=str(start["platform"]), session=start.get("session"), workspace=str(start["workspace"]),
        baseline=str(start["baseline"]), start=float(start["ts"]), end=last_ts, agents=agents, calls=calls,
        group_changes=group, findings=_findings(view, run),
    )


def safe_arguments(tool_input: Any) -> dict[str, Any]:
    """The allow-listed scalar arguments of a tool call, each cut to ARGUMENT_WIDTH characters."""
    if not isinstance(tool_input, dict):
        return {}
    kept: dict[str, Any] = {}
    for key in SAFE_ARGUMENTS:
        value = tool_input.get(key)
        if isinstance(value, str):
            kept[key] = value if len(value) <= ARGUMENT_WIDTH else value[: ARGUMENT_WIDTH - 1] + "…"
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            kept[key] = value
    return kept


def _read(record: dict[str, Any]) -> Read:
    return Read(int(record["seq"]), float(record["ts"]), str(record["origin"]), str(record["ref"]),
                record.get("size"), str(record["object"]))


def _change(record: dict[str, Any]) -> Change:
    entries = {rel: tuple(entry) for rel, entry in {**record["added"], **record["changed"]}.items()}
    return Change(int(record["seq"]), float(record["ts"]), tuple(record["added"]), tuple(record["changed"]),
                  tuple(record["removed"]), entries)


def _calls(view: RunView, last_ts: float) -> dict[int, ToolCall]:
    starts = {r["step"]: r for r in view.of_type("step_start")}
    ends = {r["step"]: r for r in view.of_type("step_end")}
    calls: dict[int, ToolCall] = {}
    for step in view.ordered():
        begun = float(starts[step.number]["ts"])
        ended = ends.get(step.number)
        agent = None if step.out_of_band else (step.agent_id or MAIN)
        calls[step.number] = ToolCall(
            step=step.number, call_id=step.key.split("/", 1)[-1], tool=step.tool, agent=agent, start=begun,
            end=max(begun, float(ended["ts"]) if ended else last_ts), outcome=step.outcome, exit_code=step.exit_code,
            arguments=safe_arguments(step.input), reads=[_read(r) for r in step.reads],
            changes=[_change(r) for r in step.changes],
        )
    return calls


def _agents(view: RunView, calls: dict[int, ToolCall], run_start: float, last_ts: float) -> dict[str, Agent]:
    agents: dict[str, Agent] = {MAIN: Agent(MAIN, MAIN, None, run_start, last_ts, None)}
    step_of_seq = _open_agent_calls(view)
    for record in view.of_type("subagent"):
        key = str(record["agent_id"])
        ts = float(record["ts"])
        if record["phase"] == "start" and key not in agents:
            agents[key] = Agent(key, str(record.get("agent_type") or "subagent"), None, ts, ts,
                                step_of_seq(int(record["seq"]), key))
        elif key in agents:
            agents[key].end = max(agents[key].end, ts)
    for call in calls.values():
        if call.agent is None:
            continue
        agent = agents.get(call.agent)
        if agent is None:  # a sub-agent whose start was not recorded
            agent = agents[call.agent] = Agent(call.agent, call.agent, None, call.start, call.end, None)
        agent.steps.append(call.step)
        agent.start, agent.end = min(agent.start, call.start), max(agent.end, call.end)
    for step in view.ordered():
        if step.actor and (step.agent_id or MAIN) in agents:
            agent = agents[step.agent_id or MAIN]
            agent.model = agent.model or step.actor.get("model")
            if agent.key != MAIN and agent.definition == agent.key:
                agent.definition = str(step.actor.get("agent_definition") or agent.key)
    for record in view.of_type("actor"):
        if record["agent_id"] in agents:
            agents[record["agent_id"]].model = record["model"] or agents[record["agent_id"]].model
    for record in view.of_type("read"):
        if record["step"] is None:
            owner = record["ref"] if record["origin"] == "subagent" and record["ref"] in agents else MAIN
            agents[owner].reads.append(_read(record))
    return agents


def _open_agent_calls(view: RunView) -> Callable[[int, str], int | None]:
    """seq -> the latest Agent/Task call open at that point (not the sub-agent's own)."""
    spans: list[tuple[int, int, int, str]] = []  # (start seq, end seq, step, agent key)
    starts = {r["step"]: r["seq"] for r in view.of_type("step_start")}
    ends = {r["step"]: r["seq"] for r in view.of_type("step_end")}
    for step in view.ordered():
        if step.tool in AGENT_TOOLS:
            spans.append((starts[step.number], ends.get(step.number, 1 << 62), step.number, step.agent_id or MAIN))

    def find(seq: int, agent: str) -> int | None:
        open_now = [s for s in spans if s[0] < seq < s[1] and s[3] != agent]
        return max(open_now)[2] if open_now else None

    return find


def _findings(view: RunView, run: str) -> list[GradedFinding]:
    """One per finding id: where it was last found, with its last grade (if a Stop graded it)."""
    found: dict[str, dict[str, Any]] = {}
    last_round: set[str] = set()  # the ids reported after the last `stop` that ran the pipeline
    fresh = True
    for record in view.records:
        kind = record["type"]
        if kind == "stop":
            fresh = True
        elif kind in ("check", "finding") and fresh:
            last_round, fresh = set(), False
        if kind == "finding":
            last_round.add(record["id"])
            found[record["id"]] = {**found.get(record["id"], {}), "finding": record}
        elif kind in ("attribution", "flip") and record["finding"] in found:
            found[record["finding"]][kind] = record
    graded = []
    for finding_id, parts in found.items():
        finding, attribution, flip = parts["finding"], parts.get("attribution"), parts.get("flip")
        graded.append(GradedFinding(
            id=finding_id, source=str(finding["source"]), name=str(finding["name"]), path=finding.get("path"),
            line=finding.get("line"), level=attribution["level"] if attribution else None,
            step=attribution["step"] if attribution else (flip["step"] if flip else None),
            flip_step=flip["step"] if flip else None,
            lineage_source=attribution.get("lineage_source") if attribution else None,
            rerun=(attribution or {}).get("rerun") or f"vacant replay {run}", ts=float((attribution or finding)["ts"]), standing=finding_id in last_round,
        ))
    return graded
