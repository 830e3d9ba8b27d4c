"""No process a test started outlives the session (a pytest plugin: `-p leaks`, in addopts).

Any process that carries this session's mark (VACANT_TEST_SESSION in its environment: every
process a test starts inherits it, unless it was started with an environment of its own) and is
still alive when the session ends, after every fixture is torn down (and tests/conftest.py has
stopped every daemon), is a leak: it is named with the test after which it was first seen
(`note_marked`), killed with its process group (SIGKILL: a pid namespace's pid 1 ignores SIGTERM
from outside), and the run fails. Under pytest-xdist each worker sets its own mark and finds its
own leaks; the controller prints them all and fails the run.

A process started with an environment cleared of the mark (`env -i`, bubblewrap's --clearenv)
is out of its sight."""

from __future__ import annotations

import os
import signal
import time
import uuid

import pytest

SESSION_MARK = f"VACANT_TEST_SESSION={uuid.uuid4().hex}".encode()
os.environ["VACANT_TEST_SESSION"] = SESSION_MARK.split(b"=", 1)[1].decode()

_first_seen: dict[tuple[int, bytes], str] = {}  # (pid, start time) -> the test after which it was first seen
_leaks: list[str] = []  # what outlived this session, as the report names it
LEAK_GRACE_S = 5.0  # a process on its way out (a daemon's SIGTERM above) may take this long to go


def _start_time(pid: str) -> bytes | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == b"Z" else fields[19]  # zombies are gone; field 22 of stat: the start time


def _marked() -> dict[tuple[int, bytes], bytes]:
    """{(pid, start time): command line} of every live process carrying this session's mark."""
    found = {}
    own = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == own:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                if SESSION_MARK not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").strip()
        except OSError:
            continue
        started = _start_time(name)
        if started is not None:
            found[(int(name), started)] = cmdline
    return found


def note_marked(nodeid: str) -> None:
    """Remember every marked process alive now as first seen after `nodeid` (tests/conftest.py
    calls this after a test during which a process was started)."""
    for key in _marked():
        _first_seen.setdefault(key, nodeid)


def _find_leaks() -> list[str]:
    deadline = time.monotonic() + LEAK_GRACE_S
    left = _marked()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _marked()
    leaks = []
    for (pid, started), cmdline in sorted(left.items()):
        where = _first_seen.get((pid, started), "a test that started no process this session saw (a detached one)")
        leaks.append(f"pid {pid} `{cmdline.decode(errors='replace')[:200]}`, first seen after {where}")
        _kill_with_its_group(pid)
    return leaks


def _kill_with_its_group(pid: int) -> None:
    try:
        group = os.getpgid(pid)
        if group != os.getpgid(0):  # never the suite's own group
            os.killpg(group, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    _leaks.extend(_find_leaks())
    if hasattr(session.config, "workeroutput"):  # an xdist worker: the controller reports and fails
        session.config.workeroutput["leaks"] = list(_leaks)
    elif _leaks:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _leaks.extend(getattr(node, "workeroutput", {}).get("leaks", []))


def pytest_terminal_summary(terminalreporter):
    if _leaks:
        terminalreporter.write_sep("=", f"{len(_leaks)} process(es) outlived the session (killed now; the run fails)",
                                   red=True)
        for leak in _leaks:
            terminalreporter.write_line(leak)
