"""A finding's attribution from its flip: the facts gathered (who owned the change, how many steps
could write, where the wrong value came from along the run's reads, hop by hop) and graded by the
decision table (vacant/attribute/grade.py `decide`). Called by the Stop pipeline (stop.py) for
every finding it replayed to a flip.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from vacant.attribute.at_change import Attribution
from vacant.attribute.grade import Facts, Owner, Value, Who, decide
from vacant.attribute.lineage import Source, find_source, introduced_value
from vacant.attribute.replay import Flip, Timeline
from vacant.core import levels
from vacant.core.findings import Finding
from vacant.policy.contract.contract import Contract
from vacant.store.objects import ObjectStore
from vacant.store.run import RunView, Step

MAX_HOPS = 5  # internal hops followed from the changing step back to the value's first producer


def attribute_finding(view: RunView, timeline: Timeline, store: ObjectStore, finding: Finding, flip: Flip,
                      contract: Contract | None) -> Attribution:
    """Gather the facts for one finding and let the decision table (grade.decide) grade it."""
    if flip.index is None:
        decision = decide(Facts(flip=False, located=finding.path is not None))
        states = ", ".join(str(i) for i in sorted(flip.evaluated))
        partial = " (the time budget ran out before the others)" if flip.method == "baseline-partial" else ""
        return Attribution(decision.level, evidence={"why": f"{decision.why} (states {states}){partial}"})
    change = timeline.change(flip.index)
    owner = view.steps.get(change["step"]) if change["step"] is not None else None
    writers = [n for n in change["open_steps"] if n in view.steps and view.steps[n].scope != []]
    kind = Owner.GROUP if owner is None else Owner.OUT_OF_BAND if owner.out_of_band else Owner.STEP
    facts = Facts(flip=True, located=finding.path is not None, flaky=flip.flaky, owner=kind, writers=len(writers))
    evidence: dict[str, Any] = {}
    trace = None
    if decide(facts).level not in (levels.HEURISTIC, levels.GAP):
        trace = _trace(view, timeline, store, finding, flip.index, owner, contract)
        evidence.update(trace.evidence)
        facts = replace(facts, value=trace.value, chain_end=trace.chain_end)
    decision = decide(facts)
    if decision.why:
        evidence["why"] = decision.why
    if len(writers) > 1 or kind == Owner.GROUP:
        evidence["group"] = writers
    if decision.who == Who.NOBODY:
        pointer = owner if kind == Owner.OUT_OF_BAND else None
        return Attribution(decision.level, pointer, None, flip_step=pointer.number if pointer else None,
                           evidence=evidence)
    if decision.who == Who.PRODUCER:
        external = trace.source if trace.chain_end in (Value.EXTERNAL, Value.PINNED) else None
        return Attribution(decision.level, trace.producer, _producer_actor(view, trace.producer, trace.hops),
                           external, trace.hops[0], decision.final_level, owner.number, evidence)
    source = trace.source if trace is not None and decision.level == levels.LINEAGE_EXACT else None
    return Attribution(decision.level, owner, owner.actor, source, None, None, owner.number, evidence)


@dataclass
class Trace:
    """Where the wrong value came from: the first read that held it, and the hops inside the run."""

    value: Value
    chain_end: Value
    source: Source | None  # the last source found (external, or None)
    producer: Step | None
    hops: list[str]
    evidence: dict[str, Any]


def _kind(source: Source | None) -> Value:
    if source is None:
        return Value.NOWHERE
    if source.kind == "internal":
        return Value.INTERNAL
    return Value.PINNED if source.origin == "pinned" else Value.EXTERNAL


def _trace(view: RunView, timeline: Timeline, store: ObjectStore, finding: Finding, index: int, owner: Step,
           contract: Contract | None) -> Trace:
    found = introduced_value(timeline, store, index, finding.path, finding.line, finding.text)
    value = found.tokens
    pinned = list(contract.pinned) if contract else []
    source = find_source(view, timeline, store, value, _start_seq(view, owner), pinned)
    evidence: dict[str, Any] = {"value": sorted(value), "value_lines": found.lines}
    first = _kind(source)
    step, hops = owner, []
    while source is not None and source.kind == "internal" and source.producer_step in view.steps and len(hops) < MAX_HOPS:
        hops.append(source.describe())
        step = view.steps[source.producer_step]
        before = source.read_seq if source.origin == "subagent" else _start_seq(view, step)
        source = find_source(view, timeline, store, value, before, pinned)
    if first == Value.INTERNAL and not hops:
        first = Value.NOWHERE  # an internal read with no recorded producer step: nothing to move to
    if hops:
        evidence["hops"] = hops
    return Trace(first, _kind(source) if hops else first, source, step, hops, evidence)


def _start_seq(view: RunView, step: Step) -> int:
    return next(r["seq"] for r in view.records if r["type"] == "step_start" and r["step"] == step.number)


def _producer_actor(view: RunView, step: Step, hops: list[str]) -> dict[str, Any] | None:
    """A sub-agent's reply belongs to the sub-agent's cell, not to the Agent call's caller."""
    if not hops[-1].startswith("subagent:") or not step.actor:
        return step.actor
    agent_id = hops[-1].split(":", 1)[1]
    definition = next((r["agent_type"] for r in view.of_type("subagent") if r["agent_id"] == agent_id), None)
    model = next((r["model"] for r in reversed(view.of_type("actor")) if r["agent_id"] == agent_id), None)
    if definition is None:
        return step.actor
    return {**step.actor, "agent_definition": definition, "model": model}
