"""The generated differential test of attribution (issue 12): random runs with a planted wrong
value whose true origin the generator knows (tests/unit/attribution_runs.py), fed through the real
recorder and Stop pipeline, compared with the generator's own oracle on level, step and source;
every read recorded in every run is checked to hold only bytes its origin contained; one run in
ten also reproduces its Stop from the report (`vacant replay --stop 1`).

Run count: `max(500, the profile's max_examples)` (or VACANT_DIFF_RUNS), in four shares of
disjoint plans (four tests, so that xdist spreads them; 1,000 runs were 11 % of CI's e2e and slow
tier's time, and CI must stay under 30 minutes); `pytest tests/unit
--hypothesis-profile=slow` runs 5000 (the profile is registered in tests/unit/conftest.py). A disagreement prints the shrunk plan and its step log.
"""

from __future__ import annotations

import json
import os

import pytest
from attribution_runs import (  # noqa: F401 - fast_home is a fixture
    Plan,
    expect,
    fast_home,
    observed,
    plans,
    reads_hold_only_their_origin,
    recorded,
    shown,
)
from hypothesis import HealthCheck, given, seed, settings

from vacant.core.locations import state_dir
from vacant.attribute.stop import AsOf, Pipeline
from vacant.policy.contract.contract import load_contract

RUNS = int(os.environ.get("VACANT_DIFF_RUNS") or 0) or max(500, settings().max_examples)
# Shared by PARTS tests over disjoint plans (each its own seed values, its own hypothesis seed), so
# pytest-xdist runs them on several workers at once; together they run RUNS plans.
PARTS = 4


def agrees_with_the_oracle(plan: Plan) -> None:
    with recorded(plan) as (driver, root):
        got, report, log = observed(root, driver.session)
        want = expect(driver)
        order = lambda e: (e.source, e.level)  # noqa: E731
        assert sorted(got, key=order) == sorted(want, key=order), shown(plan, driver, log)
        reads_hold_only_their_origin(root, log, driver)
        provable = sum(1 for e in want if (e.final or e.level) == "provable")
        blamed = sum(1 for r in log if r["type"] == "review" and r["score"] == 0)
        assert blamed == provable, shown(plan, driver, log)
        if plan.rerun:
            run_dir = state_dir(root) / "runs" / driver.session
            first = json.loads((run_dir / "reports" / "0001.json").read_text())
            again = Pipeline(root, run_dir, load_contract(root), as_of=AsOf.of_report(first)).run()
            assert [(f["id"], f["level"], f["step"]) for f in again["findings"]] == \
                   [(f["id"], f["level"], f["step"]) for f in report["findings"]]


def generated_runs(part: int):
    """The test of one share: RUNS // PARTS plans (the first RUNS % PARTS shares one more)."""
    @pytest.mark.slow
    @pytest.mark.usefixtures("fast_home")
    @seed(part)
    @settings(max_examples=RUNS // PARTS + (part < RUNS % PARTS), deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(plan=plans(part, PARTS))
    def test(plan: Plan) -> None:
        agrees_with_the_oracle(plan)
    return test


test_generated_runs_agree_with_the_oracle_share_1 = generated_runs(0)
test_generated_runs_agree_with_the_oracle_share_2 = generated_runs(1)
test_generated_runs_agree_with_the_oracle_share_3 = generated_runs(2)
test_generated_runs_agree_with_the_oracle_share_4 = generated_runs(3)
