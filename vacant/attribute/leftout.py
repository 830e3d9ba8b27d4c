"""What a Stop left out, said: guards still being probed, and what the time budget did not reach.

A guard counts from when its probe finished (vacant/policy/contract/background.py): a run that
started before then, or while the probe still runs, has no probe of it to stand on, so its Stop
does not run it and cannot block on it; the report's `pending_guards` says which and why.

A Stop keeps to its budget (`[stop] budget_s`): a check's run on the final state gets what is left
of it (never more than its own timeout), and one the budget cut, or left no time to start, is not a
failure of the work. The report's `left_out` names those checks (with how many tests they were to
run, when known), how many findings were left ungraded (`not_replayed`), and the parts of the Stop
that did not run; the agent's feedback and the person's message say it in one sentence, and that
they run at the next Stop (a Stop that left anything out is never reused by the next).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from vacant.policy.contract import background
from vacant.policy.contract.contract import Contract

TESTS_SHOWN = 4  # test ids named in the sentence (the count says how many in all)


@dataclass(frozen=True)
class Pending:
    """A guard this run's Stop does not run: its probe had not finished when the run started."""

    name: str
    why: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def _epoch(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return float("inf")  # an unreadable time: not known to predate the run


def pending_guards(contract: Contract | None, run_started: float, root: Path | None) -> list[Pending]:
    """The guards still being probed (`root`: a live Stop, which can look) and those whose
    background probe finished after the run started (its `at` is to the second: within that
    second it counts as after, the side that blocks nobody)."""
    out: list[Pending] = []
    for guard in contract.guards if contract else []:
        probe = guard.probe
        if probe is not None and probe.background and _epoch(probe.at) + 1 > run_started:
            out.append(Pending(guard.name, f"its probe finished at {probe.at}, after this run started: it counts "
                                           "from the next run"))
    if root is not None:
        known = {item.name for item in out} | {item.name for item, _ in (contract.all_checks() if contract else [])}
        for record in background.running(root):
            if record.name not in known:
                out.append(Pending(record.name, f"it was still being probed ({record.describe()}): it counts from "
                                                "when its probe finishes"))
    return out


def without(contract: Contract | None, pending: list[Pending]) -> Contract | None:
    """The contract this Stop runs: the pending guards taken out."""
    if contract is None or not pending:
        return contract
    names = {item.name for item in pending}
    return contract.model_copy(update={"guard": [g for g in contract.guard if g.name not in names],
                                       "precondition": [g for g in contract.precondition if g.name not in names]})


def pending_sentence(pending: list[dict[str, Any]]) -> str | None:
    if not pending:
        return None
    return "; ".join(f"guard {item['name']} was not run at this Stop: {item['why']}" for item in pending)


@dataclass
class LeftOut:
    """What the Stop's time budget did not reach (the report's `left_out`)."""

    budget_s: float
    checks: list[dict[str, Any]] = field(default_factory=list)  # name, kind, why, tests
    ungraded: int = 0
    parts: list[str] = field(default_factory=list)

    def check(self, name: str, kind: str, why: str, tests: list[str] | None) -> None:
        self.checks.append({"name": name, "kind": kind, "why": why,
                            "tests": len(tests) if tests is not None else None,
                            "first_tests": list(tests[:TESTS_SHOWN]) if tests else []})

    def part(self, name: str) -> None:
        if name not in self.parts:
            self.parts.append(name)

    def empty(self) -> bool:
        return not self.checks and not self.ungraded and not self.parts

    def sentence(self) -> str:
        said = []
        for item in self.checks:
            tests = (f" ({item['tests']} test(s): {', '.join(item['first_tests'])}"
                     f"{' …' if item['tests'] > len(item['first_tests']) else ''})" if item["tests"] else
                     " (its whole run)")
            said.append(f"{item['kind']} {item['name']}{tests} {item['why']}")
        if self.ungraded:
            said.append(f"{self.ungraded} finding(s) not traced to a step (ungraded)")
        if self.parts:
            said.append("not done: " + ", ".join(self.parts))
        return (f"the Stop's time budget of {self.budget_s:g} s ran out: " + "; ".join(said)
                + "; they run at the next Stop")

    def to_json(self) -> dict[str, Any] | None:
        if self.empty():
            return None
        return {"checks": self.checks, "ungraded": self.ungraded, "parts": self.parts, "sentence": self.sentence()}


def remaining(deadline: float) -> float:
    return deadline - time.monotonic()
