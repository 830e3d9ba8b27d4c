"""`atomic_write`: a file replaced whole or not at all, by any number of concurrent writers.

The data goes to a temp file beside the target whose name is unique per call (pid plus random
bytes, created with O_EXCL, so two processes never share one), then `os.replace` swaps it in: a
reader sees the old file or the new one, never a mix. No fsync: the files written this way are
caches and small state that a crash may roll back, never the step log (which appends). An
existing target keeps its permission bits unless `mode` is given. Stdlib only (hot path).

`create_secret`: a key file made once, whole, 0600, and never replaced: the bytes go to a temp
file (fsynced), which is hard-linked to the target; when another process linked its own first,
theirs wins and this one's is dropped. The one writer of vacant's key files.
"""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write(path: str | Path, data: bytes | str, mode: int | None = None) -> None:
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except OSError:
            mode = 0o644
    temp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def create_secret(path: str | Path, data: bytes) -> None:
    """Create `path` holding `data` (0600, parent 0700) unless it exists; never replaces it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(temp, path)  # fails if another process created it first: theirs wins
    except FileExistsError:
        pass
    finally:
        try:
            os.unlink(temp)
        except OSError:
            pass
