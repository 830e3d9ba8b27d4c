"""Suite-wide: vacant's user data directory (where a non-git workspace keeps its state) lives in a
temporary directory of each test process (each pytest-xdist worker has its own), never in the real
home of whoever runs the tests; compiled bytecode is cached; no daemon outlives its test; a test
that runs long without a `slow` or `e2e` mark is named at the end of the run.

What a test must do to be safe under pytest-xdist (`scripts/test` runs the suite on every core):
see CONTRIBUTING.md ("Tests in parallel")."""

from __future__ import annotations

import os
import sys
import tempfile

if not os.environ.get("VACANT_TEST_KEEP_HOME"):
    os.environ["VACANT_HOME"] = tempfile.mkdtemp(prefix="vacant-test-data-")

# Some machines set PYTHONDONTWRITEBYTECODE: then every `vacant` and daemon process a test starts
# compiles vacant's modules again (about 0.25 s of CPU per CLI start). Cached bytecode is checked
# against its source's mtime and size on each import, so it cannot run stale code.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


# -- daemons ------------------------------------------------------------------------------------
# A hook client starts its workspace's daemon detached (its own session), and a daemon lives until
# it has been idle for 30 minutes: left alone, every test that records through real hooks would
# leave one behind, each holding an inotify instance (128 per user by default) and memory. After
# each test, every daemon this session started is stopped: one whose environment carries this
# session's mark (processes inherit it) or whose workspace lies under the session's temporary base.
#
# Walking /proc costs milliseconds per test on a busy machine, so it runs only after a test that
# could have started a daemon: one during which this process started another (an audit hook sees
# every subprocess, posix_spawn, fork and exec), or while a child of this process still runs, and
# once at the end of the session for whatever a detached process started later.

import signal  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

SESSION_MARK = f"VACANT_TEST_SESSION={uuid.uuid4().hex}".encode()
os.environ["VACANT_TEST_SESSION"] = SESSION_MARK.split(b"=", 1)[1].decode()

_SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty", "os.exec", "os.spawn",
                           "os.system", "pty.spawn"})
_spawned = [True]  # a process may have been started since the last walk (True: nothing walked yet)


def _note_spawns(event: str, _args: tuple) -> None:
    if event in _SPAWN_EVENTS:
        _spawned[0] = True


sys.addaudithook(_note_spawns)


def _children_running() -> bool:
    """Whether a child of this process (of any of its threads) is still alive."""
    try:
        for task in os.scandir("/proc/self/task"):
            with open(f"{task.path}/children", "rb") as handle:
                if handle.read().strip():
                    return True
    except OSError:
        return True
    return False


def _daemons() -> list[tuple[int, bytes, bytes]]:
    """(pid, workspace root, environment) of every `python -m vacant.daemon ROOT` this user runs."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            if b"vacant.daemon" not in args[:4]:
                continue
            found.append((int(entry.name), args[args.index(b"vacant.daemon") + 1], (entry / "environ").read_bytes()))
        except (OSError, IndexError):
            continue
    return found


def _stop_ours(base: bytes | None) -> None:
    ours = [pid for pid, root, environ in _daemons()
            if SESSION_MARK in environ.split(b"\0") or (base and root.startswith(base))]
    for pid in ours:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    for pid in ours:
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists() and not _zombie(pid):
            time.sleep(0.02)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _base(config) -> bytes | None:
    factory = getattr(config, "_tmp_path_factory", None)
    return str(factory.getbasetemp()).encode() if factory is not None else None


@pytest.fixture(autouse=True)
def _no_daemon_outlives_its_test(request):
    yield
    if not _spawned[0]:
        return
    _spawned[0] = _children_running()  # still running: it may start one after this walk
    _stop_ours(_base(request.config))


def pytest_sessionfinish(session):
    _stop_ours(_base(session.config))
    _pass_up_slow_unmarked(session.config)
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["trust_tally"] = TRUST_TALLY


# -- the hostile corpora's tally (issue 11): cases per class, held as designed, documented limits ---

TRUST_TALLY: dict[str, dict[str, int]] = {}


@pytest.fixture
def trust_tally():
    """Count a hostile case: tally(cls, held=True|False|None) (None: a documented limit)."""
    def tally(cls: str, held: bool | None) -> None:
        row = TRUST_TALLY.setdefault(cls, {"cases": 0, "held": 0, "limit": 0})
        row["cases"] += 1
        row["held" if held else "limit"] += 1 if held or held is None else 0
    return tally


# -- unmarked slow tests --------------------------------------------------------------------------
# The fast tier (`pytest -m "not e2e and not slow"`) must stay under a minute; a test that takes
# longer than UNMARKED_LIMIT_S without either mark is listed in the summary (never failed: a busy
# machine makes any test slow now and then).

UNMARKED_LIMIT_S = float(os.environ.get("VACANT_TEST_UNMARKED_LIMIT_S", "3"))
_slow_unmarked: dict[str, float] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "teardown" or item.get_closest_marker("slow") or item.get_closest_marker("e2e"):
        return
    _slow_unmarked[item.nodeid] = _slow_unmarked.get(item.nodeid, 0.0) + report.duration


def _pass_up_slow_unmarked(config) -> None:
    slow = {nodeid: s for nodeid, s in _slow_unmarked.items() if s > UNMARKED_LIMIT_S}
    if hasattr(config, "workeroutput"):  # an xdist worker: the controller prints the summary
        config.workeroutput["slow_unmarked"] = slow
    else:
        _slow_unmarked.clear()
        _slow_unmarked.update(slow)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    output = getattr(node, "workeroutput", {})
    _slow_unmarked.update(output.get("slow_unmarked", {}))
    for cls, row in output.get("trust_tally", {}).items():
        mine = TRUST_TALLY.setdefault(cls, {"cases": 0, "held": 0, "limit": 0})
        for key, count in row.items():
            mine[key] += count


def pytest_terminal_summary(terminalreporter):
    if TRUST_TALLY:
        terminalreporter.write_sep("-", "hostile corpus (issue 11): cases / held as designed / documented limits")
        for cls in sorted(TRUST_TALLY):
            row = TRUST_TALLY[cls]
            terminalreporter.write_line(f"{cls}: {row['cases']} cases, {row['held']} held, "
                                        f"{row['limit']} documented limit")
    slow = {nodeid: s for nodeid, s in _slow_unmarked.items() if s > UNMARKED_LIMIT_S}
    if not slow:
        return
    terminalreporter.write_sep("-", f"tests over {UNMARKED_LIMIT_S:g} s marked neither slow nor e2e "
                                    "(mark them: the fast tier must stay under a minute)")
    for nodeid, seconds in sorted(slow.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{seconds:6.1f} s  {nodeid}")
