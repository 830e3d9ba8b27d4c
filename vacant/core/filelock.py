"""`file_lock`: an exclusive flock on a file, given up after a timeout instead of hanging a hook.

One lock for every holder: the workspace's (the recorder, `vacant do`), a run's step log and the
ask book. Closing the descriptor releases it, so a killed holder never leaves it held. Stdlib
only (hot path).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from vacant.core.leanstd import contextmanager

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import Iterator

LOCK_TIMEOUT_S = 30.0


class LockTimeout(RuntimeError):
    pass


@contextmanager
def file_lock(path: Path, timeout: float | None = LOCK_TIMEOUT_S) -> Iterator[None]:
    """An exclusive flock that gives up after `timeout` seconds instead of hanging a hook.

    With timeout None it blocks in the kernel's queue, which is fair: polling lets late comers
    overtake a waiter for seconds under contention. Hooks bound that wait with their own alarm.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
            return
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockTimeout(f"could not lock {path} within {timeout:.0f} s") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
        yield
    finally:
        os.close(fd)  # closing releases the flock
