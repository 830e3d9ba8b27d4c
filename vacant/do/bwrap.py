"""`vacant do -- COMMAND` under bubblewrap: the wall (vacant/core/wall.py) for a program that has
no sandbox of its own. The recorder stays outside: the watcher in `vacant do` sees each change
from there and is the only writer of the record; inside, the state directory, the key directory,
the daemon's temp directory and the token-holding settings are empty mounts, and the hook
settings, vacant's install and the data directory are read-only.

The shape follows Claude Code's own (measured on 2.1.197, fixtures/payloads/sandbox-notes.md):
the whole tree read-only (`--ro-bind / /`), the workspace and a TMPDIR of the run's own
writable (`/tmp` itself read-only, as in Claude's sandbox), a denied
directory a `--tmpfs`, a denied file a `--ro-bind /dev/null`. The network is left shared (an
agent needs its model's API): a push by an interpreter over the network needs an egress policy,
which this wall is not. HOME stays read-only. A path missing when the command is wrapped is not
hidden: `vacant do` creates vacant's own directories first (core/wall.ensure_hidden_dirs).
"""

from __future__ import annotations

import sys
from pathlib import Path

from vacant.core import sandbox
from vacant.core.sandbox import Placement
from vacant.core.wall import Wall, ensure_hidden_dirs, wall_for


class NoBubblewrap(sandbox.NoBubblewrap):
    pass


def bwrap_path() -> str:
    try:
        return sandbox.bwrap_path()
    except sandbox.NoBubblewrap:
        raise NoBubblewrap("the wall needs bubblewrap (`sudo apt-get install bubblewrap`); "
                           "or run `vacant do --no-wall -- …` (the record is then unwalled)") from None


def wrap(argv: list[str], root: Path, cwd: Path, tmpdir: Path, wall: Wall | None = None, bwrap: str | None = None,
         terminal: bool | None = None) -> list[str]:
    """The command line that runs `argv` behind the wall around workspace `root`, with `tmpdir`
    (a directory of this run's own) as its writable TMPDIR: the walled runner's (core/sandbox.py)
    on the live workspace, with the network shared (the agent needs its model's API)."""
    root = Path(root).resolve()
    if wall is None:
        ensure_hidden_dirs(root)
        wall = wall_for(root)
    tmpdir = Path(tmpdir).resolve()
    tmpdir.mkdir(parents=True, exist_ok=True)
    # its own pid namespace: when bwrap goes (the person's interrupt, a kill) every process the agent
    # started goes with it; a TUI at a terminal keeps its session (its job control), else a new one
    terminal = sys.stdin.isatty() if terminal is None else terminal
    return sandbox.wrap(argv, Placement(root, network=True), wall, tmpdir, cwd=Path(cwd).resolve(),
                        bwrap=bwrap or bwrap_path(), new_session=not terminal)
