"""Children in process groups of their own, and what an interrupt does to them.

vacant starts each check (and every other helper program: git, a probe, a `vacant do` of the
experiment) in a new process group, so that a timeout can kill the child with everything it
started. That also means a terminal's Ctrl-C, sent to the foreground process group, never reaches
them. So a long command runs under `interruptible()`: SIGINT or SIGTERM kills every group started
through `spawn` (SIGKILL: what a check left behind must not outlive vacant), refuses to start new
ones, and raises `Interrupted` in the main thread, which the CLI turns into one sentence and exit
130. Writes that must be whole (a step-log append with its head, a report and its copy) run under
`deferred()`: the interrupt lands after them, never in the middle.

Stdlib only: the step log (hot path) uses `deferred`.
"""

from __future__ import annotations

import _thread
import os
import sys
from vacant.core.leanstd import contextmanager

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import Iterator
    import signal as _signal  # the stubs (the C module has none)
    import subprocess
    from typing import Any
else:
    import _signal  # signal's C module: signal.py imports enum (the step log, on the hot path, imports this one)

STOP_SIGNALS = (_signal.SIGINT, _signal.SIGTERM)

_lock = _thread.allocate_lock()  # threading.Lock, without importing threading (the hot path)
_groups: dict[int, bool] = {}  # pid -> whether it leads its own group, for children not yet released
_stopping: int | None = None  # the signal that stopped this process, once one did
_deferring = 0  # depth of `deferred()` sections in the main thread
_pending: int | None = None  # a signal that arrived inside a deferred section
_killed = 0  # process groups killed by the interrupt


class Interrupted(BaseException):
    """SIGINT/SIGTERM stopped the command (a BaseException, like KeyboardInterrupt: a broad
    `except Exception` must never swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(_signal_name(signum))
        self.signum = signum
        self.killed = _killed  # process groups this interrupt has killed so far

    @property
    def name(self) -> str:
        return _signal_name(self.signum)


def _signal_name(signum: int) -> str:
    import signal  # its enum only when an interrupt is named

    return signal.Signals(signum).name


def kill_group(pgid: int, sig: int = _signal.SIGKILL) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def spawn(argv: list[str], own_group: bool = True, **popen: Any) -> "subprocess.Popen[Any]":
    """`subprocess.Popen` in a new process group that an interrupt kills; `release` it when done.

    `own_group=False` keeps the child in vacant's group, with the terminal (git asking ssh for a
    passphrase): a terminal's Ctrl-C reaches it directly, and an interrupt kills it by pid."""
    import subprocess  # here, not at the top: the step log (hot path) imports this module

    with deferred(), _lock:  # an interrupt lands once the child is known, never between fork and record
        if _stopping is not None:
            raise Interrupted(_stopping)
        proc = subprocess.Popen(argv, start_new_session=own_group, **popen)
        _groups[proc.pid] = own_group
    return proc


def running(proc: "subprocess.Popen[Any]") -> bool:
    """Whether the child has not exited, without reaping it (Popen.poll reaps, and a reaped
    leader's id may name someone else's group: `wait_group` could no longer kill its group)."""
    if proc.returncode is not None:
        return False
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None
    except ChildProcessError:
        return proc.poll() is None


def wait_group(proc: "subprocess.Popen[Any]", timeout: float | None = None) -> int:
    """Wait for a child spawned in its own group, then SIGKILL whatever is left in that group
    before reaping the child: its zombie keeps the group's id from being reused, so the kill
    reaches only what it started (a sandbox helper whose pid 1 ignores SIGTERM included).
    Raises subprocess.TimeoutExpired as Popen.wait does, with the child and its group untouched."""
    import subprocess
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            exited = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
        except ChildProcessError:  # reaped by someone else (Popen.poll): its id may name another group now
            return proc.wait()
        if exited is not None:
            break
        if deadline is not None and time.monotonic() >= deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout or 0.0)
        time.sleep(0.05)
    with _lock:
        own_group = _groups.get(proc.pid, False)
    if own_group:
        kill_group(proc.pid)
    return proc.wait()


def release(proc: "subprocess.Popen[Any]") -> None:
    """Done with a spawned child. A child not yet reaped has its whole group killed (whatever it
    left running); a reaped one's pid may already name someone else's group, so it is left be."""
    with _lock:
        own_group = _groups.pop(proc.pid, True)
    if proc.returncode is None:
        _kill(proc.pid, own_group)
        proc.wait()


def _kill(pid: int, own_group: bool) -> None:
    if own_group:
        kill_group(pid)
        return
    try:
        os.kill(pid, _signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(argv: list[str], *, input: bytes | None = None, timeout: float | None = None, own_group: bool = True,
        **popen: Any) -> "subprocess.CompletedProcess[Any]":
    """`subprocess.run(..., capture_output=True)` in its own process group (killed whole at the
    timeout and on an interrupt)."""
    import subprocess

    proc = spawn(argv, own_group, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc.pid, own_group)
        proc.communicate()
        raise
    finally:
        release(proc)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def stopping() -> int | None:
    """The signal that is stopping this process, if one is."""
    return _stopping


def stop_children(signum: int) -> int:
    """Mark the process as stopping and kill every group it started; how many there were."""
    global _stopping, _killed
    with _lock:
        _stopping = signum
        groups = list(_groups.items())
        _groups.clear()
    for pid, own_group in groups:
        _kill(pid, own_group)
    _killed += len(groups)
    return len(groups)


def killed() -> int:
    return _killed


def on_signal(signum: int, frame: object) -> None:
    """The handler `interruptible` installs (a command with handlers of its own calls it too)."""
    global _pending
    if _deferring:  # the main thread is inside a deferred section (it may hold `_lock`): act at its end
        _pending = signum
        return
    stop_children(signum)
    raise Interrupted(signum)


def _in_main_thread() -> bool:
    """Whether this is the main thread. A process that never imported threading started no thread
    through it (vacant starts threads only through threading), so it is in its main thread."""
    threading = sys.modules.get("threading")
    return threading is None or threading.current_thread() is threading.main_thread()


@contextmanager
def deferred() -> Iterator[None]:
    """A section an interrupt must not cut: the signal is acted on when it ends."""
    global _deferring, _pending
    if not _in_main_thread():
        yield
        return
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
        if not _deferring and _pending is not None:
            signum, _pending = _pending, None
            stop_children(signum)
            raise Interrupted(signum)


@contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT/SIGTERM stop the command: children killed, `Interrupted` raised (main thread only)."""
    if not _in_main_thread():
        yield
        return
    saved = {sig: _signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            _signal.signal(sig, handler)
        reset()


def reset() -> None:
    """Forget a past interrupt once the command it stopped is over (several commands, one process:
    the tests). `interruptible` does it; a command with handlers of its own does it at its end."""
    global _stopping, _pending, _killed
    with _lock:
        _stopping = _pending = None
        _killed = 0


def interrupted_sentence(stop: Interrupted) -> str:
    killed = f"killed the {stop.killed} process group(s) it had started, " if stop.killed else ""
    return f"vacant: stopped by {stop.name}; {killed}nothing half-written was kept"


def exit_interrupted(stop: BaseException) -> None:
    """What a command says and exits with when an interrupt stopped it (exit 130), whichever
    entry ran it (the command line, or a command answered before it: vacant/__main__.py)."""
    from vacant.core.exitcodes import Exit

    if not isinstance(stop, Interrupted):
        stop = Interrupted(_signal.SIGINT)
    print(interrupted_sentence(stop), file=sys.stderr)
    sys.exit(int(Exit.INTERRUPTED))
