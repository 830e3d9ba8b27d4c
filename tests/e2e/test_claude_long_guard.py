"""A suite of any length as a guard, on the real `claude` binary (issue 43): `vacant contract add
--keep` with a short wait (the test's $VACANT_PROBE_FOREGROUND_S) leaves the probe of a pytest
suite, one of whose tests waits on a gate file, to the background; `vacant contract status` shows
its progress from pytest's live report; the gate opens and the guard is added when its probe
finishes; then an agent session breaks what the suite tests, and its Stop uses the guard: the
finding at the Edit's step, provable (report only, `rounds = 0`: one Stop keeps the test short)."""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import datetime

import pytest
from waiting import stop_probes, wait_for
from claude_harness import FakeUpstream, run_claude_p, tool, turn
from vacant_run import make_workspace, vacant

from vacant.policy.contract import background
from vacant.policy.contract.contract import load_contract

pytestmark = pytest.mark.e2e

CALC = "def add(a, b):\n    return a + b\n"


def files(gate: str) -> dict[str, str]:
    return {"calc.py": CALC, "pytest.ini": "[pytest]\n",
            "tests/test_a_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
            "tests/test_b_gated.py": f"import os, time\n\ndef test_gated():\n    while not os.path.exists({gate!r}):\n"
                                     "        time.sleep(0.02)\n"}




@pytest.fixture(autouse=True)
def no_probe_left(tmp_path, monkeypatch):  # torn down before the test's VACANT_HOME is undone
    """A failed test leaves no detached probe blocked on its gate."""
    yield
    stop_probes(tmp_path / "ws")

def test_a_guard_probed_in_the_background_is_used_by_the_next_session(tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "vacant-data"))
    gate = tmp_path / "ws" / "gate"
    ws, home = make_workspace(tmp_path, files(str(gate)))
    (ws / "vacant.toml").write_text("[stop]\nrounds = 0\n")  # the guard is appended to it
    env = dict(os.environ, HOME=str(home), **{background.FOREGROUND_ENV: "0.5"})
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"
    added = vacant(["contract", "add", "suite", "--keep", "--", command], ws, env=env)
    assert added.stdout.startswith("guard 'suite' is being probed in the background"), added.stdout
    assert load_contract(ws).guards == []  # not a guard until its probe finished

    def status() -> str:
        return vacant(["contract", "status"], ws, env=env).stdout

    assert wait_for(lambda: status().startswith("guard 'suite': probing: 1/2 tests, ")), status()
    gate.write_text("")
    assert wait_for(lambda: "added guard 'suite' to vacant.toml" in status()), status()
    guard = load_contract(ws).guards[0]
    assert guard.probe.background and guard.probe.exit_code == 0
    finished = datetime.fromisoformat(guard.probe.at).timestamp()
    assert wait_for(lambda: time.time() > finished + 1.5, 5)  # the session starts after the probe's second

    calc = str(ws / "calc.py")
    turns = [
        turn(tool("Read", file_path=calc)),  # step 1 (Claude Code edits only what it has read)
        turn(tool("Edit", file_path=calc, old_string="return a + b", new_string="return a - b")),  # step 2
        turn({"type": "text", "text": "Done."}),  # the Stop: the guard is broken, reported
    ]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        proc = run_claude_p(ws, home, upstream, "tidy calc.py")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(vacant(["report", "--json"], ws, env=env).stdout)
    assert report["pending_guards"] == [] and report["left_out"] is None, json.dumps(report, indent=1)[:3000]
    assert [(c["kind"], c["name"], c["passed"]) for c in report["checks"]] == [("guard", "suite", False)]
    [finding] = report["findings"]
    assert (finding["name"], finding["flip_step"], finding["tool"], finding["level"]) == ("suite", 2, "Edit",
                                                                                          "provable"), finding
