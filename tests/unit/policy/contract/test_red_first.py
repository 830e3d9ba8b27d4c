"""`add_check`: guards must hold, acceptance checks must be red for the right reason, caps fit the kind."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from runner_tools import go_env

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from vacant.policy.contract.checks import run_check, site_for
from vacant.policy.contract.contract import PROBE_CAP_S, Check, CheckRefused, load_contract
from vacant.policy.contract.red_first import add_check, last_lines, probe_cap_for

pytestmark = pytest.mark.usefixtures("isolated_home")

PY = sys.executable
SUITE = {"tests/__init__.py": "",
         "tests/test_calc.py": "import unittest\n\nclass CalcTests(unittest.TestCase):\n"
                               "    def test_add(self):\n        self.assertEqual(1 + 1, 2)\n"}


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def stored(ws: Path) -> dict:
    return tomllib.loads((ws / "vacant.toml").read_text())


def test_a_green_suite_is_kept_as_a_guard_with_its_last_lines(ws):
    make(ws, SUITE)
    added = add_check(ws, "tests", f"{PY} -m unittest tests.test_calc", guard=True)
    assert added.kind == "guard" and added.tail[-1] == "OK" and any(line.startswith("Ran 1 test") for line in added.tail)
    entry = stored(ws)["guard"][0]
    assert entry["name"] == "tests" and entry["probe"]["exit_code"] == 0 and "broken" not in entry["probe"]
    assert [c.name for c in load_contract(ws).guards] == ["tests"]


def test_a_passing_acceptance_check_is_refused_offering_the_guard_by_name(ws):
    make(ws, SUITE)
    command = f"{PY} -m unittest tests.test_calc"
    with pytest.raises(CheckRefused) as caught:
        add_check(ws, "tests", command)
    message = str(caught.value)
    assert "passes now" in message and f"`vacant contract add tests --keep -- '{command}'`" in message
    assert "| OK" in message  # the probe's last lines
    assert not (ws / "vacant.toml").exists()


def test_a_red_guard_is_refused_with_its_last_lines(ws):
    make(ws, {**SUITE, "tests/test_calc.py": SUITE["tests/test_calc.py"].replace("2)", "3)")})
    with pytest.raises(CheckRefused) as caught:
        add_check(ws, "tests", f"{PY} -m unittest tests.test_calc", guard=True)
    assert "does not hold now (exit 1)" in str(caught.value) and "| FAILED (failures=1)" in str(caught.value)
    assert not (ws / "vacant.toml").exists()


def test_a_guard_that_runs_no_test_is_refused_unless_allowed(ws):
    make(ws, SUITE)
    command = f"{PY} -m unittest discover -s tests -p 'nothing*.py'"
    with pytest.raises(CheckRefused, match=r"green for the wrong reason \(no_tests: unittest ran 0 tests\)"):
        add_check(ws, "tests", command, guard=True)
    added = add_check(ws, "tests", command, guard=True, allow_broken=True)
    assert any("--allow-broken" in warning for warning in added.warnings)
    assert stored(ws)["guard"][0]["probe"]["broken"] == "no_tests"


def test_a_misspelt_test_id_is_refused_and_the_right_one_accepted(ws):
    make(ws, {**SUITE, "tests/test_calc.py": SUITE["tests/test_calc.py"].replace("2)", "3)")})
    with pytest.raises(CheckRefused) as caught:
        add_check(ws, "calc", f"{PY} -m unittest tests.test_calc.CalcTest")
    assert "red for the wrong reason (unknown_test" in str(caught.value) and "--allow-broken" in str(caught.value)
    assert "| AttributeError: module 'tests.test_calc' has no attribute 'CalcTest'" in str(caught.value)
    assert not (ws / "vacant.toml").exists()
    added = add_check(ws, "calc", f"{PY} -m unittest tests.test_calc.CalcTests")
    assert added.verdict is None and added.warnings == [] and added.tail[-1] == "FAILED (failures=1)"


def test_red_because_the_code_is_not_written_yet_is_accepted_and_said(ws):
    make(ws, {"tests/__init__.py": "", "tests/test_report.py": "from report import total\n"})
    added = add_check(ws, "report", f"{PY} -m unittest tests.test_report")
    assert added.verdict.reason == "missing_code"
    assert any("`report`, which does not exist yet" in warning for warning in added.warnings)
    assert "broken" not in stored(ws)["check"][0]["probe"]


def test_the_probe_cap_fits_the_kind():
    suite = Check(name="tests", command="x", timeout=900)
    assert probe_cap_for(suite, guard=True, probe_cap=None) == 900
    assert probe_cap_for(suite, guard=False, probe_cap=None) == PROBE_CAP_S == 30
    assert probe_cap_for(Check(name="q", command="x", timeout=5), guard=False, probe_cap=None) == 5
    assert probe_cap_for(suite, guard=False, probe_cap=120) == 120
    assert probe_cap_for(Check(name="q", command="x", timeout=5), guard=True, probe_cap=120) == 5


@pytest.mark.slow
def test_a_guard_probe_runs_past_the_acceptance_cap(ws, monkeypatch):
    import vacant.policy.contract.red_first as red_first

    monkeypatch.setattr(red_first, "PROBE_CAP_S", 0.3)  # a smaller acceptance cap, so the test stays quick
    add_check(ws, "slow-suite", "sleep 0.8; true", guard=True, timeout=10)
    with pytest.raises(CheckRefused, match=r"its probe ran past its cap of 0.3 s"):
        add_check(ws, "slow-check", "sleep 0.8; false", timeout=10)
    assert [c.name for c, _ in load_contract(ws).all_checks()] == ["slow-suite"]


def test_a_guard_slower_than_its_cap_is_refused_with_the_figure_not_cut(ws):
    started = time.monotonic()
    with pytest.raises(CheckRefused) as caught:
        add_check(ws, "suite", "echo collecting; sleep 30; true", guard=True, timeout=0.5)
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert "guard 'suite' was refused: its probe ran past its cap of 0.5 s (stopped at 0." in message
    assert "--timeout SECONDS" in message and "| collecting" in message
    assert not (ws / "vacant.toml").exists()


def test_last_lines_are_the_last_non_blank_ones_trimmed():
    output = "a\n\n" + "\n".join(f"line {n}" for n in range(10)) + "\n" + "x" * 500 + "\n\n"
    tail = last_lines(output)
    assert tail[:-1] == [f"line {n}" for n in range(5, 10)] and len(tail[-1]) == 200 and tail[-1].endswith("…")
    assert last_lines("") == []


@pytest.mark.disk_tmp
def test_the_probe_runs_behind_the_wall(ws):
    """The probe runs the command as a walled check runs: the person's key is not there, the host's
    network is not reached unless the check says `network = true` (kept in vacant.toml)."""
    import socket

    from vacant.core.keys import key_path

    assert key_path().exists()  # the person's key, which an unwalled probe would see
    add_check(ws, "no-key", f"test ! -e {key_path()}", guard=True)
    server = socket.create_server(("127.0.0.1", 0))
    try:
        reach = f"{PY} -c 'import socket; socket.create_connection((\"127.0.0.1\", {server.getsockname()[1]}), 2)'"
        with pytest.raises(CheckRefused):
            add_check(ws, "offline", reach, guard=True)
        add_check(ws, "online", reach, guard=True, network=True)
    finally:
        server.close()
    guards = {guard["name"]: guard for guard in stored(ws)["guard"]}
    assert set(guards) == {"no-key", "online"} and guards["online"]["network"] is True
    assert "network" not in guards["no-key"]


# -- a program that is not installed: red for a reason the agent may fix by provisioning it -----------

RUFF = Path(sys.executable).parent / "ruff"  # the real ruff, from the test extras


def without_ruff(monkeypatch) -> None:
    """PATH without any directory that holds a ruff, so `ruff` is a program that is not installed."""
    assert RUFF.exists(), "ruff is part of the test extras (.venv/bin/ruff)"
    kept = [d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "ruff").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(kept))
    assert shutil.which("ruff") is None


def provision_ruff(ws: Path) -> None:
    """What an agent may do: put the tool in <workspace>/.local/bin, which checks see first on PATH."""
    (ws / ".local" / "bin").mkdir(parents=True, exist_ok=True)
    (ws / ".local" / "bin" / "ruff").symlink_to(RUFF)


def test_a_missing_program_is_accepted_with_its_env_warning_and_is_env_at_stop(ws, monkeypatch):
    without_ruff(monkeypatch)
    make(ws, {"report.py": "import os\n\nTOTAL = 3\n"})
    added = add_check(ws, "lint", "ruff check .")
    assert added.verdict.reason == "missing_program" and not added.verdict.broken and added.env == "env/ruff"
    [warning] = added.warnings
    assert warning.startswith("env/ruff: `ruff` is not available to checks") and str(ws / ".local" / "bin") in warning
    probe = stored(ws)["check"][0]["probe"]
    assert probe["exit_code"] == 127 and probe["env"] == "ruff" and "broken" not in probe
    # at Stop, as the Stop runs it (behind the wall): one env/ finding, blamed on nobody
    check = load_contract(ws).check[0]
    at_stop = run_check(check, ws, site=site_for(ws))
    assert at_stop.env_missing and [f.name for f in at_stop.findings] == ["env/ruff"] and at_stop.findings[0].env
    # provisioned, the same check measures the code: ruff's own finding, located
    provision_ruff(ws)
    provisioned = run_check(check, ws, site=site_for(ws))
    assert not provisioned.env_missing and provisioned.exit_code == 1, provisioned.output
    assert [(f.path, f.line) for f in provisioned.findings] == [("report.py", 1)] and "F401" in provisioned.output


def test_a_guard_whose_program_is_missing_is_refused_until_it_is_provisioned(ws, monkeypatch):
    without_ruff(monkeypatch)
    make(ws, {"report.py": "TOTAL = 3\n"})
    for allow_broken in (False, True):  # a guard must hold now: --allow-broken does not make it hold
        with pytest.raises(CheckRefused) as caught:
            add_check(ws, "lint", "ruff check .", guard=True, allow_broken=allow_broken)
        message = str(caught.value)
        assert "guard 'lint' does not hold now (exit 127: `ruff` is not installed)" in message
        assert f"put it in {ws / '.local' / 'bin'}" in message and "add the guard again" in message
    assert not (ws / "vacant.toml").exists()
    provision_ruff(ws)
    added = add_check(ws, "lint", "ruff check .", guard=True)
    assert added.verdict is None and stored(ws)["guard"][0]["probe"]["exit_code"] == 0


def test_a_misspelt_program_is_still_refused(ws):
    with pytest.raises(CheckRefused) as caught:
        add_check(ws, "tests", "pytset -q")
    assert ("red for the wrong reason (program_not_found: `pytset` was not found (exit 127): a misspelling of "
            "`pytest`?)") in str(caught.value)
    assert not (ws / "vacant.toml").exists()


# -- go test -run with a name that matches no test: exit 0, having run nothing -----------------------

GO_PASSING = {"go.mod": "module example.com/calc\n\ngo 1.19\n",
              "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
              "calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n"
                              "\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"Add(1, 2) != 3\")\n\t}\n}\n"}


@pytest.mark.slow
def test_a_go_test_name_that_matches_no_test_is_refused_as_either_kind(ws, monkeypatch):
    go_env(monkeypatch)
    make(ws, GO_PASSING)
    typo = "go test -run TestTypo ./..."
    with pytest.raises(CheckRefused) as caught:
        add_check(ws, "add", typo)
    message = str(caught.value)
    assert ("check 'add' passes now, and for the wrong reason (no_tests: go test ran no test: no test to run in "
            "example.com/calc") in message
    assert "--keep" not in message and "| ok  \texample.com/calc\t" in message  # no guard offered: it holds vacuously
    with pytest.raises(CheckRefused, match=r"guard 'add' is green for the wrong reason \(no_tests: go test ran no test"):
        add_check(ws, "add", typo, guard=True)
    assert not (ws / "vacant.toml").exists()
    added = add_check(ws, "add", "go test -run TestAdd ./...", guard=True)  # the right name: a guard that holds
    assert added.verdict is None and stored(ws)["guard"][0]["probe"]["exit_code"] == 0
    added = add_check(ws, "add-typo", typo, guard=True, allow_broken=True)
    assert stored(ws)["guard"][1]["probe"]["broken"] == "no_tests"
