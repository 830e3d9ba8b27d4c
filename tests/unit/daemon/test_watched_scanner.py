"""The daemon's scan equals a full scan: a differential test against the in-process Scanner over
random file operations (hypothesis), the 1,000-file burst, and loss leading to a recorded rescan."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.daemon.scanner import WatchedScanner
from vacant.daemon.watcher import Watcher
from vacant.store.hasher import Index, Scanner
from vacant.store.objects import ObjectStore

NAMES = st.sampled_from(["a", "b", "c.log", "d", ".git"])  # .git: directories the watch leaves out
PATHS = st.lists(NAMES, min_size=1, max_size=3).map("/".join)
OPS = st.one_of(
    st.tuples(st.just("write"), PATHS, st.binary(max_size=8)),
    st.tuples(st.just("append"), PATHS, st.binary(min_size=1, max_size=4)),
    st.tuples(st.just("remove"), PATHS, st.none()),
    st.tuples(st.just("mkdir"), PATHS, st.none()),
    st.tuples(st.just("rename"), PATHS, PATHS),
    st.tuples(st.just("chmod"), PATHS, st.none()),
    st.tuples(st.just("symlink"), PATHS, PATHS),
    st.tuples(st.just("ignore"), st.sampled_from(["", "d", "b"]), st.sampled_from(["*.log\n", "a\n", "d/\n", ""])),
    st.tuples(st.just("out"), PATHS, st.none()),
    st.tuples(st.just("in"), PATHS, st.none()),
)


def apply(root: Path, outside: Path, op: tuple) -> None:
    kind, rel, arg = op
    path = root / rel
    try:
        if kind == "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(arg)
        elif kind == "append":
            with open(path, "ab") as handle:
                handle.write(arg)
        elif kind == "remove":
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        elif kind == "mkdir":
            path.mkdir(parents=True)
        elif kind == "rename":
            os.rename(path, root / arg)
        elif kind == "chmod":
            os.chmod(path, 0o755 if not os.access(path, os.X_OK) else 0o644)
        elif kind == "symlink":
            os.symlink(arg, path)
        elif kind == "ignore":
            (root / rel).mkdir(parents=True, exist_ok=True)
            (root / rel / ".gitignore").write_text(arg)
        elif kind == "out":
            os.rename(path, outside / f"{len(os.listdir(outside))}")
        elif kind == "in":
            path.parent.mkdir(parents=True, exist_ok=True)
            source = outside / "incoming"
            source.mkdir()
            (source / "x").write_text("moved in")
            os.rename(source, path)
    except OSError:
        pass  # an operation that makes no sense on the current tree is just skipped


class Pair:
    """The same tree seen by the in-process full scanner and by the daemon's watched scanner."""

    def __init__(self, base: Path, max_dirty: int = 20_000) -> None:
        self.root = base / "ws"
        self.outside = base / "outside"
        self.root.mkdir()
        self.outside.mkdir()
        (self.root / ".vacant").mkdir()
        plain_state = base / "plain-state"
        plain_state.mkdir()
        self.plain = Scanner(self.root, Index(plain_state / "index"), ObjectStore(plain_state / "objects"), plain_state)
        self.watcher = Watcher(self.root, max_dirty=max_dirty)
        self.watcher.start()
        self.watched = WatchedScanner(self.root, self.watcher, self.root / ".vacant")

    def scan_both(self):
        return self.plain.scan(None).delta(), self.watched.scan(None).delta()

    def close(self) -> None:
        self.watcher.stop()


# on disk, as before tmp moved to tmpfs: there, once in CI, a replaced symlink's mtime differed between the
# watched and the full scan (to be found: a tmpfs timing the watcher reads differently, or a real miss)
@pytest.mark.disk_tmp
@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(OPS, max_size=8), min_size=1, max_size=4))
def test_watched_scan_equals_full_scan(batches):
    with tempfile.TemporaryDirectory() as temp:
        pair = Pair(Path(temp))
        try:
            (pair.root / "a").write_text("seed")
            full, watched = pair.scan_both()
            assert full == watched
            for batch in batches:
                for op in batch:
                    apply(pair.root, pair.outside, op)
                full, watched = pair.scan_both()
                assert watched == full, batch
            assert pair.watched.index.entries() == pair.plain.index.entries()
        finally:
            pair.close()


def test_the_watch_leaves_out_git_but_keeps_the_way_to_its_cookies(tmp_path):
    """vacant's own writes in `.git/vacant` (several per hook call) wake no watcher thread: only
    the directories leading to the cookies are watched there; a nested repository's `.git` too
    is left out (the scanner skips it). The cookie rule still holds: a scan sees a fresh change."""
    from vacant.core.locations import state_dir
    from vacant.daemon.watcher import watch_count

    root = tmp_path / "ws"
    for rel in ("src/deep", ".git/objects/ab", ".git/refs/heads", ".git/vacant/runs/r1", "sub/.git/objects"):
        (root / rel).mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert state_dir(root) == root / ".git" / "vacant"
    before = watch_count() or 0
    watcher = Watcher(root)
    watcher.start()
    try:
        watched = {"", "src", "src/deep", "sub", ".git", ".git/vacant"}
        assert watch_count() - before == len(watched)
        scanner = WatchedScanner(root, watcher, state_dir(root))
        scanner.scan(None)
        (root / "src" / "deep" / "new.txt").write_text("x")
        (root / ".git" / "vacant" / "runs" / "r1" / "run.json").write_text("{}")
        assert scanner.scan(None).delta()["added"].keys() == {"src/deep/new.txt"}
        assert scanner.scans["full"] == 1  # the start rescan only: the cookie came back
    finally:
        watcher.stop()


@pytest.mark.slow
def test_a_burst_of_1000_files_is_all_there_every_time(tmp_path):
    pair = Pair(tmp_path)
    try:
        pair.watched.scan(None)  # the start rescan
        for round_ in range(5):
            folder = pair.root / f"burst{round_}"
            folder.mkdir()
            for number in range(1000):
                (folder / f"f{number}.txt").write_text(f"{round_}-{number}")
            delta = pair.watched.scan(None).delta()
            added = {rel for rel in delta["added"] if rel.startswith(f"burst{round_}/")}
            assert len(added) == 1000 and f"burst{round_}" in delta["added"], round_
        assert pair.watched.scans["full"] == 1  # no burst needed a rescan
    finally:
        pair.close()


class Log:
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.events: list[tuple[str, dict]] = []

    def emit(self, event_type: str, **fields) -> None:
        self.events.append((event_type, fields))


def test_too_many_changes_for_the_queue_lead_to_a_recorded_rescan(tmp_path):
    pair = Pair(tmp_path, max_dirty=50)
    try:
        pair.watched.scan(None)
        run = tmp_path / "run"
        run.mkdir()
        (run / "events.jsonl").write_text("")
        log = Log(run)
        for number in range(200):
            (pair.root / f"g{number}").write_text("x")
        delta = pair.watched.scan(None, log=log).delta()
        assert len(delta["added"]) == 200
        assert [event for event, _ in log.events] == ["rescan"]
        assert "more than 50" in log.events[0][1]["why"]
        (pair.root / "g1").write_text("again")
        assert pair.watched.scan(None, log=log).delta()["changed"].keys() == {"g1"}
        assert len(log.events) == 1  # back to watched scans: no new rescan
    finally:
        pair.close()


def test_a_kernel_queue_overflow_leads_to_a_recorded_rescan(tmp_path):
    pair = Pair(tmp_path)
    try:
        pair.watched.scan(None)
        run = tmp_path / "run"
        run.mkdir()
        (run / "events.jsonl").write_text("")
        log = Log(run)
        (pair.root / "lost").write_text("x")
        import logging

        # watchdog reports an IN_Q_OVERFLOW only through its log (it then rebuilds its watches)
        logging.getLogger("watchdog.observers.inotify_c").warning("Inotify queue overflowed; filesystem events were lost")
        delta = pair.watched.scan(None, log=log).delta()
        assert "lost" in delta["added"]
        assert log.events[0][0] == "rescan"
        assert log.events[0][1]["why"] == "inotify queue overflow"
    finally:
        pair.close()


def test_changes_made_while_no_daemon_ran_are_found_by_the_next_ones_first_scan(tmp_path):
    pair = Pair(tmp_path)
    pair.watched.scan(None)
    pair.close()
    (pair.root / "while-down").write_text("x")
    watcher = Watcher(pair.root)
    watcher.start()
    try:
        again = WatchedScanner(pair.root, watcher, pair.root / ".vacant")
        result = again.scan(None)
        assert "while-down" in result.delta()["added"]
        assert again.last_rescan["why"].startswith("daemon started")
    finally:
        watcher.stop()


@pytest.mark.slow
def _load(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCENARIO = Path(__file__).with_name("watch_limit_scenario.py")
PYPI = Path(__file__).resolve().parents[3] / "fixtures" / "pypi"
SCENARIO_MODULE = _load(SCENARIO)
LIMIT_CASE = {"dirs": ["a", "b", "c"], "budget": 2, "writes": ["a/new", "b/new", "c/new", "top"]}


def _assert_every_write_seen_and_every_limited_scan_recorded(outcome: dict, budget: int, dirs: int) -> None:
    """The oracle: each scan after a write sees that file, and when the kernel had fewer watches
    than the tree has directories (the root, each directory, the cookie directory's chain), every
    scan is a recorded rescan that says the limit was reached."""
    for scan in outcome["scans"]:
        assert scan["wrote"] in scan["seen"], (outcome["watchdog"], scan)
    if budget < dirs:
        assert outcome["limited"] or outcome["root_unwatched"], outcome
        for scan in outcome["scans"]:
            assert [event for event, _ in scan["logged"]] == ["rescan"], (outcome["watchdog"], scan)
            assert "limit reached" in scan["logged"][0][1], (outcome["watchdog"], scan)


@pytest.mark.slow
@pytest.mark.parametrize("release", ["7.1.0", "7.1.1"])
def test_a_watch_limit_reached_means_every_full_scan_is_a_recorded_rescan(tmp_path, release):
    """Under each watchdog release's own behaviour at the limit (7.1.0: a subdirectory silently
    unwatched; 7.1.1: raised while starting, logged later), fetched pinned by hash and first on
    the path of a child interpreter: the daemon keeps what it watches and records every rescan."""
    import json
    import subprocess
    import sys

    from pinned import pinned_target

    target = pinned_target(PYPI / f"watchdog-{release}.txt")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(SCENARIO.parent)])}
    result = subprocess.run([sys.executable, str(SCENARIO), str(tmp_path), json.dumps(LIMIT_CASE)],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["watchdog"] == release
    assert not outcome["root_unwatched"] and outcome["limited"]  # the root and one more are watched
    _assert_every_write_seen_and_every_limited_scan_recorded(outcome, LIMIT_CASE["budget"], 99)


DIR_NAMES = st.sampled_from(["a", "b", "c"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(dirs=st.lists(st.lists(DIR_NAMES, min_size=1, max_size=4).map("/".join), min_size=1, max_size=6, unique=True),
       short=st.integers(min_value=0, max_value=30), ample=st.booleans(),
       picks=st.lists(st.integers(min_value=0), min_size=1, max_size=5))
def test_watch_limits_at_random_depths_still_record_every_change(tmp_path_factory, dirs, short, ample, picks):
    """A tree of random depth under a random watch budget (none, too few for its directories, or
    ample), then files written in random directories: every write is seen by the next scan, and a
    tree the budget could not cover has every scan recorded as a rescan (the installed watchdog)."""
    every = sorted({"/".join(rel.split("/")[:depth]) for rel in dirs for depth in range(1, rel.count("/") + 2)})
    directories = 1 + len(every)  # the root and each directory below it, at the least
    budget = directories + 10 if ample else short % directories  # ample: also .vacant and the cookies'
    writes = [f"{every[pick % len(every)]}/f{number}" for number, pick in enumerate(picks)]
    outcome = SCENARIO_MODULE.limited_tree(tmp_path_factory.mktemp("limit"), dirs, budget, writes)
    _assert_every_write_seen_and_every_limited_scan_recorded(outcome, budget, directories)
    if ample:
        assert not outcome["limited"] and outcome["full_scans"] == 1, outcome  # only the start's


def test_a_full_scan_leaves_the_index_out_of_the_collectors_passes(tmp_path):
    """The daemon's index lives as long as the daemon: after a full scan its entries are frozen
    (gc.freeze), so the cyclic collector does not walk them during the calls."""
    import gc

    pair = Pair(tmp_path)
    try:
        for number in range(300):
            (pair.root / f"f{number}.txt").write_text(str(number))
        gc.unfreeze()
        pair.watched.scan(None)  # the start rescan: a full scan
        assert gc.get_freeze_count() >= 300 * 2  # every entry, and its list
    finally:
        gc.unfreeze()
        pair.close()


def test_the_recorder_hands_its_own_step_log_to_the_watched_scanner(tmp_path):
    """A loss noticed while the daemon answers a call is a `rescan` in that call's run, through the
    log the recorder passes (nothing else tells the scanner which run is being answered); a scan
    between calls has no log to record into, so the loss only shows in `last_rescan`."""
    from vacant.core.calls import HookCall
    from vacant.platforms.claude import PLATFORM
    from vacant.record.recorder import Recorder
    from vacant.store.steplog import StepLog

    pair = Pair(tmp_path)
    try:
        def record(run: str, call: HookCall) -> Recorder:
            recorder = Recorder(pair.root, run, PLATFORM, scanner=pair.watched, state=pair.watched.state)
            recorder.handle(call)
            return recorder

        first = record("r1", HookCall("session_start", "r1", pair.root, source="startup"))
        pair.watched.note_loss("lost in a test")
        (pair.root / "new.txt").write_text("x")
        record("r2", HookCall("session_start", "r2", pair.root, source="startup"))  # a new run: its baseline is the scan
        pair.watched.note_loss("lost again")
        record("r1", HookCall("stop", "r1", pair.root))
        rescans = [r for r in StepLog(first.log.run_dir).records() if r["type"] == "rescan"]
        assert [r["why"] for r in rescans] == ["lost again"]
        second = StepLog(first.log.run_dir.parent / "r2")
        assert not [r for r in second.records() if r["type"] == "rescan"]
        pair.watched.note_loss("between calls")
        pair.watched.scan(None)
        assert pair.watched.last_rescan["why"] == "between calls"
    finally:
        pair.close()
