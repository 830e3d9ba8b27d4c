"""Fresh copies of a task's seed or a final workspace, without vacant's or git's state; a
symlink is copied as a symlink, never followed."""

from __future__ import annotations

import shutil
from pathlib import Path

SKIP_COPY = shutil.ignore_patterns(".vacant", ".git", "__pycache__")


def fresh_copy(source: Path, target: Path) -> Path:
    """Copy a tree to a new directory (which must not exist), without vacant's or git's state."""
    shutil.copytree(source, target, symlinks=True, ignore=SKIP_COPY)
    return target
