"""find_flip: bisection within its bound, the linear fallback, flaky checks, the budget."""

from __future__ import annotations

import math
import time

import pytest

from vacant.attribute.replay import BudgetExceeded, Presence, find_flip

FAR = float("inf")


def counting(truth):
    calls = []

    def evaluate(index: int, cached: bool) -> bool:
        calls.append(index)
        return truth(index, len(calls))
    return Presence(evaluate), calls


@pytest.mark.parametrize("states, flip", [(50, 1), (50, 37), (200, 123), (1000, 999), (1000, 2)])
def test_monotone_flip_found_within_two_log_n_plus_two_runs(states, flip):
    presence, calls = counting(lambda i, n: i >= flip)
    result = find_flip(presence, states, time.monotonic() + 60)
    assert (result.index, result.method, result.flaky) == (flip, "bisection", False)
    assert find_flip(counting(lambda i, n: i >= flip)[0], states, FAR, confirm=lambda k: [states - 1]).index == flip
    assert len(calls) <= 2 * math.ceil(math.log2(states)) + 2


def test_present_at_baseline():
    presence, _ = counting(lambda i, n: True)
    result = find_flip(presence, 10, FAR)
    assert result.present_at_baseline and result.index is None


def test_non_monotone_presence_falls_back_to_the_last_flip():
    # present at 2..5 (fixed by change 6), again from 8 on: the finding standing at the end came at 8;
    # bisection alone lands on 2, and the later change to the same file (state 6) exposes it
    presence, _ = counting(lambda i, n: 2 <= i <= 5 or i >= 8)
    assert find_flip(counting(lambda i, n: 2 <= i <= 5 or i >= 8)[0], 9, FAR).index == 2
    result = find_flip(presence, 9, FAR, confirm=lambda k: [5, 6])
    assert (result.index, result.method) == (8, "linear")


def test_flaky_check_is_detected_by_re_running_at_the_flip():
    seen = {}

    def truth(index, call):  # answers differently the second time it sees the flip state
        seen[index] = seen.get(index, 0) + 1
        return index >= 3 and seen[index] == 1
    presence, _ = counting(truth)
    result = find_flip(presence, 5, FAR)
    assert result.flaky is True


def test_budget_is_enforced():
    presence, _ = counting(lambda i, n: i >= 500)
    with pytest.raises(BudgetExceeded):
        find_flip(presence, 1000, time.monotonic() - 1)
