"""A suite of any length can be a guard (issue 43): `vacant contract add --keep` leaves a probe that
outlasts its wait to the background, with progress, one probe per guard, an interrupt that leaves
it running, `contract stop`, and a fixed bound. The suites here are real pytest runs behind the
wall; a test that must outlast the wait blocks on a gate file the test opens, never on a sleep."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from waiting import stop_probes, wait_for

from vacant.core.exitcodes import Exit
from vacant.policy.contract import background

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]

GATED = ("import os, time\n\n"
         "def test_{n}():\n"
         "    while not os.path.exists({gate!r}):\n"
         "        time.sleep(0.02)\n")


def suite(ws: Path, gate: Path, quick: int = 2, gated: int = 1) -> str:
    """`quick` tests that pass at once, then `gated` ones that pass once `gate` exists."""
    (ws / "tests").mkdir()
    (ws / "pytest.ini").write_text("[pytest]\n")
    (ws / "tests" / "test_a_quick.py").write_text("".join(f"def test_{n}():\n    pass\n\n" for n in range(quick)))
    (ws / "tests" / "test_b_gated.py").write_text("".join(GATED.format(n=n, gate=str(gate)) for n in range(gated)))
    return f"{sys.executable} -m pytest -q -p no:cacheprovider tests"


def vacant(ws: Path, *args: str, env: dict[str, str] | None = None, **popen) -> "subprocess.Popen[str]":
    return subprocess.Popen([sys.executable, "-m", "vacant", *args], cwd=ws, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}, **popen)


def run(ws: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = vacant(ws, *args, env=env)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err



def status(ws: Path) -> dict:
    code, out, err = run(ws, "contract", "status", "--json")
    assert code == Exit.OK, err
    (probe,) = json.loads(out)["probes"]
    return Shown(probe)


class Shown(dict):
    """A probe's status that shows itself whole (with its process's own log) in an assertion."""

    def __repr__(self) -> str:
        log = background.record_path(Path(self["progress_file"] or "."), self["name"])
        return json.dumps(self) + f" (log: {log})"


SHORT = {background.FOREGROUND_ENV: "0.5"}



@pytest.fixture(autouse=True)
def no_probe_left(tmp_path, isolated_home):
    """A failed test leaves no detached probe blocked on its gate."""
    yield
    stop_probes(tmp_path / "ws")

def test_a_guard_longer_than_the_wait_is_probed_in_the_background_and_added_when_it_holds(ws, tmp_path):
    gate = ws / "gate"  # inside the workspace: the wall shows it (/dev/shm, where tmp_path may be, it does not)
    command = suite(ws, gate, quick=2, gated=1)
    code, out, err = run(ws, "contract", "add", "suite", "--keep", "--", command, env=SHORT)
    assert code == Exit.OK, err
    assert out.startswith("guard 'suite' is being probed in the background (probing: ")
    assert "`vacant contract status`" in out and "`vacant contract stop suite`" in out
    assert not (ws / "vacant.toml").exists()  # not a guard until its probe finished
    assert wait_for(lambda: status(ws)["line"].startswith("probing: 2/3 tests, ")), status(ws)
    code, out, _ = run(ws, "contract", "status")
    assert out.startswith("guard 'suite': probing: 2/3 tests, ") and "vacant contract stop suite" in out
    code, out, _ = run(ws, "contract", "list")
    assert out.startswith("guard        suite ") and "probing: 2/3 tests, " in out and "not a guard until" in out
    pid = status(ws)["pid"]
    # a second add of the same guard starts nothing: it points at the running probe
    code, out, err = run(ws, "contract", "add", "suite", "--keep", "--", command, env=SHORT)
    assert code == Exit.USER_ERROR and "guard 'suite' is being probed already (probing: 2/3 tests" in err
    assert status(ws)["pid"] == pid and status(ws)["running"]
    gate.write_text("")
    assert wait_for(lambda: status(ws)["state"] == background.ADDED), status(ws)
    text = (ws / "vacant.toml").read_text()
    assert 'name = "suite"' in text and "background = true" in text and "exit_code = 0" in text
    code, out, _ = run(ws, "contract", "status")
    assert "added guard 'suite' to vacant.toml (probe: exit 0 in " in out and "in the background" in out


def test_a_guard_that_fails_in_the_background_is_refused_as_in_the_foreground(ws, tmp_path):
    gate = ws / "gate"  # inside the workspace: the wall shows it (/dev/shm, where tmp_path may be, it does not)
    command = suite(ws, gate, quick=1, gated=1) + "; false"
    code, out, _ = run(ws, "contract", "add", "suite", "--keep", "--", command, env=SHORT)
    assert code == Exit.OK and "in the background" in out
    gate.write_text("")
    assert wait_for(lambda: status(ws)["state"] == background.REFUSED), status(ws)
    assert "guard 'suite' does not hold now (exit 1)" in status(ws)["message"]
    assert not (ws / "vacant.toml").exists()


def test_an_interrupt_leaves_the_probe_running_and_stop_stops_it(ws, tmp_path):
    gate = ws / "gate"  # inside the workspace: the wall shows it (/dev/shm, where tmp_path may be, it does not)
    command = suite(ws, gate, quick=1, gated=1)
    proc = vacant(ws, "contract", "add", "suite", "--keep", "--", command, start_new_session=True)
    assert wait_for(lambda: background.load(ws, "suite") is not None
                    and background.load(ws, "suite").progress().get("done") == 1)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == Exit.INTERRUPTED, err
    assert err.startswith("vacant: stopped waiting (SIGINT); the probe of guard 'suite' goes on in the background")
    assert "`vacant contract stop suite`" in err
    record = background.load(ws, "suite")
    assert background.alive(record) and record.state == background.RUNNING
    code, out, err = run(ws, "contract", "stop", "suite")
    assert code == Exit.OK and "stopped the probe of guard 'suite'" in out
    assert wait_for(lambda: not os.path.exists(f"/proc/{record.pid}") or not background.alive(record), 10)
    gate.write_text("")  # too late: its process is gone, nothing is added
    assert not (ws / "vacant.toml").exists() and status(ws)["state"] == background.STOPPED
    code, _, err = run(ws, "contract", "stop", "suite")
    assert code == Exit.USER_ERROR and "no probe of 'suite' is running" in err


def test_a_background_probe_past_its_bound_is_refused_with_the_bound(ws, tmp_path):
    command = suite(ws, ws / "never", quick=1, gated=1)
    env = {**SHORT, background.CAP_ENV: "2"}
    code, out, _ = run(ws, "contract", "add", "suite", "--keep", "--", command, env=env)
    assert code == Exit.OK and "in the background" in out
    assert wait_for(lambda: status(ws)["state"] == background.REFUSED), status(ws)
    message = status(ws)["message"]
    assert "guard 'suite' was refused: its probe ran past its cap of 2 s" in message
    assert "a background probe is bounded at 2 s" in message
    assert not (ws / "vacant.toml").exists()


def test_a_guard_that_finishes_within_the_wait_is_added_as_before(ws, tmp_path):
    gate = ws / "gate"  # inside the workspace: the wall shows it (/dev/shm, where tmp_path may be, it does not)
    gate.write_text("")
    code, out, err = run(ws, "contract", "add", "suite", "--keep", "--", suite(ws, gate))
    assert code == Exit.OK, err
    assert out.startswith("added guard 'suite' to vacant.toml (probe: exit 0 in ") and "3 passed" in out
    assert "background = true" in (ws / "vacant.toml").read_text()  # probed by the detached process all the same: it counts from its `at`
