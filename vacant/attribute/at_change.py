"""A finding at the change: what the change that broke it touched, and the grade its counterfactuals
support.

The report names, for every finding with a flip, the files that change touched (`changed`) and
its diff (`diff`): the hunk at the finding's location first when the change touched that file,
then the other files it touched, so a test broken by a change to a source file shows that source
file's lines, never nothing. `demote` applies vacant.attribute.verify's verdict to a grade: a
masked flip or one the final state does not need is `heuristic` (docs/LEVELS.md), naming both the
change the failure needs and the one that let it show.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from vacant.attribute.diffs import MAX_LINES, step_diff
from vacant.attribute.lineage import Source
from vacant.attribute.replay import Timeline
from vacant.attribute.verify import Verdict, paths
from vacant.core import levels
from vacant.store.objects import ObjectStore
from vacant.store.run import RunView, Step


@dataclass
class Attribution:
    level: str
    step: Step | None = None
    actor: dict[str, Any] | None = None
    source: Source | None = None  # where the value came from outside the run, if anywhere
    first_hop: str | None = None  # lineage_internal: the run's own read the value was copied from
    final_level: str | None = None  # for lineage_internal: the grade at the producing step
    flip_step: int | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    diff: str | None = None  # what the change shown changed (at the finding's location first)
    changed: list[str] = field(default_factory=list)  # the files that change touched


STRONG = (levels.PROVABLE, levels.LINEAGE_EXACT, levels.LINEAGE_INTERNAL)
MAX_FILES = 6


def change_diff(timeline: Timeline, store: ObjectStore, index: int | None, path: str | None,
                line: int | None) -> tuple[str | None, list[str]]:
    """(the diff of change `index`, its files): the finding's file first, then the others, within
    MAX_LINES lines; a file with no text diff (binary, removed unrecorded) is still listed."""
    if index is None or index < 1:
        return None, []
    touched = sorted(paths(timeline, index))
    order = ([path] if path in touched else []) + [p for p in touched if p != path]
    parts: list[str] = []
    for rel in order[:MAX_FILES]:
        text = step_diff(timeline, store, index, rel, line if rel == path else None)
        if text is None:
            text = _no_text(timeline, index, rel)
        parts += text.splitlines()
        if len(parts) >= MAX_LINES:
            return "\n".join(parts[:MAX_LINES] + ["… (cut)"]), touched
    if len(order) > MAX_FILES:
        parts.append(f"… and {len(order) - MAX_FILES} more file(s)")
    return ("\n".join(parts) if parts else None), touched


def _no_text(timeline: Timeline, index: int, rel: str) -> str:
    change = timeline.change(index)
    kind = "removed" if rel in change["removed"] else "added" if rel in change["added"] else "changed"
    return f"--- {rel} ({kind}; no text diff: binary, identical text or not kept)"


def demote(view: RunView, timeline: Timeline, attribution: Attribution, index: int,
           verdict: Verdict) -> tuple[Attribution, int]:
    """The grade the counterfactuals support, and the change whose diff to show."""
    flip_owner = view.steps.get(timeline.change(index)["step"])
    evidence = dict(attribution.evidence)
    evidence["needed"] = verdict.needed
    if not verdict.masked and verdict.needed:
        return replace(attribution, evidence=evidence), index
    shown = index
    step = attribution.step
    if verdict.masked:
        evidence["unmasked_by"] = flip_owner.number if flip_owner else None
        culprit = view.steps.get(timeline.change(verdict.broken_by)["step"]) if verdict.broken_by else None
        evidence["broken_by"] = culprit.number if culprit else None
        if verdict.broken_by is not None:
            shown, step = verdict.broken_by, culprit
        evidence["why"] = _masked_why(flip_owner, culprit)
    else:
        evidence["why"] = (f"still present on the final state with step {_n(flip_owner)}'s change undone: "
                           "another change causes it too")
    if attribution.level not in STRONG:  # already weaker: its own reason stands first
        kept = {**evidence, "why": attribution.evidence.get("why") or evidence["why"]}
        return replace(attribution, evidence=kept), shown
    return replace(attribution, level=levels.HEURISTIC, step=step, actor=step.actor if step else None, source=None,
                   first_hop=None, final_level=None, evidence=evidence), shown


def _n(step) -> str:
    return str(step.number) if step is not None else "?"


def _masked_why(flip_owner, culprit) -> str:
    if culprit is not None:
        return (f"step {_n(flip_owner)}'s change only let it show: the state before it never ran this cleanly, and "
                f"undoing step {culprit.number}'s change clears it (step {culprit.number} broke it)")
    return (f"step {_n(flip_owner)}'s change alone does not cause it and the state before it never ran this "
            "cleanly (an earlier change may have broken it; none of those tried clears it alone)")
