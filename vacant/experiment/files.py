"""File helpers of the experiment: atomic writes and fresh copies that never follow a symlink.

(`vacant.core.atomic.atomic_write` replaces atomic_write here once the issue-10 restructure lands.)
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

SKIP_COPY = shutil.ignore_patterns(".vacant", ".git", "__pycache__")


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `path` through a temporary file in the same directory and a rename."""
    path = Path(path)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(temp, mode)
    os.replace(temp, path)


def fresh_copy(source: Path, target: Path) -> Path:
    """Copy a tree to a new directory (which must not exist), without vacant's or git's state."""
    shutil.copytree(source, target, symlinks=True, ignore=SKIP_COPY)
    return target
