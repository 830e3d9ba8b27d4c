"""Globs of the contract (`pinned`, `deliverables`): `**` recursive, matched against the
workspace's files in a stable order, never following a symlink out of the tree."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Iterable

from vacant.core.locations import SKIP_NAMES

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass


_MAGIC = re.compile(r"[*?\[]")


def _glob_regex(glob: str) -> re.Pattern[str]:
    out: list[str] = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            out.append("(?:[^/]+/)*")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif glob[index] == "*":
            out.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            out.append("[^/]")
            index += 1
        elif glob[index] == "[" and "]" in glob[index + 2 :]:
            close = glob.index("]", index + 2)
            body = glob[index + 1 : close]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = close + 1
        else:
            out.append(re.escape(glob[index]))
            index += 1
    return re.compile("".join(out) + r"(?:/.*)?\Z")  # a matched directory includes what is under it


def _normal_glob(glob: str) -> str:
    glob = glob.strip().replace("\\", "/")
    while glob.startswith("./"):
        glob = glob[2:]
    return glob.rstrip("/") or "**"


def matches(root: Path, globs: Iterable[str]) -> list[str]:
    """Workspace-relative files matching any of the globs (`**` recursive; a directory = its files).

    Globs are anchored at the workspace root, like Python's glob: `*.md` is top-level only,
    `**/*.md` is anywhere. `.git/` and `.vacant/` are never matched.
    """
    root = Path(root)
    found: set[str] = set()
    for glob in globs:
        glob = _normal_glob(glob)
        pattern = _glob_regex(glob)
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
