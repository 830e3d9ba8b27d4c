"""The grading decision table (vacant/attribute/grade.py), over every combination of its inputs.

The oracle below is written from docs/LEVELS.md and issue 12, one question at a time (is anyone
accused? which level? who is pointed at?), not as a copy of the precedence chain in `decide`.
"""

from __future__ import annotations

import itertools

import pytest

from vacant.attribute.grade import (
    PRESENT_AT_BASELINE,
    Decision,
    Facts,
    Owner,
    Value,
    Who,
    decide,
)
from vacant.core import levels

COMBINATIONS = [
    Facts(flip, located, flaky, owner, writers, value, chain_end)
    for flip, located, flaky, owner, writers, value, chain_end in itertools.product(
        (True, False), (True, False), (True, False), list(Owner), (1, 2), list(Value), list(Value))
]


def oracle(f: Facts) -> tuple[str, Who, str | None]:
    """(level, who, final level) from the documented meaning of each level."""
    reproducible = f.flip and not f.flaky
    single_recorded_writer = f.owner == Owner.STEP and f.writers == 1
    if not f.flip:  # on every state evaluated: nobody did it during this run
        return (levels.HEURISTIC if f.located else levels.INCOMPLETE), Who.NOBODY, None
    if f.flaky:  # answers differently on the same state: reported, never anyone's
        return levels.FLAKY, Who.NOBODY, None
    if f.owner == Owner.OUT_OF_BAND:
        return levels.GAP, Who.NOBODY, None
    if not (reproducible and single_recorded_writer):
        pointer = Who.OWNER if f.owner == Owner.STEP else Who.NOBODY
        return levels.HEURISTIC, pointer, None
    outside = {Value.EXTERNAL, Value.PINNED}
    if f.value in outside:
        return levels.LINEAGE_EXACT, Who.OWNER, None
    if f.value == Value.INTERNAL:
        return levels.LINEAGE_INTERNAL, Who.PRODUCER, (levels.LINEAGE_EXACT if f.chain_end in outside else levels.PROVABLE)
    return levels.PROVABLE, Who.OWNER, None


def test_the_table_covers_every_combination():
    assert len(COMBINATIONS) == 2 * 2 * 2 * len(Owner) * 2 * len(Value) ** 2 == 768


@pytest.mark.parametrize("facts", COMBINATIONS, ids=lambda f: (
    f"{'flip' if f.flip else 'noflip'}-{'loc' if f.located else 'noloc'}-{'flaky' if f.flaky else 'steady'}-"
    f"{f.owner.value}-w{f.writers}-{f.value.value}-{f.chain_end.value}"))
def test_decision_matches_the_documented_meaning(facts):
    decision = decide(facts)
    assert (decision.level, decision.who, decision.final_level) == oracle(facts)
    assert decision.level in levels.LEVELS


@pytest.mark.parametrize("facts", COMBINATIONS)
def test_nobody_is_accused_unless_the_flip_is_theirs_alone(facts):
    """The consequence that costs reputation (provable, directly or at the end of a hop chain)
    needs a reproducible flip owned by one recorded step and no source outside the run."""
    decision = decide(facts)
    accused = decision.level == levels.PROVABLE or decision.final_level == levels.PROVABLE
    if accused:
        assert facts.flip and not facts.flaky and facts.owner == Owner.STEP and facts.writers == 1
        assert facts.value in (Value.NOWHERE, Value.INTERNAL)
    if not facts.flip:
        assert decision.who == Who.NOBODY


def test_present_at_baseline_says_so():
    assert decide(Facts(flip=False, located=True)) == Decision(levels.HEURISTIC, Who.NOBODY, PRESENT_AT_BASELINE)
