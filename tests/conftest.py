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

# `python3` in a test's check command or fake agent is the suite's own interpreter, found first on
# PATH: where `python3` is a pyenv shim, each run of it costs about 90 ms of bash, awk and grep
# before Python starts (measured: 6 % of the e2e tier's CPU) where the interpreter takes 10 ms.
_OWN_BIN = os.path.dirname(sys.executable)
if os.path.exists(os.path.join(_OWN_BIN, "python3")) and \
        os.environ.get("PATH", "").split(os.pathsep)[:1] != [_OWN_BIN]:
    os.environ["PATH"] = _OWN_BIN + os.pathsep + os.environ.get("PATH", "")

# Every process that records or gates loads the platform registry first (the hook, the daemon, the
# CLI): so does the suite, or a test driving the recorder in-process met a gate that fails closed
# for want of it, or passed only when an earlier test in the same worker had loaded it.
import vacant.platforms.all_platforms  # noqa: E402,F401

# Hypothesis' per-example deadline (200 ms by default) measures the machine's load, not the code:
# CI shares its cores, and an example that writes files took 252 ms once and 14 ms on its re-run
# (a FlakyFailure). Tests that bound a time measure it themselves, against a reference or in CPU time.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("vacant", deadline=None)
_hypothesis_settings.load_profile("vacant")


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
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from leaks import SESSION_MARK, note_marked  # noqa: E402  (tests/plugins/leaks.py: no process outlives the session)

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
    for name in os.listdir("/proc"):  # plain strings and open(): half the cost of pathlib, once per test
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
            if b"vacant.daemon" not in args[:6]:  # `-m vacant.daemon`, or the isolated boot's (hook/paths.py)
                continue
            with open(f"/proc/{name}/environ", "rb") as handle:
                found.append((int(name), args[args.index(b"vacant.daemon") + 1], handle.read()))
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
    note_marked(request.node.nodeid)


# -- temporary directories on tmpfs --------------------------------------------------------------
# On this kind of disk (ext4 with discard) every unlink, rmdir and fsync costs milliseconds, and the
# unit tests make and remove hundreds of thousands of small files (workspaces, object stores, the
# Stop pipeline's replay scratch). A unit test's `tmp_path` and TMPDIR therefore live on tmpfs
# (/dev/shm), except where a walled process may run: bubblewrap's wall mounts a fresh /dev
# (`--dev /dev`), so nothing under /dev/shm is visible behind it. Every e2e and browser test, and a
# unit test marked `disk_tmp`, keeps pytest's disk-backed tmp_path and the caller's TMPDIR. A test
# on tmpfs that starts bubblewrap fails, naming the marker: in this process at the call (an audit
# hook), in a child through the `bwrap` first on its PATH (a refusal that leaves a mark the test's
# teardown finds).
# VACANT_TEST_TMPFS="" puts everything on disk. Only where tests put their files changes: the
# product's own fsyncs and renames run as they do anywhere.

import hashlib  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402

TMPFS = os.environ.get("VACANT_TEST_TMPFS", "/dev/shm")
_UNIT = Path(__file__).resolve().parent / "unit"
_tmpfs_factory: list[pytest.TempPathFactory] = []
_on_tmpfs = [False]  # the running test's tmp_path and TMPDIR are on tmpfs


def tmp_on_tmpfs(item) -> bool:
    """Whether this test's temporary files go to tmpfs: a unit test that may run no wall."""
    return bool(TMPFS) and os.path.isdir(TMPFS) and os.access(TMPFS, os.W_OK) and \
        _UNIT in item.path.parents and not item.get_closest_marker("disk_tmp") and \
        not item.get_closest_marker("e2e")


def _tmpfs_root() -> Path:
    return Path(TMPFS) / f"vacant-tests-{os.getuid()}"


def _tmpfs(config) -> pytest.TempPathFactory:
    """This process' base on tmpfs, named after its disk base (which pytest keeps for 3 sessions:
    a mirror whose disk base is gone is removed at the next session's start)."""
    if not _tmpfs_factory:
        disk = config._tmp_path_factory.getbasetemp()
        session = disk.parent if os.environ.get("PYTEST_XDIST_WORKER") else disk
        mirror = _tmpfs_root() / hashlib.sha256(str(session).encode()).hexdigest()[:12]
        mirror.mkdir(parents=True, exist_ok=True, mode=0o700)
        (mirror / "origin").write_text(str(session))
        base = mirror / (disk.name if os.environ.get("PYTEST_XDIST_WORKER") else "main")
        shutil.rmtree(base, ignore_errors=True)  # a reused --basetemp: pytest empties it too
        (base / "tmp").mkdir(parents=True, mode=0o700)
        (base / "bin").mkdir()
        real = shutil.which("bwrap") or "/usr/bin/bwrap"  # the walled runner binds what it needs: it may run
        (base / "bin" / "bwrap").write_text(f"#!/bin/sh\ncase \" $* \" in *' {WALLED_RUNNER} '*) exec '{real}' \"$@\";; esac\n"
                                            f"echo '{WALLED_ON_TMPFS}' >&2\n"
                                            f"echo \"$PYTEST_CURRENT_TEST\" >> '{base / 'walled'}'\nexit 126\n")
        (base / "bin" / "bwrap").chmod(0o755)
        _tmpfs_factory.append(pytest.TempPathFactory(None, 3, "all", config.trace.get("tmpdir"), basetemp=base,
                                                     _ispytest=True))
    return _tmpfs_factory[0]


def _prune_tmpfs_mirrors() -> None:
    for mirror in _tmpfs_root().glob("*") if TMPFS else ():
        try:
            origin = (mirror / "origin").read_text()
        except OSError:
            continue  # being made, or not ours
        if not os.path.exists(origin):
            shutil.rmtree(mirror, ignore_errors=True)


@pytest.fixture
def tmp_path(request, tmp_path_factory) -> Path:
    """pytest's tmp_path, on tmpfs for a unit test that runs no wall (see above)."""
    factory = _tmpfs(request.config) if tmp_on_tmpfs(request.node) else tmp_path_factory
    return factory.mktemp(re.sub(r"\W", "_", request.node.name)[:30], numbered=True)


@pytest.fixture(autouse=True)
def _tmpdir_where_tmp_path_is(request, monkeypatch):
    """TMPDIR (and tempfile's cached default) on tmpfs while a tmpfs test runs."""
    if not tmp_on_tmpfs(request.node):
        yield
        return
    base = _tmpfs(request.config).getbasetemp()
    monkeypatch.setenv("TMPDIR", str(base / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(base / "tmp"))
    monkeypatch.setenv("PATH", f"{base / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    _on_tmpfs[0] = True
    try:
        yield
    finally:
        _on_tmpfs[0] = False
    walled = base / "walled"
    if walled.exists():
        walled.unlink()
        raise WalledOnTmpfs(WALLED_ON_TMPFS)


class WalledOnTmpfs(RuntimeError):
    pass


# The walled runner (vacant/core/sandbox.py) mounts every path it uses after the fresh /dev, a
# tmpfs one included: it marks its command line with this, and may run on tmpfs.
WALLED_RUNNER = "VACANT_WALLED"
WALLED_ON_TMPFS = ("bwrap started by a test whose tmp_path and TMPDIR are on tmpfs, which a walled process cannot "
                   "see (bubblewrap mounts a fresh /dev): mark the test `@pytest.mark.disk_tmp` (tests/conftest.py)")


def _no_wall_on_tmpfs(event: str, args: tuple) -> None:
    if event == "subprocess.Popen" and _on_tmpfs[0]:
        executable, argv = args[0], args[1]
        if not executable:
            executable = argv if isinstance(argv, (str, bytes, os.PathLike)) else next(iter(argv), "")
        if os.path.basename(os.fsdecode(executable)) == "bwrap" and WALLED_RUNNER not in list(map(os.fsdecode, argv)):
            raise WalledOnTmpfs(WALLED_ON_TMPFS)


sys.addaudithook(_no_wall_on_tmpfs)


# -- long tests first under pytest-xdist ---------------------------------------------------------
# xdist hands tests out in collection order: a test of a minute collected last starts last and
# keeps one worker busy while the other has nothing left. Under xdist the `slow` and `e2e` tests
# (seconds to a minute each) are collected first, each group in its collection order, and the rest
# (milliseconds each) fills both workers' ends. One process keeps the collection order.

def runs_long(item) -> bool:
    return item.get_closest_marker("slow") is not None or item.get_closest_marker("e2e") is not None


def pytest_collection_modifyitems(config, items):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: not runs_long(item))  # stable: the same order on every worker


def pytest_sessionstart(session):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        _prune_tmpfs_mirrors()


@pytest.hookimpl(tryfirst=True)  # before the leak check (tests/plugins/leaks.py): a daemon is stopped, not a leak
def pytest_sessionfinish(session):
    _stop_ours(_base(session.config))
    _pass_up_slow_unmarked(session.config)
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["trust_tally"] = TRUST_TALLY


# -- the hostile corpora's tally (issue 11): cases per class, held as designed, documented limits ---

TRUST_TALLY: dict[str, dict[str, int]] = {}


@pytest.fixture(scope="session")
def trust_tally_rows() -> dict[str, dict[str, int]]:
    """This process's rows of the summary (class -> cases, held, limit), for a module that counts
    its cases itself; the controller sums every worker's rows."""
    return TRUST_TALLY


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
