"""A scratch directory that moves from one recorded state to the next, put back first from what
the last run in it changed on disk.

The Stop runs checks (and re-runs steps) in one directory per purpose, moved between states by
their difference alone instead of rebuilt whole. What a run leaves there is not part of any
state: bytecode (`__pycache__`: a same-size source edit in the same second is then run from the
other state's bytecode), a runner's cache, a file a test rewrote. So before each move every path
is compared with its stamp taken after the last move, by lstat (a file's or link's kind, inode,
size, mode, mtime and ctime: every write moves the ctime; a directory's kind and mode), and what
changed, appeared or vanished is removed and rewritten from the object store. And after each
move the file system's clock is made to pass every stamp the directory holds, so a write in the
same coarse clock tick cannot go unseen.

Stop-side only (never on the hook's path).
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from vacant.store.objects import ObjectStore
from vacant.store.states import Manifest, materialize, remove_path


@dataclass
class ReusedDirectory:
    """`directory`, holding exactly the state last asked of `holding`."""

    directory: Path
    store: ObjectStore
    live: Path
    state: Manifest | None = None
    stamps: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def holding(self, state: Manifest) -> list[str]:
        """Make the directory hold exactly `state` (what the last run changed put back first);
        returns the paths that could not be restored."""
        claimed = None if self.state is None else self._claimed()
        missing = materialize(state, self.directory, self.store, claimed, live=self.live)
        self.state = state
        self.stamps = stamps_of(self.directory)
        clock_past(self.directory.parent, max((stamp[-1] for stamp in self.stamps.values()), default=0))
        return missing

    def _claimed(self) -> Manifest:
        """The last state, less every path a run changed since (removed from disk here)."""
        assert self.state is not None
        claimed = dict(self.state)
        now = stamps_of(self.directory)
        dirty = {rel for rel in set(now) | set(self.stamps) if now.get(rel) != self.stamps.get(rel)}
        for rel in sorted(dirty, key=lambda rel: rel.count("/")):
            remove_path(self.directory / rel)
            for known in [known for known in claimed if known == rel or known.startswith(rel + "/")]:
                del claimed[known]
        return claimed


def stamps_of(directory: Path) -> dict[str, tuple[int, ...]]:
    """Every path under `directory`: (mode, inode, size, mtime, ctime) for a file or a link,
    (mode, ctime 0) for a directory (its entries are stamped themselves)."""
    found: dict[str, tuple[int, ...]] = {}
    for top, dirs, files in os.walk(directory):
        for name in (*dirs, *files):
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            rel = os.path.relpath(path, directory).replace(os.sep, "/")
            if stat.S_ISDIR(st.st_mode):
                found[rel] = (st.st_mode, 0)
            else:
                found[rel] = (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return found


def clock_past(where: Path, latest_ns: int, limit_s: float = 2.0) -> None:
    """Wait until a file written in `where` gets a ctime later than `latest_ns` (the file
    system's clock ticks coarsely: a write in the tick of the last stamp would keep its ctime)."""
    deadline = time.monotonic() + limit_s
    handle, probe = tempfile.mkstemp(prefix=".vacant-clock-", dir=where)
    try:
        while time.monotonic() < deadline:
            os.write(handle, b".")
            if os.fstat(handle).st_ctime_ns > latest_ns:
                return
            time.sleep(0.001)
        raise RuntimeError(f"the file system's clock at {where} did not move past the rebuilt state's")
    finally:
        os.close(handle)
        os.unlink(probe)
