"""vacant.core.children: an interrupt kills every group spawned and never lands inside a deferred section."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from vacant.core import children


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_an_interrupt_kills_the_whole_group_of_every_child():
    # each child leaves a grandchild behind in its group: the interrupt must reach that one too
    procs = [children.spawn(["sh", "-c", "sleep 30 & echo $!; wait"], stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    grandchildren = [int(proc.stdout.readline()) for proc in procs]
    with pytest.raises(children.Interrupted) as stopped:
        with children.interruptible():
            signal.raise_signal(signal.SIGINT)
    assert stopped.value.signum == signal.SIGINT and stopped.value.killed == 2
    for proc in procs:
        assert proc.wait(timeout=5) == -signal.SIGKILL
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in grandchildren):
        assert time.monotonic() < deadline, "a grandchild outlived the interrupt"
        time.sleep(0.02)


def test_after_an_interrupt_nothing_new_starts():
    with pytest.raises(children.Interrupted):
        with children.interruptible():
            signal.raise_signal(signal.SIGTERM)
    children.stop_children(signal.SIGTERM)  # as if still stopping (interruptible's exit forgot it)
    with pytest.raises(children.Interrupted):
        children.spawn(["true"])


def test_a_deferred_section_runs_to_its_end_and_the_interrupt_lands_after():
    done = []
    with pytest.raises(children.Interrupted):
        with children.interruptible():
            with children.deferred():
                os.kill(os.getpid(), signal.SIGINT)
                done.append("first half")
                time.sleep(0.05)  # the handler has run by now
                done.append("second half")
            done.append("after")  # never reached
    assert done == ["first half", "second half"]


def test_a_child_kept_in_our_group_is_killed_by_pid():
    proc = children.spawn(["sleep", "30"], own_group=False)
    assert os.getpgid(proc.pid) == os.getpgid(0)
    assert children.stop_children(signal.SIGINT) == 1
    assert proc.wait(timeout=5) == -signal.SIGKILL


def test_run_is_subprocess_run_in_its_own_group():
    done = children.run(["sh", "-c", "ps -o pgid= -p $$; echo err >&2"], input=b"")
    assert int(done.stdout) != os.getpgid(0) and done.stderr == b"err\n" and done.returncode == 0
    with pytest.raises(subprocess.TimeoutExpired):
        children.run(["sleep", "30"], timeout=0.2)
