"""A guard's probe in the background: a suite of any length can be a guard.

`vacant contract add NAME --keep -- COMMAND` starts the guard's probe in a process of its own
(detached: its own session, an isolated interpreter, behind the wall like every probe) and waits
for it in the foreground for a while (`FOREGROUND_S`, or $VACANT_PROBE_FOREGROUND_S). A probe that
finishes in that time is judged and added as it always was. One that does not keeps running
after the command returns (or is interrupted: Ctrl-C leaves it running and says how to watch and
stop it); when it finishes, the same judgement adds the guard to vacant.toml, with the probe's
evidence and `background = true`, or refuses it, said by `vacant contract status`.

Its own cap is generous and fixed (`BACKGROUND_CAP_S`, 2 h, or $VACANT_PROBE_BACKGROUND_CAP_S),
unless the person gave the guard a `--timeout` (the Stop runs it under that too) or a `--probe-cap`.
A guard given no timeout whose probe ran longer than the default gets a timeout that fits its
whole run (twice the probe, in whole minutes).

Each probe's record is one JSON file in the workspace's state directory (`probes/NAME.json`),
created exclusively: a second `contract add` of the same name while it runs starts nothing and
points at the running one. Progress comes from the runner's live report: a pytest run loads a
small plugin writing how many tests it collected and finished; any other runner shows the time.

The guard counts from when its probe finished: a run that started before then treats it as
pending (vacant/attribute/stop.py): its Stop cannot block on a probe it does not have, so the
guard is not run there and the report says it was still being probed.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vacant.core.atomic import atomic_write
from vacant.core.locations import state_dir

BACKGROUND_CAP_S = 7200.0  # a background probe's own bound: a clear error past it
FOREGROUND_S = 60.0  # how long `contract add` waits before leaving the probe to the background
CAP_ENV = "VACANT_PROBE_BACKGROUND_CAP_S"
FOREGROUND_ENV = "VACANT_PROBE_FOREGROUND_S"
PROBES = "probes"
GONE_S = 1.0  # a probe's process seen gone is looked at again after this, before its end is written
# the person's own command's state directory, which a scrubbed environment would drop: the probe
# must find the same record (the person ran `contract add`, not a hook)
KEPT = ("VACANT_STATE_DIR",)
RUNNING, ADDED, REFUSED, STOPPED = "running", "added", "refused", "stopped"
PROGRESS_PLUGIN = "_vacant_progress"
PROGRESS_ENV = "VACANT_PROGRESS_FILE"
# The detached process loads the platform registry first, as every process that walls a command
# does (the wall names each platform's settings files); this layer may not import it, so the entry does.
ENTRY = ("import sys, vacant.platforms.all_platforms; from pathlib import Path; "
         "from vacant.policy.contract.red_first import run_detached; run_detached(Path(sys.argv[1]), sys.argv[2])")

PROGRESS_SOURCE = '''\
"""vacant's progress plugin: how many tests this pytest run collected and finished (a guard's
probe). Written whole after every test (a few dozen bytes, replaced atomically)."""
import json, os

_PATH = os.environ.get("VACANT_PROGRESS_FILE")
_STATE = {"total": None, "done": 0, "failed": 0}


def _write():
    if not _PATH:
        return
    try:
        with open(_PATH + ".tmp", "w") as handle:
            json.dump(_STATE, handle)
        os.replace(_PATH + ".tmp", _PATH)
    except OSError:
        pass


def pytest_collection_finish(session):
    _STATE["total"] = len(session.items)
    _write()


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _STATE["done"] += 1
        _STATE["failed"] += int(report.failed)
        _write()
'''


@dataclass
class ProbeRecord:
    """One guard's probe as the state directory keeps it (`probes/NAME.json`)."""

    name: str
    command: str
    timeout: float | None  # as the person gave it (None: the default, widened to fit a long run)
    probe_cap: float | None
    network: bool
    allow_broken: bool
    started: float  # epoch seconds
    bound: float = BACKGROUND_CAP_S  # the probe's own cap, unless the person gave a timeout or a probe cap
    state: str = RUNNING
    pid: int | None = None
    progress_file: str | None = None
    finished: float | None = None
    message: str | None = None  # the refusal, or the added guard's summary line
    tail: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float | None = None
    exit_code: int | None = None

    @classmethod
    def of(cls, data: dict[str, Any]) -> ProbeRecord:
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)

    def progress(self) -> dict[str, Any]:
        """What the runner's live report says (tests collected and finished), when it writes one."""
        if not self.progress_file:
            return {}
        try:
            data = json.loads(Path(self.progress_file).read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def describe(self, now: float | None = None) -> str:
        """One line: `probing: 412/2,051 tests, 3m10s`, or how it ended."""
        if self.state == RUNNING:
            elapsed = _duration((now or time.time()) - self.started)
            shown = self.progress()
            total, done = shown.get("total"), shown.get("done")
            if isinstance(total, int) and isinstance(done, int):
                return f"probing: {done:,}/{total:,} tests, {elapsed}"
            return f"probing: {elapsed}"
        return self.message or self.state


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def probes_dir(root: Path) -> Path:
    return state_dir(Path(root)) / PROBES


def record_path(root: Path, name: str) -> Path:
    return probes_dir(root) / f"{name}.json"


def load(root: Path, name: str) -> ProbeRecord | None:
    try:
        return ProbeRecord.of(json.loads(record_path(root, name).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def all_records(root: Path) -> list[ProbeRecord]:
    try:
        names = sorted(path.stem for path in probes_dir(root).glob("*.json"))
    except OSError:
        return []
    return [record for record in (load(root, name) for name in names) if record is not None]


def save(root: Path, record: ProbeRecord) -> None:
    atomic_write(record_path(root, record.name), json.dumps(asdict(record)))


def alive(record: ProbeRecord) -> bool:
    """Whether the probe's process still runs (a record left `running` by a killed machine is not):
    its pid is there, not a zombie, and runs vacant's entry (a pid reused by another program does
    not; an unreadable command line counts as running, the side that starts no second probe)."""
    if record.state != RUNNING or record.pid is None:
        return False
    try:
        with open(f"/proc/{record.pid}/stat", "rb") as handle:
            if handle.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                return False
        with open(f"/proc/{record.pid}/cmdline", "rb") as handle:
            line = handle.read()
    except (OSError, IndexError):
        return False
    return not line or b"run_detached" in line


def running(root: Path) -> list[ProbeRecord]:
    """The guards whose probes are still running now."""
    return [record for record in all_records(root) if alive(record)]


def env_seconds(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value == value and value > 0 else default


def background_cap() -> float:
    return env_seconds(CAP_ENV, BACKGROUND_CAP_S)


def foreground_s() -> float:
    return env_seconds(FOREGROUND_ENV, FOREGROUND_S)


class AlreadyProbing(Exception):
    """A probe of this name is running already: nothing new was started."""

    def __init__(self, record: ProbeRecord) -> None:
        super().__init__(record.name)
        self.record = record


def start(root: Path, record: ProbeRecord) -> ProbeRecord:
    """Claim the name (exclusively: one probe per guard) and start its detached process."""
    import subprocess

    from vacant.core.trustenv import for_child

    root = Path(root)
    path = record_path(root, record.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = load(root, record.name)
    if existing is not None and alive(existing):
        raise AlreadyProbing(existing)
    if existing is not None and existing.state == RUNNING:
        path.unlink(missing_ok=True)  # its process is gone (the machine restarted): a new probe may start
    elif existing is not None:
        path.unlink(missing_ok=True)  # a finished probe's record: this add starts afresh
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another add claimed it between the look and the claim
        again = load(root, record.name)
        raise AlreadyProbing(again or record) from None
    with os.fdopen(fd, "w") as handle:
        json.dump(asdict(record), handle)
    env = for_child(os.environ)
    env.update({name: os.environ[name] for name in KEPT if name in os.environ})
    with open(path.with_suffix(".log"), "wb") as log:  # what the process itself says, should it fail
        proc = subprocess.Popen([sys.executable, "-I", "-c", ENTRY, str(root), record.name], env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    record.pid = proc.pid
    save(root, record)
    return record


def wait(root: Path, name: str, seconds: float, poll_s: float = 0.05) -> ProbeRecord | None:
    """The probe's record once it finished, or None after `seconds` (it goes on in the background)."""
    deadline = time.monotonic() + seconds
    while True:
        record = load(root, name)
        if record is not None and record.state != RUNNING:
            return record
        if record is not None and record.pid is not None and not alive(record) and record.state == RUNNING:
            time.sleep(GONE_S)  # its last write may be landing
            record = load(root, name)
            if record is not None and record.state == RUNNING and alive(record):
                continue  # seen gone for a moment only: it runs
            if record is not None and record.state == RUNNING:
                said = _log_tail(root, name)
                record.state = STOPPED
                record.message = f"the probe of {name!r} ended without a result" + (f": {said}" if said else "")
                save(root, record)
            return record
        if time.monotonic() >= deadline:
            return None
        time.sleep(poll_s)


def _log_tail(root: Path, name: str, lines: int = 3) -> str:
    try:
        text = record_path(root, name).with_suffix(".log").read_text(errors="replace")
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text.splitlines()[-lines:] if line.strip())


def stop(root: Path, name: str) -> ProbeRecord | None:
    """Stop a running probe (its process and the command's process group); nothing is added."""
    record = load(root, name)
    if record is None or not alive(record):
        return record
    assert record.pid is not None
    try:
        os.killpg(record.pid, signal.SIGTERM)
    except OSError:
        pass
    record.state, record.finished = STOPPED, time.time()
    record.message = f"stopped by the person; {name!r} was not added"
    save(root, record)
    return record


def progress_env(directory: Path) -> dict[str, str]:
    """The environment that makes a pytest run write its live progress into `directory`."""
    (directory / f"{PROGRESS_PLUGIN}.py").write_text(PROGRESS_SOURCE)
    paths = [str(directory)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
    addopts = f"-p {PROGRESS_PLUGIN}" + (f" {os.environ['PYTEST_ADDOPTS']}" if os.environ.get("PYTEST_ADDOPTS") else "")
    return {"PYTHONPATH": os.pathsep.join(paths), "PYTEST_ADDOPTS": addopts,
            PROGRESS_ENV: str(directory / "progress.json")}


def widened_timeout(seconds: float) -> float:
    """A timeout that fits a whole run which took `seconds`: twice it, in whole minutes."""
    return float(math.ceil(2 * seconds / 60.0) * 60)


def claimed(root: Path, name: str, seconds: float = 30.0) -> ProbeRecord | None:
    """The record once `start` wrote this process's pid into it (its only write): from then on
    this process alone writes it, so neither overwrites the other."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        record = load(root, name)
        if record is not None and record.pid == os.getpid():
            return record
        time.sleep(0.02)
    return None
