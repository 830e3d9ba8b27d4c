"""Verifying a flip by counterfactual: did the flip step's change break it, or only let it show?

A finding absent on state k-1 and present on state k flipped at change k. That proves change k
broke it only when state k-1 was *clean* for it: the check passed there, or its runner reported
the finding's test as passed. When state k-1 failed for another reason (a guard joined by `&&`,
an earlier failure stopping the runner, a collection error) the finding's absence there says
nothing; change k may only have unmasked it. Then:

1. the baseline with only change k applied: the finding present there means change k alone
   causes it (a provable flip still), when that says anything: the baseline itself is clean for
   the finding, or the finding is a located line of a file change k wrote (a linter's line, not a
   test whose file the change never touched; a baseline already broken for a test would make
   every unmasking change look sufficient);
2. else state k with one earlier change undone, nearest first: the first whose undoing makes the
   state clean is the change the failure needs (`broken_by`); change k is named as what let it
   show (`unmasked_by`). Either way the grade is `heuristic`, never `provable` against change k.

And on the final state with only change k undone: the finding still present there means change
k is not what the final state's finding needs (another change causes it too): `heuristic`.

Statuses: PRESENT (the finding is reported), CLEAN (the check passed, or the test passed),
UNKNOWN (the check failed for something else and never reported on this finding).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vacant.attribute.replay import Timeline
from vacant.store.states import Manifest

PRESENT, CLEAN, UNKNOWN = "present", "clean", "unknown"
MAX_EARLIER = 12  # earlier changes tried as the one a masked failure needs, nearest first


@dataclass(frozen=True)
class Verdict:
    masked: bool  # state k-1 did not run the finding's check cleanly, and change k alone did not cause it
    broken_by: int | None  # masked: the state index of the earlier change the failure needs, if one was found
    needed: bool  # the final state with only change k undone lost the finding
    evaluated: int  # counterfactual states evaluated


def paths(timeline: Timeline, index: int) -> set[str]:
    change = timeline.change(index)
    return set(change["added"]) | set(change["changed"]) | set(change["removed"])


def undone(timeline: Timeline, manifest: Manifest, index: int, keep: set[str] = frozenset()) -> Manifest:
    """`manifest` with change `index`'s paths (but those in `keep`) as they were just before it."""
    result = dict(manifest)
    for path in paths(timeline, index) - keep:
        entry = timeline.states[index - 1].get(path)
        if entry is None:
            result.pop(path, None)
        else:
            result[path] = entry
    return result


def alone(timeline: Timeline, index: int) -> Manifest:
    """The baseline with only change `index`'s paths as that change left them."""
    result = dict(timeline.states[0])
    for path in paths(timeline, index):
        entry = timeline.states[index].get(path)
        if entry is None:
            result.pop(path, None)
        else:
            result[path] = entry
    return result


def verify_flip(timeline: Timeline, index: int, status_at: Callable[[int], str],
                status_of: Callable[[Manifest], str], own_line: bool = False) -> Verdict:
    """The counterfactuals for a flip at `index` (module docstring). `status_at(i)` answers for a
    recorded state (cached by the caller), `status_of(manifest)` for a constructed one; `own_line`:
    the finding is a located line (not a test) in a file change `index` wrote."""
    runs = 0
    masked, broken_by = False, None
    if status_at(index - 1) != CLEAN:
        informative = own_line or status_at(0) == CLEAN
        runs += 1 if informative else 0
        if not informative or status_of(alone(timeline, index)) != PRESENT:
            masked = True
            broken_by, tried = _needed_earlier(timeline, index, status_of)
            runs += tried
    without = undone(timeline, timeline.states[timeline.last], index)
    needed = True
    if without != timeline.states[index - 1]:  # else it is state index-1, already known not present
        runs += 1
        needed = status_of(without) != PRESENT
    return Verdict(masked, broken_by, needed, runs)


def _needed_earlier(timeline: Timeline, index: int, status_of: Callable[[Manifest], str]) -> tuple[int | None, int]:
    """The nearest earlier change whose undoing (on state `index`, leaving change `index`'s own
    paths as they are) makes the state clean."""
    tried, own = 0, paths(timeline, index)
    for earlier in range(index - 1, 0, -1):
        if tried >= MAX_EARLIER:
            break
        if not paths(timeline, earlier) - own:
            continue
        tried += 1
        if status_of(undone(timeline, timeline.states[index], earlier, keep=own)) == CLEAN:
            return earlier, tried
    return None, tried
