"""The analysis finds the effect fake_fixer.py's model has built in, and (about 95 % of the time)
none when the model ignores what the feedback says. The model's decision function is the one the
e2e tests serve to Claude Code; the words are each arm's real ones (vacant's feedback_text for RL,
GENERIC_FEEDBACK for RF, none and a fresh session for RS)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from vacant.attribute.stop import feedback_text
from vacant.experiment.analysis import analyse
from vacant.experiment.arms import GENERIC_FEEDBACK

SPEC = importlib.util.spec_from_file_location(
    "fake_fixer", Path(__file__).resolve().parents[3] / "fixtures" / "upstreams" / "fake_fixer.py")
fake_fixer = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(fake_fixer)

ROUNDS = 3
FINDING = {"id": "abc123", "path": "calc.py", "line": 7, "source": "check", "name": "tests",
           "message": "add(2, 2) returned 5", "level": "provable", "flip_step": 1, "step": 1, "tool": "Write"}


def cell(policy: dict, task: int, arm: str, repeat: int) -> bool:
    """One cell played the way the runner plays it: True when the model ends with the right content."""
    location = "calc.py:7"
    if arm == "rs":
        return any(fake_fixer.decide(policy, f"t{task}/rs/{repeat}/attempt-{k}", True, "", 1, location)
                   for k in range(1, ROUNDS + 2))
    name = f"t{task}/{arm}/{repeat}/attempt-1"
    if fake_fixer.decide(policy, name, True, "", 1, location):
        return True
    for round_no in range(1, ROUNDS + 1):
        words = feedback_text([FINDING], round_no, ROUNDS) if arm == "rl" else GENERIC_FEEDBACK
        if fake_fixer.decide(policy, name, False, words, round_no + 1, location):
            return True
    return False


def experiment(policy: dict, tasks: int = 30, repeats: int = 1) -> dict:
    records = [{"task": f"t{t}", "family": "programming", "arm": arm, "repeat": r, "success": ok, "accepted": ok,
                "hidden": ok, "agent_runs": 1, "seconds": 0.0, "input_tokens": None, "output_tokens": None}
               for t in range(tasks) for arm in ("rs", "rf", "rl") for r in range(1, repeats + 1)
               for ok in [cell(policy, t, arm, r)]]
    return analyse(records, ["rs", "rf", "rl"], "h")


def interval(summary: dict, a: str, b: str) -> list[float]:
    return next(d["interval95"] for d in summary["differences"] if (d["a"], d["b"]) == (a, b))


def test_the_located_feedback_in_the_rl_arm_names_the_location_and_the_generic_does_not():
    assert "calc.py:7" in feedback_text([FINDING], 1, ROUNDS) and "calc.py:7" not in GENERIC_FEEDBACK


def test_the_built_in_effect_is_found():
    for seed in range(5):
        summary = experiment({"seed": seed, "first_right": 0.1, "chance": 0.1, "located": 0.9})
        assert interval(summary, "rl", "rf")[0] > 0 and interval(summary, "rl", "rs")[0] > 0, seed


@pytest.mark.slow
def test_no_effect_is_found_about_95_percent_of_the_time_when_feedback_is_ignored():
    runs = 200
    false_alarms = 0
    for seed in range(runs):
        summary = experiment({"seed": seed, "first_right": 0.1, "chance": 0.3, "located": 0.3}, tasks=20)
        low, high = interval(summary, "rl", "rf")
        false_alarms += not (low <= 0 <= high)
    assert false_alarms / runs <= 0.08, false_alarms
