"""The preregistered analysis of an experiment's results (plan.ANALYSIS says the same in one line).

- Per arm, overall and per task family: n cells, successes (accepted AND hidden pass), the rate
  and its Wilson 95 % score interval (vacant/store/reputation.py `wilson`). Accepted and hidden
  rates are reported beside it, as secondary numbers.
- RL−RF and RL−RS: cells are paired by (task, repeat) — the same task, the same repeat number,
  both arms done. The difference of success rates with Newcombe's hybrid score interval for
  paired proportions (Newcombe 1998, method 10: the two Wilson intervals combined with the
  phi correlation of the pairs). Limit: pairs from repeats of one task are treated as
  independent; with repeats > 1 and tasks that differ a lot the interval is too narrow. The
  per-task table is there to see that.
- Cost per arm: mean agent runs, seconds, and tokens (over the cells whose agent printed usage).

`verdict` says only what the interval says ("excludes 0" / "includes 0"), never more.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from vacant.store.reputation import Z95, wilson

COMPARISONS = (("rl", "rf"), ("rl", "rs"))
ALL = "all"


@dataclass
class Rate:
    arm: str
    family: str
    n: int
    successes: int
    rate: float | None
    wilson95: tuple[float, float]
    accepted: int
    hidden: int


@dataclass
class Paired:
    a: str
    b: str
    family: str
    pairs: int
    both: int  # a and b succeeded
    only_a: int
    only_b: int
    neither: int
    difference: float | None  # rate(a) - rate(b) over the pairs
    interval95: tuple[float, float] | None
    verdict: str


@dataclass
class Cost:
    arm: str
    n: int
    agent_runs: float | None
    seconds: float | None
    input_tokens: float | None
    output_tokens: float | None
    with_tokens: int  # cells whose agent printed usage


def newcombe_paired(both: int, only_a: int, only_b: int, neither: int, z: float = Z95) -> tuple[float, float]:
    """Newcombe's hybrid score interval (method 10) for p_a − p_b from paired binary outcomes."""
    n = both + only_a + only_b + neither
    if n <= 0:
        return -1.0, 1.0
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = wilson(both + only_a, n, z)
    l2, u2 = wilson(both + only_b, n, z)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (both * neither - only_a * only_b) / math.sqrt(margins) if margins > 0 else 0.0
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    epsilon = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    difference = p1 - p2
    return max(-1.0, difference - delta), min(1.0, difference + epsilon)


def rate(records: list[dict[str, Any]], arm: str, family: str) -> Rate:
    n = len(records)
    wins = sum(1 for r in records if r["success"])
    low, high = wilson(wins, n)
    return Rate(arm, family, n, wins, wins / n if n else None, (round(low, 4), round(high, 4)),
                sum(1 for r in records if r["accepted"]), sum(1 for r in records if r["hidden"]))


def verdict(interval: tuple[float, float] | None, a: str, b: str) -> str:
    if interval is None:
        return "no pairs: nothing to compare"
    low, high = interval
    if low > 0:
        return f"{a.upper()} better than {b.upper()}: the 95% interval excludes 0"
    if high < 0:
        return f"{a.upper()} worse than {b.upper()}: the 95% interval excludes 0"
    return "no difference shown: the 95% interval includes 0 (at this n, not evidence of no effect)"


def paired(records: list[dict[str, Any]], a: str, b: str, family: str) -> Paired:
    by_key = {(r["task"], r["repeat"], r["arm"]): r for r in records}
    keys = sorted({(r["task"], r["repeat"]) for r in records})
    counts = [0, 0, 0, 0]  # both, only a, only b, neither
    for task, repeat in keys:
        left, right = by_key.get((task, repeat, a)), by_key.get((task, repeat, b))
        if left is None or right is None:
            continue
        counts[(0 if right["success"] else 1) if left["success"] else (2 if right["success"] else 3)] += 1
    pairs = sum(counts)
    if not pairs:
        return Paired(a, b, family, 0, *counts, None, None, verdict(None, a, b))
    low, high = newcombe_paired(*counts)
    interval = (round(low, 4), round(high, 4))
    return Paired(a, b, family, pairs, *counts, round((counts[1] - counts[2]) / pairs, 4), interval,
                  verdict(interval, a, b))


def _mean(values: Iterable[float | int | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 3) if present else None


def cost(records: list[dict[str, Any]], arm: str) -> Cost:
    mine = [r for r in records if r["arm"] == arm]
    tokened = [r for r in mine if r.get("input_tokens") is not None]
    return Cost(arm, len(mine), _mean(r["agent_runs"] for r in mine), _mean(r["seconds"] for r in mine),
                _mean(r["input_tokens"] for r in tokened), _mean(r["output_tokens"] for r in tokened), len(tokened))


def analyse(records: list[dict[str, Any]], arms: list[str], digest: str, restarted: int = 0,
            planned: int | None = None) -> dict[str, Any]:
    """The whole summary as JSON-ready data (the report renders it; `--json` prints it)."""
    families = sorted({r["family"] for r in records})
    scopes = [ALL, *families] if len(families) > 1 else [ALL]
    rates, diffs = [], []
    for family in scopes:
        mine = [r for r in records if family == ALL or r["family"] == family]
        rates += [asdict(rate([r for r in mine if r["arm"] == arm], arm, family)) for arm in arms]
        diffs += [asdict(paired(mine, a, b, family)) for a, b in COMPARISONS if a in arms and b in arms]
    per_task = []
    for task in sorted({r["task"] for r in records}):
        row = {"task": task, "family": next(r["family"] for r in records if r["task"] == task)}
        for arm in arms:
            mine = [r for r in records if r["task"] == task and r["arm"] == arm]
            row[arm] = [sum(1 for r in mine if r["success"]), len(mine)]
        per_task.append(row)
    return {
        "plan": digest,
        "cells_done": len(records),
        "cells_planned": planned if planned is not None else len(records),
        "cells_restarted": restarted,
        "rates": rates,
        "differences": diffs,
        "cost": [asdict(cost(records, arm)) for arm in arms],
        "per_task": per_task,
    }
