"""`vacant do` on a Stop whose contract did not read: never green, never exit 0."""

from __future__ import annotations

from types import SimpleNamespace

from vacant.core.exitcodes import Exit
from vacant.do import runner

PROBLEM = {"path": "/w/vacant.toml", "line": 4, "key": None, "message": "/w/vacant.toml is not valid TOML at line 4"}


def outcome(contract_error, feedback=None):
    report = {"findings": [], "nothing_to_verify": False, "contract_error": contract_error}
    return SimpleNamespace(report=report, feedback=feedback, blocking=[])


def test_a_contract_error_is_not_green_and_fails_the_exit_code():
    cannot = SimpleNamespace(can_continue=False)
    assert runner.Runner._decision(None, outcome(None), cannot, 0, True) == "green"
    assert runner.Runner._decision(None, outcome(PROBLEM), cannot, 0, True) == "cannot_continue"
    assert runner.Runner._decision(None, outcome(PROBLEM, "fix it"), SimpleNamespace(can_continue=True), 0, True) \
        == "continue"
    assert runner._exit_code(outcome(None).report) == Exit.OK
    assert runner._exit_code(outcome(PROBLEM).report) == Exit.FAILED
