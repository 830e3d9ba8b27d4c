"""Replay: reconstruct recorded states in a scratch directory and find where a finding flipped.

States are numbered by change records: state 0 is the run's baseline, state i the workspace after
the i-th recorded change delta. A finding can only flip where the workspace changed, so the search
runs over change records; the owner of change i is the step it belongs to (or an open group).

The scratch directory is materialized once, then moved between states by applying deltas. Check
results are cached per (check, state); `runs` counts real check executions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from vacant.store.objects import ObjectStore
from vacant.store.run import RunView
from vacant.store.reuse import ReusedDirectory
from vacant.store.states import Manifest, fold, load_manifest


@dataclass
class Timeline:
    states: list[Manifest]
    changes: list[dict[str, Any]]  # change i (1-based state index) is changes[i - 1]

    @classmethod
    def of(cls, view: RunView, store: ObjectStore) -> "Timeline":
        start = next(record for record in view.records if record["type"] == "run_start")
        changes = view.of_type("change")
        return cls(fold(load_manifest(store, start["baseline"]), changes), changes)

    @property
    def last(self) -> int:
        return len(self.states) - 1

    def change(self, index: int) -> dict[str, Any]:
        return self.changes[index - 1]

    def touching(self, path: str | None, after: int) -> list[int]:
        """States just before each later change to `path` (where a fix could have happened)."""
        if path is None:
            return []
        return [i - 1 for i in range(after + 2, self.last + 1)
                if path in self.change(i)["added"] or path in self.change(i)["changed"] or path in self.change(i)["removed"]]

    def changes_path(self, path: str | None) -> bool:
        """Whether any recorded change touches `path`."""
        return path is not None and any(path in c["added"] or path in c["changed"] or path in c["removed"]
                                        for c in self.changes)

    def content(self, store: ObjectStore, index: int, path: str) -> bytes | None:
        entry = self.states[index].get(path)
        if not entry or entry[0] != "f" or not store.has(entry[3]):
            return None
        return store.get(entry[3])


class BudgetExceeded(Exception):
    pass


@dataclass
class Scratch:
    """One scratch directory that moves between states, never the live workspace; what a check
    run left in it (bytecode, caches, a file a test rewrote) is put back before each move
    (vacant/store/reuse.py)."""

    timeline: Timeline
    store: ObjectStore
    directory: Path
    live: Path
    index: int | None = None  # the recorded state the directory holds (None: none, or a constructed one)
    unrestorable: dict[int, list[str]] = field(default_factory=dict)
    current: Manifest | None = None
    reused: ReusedDirectory | None = None

    def _move(self, manifest: Manifest) -> list[str]:
        if self.reused is None:
            self.reused = ReusedDirectory(self.directory, self.store, self.live)
        missing = self.reused.holding(manifest)
        self.current = manifest
        return missing

    def at(self, index: int) -> Path:
        """The directory holding recorded state `index` as it was recorded (a run since put back)."""
        self.unrestorable[index] = self._move(self.timeline.states[index])
        self.index = index
        return self.directory

    def holding(self, manifest: Manifest) -> Path:
        """The directory holding a constructed state (a counterfactual: some change undone)."""
        self._move(manifest)
        self.index = None
        return self.directory


@dataclass
class Presence:
    """`present(i)` for one finding, cached; `fresh(i)` re-runs (to catch a flaky check)."""

    evaluate: Callable[[int, bool], bool]  # (state index, use cache) -> finding present?
    seen: dict[int, bool] = field(default_factory=dict)

    def __call__(self, index: int) -> bool:
        if index not in self.seen:
            self.seen[index] = self.evaluate(index, True)
        return self.seen[index]

    def fresh(self, index: int) -> bool:
        return self.evaluate(index, False)


@dataclass
class Flip:
    index: int | None  # state index where the finding appeared; None when present at baseline
    present_at_baseline: bool
    flaky: bool
    method: str  # bisection | linear | baseline
    evaluated: dict[int, bool]


def find_flip(present: Presence, last: int, deadline: float, confirm=lambda index: ()) -> Flip:
    """Bisect for the state where the finding appears, verify both sides, else scan linearly.

    Bisection assumes a finding, once introduced, stays. `confirm(k)` names later states where
    that could have broken (e.g. each later change to the finding's file): the finding must be
    present on all of them, or the presence is not monotone and a linear scan decides.
    """
    if present(0):
        return _after_baseline(present, last, deadline)
    low, high = 0, last  # invariant: absent at low, present at high
    while high - low > 1:
        _check_budget(deadline)
        middle = (low + high) // 2
        if present(middle):
            high = middle
        else:
            low = middle
    _check_budget(deadline)
    flaky = present.fresh(high) is not True or present.fresh(high - 1) is not False
    if not flaky and _persists(present, high, last) and all(present(i) for i in confirm(high)):
        return Flip(high, False, False, "bisection", present.seen)
    return _linear(present, last, deadline, flaky)


def _persists(present: Presence, index: int, last: int) -> bool:
    """Bisection's answer holds if every state it evaluated after the flip also had the finding."""
    return all(value for state, value in present.seen.items() if state >= index and state <= last)


def _linear(present: Presence, last: int, deadline: float, flaky: bool) -> Flip:
    """The last absent->present transition (the one the final state still carries)."""
    for index in range(last, 0, -1):
        _check_budget(deadline)
        if not present(index - 1):
            return Flip(index, False, flaky, "linear", present.seen)
    return Flip(None, True, flaky, "linear", present.seen)


def _after_baseline(present: Presence, last: int, deadline: float) -> Flip:
    """Present at the baseline: was it ever absent later (fixed, then broken again)? Scan back from
    the end for the last absent state; the flip after it is the one the final state carries. When
    the budget runs out first, the answer stands on the states evaluated (listed in the Flip)."""
    present(last)  # the final state, where the finding was found (a cached answer at Stop)
    try:
        for index in range(last, 0, -1):
            _check_budget(deadline)
            if not present(index - 1):
                flaky = present.fresh(index) is not True or present.fresh(index - 1) is not False
                return Flip(index, False, flaky, "linear", present.seen)
    except BudgetExceeded:
        return Flip(None, True, False, "baseline-partial", present.seen)
    return Flip(None, True, False, "baseline", present.seen)


def _check_budget(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise BudgetExceeded()
