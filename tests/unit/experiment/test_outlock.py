"""One experiment per OUT, and a killed experiment's cell neither runs on nor races the resumed one.

A real experiment process (a child running `CellRunner.attempt` under `OutLock`) is killed with
SIGKILL while its cell's command runs; the cell's command must get SIGTERM, and a new `OutLock`
on the same OUT must wait until that command has exited (it takes a while to stop, as `vacant do`
does while it takes its hooks out), never start beside it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vacant.experiment.runner import ExperimentError, OutLock

pytestmark = pytest.mark.slow

CELL = textwrap.dedent("""
    import signal, sys, time
    from pathlib import Path
    marks = Path(sys.argv[1])
    def stop(signum, frame):
        (marks / "term").write_text(str(time.monotonic()))
        time.sleep(float(sys.argv[2]))  # stopping takes a while
        (marks / "gone").write_text(str(time.monotonic()))
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    (marks / "started").write_text("")
    time.sleep(60)
    (marks / "ran-on").write_text("")
""")

EXPERIMENT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from vacant.experiment.runner import CellRunner, OutLock, Settings
    out, marks, linger = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    settings = Settings(out=out, agent="claude", agent_bin=None, model=None, agent_args=[], timeout_s=120.0)
    with OutLock(out) as lock:
        CellRunner(settings, lock).attempt([sys.executable, str(marks / "cell.py"), str(marks), linger], out, marks)
""")


def wait_for(path: Path, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def start_experiment(tmp_path: Path, linger: float) -> tuple[subprocess.Popen, Path, Path]:
    out, marks = tmp_path / "out", tmp_path / "marks"
    out.mkdir()
    marks.mkdir()
    (marks / "cell.py").write_text(CELL)
    proc = subprocess.Popen([sys.executable, "-c", EXPERIMENT, str(out), str(marks), str(linger)])
    wait_for(marks / "started")
    return proc, out, marks


def test_a_killed_experiments_cell_is_stopped_and_the_next_experiment_waits_for_it(tmp_path):
    proc, out, marks = start_experiment(tmp_path, linger=1.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    wait_for(marks / "term", within=5.0)  # the parent's death reached the cell
    with OutLock(out):
        entered = time.monotonic()
        assert (marks / "gone").exists(), "the new experiment started while the old cell was still stopping"
    assert entered >= float((marks / "gone").read_text())
    assert not (marks / "ran-on").exists()
    assert (out / "lock").read_text().strip() == str(os.getpid())


def test_a_running_experiment_is_refused_at_once(tmp_path):
    proc, out, marks = start_experiment(tmp_path, linger=0.0)
    try:
        started = time.monotonic()
        with pytest.raises(ExperimentError, match=f"another vacant experiment is running.*pid {proc.pid}"):
            with OutLock(out):
                pass
        assert time.monotonic() - started < 2.0
    finally:
        proc.terminate()
        proc.wait()


LEAVES_A_HELPER = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    marks = Path(sys.argv[1])
    helper = os.fork()
    if helper == 0:  # a sandbox helper in the cell's group that ignores SIGTERM, as a namespace's pid 1 does
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        (marks / "helper").write_text(str(os.getpid()))
        time.sleep(600)
        os._exit(0)
    while not (marks / "helper").exists():
        time.sleep(0.01)
    if sys.argv[2] == "hang":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the cell's own command ignores the timeout's SIGTERM too
        time.sleep(600)
""")


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("ending", ["exits", "hang"])
def test_what_a_cell_leaves_in_its_group_is_killed_when_the_cell_ends(tmp_path, monkeypatch, ending):
    """The agent exits (or hangs past the cell timeout) leaving a helper in its group that ignores
    SIGTERM: the helper is gone once the attempt returns."""
    from vacant.experiment import runner
    from vacant.experiment.runner import CellRunner, Settings

    monkeypatch.setattr(runner, "TERM_GRACE_S", 0.5)
    marks = tmp_path / "marks"
    marks.mkdir()
    (marks / "cell.py").write_text(LEAVES_A_HELPER)
    settings = Settings(out=tmp_path, agent="claude", agent_bin=None, model=None, agent_args=[], timeout_s=1.0)
    code, timed_out = CellRunner(settings).attempt([sys.executable, str(marks / "cell.py"), str(marks), ending],
                                                   tmp_path, marks)
    helper = int((marks / "helper").read_text())
    try:
        assert timed_out == (ending == "hang")
        assert _gone(helper), "the cell's helper outlived the cell"
    finally:
        try:
            os.kill(helper, signal.SIGKILL)
        except ProcessLookupError:
            pass
