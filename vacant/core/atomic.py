"""`atomic_write`: a file replaced whole or not at all, by any number of concurrent writers.

The data goes to a temp file beside the target whose name is unique per call (pid plus random
bytes, created with O_EXCL, so two processes never share one), then `os.replace` swaps it in: a
reader sees the old file or the new one, never a mix. No fsync: the files written this way are
caches and small state that a crash may roll back, never the step log (which appends). An
existing target keeps its permission bits unless `mode` is given. Stdlib only (hot path).
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
