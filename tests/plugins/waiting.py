"""Waiting on a condition a test cannot be told about (a detached process's file, a probe's
progress): polled every 50 ms until true or the seconds pass, never a sleep that guesses."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(condition: Callable[[], object], seconds: float = 60.0) -> bool:
    """Whether `condition()` became true within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def stop_probes(root: "object") -> None:
    """Stop every guard probe still running in the workspace at `root` (a test's teardown: a failed
    test must not leave a detached probe blocked on a gate for its 2 h bound)."""
    from pathlib import Path

    from vacant.policy.contract import background

    for record in background.all_records(Path(str(root))):
        background.stop(Path(str(root)), record.name)
