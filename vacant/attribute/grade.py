"""The grading decision table: one pure function from typed facts to a level, a pointer, a reason.

The Stop pipeline's attribution (vacant/attribute/attribution.py) gathers the facts (the flip, who
owned the change, the reads that held the wrong value); this module decides. Nothing here reads a file or a log, so
every combination of inputs is unit-tested (tests/unit/attribute/test_grade.py).

Precedence, first match wins (a later rule only speaks when no earlier one did):

1. No flip (the finding is on every state evaluated): a located finding or a flag is `heuristic`
   "present at baseline", nobody's doing (no actor, no step); a check without a location is
   `incomplete` (the work was not done), and the evidence lists the states evaluated.
2. A flaky check: the flip itself is not reproducible: `flaky`, nobody's (no step, no actor).
3. No single owner of the change (several steps open): `heuristic`, no actor.
4. The change came from an out-of-band change set: `gap`, no actor.
5. Several steps that could write were open: `heuristic`, pointer only.
6. The value was in a read from outside the run (a file it did not write, a URL, the prompt, a
   pinned input): `lineage_exact` (the actor is untouched).
7. The value was in a read the run itself produced: `lineage_internal`; its final level is
   `lineage_exact` when the chain ends outside the run, else `provable` at the producer.
8. Otherwise `provable`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from vacant.core import levels


class Owner(str, Enum):
    STEP = "step"  # one recorded step owns the change
    OUT_OF_BAND = "out_of_band"  # an out-of-band change set (no recorded step)
    GROUP = "group"  # changed while several steps were open: owner unknown


class Value(str, Enum):
    """Where the wrong value was found, searching the run's reads backwards from the flip."""

    NOWHERE = "nowhere"
    EXTERNAL = "external"  # a read whose origin is outside the run
    PINNED = "pinned"  # a pinned input of the contract
    INTERNAL = "internal"  # a read the run produced (a written file, a command's output, a reply)


class Who(str, Enum):
    NOBODY = "nobody"
    OWNER = "owner"  # the step that owned the flip's change
    PRODUCER = "producer"  # the step at the end of the internal chain


@dataclass(frozen=True)
class Facts:
    flip: bool  # a state where the finding appeared was found
    located: bool  # the finding has a path (a located check finding, or a flag)
    flaky: bool = False
    owner: Owner = Owner.STEP
    writers: int = 1  # steps that could write, open when the change happened
    value: Value = Value.NOWHERE  # at the flip's owner
    chain_end: Value = Value.NOWHERE  # for INTERNAL: where the chain of hops ended


@dataclass(frozen=True)
class Decision:
    level: str
    who: Who
    why: str | None
    final_level: str | None = None  # lineage_internal: the grade at the producer


PRESENT_AT_BASELINE = "present at baseline"
NEVER_PASSED = "failed on every state evaluated"
FLAKY = "the check gave different answers on the same state (flaky)"
GROUP = "changed while several steps were open"
OUT_OF_BAND = "the change came from no recorded step (out-of-band change set)"
PARALLEL = "parallel steps that could all write were open"


def decide(facts: Facts) -> Decision:
    """The level for one finding (see the module docstring for the precedence)."""
    if not facts.flip:
        if facts.located:
            return Decision(levels.HEURISTIC, Who.NOBODY, PRESENT_AT_BASELINE)
        return Decision(levels.INCOMPLETE, Who.NOBODY, NEVER_PASSED)
    if facts.flaky:
        return Decision(levels.FLAKY, Who.NOBODY, FLAKY)
    if facts.owner == Owner.GROUP:
        return Decision(levels.HEURISTIC, Who.NOBODY, GROUP)
    if facts.owner == Owner.OUT_OF_BAND:
        return Decision(levels.GAP, Who.NOBODY, OUT_OF_BAND)
    if facts.writers > 1:
        return Decision(levels.HEURISTIC, Who.OWNER, PARALLEL)
    if facts.value in (Value.EXTERNAL, Value.PINNED):
        return Decision(levels.LINEAGE_EXACT, Who.OWNER, None)
    if facts.value == Value.INTERNAL:
        final = levels.LINEAGE_EXACT if facts.chain_end in (Value.EXTERNAL, Value.PINNED) else levels.PROVABLE
        return Decision(levels.LINEAGE_INTERNAL, Who.PRODUCER, None, final)
    return Decision(levels.PROVABLE, Who.OWNER, None)
