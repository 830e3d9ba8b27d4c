"""Globs of the contract (`pinned`, `deliverables`; the language: vacant/core/globs.py), matched
against the workspace's files in a stable order, never following a symlink out of the tree."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

from vacant.core.globs import compile_glob, normal_glob
from vacant.core.locations import SKIP_NAMES

_MAGIC = re.compile(r"[*?\[]")


def matches(root: Path, globs: Iterable[str]) -> list[str]:
    """Workspace-relative files matching any of the globs (`**` recursive; a directory = its files).

    Globs are anchored at the workspace root, like Python's glob: `*.md` is top-level only,
    `**/*.md` is anywhere. `.git/` and `.vacant/` are never matched.
    """
    root = Path(root)
    found: set[str] = set()
    for glob in globs:
        glob = normal_glob(glob)
        pattern = compile_glob(glob)
        static: list[str] = []
        for part in glob.split("/"):
            if _MAGIC.search(part):
                break
            static.append(part)
        start = root.joinpath(*static) if static else root
        if os.path.isfile(start) or os.path.islink(start):
            rel = "/".join(static)
            if pattern.match(rel):
                found.add(rel)
            continue
        if not os.path.isdir(start):
            continue
        for directory, dirnames, filenames in os.walk(start):
            dirnames[:] = sorted(name for name in dirnames if name not in SKIP_NAMES)
            base = Path(directory).relative_to(root).as_posix()
            for name in filenames:
                rel = name if base == "." else f"{base}/{name}"
                if rel.split("/", 1)[0] in SKIP_NAMES:
                    continue
                if pattern.match(rel):
                    found.add(rel)
    return sorted(found)
