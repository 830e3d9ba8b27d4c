"""The analysis against independent oracles: Wilson bounds found by bisection on the score test,
Newcombe's paired interval by its definition's properties and by simulated coverage, and the
paired counts against a direct recount."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.experiment.analysis import analyse, newcombe_paired, paired
from vacant.store.reputation import Z95, wilson


def score_root(k: int, n: int, lower: bool) -> float:
    """The Wilson bound as the p where the score statistic equals z (bisection, no closed form)."""
    phat = k / n

    def excess(p: float) -> float:
        return n * (phat - p) ** 2 - Z95 ** 2 * p * (1 - p)

    lo, hi = (0.0, phat) if lower else (phat, 1.0)
    if (lower and k == 0) or (not lower and k == n):
        return phat
    for _ in range(200):
        mid = (lo + hi) / 2
        inside = excess(mid) < 0  # mid is inside the interval
        if lower:
            lo, hi = (lo, mid) if inside else (mid, hi)
        else:
            lo, hi = (mid, hi) if inside else (lo, mid)
    return (lo + hi) / 2


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_bounds_are_the_roots_of_the_score_test(kn):
    k, n = kn
    low, high = wilson(k, n)
    assert math.isclose(low, score_root(k, n, True), abs_tol=1e-9)
    assert math.isclose(high, score_root(k, n, False), abs_tol=1e-9)


tables = st.tuples(*(st.integers(0, 40) for _ in range(4))).filter(lambda t: sum(t) > 0)


@given(tables)
def test_newcombe_contains_the_estimate_and_stays_in_range(table):
    both, a, b, neither = table
    n = sum(table)
    low, high = newcombe_paired(*table)
    assert -1.0 <= low <= (a - b) / n + 1e-12 <= high + 2e-12 <= 1.0 + 2e-12


@given(tables)
def test_newcombe_swapping_the_arms_mirrors_the_interval(table):
    both, a, b, neither = table
    low, high = newcombe_paired(both, a, b, neither)
    low2, high2 = newcombe_paired(both, b, a, neither)
    assert math.isclose(low, -high2, abs_tol=1e-12) and math.isclose(high, -low2, abs_tol=1e-12)


@given(st.integers(1, 60))
def test_newcombe_all_concordant_pairs_include_zero(n):
    for table in ((n, 0, 0, 0), (0, 0, 0, n)):
        low, high = newcombe_paired(*table)
        assert low < 0 < high


def test_newcombe_with_phi_zero_combines_the_two_wilson_bounds():
    # every pair discordant one way: a margin is empty, so phi = 0 and the lower bound is the
    # estimate minus the root of the summed squared Wilson distances (the method's definition)
    n = 4
    low, high = newcombe_paired(0, n, 0, 0)
    l1, _ = wilson(n, n)
    _, u2 = wilson(0, n)
    assert math.isclose(low, 1 - math.hypot(1 - l1, u2)) and high == 1.0


def test_newcombe_covers_about_95_percent_by_simulation():
    rng = random.Random(20261130)
    for p_both, p_a, p_b in ((0.3, 0.3, 0.1), (0.6, 0.1, 0.1), (0.1, 0.5, 0.05)):
        truth = p_a - p_b
        hits, runs = 0, 1500
        for _ in range(runs):
            table = [0, 0, 0, 0]
            for _ in range(40):
                u = rng.random()
                table[0 if u < p_both else 1 if u < p_both + p_a else 2 if u < p_both + p_a + p_b else 3] += 1
            low, high = newcombe_paired(*table)
            hits += low <= truth <= high
        assert 0.92 <= hits / runs <= 0.995, (p_both, p_a, p_b, hits / runs)


records = st.lists(st.tuples(st.sampled_from("abcd"), st.integers(1, 3), st.sampled_from(["rs", "rf", "rl"]),
                             st.booleans()), max_size=60)


def as_records(rows):
    unique = {(t, r, arm): ok for t, r, arm, ok in rows}
    return [{"task": t, "repeat": r, "arm": arm, "family": "x" if t in "ab" else "y", "success": ok,
             "accepted": ok, "hidden": ok, "agent_runs": 1, "seconds": 1.0, "input_tokens": None,
             "output_tokens": None} for (t, r, arm), ok in unique.items()]


@given(records)
def test_paired_counts_match_a_recount(rows):
    recs = as_records(rows)
    result = paired(recs, "rl", "rf", "all")
    left = {(r["task"], r["repeat"]): r["success"] for r in recs if r["arm"] == "rl"}
    right = {(r["task"], r["repeat"]): r["success"] for r in recs if r["arm"] == "rf"}
    common = set(left) & set(right)
    assert result.pairs == len(common)
    assert result.only_a == sum(1 for k in common if left[k] and not right[k])
    assert result.only_b == sum(1 for k in common if right[k] and not left[k])
    assert result.both == sum(1 for k in common if left[k] and right[k])
    if common:
        assert math.isclose(result.difference, (result.only_a - result.only_b) / len(common), abs_tol=1e-4)


@settings(max_examples=50)
@given(records)
def test_rates_per_family_add_up_to_all(rows):
    recs = as_records(rows)
    summary = analyse(recs, ["rs", "rf", "rl"], "h")
    for arm in ("rs", "rf", "rl"):
        mine = [r for r in summary["rates"] if r["arm"] == arm]
        whole = next(r for r in mine if r["family"] == "all")
        parts = [r for r in mine if r["family"] != "all"]
        if parts:
            assert whole["n"] == sum(r["n"] for r in parts)
            assert whole["successes"] == sum(r["successes"] for r in parts)
        assert whole["n"] == sum(1 for r in recs if r["arm"] == arm)
