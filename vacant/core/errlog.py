"""The error log: one line per failure a hook or the daemon swallowed, in the state directory.

Recorder hooks fail open, so their errors must land somewhere a person can read (`doctor` points
at it). One write with O_APPEND per record; never raises. Stdlib only (hot path).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from vacant.core.locations import installed, installed_root, state_dir, user_data_dir


def error_log_dir(root: Path | None) -> Path:
    """The installed workspace's state directory, else the user's data directory (an error in a
    directory vacant was never installed in creates no state there)."""
    if root is not None and installed(root):
        return state_dir(root)
    found = installed_root(Path(root) if root is not None else Path.cwd())
    return state_dir(found) if found is not None else user_data_dir()


def log_error(root: Path | None, message: str) -> None:
    """Append to `errors.log` in the state directory (one write, O_APPEND); never raises."""
    try:
        directory = error_log_dir(root)
        directory.mkdir(parents=True, exist_ok=True)
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()} {message}".replace("\n", "\n  ") + "\n"
        fd = os.open(directory / "errors.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001 - the error log itself failing must not crash the agent
        pass
